//! Where insta keeps a snapshot the [`snapshot!`](crate::snapshot) sink asserts, to tell a new
//! snapshot from one that changed. Used by the macro only.

use std::path::Path;

/// What a rejected snapshot was: new, changed, or (`None`) where insta keeps it is unknown (a
/// custom snapshot path).
#[derive(Debug, Clone, Copy)]
pub struct Rejected {
    /// Whether no accepted snapshot existed.
    pub new: Option<bool>,
}

/// Whether the snapshot `name`, asserted in `file` (as `file!()` writes it) of the module
/// `module` of the crate at `manifest_dir`, has no accepted `.snap` file yet, in insta's
/// default place (`snapshots/` beside the file).
pub fn is_new(manifest_dir: &str, file: &str, module: &str, name: &str) -> Option<bool> {
    // `file!()` is relative to the workspace root: the first ancestor that holds it.
    let source = Path::new(manifest_dir)
        .ancestors()
        .map(|dir| dir.join(file))
        .find(|p| p.is_file())?;
    let dir = source.parent()?.join("snapshots");
    let snap = dir.join(format!("{}__{name}.snap", module.replace("::", "__")));
    Some(!snap.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accepted_snapshot_is_found_beside_its_test_and_a_missing_one_is_new() {
        let (dir, file) = (env!("CARGO_MANIFEST_DIR"), "tests/tree/status.rs");
        let accepted = "a_pending_task_set_running";
        assert_eq!(is_new(dir, file, "tree::status", accepted), Some(false));
        assert_eq!(is_new(dir, file, "tree::status", "never_taken"), Some(true));
        assert_eq!(
            is_new(dir, "no/such/file.rs", "tree::status", accepted),
            None
        );
    }
}
