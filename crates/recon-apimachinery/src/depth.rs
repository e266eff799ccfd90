//! Recursion with a bound: the walks over values and field sets recurse (the fastest way
//! through a tree, and the only one `Drop` and `Clone` glue know) while they are shallow, and
//! past [`LIMIT`] levels switch to a walk that keeps its own stack. The stack a walk takes is
//! then bounded by a constant, whatever the depth of what it walks.

use std::cell::Cell;
use std::thread::LocalKey;

/// How many levels a walk may recurse before it keeps its own stack: deeper than the objects
/// people write, and a few kilobytes of stack in a debug build.
pub(crate) const LIMIT: u32 = 64;

/// A counter of the levels a kind of walk has recursed on this thread.
pub(crate) type Levels = LocalKey<Cell<u32>>;

/// Walks `what` by `shallow` one level deeper than the walk `levels` counts, or, past
/// [`LIMIT`] levels, by `deep` (which must not recurse).
#[inline]
pub(crate) fn recurse<T, R>(
    levels: &'static Levels,
    what: T,
    shallow: impl FnOnce(T) -> R,
    deep: impl FnOnce(T) -> R,
) -> R {
    let level = levels.get();
    if level >= LIMIT {
        return deep(what);
    }
    levels.set(level + 1);
    let out = shallow(what);
    levels.set(level);
    out
}
