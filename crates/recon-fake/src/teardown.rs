//! Dropping trees read from a schema with a bounded stack: validation's schema nodes, CEL's
//! schema and compiled rules, field management's types. A derived drop takes a frame per
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
    drop_taken::<T>(node.take_children());
}

/// Drops `children`, taken out of a node that holds its children in a type of its own (the
/// `Drop` of that type calls this).
pub(crate) fn drop_taken<T: Tree>(children: T::Children) {
    let level = LEVELS.get();
    if level < SHALLOW {
        LEVELS.set(level + 1);
        drop(children);
        LEVELS.set(level);
        return;
    }
    // Each node dropped here has no children left: its own drop comes back at once.
    let mut pending = Vec::new();
    T::each(children, &mut pending);
    while let Some(mut next) = pending.pop() {
        T::each(next.take_children(), &mut pending);
    }
}
