//! Dropping the trees read from a schema (the [`Node`](super::model::Node)s of validation,
//! and CEL's schema and compiled rules) with a bounded stack. A derived drop takes a frame per
//! level, and a schema may nest as deep as Go reads; so a node's `Drop` drops its children by
//! recursion only while the drops on this thread are shallow (the fastest way, allocating
//! nothing), and past [`SHALLOW`] levels moves them onto a list, dropping one node at a time.

use std::cell::Cell;

/// How many levels of tree drops may recurse: deeper than schemas people write, and a few
/// kilobytes of stack in a debug build.
const SHALLOW: u32 = 64;

thread_local! {
    /// How deep the drops of tree nodes on this thread have recursed.
    static LEVELS: Cell<u32> = const { Cell::new(0) };
}

/// A tree whose nodes own their children.
pub(crate) trait Tree: Sized {
    /// What holds a node's children (taken out whole, without moving them one by one).
    type Children;

    /// The node's children, leaving it none.
    fn take_children(&mut self) -> Self::Children;

    /// Moves each of `children` onto `into`.
    fn each(children: Self::Children, into: &mut Vec<Self>);
}

/// What a tree node's `Drop` does: drops its children.
pub(crate) fn drop_children<T: Tree>(node: &mut T) {
    let level = LEVELS.get();
    if level < SHALLOW {
        LEVELS.set(level + 1);
        drop(node.take_children());
        LEVELS.set(level);
        return;
    }
    // Each node dropped here has no children left: its own drop comes back at once.
    let mut pending = Vec::new();
    T::each(node.take_children(), &mut pending);
    while let Some(mut next) = pending.pop() {
        T::each(next.take_children(), &mut pending);
    }
}
