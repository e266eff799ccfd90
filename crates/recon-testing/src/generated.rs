//! Files generated from code and committed for review, such as a CRD manifest derived from
//! `#[derive(CustomResource)]`: a test keeps each one current, and
//! `RECON_FIXTURES=overwrite cargo test` rewrites them.

use std::path::Path;

use crate::diff::{text_diff, use_color};
use crate::runner::overwrite_mode;

/// Checks that the file at `path` holds exactly `contents`; when fixtures are regenerated
/// (`RECON_FIXTURES=overwrite cargo test`) writes it instead, whole or not at all (through a
/// file beside it renamed into place), so that a suite test reading it meanwhile never sees
/// half of it.
///
/// Panics with a diff and the command to regenerate when the file differs, and with the path
/// when it cannot be read or written.
///
/// ```no_run
/// use kube::CustomResourceExt;
/// # #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]
/// # #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
/// # struct WidgetSpec { size: i32 }
///
/// #[test]
/// fn the_widget_crd_manifest_is_current() {
///     let manifest = serde_saphyr::to_string(&Widget::crd()).unwrap();
///     recon_testing::assert_generated_file("fixtures/crds/widgets.example.com.yaml", &manifest);
/// }
/// ```
#[track_caller]
pub fn assert_generated_file(path: impl AsRef<Path>, contents: &str) {
    let path = path.as_ref();
    if overwrite_mode() {
        if let Err(e) = write_whole(path, contents) {
            panic!("cannot write {}: {e}", path.display());
        }
        return;
    }
    let current = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => panic!(
            "cannot read {}: {e}\nGenerate it with `{REGENERATE}`.",
            path.display()
        ),
    };
    if let Some(diff) = text_diff(&current, contents, use_color()) {
        panic!(
            "{} is not what the code generates (-file, +generated):\n{diff}\
             Regenerate it with `{REGENERATE}` and review the change.",
            path.display()
        );
    }
}

/// The command that regenerates fixtures in any crate (`cargo xtask fixtures` runs it in
/// recon's own repository).
pub(crate) const REGENERATE: &str = "RECON_FIXTURES=overwrite cargo test";

/// Writes `contents` to a file beside `path`, then renames it into place.
fn write_whole(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.partial", std::process::id()));
    std::fs::write(&partial, contents)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let payload = std::panic::catch_unwind(f).expect_err("it panics");
        payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn a_current_file_passes_and_a_stale_one_panics_with_a_diff() {
        if overwrite_mode() {
            return; // regenerating: every check writes instead
        }
        let dir = std::env::temp_dir().join(format!("recon-generated-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("crd.yaml");
        std::fs::write(&path, "kind: A\n").unwrap();

        assert_generated_file(&path, "kind: A\n");
        let stale = path.clone();
        let message = panic_message(move || assert_generated_file(&stale, "kind: B\n"));
        assert!(
            message.contains("-kind: A") && message.contains("+kind: B"),
            "{message}"
        );
        assert!(message.contains(REGENERATE), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_says_how_to_generate_it() {
        if overwrite_mode() {
            return;
        }
        let message = panic_message(|| assert_generated_file("/nonexistent/recon/crd.yaml", ""));
        assert!(message.contains("/nonexistent/recon/crd.yaml"), "{message}");
        assert!(message.contains(REGENERATE), "{message}");
    }
}
