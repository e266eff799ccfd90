//! JSON diffs: the RFC 7396 merge patch and three-way merge that status writes send, and the
//! RFC 6902 diff carried from one view of an object onto another (a cast resource, an admitted
//! object), and the field sets of `managedFields` that server-side apply writes.

mod carry_changes;
mod managed_fields;
mod merge;

pub(crate) use carry_changes::carry_changes;
pub(crate) use managed_fields::{ListKind, Shape, apply_entry, entry_set, extract, field, selects};
pub(crate) use merge::{Collision, merge_diff, three_way};
