//! YAML suites: loading them (CRDs by path relative to the suite file, or inline), running them,
//! the errors a broken file gives (file, line, field), and regenerating a suite's expectations
//! from what its cases observed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::sprocket::Sprocket;
use crate::support::{
    assert_contains, assert_names_the_line, fixture, panic_on_zero, passes, regenerating,
    reject_negative, with,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use recon_core::{
    Config, IntoBoxed, Outcome, ResourceReconciler, Sequence, Stasher, SyncReconciler,
};
use recon_testing::{CaseStatus, ReconcilerTestSuite, Report, SubReconcilerTestSuite, TestEnv};
use rstest::rstest;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The resource and the reconcilers the suites describe.
// ---------------------------------------------------------------------------------------------

/// The size, stashed as an `i32`.
const SIZE: Stasher<i32> = Stasher::new("size");

/// Keeps `<name>-config` holding the sprocket's size: creates it, or patches an outdated one.
fn sync_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("SyncConfigMap").sync(async |ctx, w| {
        let namespace = w.namespace().unwrap_or_default();
        let api: Api<ConfigMap> = Api::namespaced(ctx.config().client().clone(), &namespace);
        let name = format!("{}-config", w.name_any());
        let size = w.spec.size.to_string();
        match api.get_opt(&name).await? {
            None => {
                let cm: ConfigMap = serde_json::from_value(json!({
                    "metadata": {"name": name, "labels": {"app": w.name_any()}},
                    "data": {"size": size},
                }))?;
                api.create(&PostParams::default(), &cm).await?;
            }
            Some(cm) if cm.data.as_ref().and_then(|d| d.get("size")) != Some(&size) => {
                let patch = json!({"data": {"size": size}});
                api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await?;
            }
            Some(_) => {}
        }
        Ok(())
    })
}

/// `status.ready`, and a look again in 30 seconds.
fn set_ready() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("SetReady").sync(async |_ctx, w| {
        w.status.get_or_insert_default().ready = Some(w.spec.size > 0);
        Ok(Outcome::requeue_after(Duration::from_secs(30)))
    })
}

/// The reconciler every suite under `fixtures/harness/suites` describes.
fn sprocket_reconciler(config: Config) -> ResourceReconciler<Sprocket> {
    ResourceReconciler::new(
        config,
        Sequence::new([
            reject_negative().boxed(),
            sync_config_map().boxed(),
            set_ready().boxed(),
        ]),
    )
}

/// Also creates `<name>-config` in the cluster named `other`, when the case has one.
fn mirror_to(other: Option<Config>) -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("Mirror").sync_with(other, async |_ctx, other, w| {
        if let Some(other) = other {
            let api: Api<ConfigMap> = Api::namespaced(other.client().clone(), "default");
            let cm: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": format!("{}-config", w.name_any())},
                "data": {"size": w.spec.size.to_string()},
            }))?;
            api.create(&PostParams::default(), &cm).await?;
        }
        Ok(())
    })
}

fn mirroring_reconciler(env: &TestEnv) -> ResourceReconciler<Sprocket> {
    ResourceReconciler::new(env.config(), mirror_to(env.config_named("other")))
}

/// Sub-reconciler: labels the sprocket with its size (and with a stashed `owner`, if any) and
/// stashes the size.
fn label_size_owner_and_stash() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("LabelSize").sync(async |ctx, w| {
        let size = w.spec.size;
        let labels = w.metadata.labels.get_or_insert_default();
        labels.insert("size".into(), size.to_string());
        if let Ok(Value::String(owner)) = ctx.stash().retrieve::<Value>("owner") {
            labels.insert("owner".into(), owner);
        }
        SIZE.store(ctx, size);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------------

fn names(report: &Report) -> Vec<&str> {
    report.cases.iter().map(|c| c.name.as_str()).collect()
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "recon-testing-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    /// Writes `text` to `relative` in the directory.
    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Copies the fixture `relative` (under `fixtures/harness`) to the same place in the directory,
    /// with `edit` applied to its text.
    fn copy(&self, relative: &str, edit: impl FnOnce(String) -> String) -> PathBuf {
        let text = std::fs::read_to_string(fixture(relative)).unwrap();
        self.write(relative, &edit(text))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Replaces exactly one occurrence of `from`.
#[track_caller]
fn replace_once(text: String, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} in:\n{text}");
    text.replacen(from, to, 1)
}

const INLINE_CRD: &str = r#"
crds:
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: sprockets.example.com}
    spec:
      group: example.com
      scope: Namespaced
      names: {plural: sprockets, singular: sprocket, kind: Sprocket, listKind: SprocketList}
      versions:
        - name: v1
          served: true
          storage: true
          subresources: {status: {}}
          schema:
            openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

// ---------------------------------------------------------------------------------------------
// Loading and running suites.
// ---------------------------------------------------------------------------------------------

/// One test per suite file: every suite describes `sprocket_reconciler`.
#[rstest]
fn every_sprocket_suite_passes(#[files("../../fixtures/harness/suites/*.yaml")] path: PathBuf) {
    let suite = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
    suite.run(|env| sprocket_reconciler(env.config()));
}

#[tokio::test]
async fn a_suite_reads_its_crd_from_a_path_relative_to_the_suite_file() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    let report = ReconcilerTestSuite::from_yaml_file(fixture("suites/status.yaml"))
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&report);
    assert_eq!(
        names(&report),
        [
            "a new sprocket gets its config map and its status",
            "a sprocket already in shape sends no write",
            "a negative size is an error",
            "a missing sprocket is left alone",
        ],
        "cases run in the order written"
    );
}

#[tokio::test]
async fn a_suite_can_give_its_crd_inline() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    let report = ReconcilerTestSuite::from_yaml_file(fixture("suites/config-map.yaml"))
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&report);
    assert_eq!(report.cases.len(), 4);
}

#[tokio::test]
async fn a_suite_file_finds_the_crd_relative_to_itself_not_to_the_working_directory() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    // The same suite, loaded from elsewhere with its CRD next to it, still finds it.
    let dir = TempDir::new("relative-crd");
    dir.copy("crds/sprockets.example.com.yaml", |t| t);
    let suite = dir.copy("suites/status.yaml", |t| t);
    let report = ReconcilerTestSuite::from_yaml_file(&suite)
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_sub_reconciler_suite_checks_the_resource_and_the_stash() {
    // Follows `RECON_FIXTURES`: `cargo xtask fixtures` regenerates this suite here.
    let report = SubReconcilerTestSuite::from_yaml_file(fixture("sub/labels.yaml"))
        .unwrap()
        .stash_type(SIZE)
        .check(|_| label_size_owner_and_stash())
        .await;
    passes(&report);
    assert_eq!(report.cases.len(), 2);
}

#[tokio::test]
async fn a_sub_reconciler_suite_reports_a_wrong_resource_and_stash() {
    if regenerating() {
        return; // the suite file is being rewritten by `a_sub_reconciler_suite_checks_the_resource_and_the_stash`
    }
    let text = std::fs::read_to_string(fixture("sub/labels.yaml")).unwrap();
    let text = replace_once(
        text,
        "        labels:\n          size: \"3\"\n",
        "        labels:\n          size: \"30\"\n",
    );
    let text = replace_once(
        text,
        "    stashed:\n      size: 3\n",
        "    stashed:\n      size: 30\n",
    );
    let text = replace_once(
        text,
        "crds:\n- ../crds/sprockets.example.com.yaml\n",
        INLINE_CRD,
    );
    let report = SubReconcilerTestSuite::from_yaml_str("labels.yaml", &text)
        .unwrap()
        .stash_type(SIZE)
        .check(|_| label_size_owner_and_stash())
        .await;
    let plain = report.render(false);
    assert!(!report.passed());
    assert_contains(
        &plain,
        &[
            "1 of 2 cases failed, 0 skipped",
            "case \"the sprocket is labelled with its size and the size is stashed\" failed:",
            "expect.resource: differs (-expected, +actual):",
            "-      \"size\": \"30\"",
            "+      \"size\": \"3\"",
            "expect.stashed.size: differs (-expected, +actual):",
            "-30",
            "+3",
        ],
    );
}

/// A suite with the inline CRD and one case, "a new sprocket gets its status", whose
/// expectations end with its status patches: `status_patches`, and what follows them.
fn new_sprocket_suite(status_patches: &str) -> String {
    format!(
        "{INLINE_CRD}{}{status_patches}",
        r#"
cases:
  - name: a new sprocket gets its status
    request: {namespace: default, name: w}
    given:
      - {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 2}}
    expect:
      creates:
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: w-config, labels: {app: w}}, data: {size: "2"}}
      statusPatches:
"#
    )
}

#[tokio::test]
async fn from_yaml_str_runs_a_suite_with_an_inline_crd() {
    let text = new_sprocket_suite(
        r#"        - {kind: Sprocket, namespace: default, name: w, type: merge, patch: {status: {ready: true}}}
      events:
        - {type: Normal, reason: StatusPatched, note: Patched status}
"#,
    );
    let report = ReconcilerTestSuite::from_yaml_str("inline.yaml", &text)
        .unwrap()
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_failing_yaml_case_is_reported_with_its_name_expectation_and_diff() {
    let text = new_sprocket_suite(
        r#"        - {kind: Sprocket, namespace: default, name: w, type: merge, patch: {status: {ready: false}}}
      result: {requeueAfter: 1m}
"#,
    );
    let report = ReconcilerTestSuite::from_yaml_str("inline.yaml", &text)
        .unwrap()
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    assert!(!report.passed());
    let plain = report.render(false);
    assert_contains(
        &plain,
        &[
            "case \"a new sprocket gets its status\" failed:",
            "expect.statusPatches[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"ready\": false",
            "+      \"ready\": true",
            "events[0]: was observed but not expected:",
            "expect.result: differs (-expected, +actual):",
            "-  \"requeueAfter\": \"1m\"",
            // The status write suppresses the tree's requeue.
            "+{}",
        ],
    );
}

#[test]
fn the_crd_file_names_the_same_resource_as_the_rust_type() {
    let text = std::fs::read_to_string(fixture("crds/sprockets.example.com.yaml")).unwrap();
    let file: Value = serde_saphyr::from_str(&text).expect("the CRD file is YAML");
    let derived = serde_json::to_value(Sprocket::crd()).unwrap();
    for pointer in [
        "/metadata/name",
        "/spec/group",
        "/spec/scope",
        "/spec/names/kind",
        "/spec/names/plural",
        "/spec/versions/0/name",
    ] {
        assert_eq!(file.pointer(pointer), derived.pointer(pointer), "{pointer}");
    }
}

// ---------------------------------------------------------------------------------------------
// Errors in suite files.
// ---------------------------------------------------------------------------------------------

#[test]
fn an_unknown_field_names_the_file_the_line_and_the_field() {
    let path = fixture("invalid/unknown-field.yaml");
    let err = ReconcilerTestSuite::from_yaml_file(&path)
        .err()
        .expect("an unknown field is an error");
    assert_names_the_line(
        &err,
        &path,
        "line 7",
        &["unknown field `statusPatchs`", "statusPatches"],
    );
}

#[test]
fn a_malformed_value_names_the_file_the_line_and_the_field() {
    let path = fixture("invalid/malformed-value.yaml");
    let err = ReconcilerTestSuite::from_yaml_file(&path)
        .err()
        .expect("a malformed value is an error");
    assert_contains(
        &err.to_string(),
        &[
            &path.display().to_string(),
            "line 8",
            "invalid boolean",
            "requeue: sometimes",
        ],
    );
}

#[test]
fn a_case_without_a_name_is_an_error() {
    let path = fixture("invalid/unnamed-case.yaml");
    let err = ReconcilerTestSuite::from_yaml_file(&path)
        .err()
        .expect("an unnamed case is an error");
    assert_eq!(
        err.to_string(),
        format!("{}: cases[1] has no name", path.display())
    );
    let err = SubReconcilerTestSuite::from_yaml_file(&path)
        .err()
        .expect("in a sub-reconciler suite too");
    assert_contains(&err.to_string(), &["cases[1] has no name"]);
}

#[test]
fn from_yaml_str_rejects_a_case_without_a_name_too() {
    let text = format!("{INLINE_CRD}cases:\n  - request: {{namespace: default, name: w}}\n");
    let err = ReconcilerTestSuite::from_yaml_str("inline.yaml", &text)
        .err()
        .expect("an unnamed case is an error");
    assert_contains(&err.to_string(), &["inline.yaml", "cases[0] has no name"]);
}

#[test]
fn two_cases_of_one_name_are_an_error() {
    let case = "  - name: twice\n    request: {namespace: default, name: w}\n";
    let text = format!("{INLINE_CRD}cases:\n{case}{case}");
    let err = ReconcilerTestSuite::from_yaml_str("inline.yaml", &text)
        .err()
        .expect("a repeated name is an error");
    assert_contains(
        &err.to_string(),
        &[
            "inline.yaml",
            "cases[1] has the name of cases[0]: \"twice\"",
        ],
    );
}

#[test]
fn from_yaml_str_errors_name_the_origin_and_line() {
    let text = "cases:\n  - name: x\n    expect:\n      statusPatchs: []\n";
    let err = SubReconcilerTestSuite::from_yaml_str("sprockets/inline.yaml", text)
        .err()
        .expect("an unknown field is an error");
    assert_eq!(err.path, Path::new("sprockets/inline.yaml"));
    assert_contains(
        &err.to_string(),
        &["sprockets/inline.yaml", "line 4", "statusPatchs"],
    );
}

#[test]
fn from_yaml_str_needs_inline_crds() {
    let text = "crds: [../crds/sprockets.example.com.yaml]\ncases: []\n";
    let err = ReconcilerTestSuite::from_yaml_str("inline.yaml", text)
        .err()
        .expect("a CRD file is an error");
    assert_contains(
        &err.to_string(),
        &[
            "inline.yaml: crds: \"../crds/sprockets.example.com.yaml\" is a file; a suite read from a string needs inline CRDs",
        ],
    );
}

#[test]
fn a_missing_suite_or_crd_file_is_an_error_naming_it() {
    let missing = fixture("suites/no-such-suite.yaml");
    let err = ReconcilerTestSuite::from_yaml_file(&missing)
        .err()
        .expect("a missing file is an error");
    assert_contains(
        &err.to_string(),
        &[&missing.display().to_string(), "cannot read"],
    );

    let dir = TempDir::new("missing-crd");
    let suite = dir.write(
        "suite.yaml",
        "crds: [crds/nowhere.yaml]\ncases:\n  - name: x\n    request: {name: w}\n",
    );
    let err = ReconcilerTestSuite::from_yaml_file(&suite)
        .err()
        .expect("a missing CRD file is an error");
    assert_eq!(err.path, suite);
    assert_contains(&err.to_string(), &["crds: cannot read", "nowhere.yaml"]);
}

// ---------------------------------------------------------------------------------------------
// Regenerating fixtures.
// ---------------------------------------------------------------------------------------------

/// `suites/status.yaml`, copied with its CRD to a directory of its own, with wrong expectations.
fn wrong_status_suite(dir: &TempDir) -> PathBuf {
    dir.copy("crds/sprockets.example.com.yaml", |t| t);
    dir.copy("suites/status.yaml", |text| {
        let text = replace_once(
            text,
            "      patch:\n        status:\n          ready: true\n",
            "      patch:\n        status:\n          ready: false\n",
        );
        let text = replace_once(
            text,
            "      data:\n        size: \"1\"\n",
            "      data:\n        size: \"7\"\n",
        );
        replace_once(
            text,
            "error: size must not be negative, got -1",
            "error: size must be positive",
        )
    })
}

#[tokio::test]
async fn without_overwrite_a_failing_suite_file_is_left_as_it_is() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    let dir = TempDir::new("no-overwrite");
    let path = wrong_status_suite(&dir);
    let before = std::fs::read_to_string(&path).unwrap();
    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    assert!(!report.passed());
    let plain = report.render(false);
    assert_contains(
        &plain,
        &[
            "2 of 4 cases failed, 0 skipped",
            "case \"a new sprocket gets its config map and its status\" failed:",
            "expect.creates[0]: differs",
            "-    \"size\": \"7\"",
            "+    \"size\": \"1\"",
            "expect.statusPatches[0]: differs",
            "case \"a negative size is an error\" failed:",
            "expect.error: the error \"size must not be negative, got -1\" does not contain \"size must be positive\"",
        ],
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[tokio::test]
async fn overwrite_rewrites_a_suite_with_what_its_cases_observed() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    let dir = TempDir::new("overwrite");
    let path = wrong_status_suite(&dir);
    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&report);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# Reconciler suite for `sprocket_reconciler` (tests/yaml_fixtures.rs)"),
        "the comment heading the file is kept:\n{text}"
    );
    assert!(!text.contains("ready: false"), "{text}");
    assert!(!text.contains("size must be positive"), "{text}");
    assert!(
        !text.contains("resourceVersion"),
        "fields the server sets are not written:\n{text}"
    );
    assert!(
        !text.contains("exact"),
        "no byte-exact body where the file had none:\n{text}"
    );
    assert_contains(
        &text,
        &[
            "../crds/sprockets.example.com.yaml",
            "ready: true",
            "size must not be negative, got -1",
            "StatusPatched",
            "30s",
        ],
    );

    // The rewritten file is a suite that passes as it is.
    let again = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&again);
    assert_eq!(again.cases.len(), 4);
    // And running it again rewrites nothing.
    ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[tokio::test]
async fn overwrite_edits_only_the_expectations_that_changed_and_keeps_the_rest_of_the_file() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    let dir = TempDir::new("overwrite-in-place");
    let path = wrong_status_suite(&dir);
    // Inputs in the author's own style, and comments among the cases.
    let styled = replace_once(
        std::fs::read_to_string(&path).unwrap(),
        "- name: a negative size is an error\n",
        "# a comment between cases\n- name: a negative size is an error   # and after a name\n",
    );
    std::fs::write(&path, &styled).unwrap();
    ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    // The three wrong expectations are put right; every other byte is the author's.
    let original = std::fs::read_to_string(fixture("suites/status.yaml")).unwrap();
    let expected = replace_once(
        original,
        "- name: a negative size is an error\n",
        "# a comment between cases\n- name: a negative size is an error   # and after a name\n",
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
}

#[tokio::test]
async fn overwrite_keeps_byte_exact_bodies_only_where_the_file_had_them() {
    if regenerating() {
        return; // the suite files are being rewritten by `every_sprocket_suite_passes`
    }
    let dir = TempDir::new("overwrite-exact");
    let path = dir.copy("suites/config-map.yaml", |text| {
        replace_once(
            text,
            r#"exact: "{\"data\":{\"size\":\"2\"}}""#,
            r#"exact: "{\"data\": {\"size\": \"2\"}}""#,
        )
    });
    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    assert_contains(
        &report.render(false),
        &[
            "expect.patches[0].exact: the body on the wire differs (-expected, +actual):",
            r#"-{"data": {"size": "2"}}"#,
            r#"+{"data":{"size":"2"}}"#,
        ],
    );

    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&report);
    let text = std::fs::read_to_string(&path).unwrap();
    let file: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        file.pointer("/cases/0/expect/patches/0/exact"),
        Some(&json!(r#"{"data":{"size":"2"}}"#)),
        "{text}"
    );
    assert_eq!(
        file.pointer("/cases/1/expect/patches/0/exact"),
        None,
        "{text}"
    );
    assert_eq!(
        file.pointer("/cases/2/expect/statusPatches/0/patch"),
        Some(&json!({"status": {"ready": true}})),
        "{text}"
    );
    let again = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    passes(&again);
}

#[tokio::test]
async fn overwrite_rewrites_a_sub_reconciler_suite_too() {
    if regenerating() {
        return; // the suite file is being rewritten by `a_sub_reconciler_suite_checks_the_resource_and_the_stash`
    }
    let dir = TempDir::new("overwrite-sub");
    dir.copy("crds/sprockets.example.com.yaml", |t| t);
    let path = dir.copy("sub/labels.yaml", |text| {
        replace_once(
            text,
            "        labels:\n          size: \"3\"\n",
            "        labels:\n          size: \"30\"\n",
        )
    });
    let report = SubReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .stash_type(SIZE)
        .check(|_| label_size_owner_and_stash())
        .await;
    passes(&report);
    let again = SubReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .stash_type(SIZE)
        .check(|_| label_size_owner_and_stash())
        .await;
    passes(&again);
}

#[tokio::test]
async fn overwrite_leaves_cases_that_could_not_run_failed() {
    let dir = TempDir::new("overwrite-setup-failure");
    let path = dir.write(
        "suite.yaml",
        &format!(
            "{INLINE_CRD}{}",
            r#"
cases:
  - name: no request
    given:
      - {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 2}}
"#
        ),
    );
    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(|env| sprocket_reconciler(env.config()))
        .await;
    assert!(!report.passed());
    assert!(matches!(report.cases[0].status, CaseStatus::Failed(_)));
    assert_contains(
        &report.render(false),
        &["case: a reconciler case needs a `request`"],
    );
}

#[tokio::test]
async fn overwrite_rewrites_the_expectations_of_additional_configs_too() {
    let dir = TempDir::new("overwrite-additional");
    let path = dir.write(
        "suite.yaml",
        &format!(
            "{INLINE_CRD}{}",
            r#"
cases:
  - name: mirrors its config map
    request: {namespace: default, name: w}
    given:
      - {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 2}}
    additionalConfigs:
      other:
        expect:
          creates:
            - {apiVersion: v1, kind: ConfigMap, metadata: {name: w-config}, data: {size: "9"}}
"#
        ),
    );
    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(mirroring_reconciler)
        .await;
    passes(&report);
    let again = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(mirroring_reconciler)
        .await;
    passes(&again);
}

#[tokio::test]
async fn an_overwritten_suite_passes_when_run_again_or_the_overwrite_fails() {
    let dir = TempDir::new("overwrite-panic");
    let path = dir.write(
        "suite.yaml",
        &format!(
            "{INLINE_CRD}{}",
            r#"
cases:
  - name: panics on zero
    request: {namespace: default, name: w}
    given:
      - {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 0}}
"#
        ),
    );
    let report = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(true)
        .check(with(panic_on_zero))
        .await;
    let again = ReconcilerTestSuite::from_yaml_file(&path)
        .unwrap()
        .overwrite_fixtures(false)
        .check(with(panic_on_zero))
        .await;
    assert_eq!(
        report.passed(),
        again.passed(),
        "the overwrite said {:?}, the rewritten file says:\n{}",
        report.passed(),
        again.render(false)
    );
}

#[tokio::test]
async fn the_mirroring_suite_passes_with_the_right_additional_config_expectations() {
    let text = format!(
        "{INLINE_CRD}{}",
        r#"
cases:
  - name: mirrors its config map
    request: {namespace: default, name: w}
    given:
      - {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 2}}
    additionalConfigs:
      other:
        expect:
          creates:
            - {apiVersion: v1, kind: ConfigMap, metadata: {name: w-config}, data: {size: "2"}}
  - name: mirrors the wrong size
    request: {namespace: default, name: w}
    given:
      - {apiVersion: example.com/v1, kind: Sprocket, metadata: {name: w, namespace: default}, spec: {size: 2}}
    additionalConfigs:
      other:
        expect:
          creates:
            - {apiVersion: v1, kind: ConfigMap, metadata: {name: w-config}, data: {size: "9"}}
"#
    );
    let report = ReconcilerTestSuite::from_yaml_str("mirror.yaml", &text)
        .unwrap()
        .check(mirroring_reconciler)
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    assert_contains(
        &report.render(false),
        &[
            "case \"mirrors the wrong size\" failed:",
            "additionalConfigs.other.expect.creates[0]: differs (-expected, +actual):",
            "-    \"size\": \"9\"",
            "+    \"size\": \"2\"",
        ],
    );
}
