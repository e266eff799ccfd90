//! JSON diffs: the RFC 7396 merge patch and three-way merge that status writes send, and the
//! RFC 6902 diff carried from one view of an object onto another (a cast resource, an admitted
//! object), and the field sets of `managedFields` that server-side apply writes.

mod carry_changes;
mod field_set;
mod merge;

pub(crate) use carry_changes::carry_changes;
pub(crate) use field_set::{ListKind, Selector, Shape, apply_entry, extract, field, members};
pub(crate) use merge::{Collision, merge_diff, three_way};
