//! Tables as YAML files: reading them (with errors that name the file, line and field) and
//! writing them back with observed expectations when fixtures are regenerated.

mod edit;
#[cfg(test)]
mod proptests;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::case::TestCase;
use crate::normalize::as_written;
use crate::rbac::OperatorRbac;
use crate::runner::Observed;

/// A fixture file that could not be read or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct FixtureError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, with the line, column and field when the YAML is at fault.
    pub message: String,
}

impl FixtureError {
    pub(crate) fn new(path: &Path, message: impl Into<String>) -> Self {
        FixtureError {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

/// A CRD of a suite: a file (relative to the suite file) or the manifest itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum CrdSource {
    File(String),
    Inline(Value),
}

/// The document of a suite file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SuiteFile {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) crds: Vec<CrdSource>,
    /// The service account and RBAC manifests the code under test runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_as: Option<RunAs>,
    pub(crate) cases: Vec<TestCase>,
}

/// A suite's `runAs`: `serviceAccount: namespace/name` and the RBAC manifests granting it its
/// rights (paths relative to the suite file).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RunAs {
    pub(crate) service_account: String,
    #[serde(default)]
    pub(crate) rbac: Vec<String>,
}

/// A suite read from a file: its cases, its CRD manifests, and where it came from.
pub(crate) struct LoadedSuite {
    pub(crate) file: SuiteFile,
    pub(crate) crds: Vec<Value>,
    pub(crate) rbac: Option<OperatorRbac>,
    pub(crate) path: PathBuf,
}

/// `text`, read from `path`, as a `T`; the error names the file, line and field.
pub(crate) fn parse<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
) -> Result<T, FixtureError> {
    serde_saphyr::from_str(text).map_err(|e| {
        let message = e
            .to_string()
            .replace("<input>", &path.display().to_string())
            // The reader's hint names its Rust API; a fixture's author needs the rule.
            .replace(
                "multiple YAML documents detected; use from_str_multiple or from_str_multiple_with_options",
                "a fixture file holds one YAML document, and another starts here",
            );
        // Only an empty document (`---` and nothing else) is refused without a position: the
        // error is at its start.
        let message = match e.location() {
            Some(_) => message,
            None => format!(
                "line {}: {message} (the YAML document is empty)",
                first_document_line(text)
            ),
        };
        FixtureError::new(path, message)
    })
}

/// The line (from 1) where the first YAML document starts: the first that is neither blank
/// nor a comment.
fn first_document_line(text: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            !l.is_empty() && !l.starts_with('#')
        })
        .map_or(1, |i| i + 1)
}

/// Reads the suite at `path` and the CRD files it names.
pub(crate) fn load(path: &Path) -> Result<LoadedSuite, FixtureError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| FixtureError::new(path, format!("cannot read: {e}")))?;
    let file: SuiteFile = parse(path, &text)?;
    let mut crds = Vec::new();
    for source in &file.crds {
        match source {
            CrdSource::Inline(crd) => crds.push(crd.clone()),
            CrdSource::File(relative) => {
                let crd_path = path.parent().unwrap_or(Path::new(".")).join(relative);
                let text = read_crd(&crd_path, crate::runner::overwrite_mode()).map_err(|e| {
                    FixtureError::new(
                        path,
                        format!(
                            "crds: cannot read {}: {e}\nA manifest generated from a Rust type is \
                             written by `{}`; or give the table the type's CRD with \
                             `.crd(&T::crd())` instead of a file",
                            crd_path.display(),
                            crate::generated::REGENERATE
                        ),
                    )
                })?;
                crds.push(parse(&crd_path, &text)?);
            }
        }
    }
    check_names(path, &file.cases)?;
    let rbac = match &file.run_as {
        Some(run_as) => Some(load_rbac(path, run_as)?),
        None => None,
    };
    Ok(LoadedSuite {
        file,
        crds,
        rbac,
        path: path.to_owned(),
    })
}

/// The account and manifests a suite's `runAs` names.
fn load_rbac(path: &Path, run_as: &RunAs) -> Result<OperatorRbac, FixtureError> {
    let (namespace, name) = run_as
        .service_account
        .split_once('/')
        .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains('/'))
        .ok_or_else(|| {
            FixtureError::new(
                path,
                format!(
                    "runAs.serviceAccount: {:?} is not `namespace/name`",
                    run_as.service_account
                ),
            )
        })?;
    let mut rbac = OperatorRbac::service_account(namespace, name);
    for (i, relative) in run_as.rbac.iter().enumerate() {
        let manifest = path.parent().unwrap_or(Path::new(".")).join(relative);
        rbac = rbac
            .manifest_yaml_file(&manifest)
            .map_err(|e| FixtureError::new(path, format!("runAs.rbac[{i}]: {e}")))?;
    }
    Ok(rbac)
}

/// Reads a CRD file. While fixtures are regenerated (`wait`), a missing one may be a generated
/// manifest another test of the same run is about to write: it is waited for, up to 20 seconds.
fn read_crd(path: &Path, wait: bool) -> std::io::Result<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match std::fs::read_to_string(path) {
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && wait
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Parses a suite from `text` (its CRDs must be inline); `origin` names it in errors.
pub(crate) fn parse_str(
    origin: &str,
    text: &str,
) -> Result<(Vec<TestCase>, Vec<Value>), FixtureError> {
    let path = Path::new(origin);
    let file: SuiteFile = parse(path, text)?;
    let mut crds = Vec::new();
    for source in file.crds {
        match source {
            CrdSource::Inline(crd) => crds.push(crd),
            CrdSource::File(f) => {
                return Err(FixtureError::new(
                    path,
                    format!("crds: {f:?} is a file; a suite read from a string needs inline CRDs"),
                ));
            }
        }
    }
    check_names(path, &file.cases)?;
    Ok((file.cases, crds))
}

/// Every case of a suite needs a name of its own: it names the case in reports and snapshots.
fn check_names(path: &Path, cases: &[TestCase]) -> Result<(), FixtureError> {
    for (i, case) in cases.iter().enumerate() {
        if case.name.is_empty() {
            return Err(FixtureError::new(path, format!("cases[{i}] has no name")));
        }
        if let Some(first) = cases[..i].iter().position(|c| c.name == case.name) {
            return Err(FixtureError::new(
                path,
                format!("cases[{i}] has the name of cases[{first}]: {:?}", case.name),
            ));
        }
    }
    Ok(())
}

/// The comment (and blank) lines a file starts with.
fn leading_comments(text: &str) -> String {
    text.lines()
        .take_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Writes `suite` back to its file with each case's expectations replaced by what it
/// observed (cases that did not run keep theirs). Only the expectations that changed are
/// rewritten, in place, in block style at their own indentation; the rest of the file (inputs,
/// their style, comments) is left byte for byte. A file that cannot be edited so (anchors
/// shared with an expectation, flow-style cases) is written whole, keeping only the comment
/// lines heading it.
pub(crate) fn overwrite(
    suite: &LoadedSuite,
    observed: &[Option<Observed>],
) -> Result<(), FixtureError> {
    let file = rewritten(suite, observed);
    let current = std::fs::read_to_string(&suite.path).unwrap_or_default();
    let cannot_write = |e: String| FixtureError::new(&suite.path, format!("cannot write: {e}"));
    let text = match in_place(&current, &suite.file, &file) {
        Ok(text) => text,
        Err(_) => {
            let body = serde_saphyr::to_string(&file).map_err(|e| cannot_write(e.to_string()))?;
            format!("{}{body}", leading_comments(&current))
        }
    };
    if text == current {
        return Ok(());
    }
    std::fs::write(&suite.path, text).map_err(|e| cannot_write(e.to_string()))
}

/// `current` with the expectations of `new` that differ from those of `old` edited in.
fn in_place(current: &str, old: &SuiteFile, new: &SuiteFile) -> Result<String, String> {
    let mut edits = Vec::new();
    for (i, (was, now)) in old.cases.iter().zip(&new.cases).enumerate() {
        if !same(&was.expect, &now.expect) {
            edits.push((edit::Place::Case(i), to_yaml(&now.expect)?));
        }
        for (name, config) in &now.additional_configs {
            let before = was.additional_configs.get(name).map(|c| &c.expect);
            if before.is_none_or(|b| !same(b, &config.expect)) {
                edits.push((
                    edit::Place::Config(i, name.clone()),
                    to_yaml(&config.expect)?,
                ));
            }
        }
    }
    edit::replace_expectations(current, &edits)
}

/// Whether two expectations write the same.
fn same(a: &impl Serialize, b: &impl Serialize) -> bool {
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn to_yaml(value: &impl Serialize) -> Result<String, String> {
    serde_saphyr::to_string(value).map_err(|e| e.to_string())
}

/// The suite with each case's expectations as observed.
fn rewritten(suite: &LoadedSuite, observed: &[Option<Observed>]) -> SuiteFile {
    let mut file = suite.file.clone();
    for (case, seen) in file.cases.iter_mut().zip(observed) {
        let Some(seen) = seen.as_ref().filter(|o| o.rewritable) else {
            continue;
        };
        let server_fields = case.compare_server_fields;
        let mut expect = as_written(&seen.expect, &case.expect, server_fields);
        if case.resource.is_none() {
            expect.resource = None;
        }
        if case.expect.response.is_none()
            && expect.response == Some(crate::admission::default_response())
        {
            // What a case without `response` expects: left unwritten, as the author had it.
            expect.response = None;
        }
        case.expect = expect;
        for (name, config) in &mut case.additional_configs {
            if let Some(theirs) = seen.configs.get(name) {
                let mut expect = as_written(theirs, &config.expect, server_fields);
                // A config's result and error are the case's, written once, there.
                expect.result = Default::default();
                expect.error = None;
                expect.response = None;
                config.expect = expect;
            }
        }
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_written_during_regeneration_is_waited_for() {
        let dir = std::env::temp_dir().join(format!("recon-read-crd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("late.yaml");
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                std::fs::write(path, "kind: CustomResourceDefinition\n").unwrap();
            })
        };
        assert_eq!(
            read_crd(&path, true).unwrap(),
            "kind: CustomResourceDefinition\n"
        );
        writer.join().unwrap();
        let missing = dir.join("never.yaml");
        assert_eq!(
            read_crd(&missing, false).unwrap_err().kind(),
            std::io::ErrorKind::NotFound,
            "without regeneration a missing file is an error at once"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
