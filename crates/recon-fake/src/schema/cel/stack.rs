//! Running CEL work on a stack sized for the deepest expression the parser lets through.
//!
//! Type checking and evaluation recurse once per node of an expression's tree, and a tree can
//! be several hundred nodes deep within cel-go's limits (`-int(-int(...))` nested 249 times is
//! about 500). That is more than a test thread's 2 MiB holds in an unoptimised build, so such
//! work runs on a thread of its own with a large stack: compilation always (it happens once
//! per CRD), evaluation only for rules deeper than [`SHALLOW`], so that the common rule costs
//! no thread.

/// Stack for the thread; only the pages a deep expression touches are ever used.
const LARGE_STACK: usize = 256 << 20;

/// Trees up to this deep are checked and evaluated on the caller's stack.
pub(super) const SHALLOW: usize = 128;

/// Runs `work` on a thread with [`LARGE_STACK`], waiting for it; `None` when it panicked or no
/// thread could be started.
pub(super) fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel-deep".to_owned())
            .stack_size(LARGE_STACK)
            .spawn_scoped(scope, work)
            .ok()?
            .join()
            .ok()
    })
}
