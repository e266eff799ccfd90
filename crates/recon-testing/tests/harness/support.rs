//! Shared by the reconciler-table tests: the resource under test, small reconcilers
//! with one write each, and helpers that run a case and read its report.

use std::time::Duration;

use crate::sprocket::{SPROCKET, Sprocket};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{CustomResourceExt, Resource};
use recon_core::{
    Context, Error, Event, Outcome, Request, ResourceReconciler, Stasher, SyncReconciler,
};
use recon_testing::{
    CaseStatus, DeleteRef, EventRef, PatchRef, ReconcilerTests, Report, SubReconcilerTests,
    TestCase, TestEnv,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The resource under test and small reconcilers, one write each.
// ---------------------------------------------------------------------------------------------

/// A typed stash key.
pub(crate) const SIZE: Stasher<i32> = Stasher::new("size");

pub(crate) fn sprocket(size: i32) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Sprocket",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": size},
    })
}

pub(crate) fn sprocket_with_status(size: i32, status: Value) -> Value {
    let mut w = sprocket(size);
    w["status"] = status;
    w
}

pub(crate) fn config_map(name: &str, data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "w"}},
        "data": data,
    })
}

/// The config map `c` in `default`: no labels, no data.
pub(crate) fn bare_config_map() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"}})
}

pub(crate) fn request() -> Request {
    Request::namespaced("default", "w")
}

pub(crate) fn configmaps(ctx: &Context) -> Api<ConfigMap> {
    Api::namespaced(ctx.config().client().clone(), "default")
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// Creates the config map `w-config` holding the sprocket's size.
pub(crate) fn create_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("CreateConfigMap").sync(async |ctx, w| {
        let cm: ConfigMap = from_json(json!({
            "metadata": {"name": "w-config", "labels": {"app": "w"}},
            "data": {"size": w.spec.size.to_string()},
        }));
        configmaps(ctx).create(&PostParams::default(), &cm).await?;
        Ok(())
    })
}

/// Replaces `w-config` (read first) with the sprocket's size.
pub(crate) fn update_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("UpdateConfigMap").sync(async |ctx, w| {
        let api = configmaps(ctx);
        let mut cm = api.get("w-config").await?;
        cm.data
            .get_or_insert_default()
            .insert("size".into(), w.spec.size.to_string());
        api.replace("w-config", &PostParams::default(), &cm).await?;
        Ok(())
    })
}

/// Merge-patches the sprocket's size into `w-config`.
pub(crate) fn patch_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("PatchConfigMap").sync(async |ctx, w| {
        let patch = json!({"data": {"size": w.spec.size.to_string()}});
        configmaps(ctx)
            .patch("w-config", &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(())
    })
}

/// Whether an error is the in-memory server's answer to server-side apply, which it does not
/// implement (501): the request is still recorded, which is all the harness reads.
pub(crate) fn apply_not_implemented(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 501)
}

/// Server-side applies `w-applied`.
pub(crate) fn apply_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("ApplyConfigMap").sync(async |ctx, w| {
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "w-applied"},
            "data": {"size": w.spec.size.to_string()},
        });
        let params = PatchParams::apply("sprockets");
        match configmaps(ctx)
            .patch("w-applied", &params, &Patch::Apply(body))
            .await
        {
            Err(e) if !apply_not_implemented(&e) => Err(e.into()),
            _ => Ok(()),
        }
    })
}

/// Server-side applies the sprocket's status itself (rather than through a `StatusStrategy`, so
/// the in-memory server's 501 can be tolerated).
pub(crate) fn apply_status() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("ApplyStatus").sync(async |ctx, w| {
        let api: Api<Sprocket> = Api::namespaced(ctx.config().client().clone(), "default");
        let body = json!({
            "apiVersion": "example.com/v1",
            "kind": "Sprocket",
            "metadata": {"name": "w"},
            "status": {"ready": w.spec.size > 0},
        });
        let params = PatchParams::apply("sprockets").force();
        match api.patch_status("w", &params, &Patch::Apply(body)).await {
            Err(e) if !apply_not_implemented(&e) => Err(e.into()),
            _ => Ok(()),
        }
    })
}

/// Deletes `w-config`.
pub(crate) fn delete_config_map() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("DeleteConfigMap").sync(async |ctx, _w| {
        configmaps(ctx)
            .delete("w-config", &DeleteParams::default())
            .await?;
        Ok(())
    })
}

/// Deletes every config map labelled `app=w`.
pub(crate) fn delete_config_maps() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("DeleteConfigMaps").sync(async |ctx, _w| {
        configmaps(ctx)
            .delete_collection(
                &DeleteParams::default(),
                &ListParams::default().labels("app=w"),
            )
            .await?;
        Ok(())
    })
}

/// `status.ready`: whether the size is positive (the root writes the status).
pub(crate) fn set_ready() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("SetReady").sync(async |_ctx, w| {
        w.status.get_or_insert_default().ready = Some(w.spec.size > 0);
        Ok(())
    })
}

/// Marks the `Sized` condition true (with `manage_status`, `Ready` follows).
pub(crate) fn mark_sized() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("MarkSized").sync(async |ctx, w| {
        let status = w.status.get_or_insert_default();
        SPROCKET
            .manage(&mut status.conditions, ctx.now())
            .mark_true("Sized", "Sized", "");
        Ok(())
    })
}

/// Publishes a Normal event with the size.
pub(crate) fn publish_size() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("PublishSize").sync(async |ctx, w| {
        let note = format!("size is {}", w.spec.size);
        ctx.publish(&w.object_ref(&()), Event::normal("Sized", "Size", note))
            .await;
        Ok(())
    })
}

/// Asks to be reconciled again in 30 seconds.
pub(crate) fn requeue_later() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("RequeueLater")
        .sync(async |_ctx, _w| Ok(Outcome::requeue_after(Duration::from_secs(30))))
}

/// Fails for a negative size.
pub(crate) fn reject_negative() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("RejectNegative").sync(async |_ctx, w| {
        if w.spec.size < 0 {
            return Err(Error::msg(format!(
                "size must not be negative, got {}",
                w.spec.size
            )));
        }
        Ok(())
    })
}

/// Panics for a zero size.
pub(crate) fn panic_on_zero() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("PanicOnZero").sync(async |_ctx, w| {
        assert!(w.spec.size != 0, "size is zero");
        Ok(())
    })
}

/// Creates a config map with a generated name and records its name and uid in the status.
pub(crate) fn create_generated() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("CreateGenerated").sync(async |ctx, w| {
        let cm: ConfigMap = from_json(json!({"metadata": {"generateName": "w-"}}));
        let created = configmaps(ctx).create(&PostParams::default(), &cm).await?;
        let status = w.status.get_or_insert_default();
        status.config_map = created.metadata.name;
        status.config_map_uid = created.metadata.uid;
        Ok(())
    })
}

/// Creates `w-config` in the cluster of `other` instead of the default one.
pub(crate) fn create_config_map_in(other: recon_core::Config) -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("CreateElsewhere").sync_with(other, async |_ctx, other, w| {
        let api: Api<ConfigMap> = Api::namespaced(other.client().clone(), "default");
        let cm: ConfigMap = from_json(json!({
            "metadata": {"name": "w-config"},
            "data": {"size": w.spec.size.to_string()},
        }));
        api.create(&PostParams::default(), &cm).await?;
        other
            .recorder()
            .publish(
                &Event::normal("Mirrored", "Mirror", "mirrored"),
                &w.object_ref(&()),
            )
            .await?;
        Ok(())
    })
}

/// Sub-reconciler: labels the sprocket with its size.
pub(crate) fn label_size() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("LabelSize").sync(async |_ctx, w| {
        let size = w.spec.size.to_string();
        w.metadata
            .labels
            .get_or_insert_default()
            .insert("size".into(), size);
        Ok(())
    })
}

/// Sub-reconciler: stashes the size as JSON under `size` (no `stash_type` needed).
pub(crate) fn stash_size_as_json() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("StashSizeAsJson").sync(async |ctx, w| {
        ctx.stash().store("size", json!(w.spec.size));
        Ok(())
    })
}

/// Sub-reconciler: stashes the size as an `i32` with the typed stasher.
pub(crate) fn stash_size_typed() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("StashSizeTyped").sync(async |ctx, w| {
        SIZE.store(ctx, w.spec.size);
        Ok(())
    })
}

/// Sub-reconciler: reads the typed stash and labels the sprocket with it.
pub(crate) fn label_stashed_size() -> SyncReconciler<Sprocket> {
    SyncReconciler::<Sprocket>::new("LabelStashedSize").sync(async |ctx, w| {
        let size = SIZE.retrieve(ctx).map_err(Error::new)?;
        w.metadata
            .labels
            .get_or_insert_default()
            .insert("size".into(), size.to_string());
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------------

/// A factory running `sub` under a `ResourceReconciler` with the default status strategy.
pub(crate) fn with(
    sub: fn() -> SyncReconciler<Sprocket>,
) -> impl Fn(&TestEnv) -> ResourceReconciler<Sprocket> {
    move |env| ResourceReconciler::new(env.config(), sub())
}

/// Runs one reconciler case named `name`.
pub(crate) async fn check(
    name: &str,
    case: TestCase,
    factory: impl Fn(&TestEnv) -> ResourceReconciler<Sprocket>,
) -> Report {
    ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(name, case)
        .check(factory)
        .await
}

/// Runs one sub-reconciler case named `name`.
pub(crate) async fn check_sub(
    name: &str,
    case: TestCase,
    sub: fn() -> SyncReconciler<Sprocket>,
) -> Report {
    SubReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case(name, case)
        .check(move |_| sub())
        .await
}

/// The plain report of a table that must have failed.
#[track_caller]
pub(crate) fn failure(report: &Report) -> String {
    let text = report.render(false);
    assert!(!report.passed(), "the table passed:\n{text}");
    text
}

/// Asserts the report passed, showing it otherwise.
#[track_caller]
pub(crate) fn passes(report: &Report) {
    assert!(report.passed(), "{}", report.render(false));
    assert!(
        report
            .cases
            .iter()
            .all(|c| matches!(c.status, CaseStatus::Passed | CaseStatus::Skipped)),
        "{report:?}"
    );
}

#[track_caller]
pub(crate) fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} is missing from:\n{text}");
    }
}

/// Asserts the report failed with the case `case`'s expectation `expectation` shown as a diff
/// holding each of `lines`.
#[track_caller]
pub(crate) fn assert_differs(report: &Report, case: &str, expectation: &str, lines: &[&str]) {
    let text = failure(report);
    let header = [
        format!("case {case:?} failed:"),
        format!("{expectation}: differs (-expected, +actual):"),
        "--- expected".to_owned(),
        "+++ actual".to_owned(),
    ];
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    assert_contains(&text, &header);
    assert_contains(&text, lines);
}

/// Runs the cases `right` and `wrong` as one table and asserts that `right` passes while `wrong`
/// fails at `expectation` alone, shown as a diff holding each of `lines`.
pub(crate) async fn assert_compared(
    factory: impl Fn(&TestEnv) -> ResourceReconciler<Sprocket>,
    right: TestCase,
    wrong: TestCase,
    expectation: &str,
    lines: &[&str],
) {
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
        .case("right", right)
        .case("wrong", wrong)
        .check(factory)
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed, "{report:?}");
    assert_differs(&report, "wrong", expectation, lines);
    assert_contains(&report.render(false), &["1 of 2 cases failed, 0 skipped"]);
    assert_eq!(mismatches(&report, "wrong"), [expectation]);
}

/// Asserts that loading the suite file `path` failed with an error naming the file, `line` and
/// each of `parts`.
#[track_caller]
pub(crate) fn assert_names_the_line(
    err: &recon_testing::FixtureError,
    path: &std::path::Path,
    line: &str,
    parts: &[&str],
) {
    assert_eq!(err.path, path);
    let text = err.to_string();
    assert_contains(&text, &[&path.display().to_string(), line]);
    assert_contains(&text, parts);
}

/// The labels of the mismatches of the case `name`.
#[track_caller]
pub(crate) fn mismatches(report: &Report, name: &str) -> Vec<String> {
    let case = report
        .cases
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name:?} in {report:?}"));
    match &case.status {
        CaseStatus::Failed(m) => m.iter().map(|m| m.expectation.clone()).collect(),
        other => panic!("case {name:?} did not fail: {other:?}"),
    }
}

/// The file `path` under the harness's YAML fixtures.
pub(crate) fn fixture(path: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/harness")
        .join(path)
}

/// Whether fixtures are being regenerated (`RECON_FIXTURES=overwrite`, as `cargo xtask fixtures`
/// runs the tests): the suite files are then rewritten while tests run, so the tests that read
/// their text stand aside.
pub(crate) fn regenerating() -> bool {
    std::env::var("RECON_FIXTURES").is_ok_and(|v| v == "overwrite")
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default(),
    }
}

/// The text with ANSI escape sequences removed.
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn status_patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

pub(crate) fn ready_patch(ready: bool) -> PatchRef {
    PatchRef::merge(
        "Sprocket",
        Some("default"),
        "w",
        json!({"status": {"ready": ready}}),
    )
}

pub(crate) fn delete_ref(name: &str) -> DeleteRef {
    DeleteRef::new("ConfigMap", Some("default"), name)
}

/// The sprocket's reconcile (size 1) under `set_ready`, expecting the status patch setting
/// `ready` to `ready` and its event.
pub(crate) fn sets_ready(ready: bool) -> TestCase {
    TestCase::reconcile(request())
        .given(&sprocket(1))
        .expect_status_patch(ready_patch(ready))
        .expect_event(status_patched())
}

/// A server-side apply of the `api_version` `kind` named `name` in `default`, its configuration
/// holding `fields` beside its identity.
pub(crate) fn apply_of(api_version: &str, kind: &str, name: &str, fields: Value) -> PatchRef {
    let mut configuration = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name},
    });
    if let (Some(to), Value::Object(fields)) = (configuration.as_object_mut(), fields) {
        to.extend(fields);
    }
    PatchRef::apply(kind, Some("default"), name, configuration)
}

/// The reconcile of a sprocket of `size`, with its config map `w-config` at size 1.
pub(crate) fn with_config_map_at_1(size: i32) -> TestCase {
    TestCase::reconcile(request())
        .given(&sprocket(size))
        .given(&config_map("w-config", json!({"size": "1"})))
}

/// The merge patch setting `w-config`'s size.
pub(crate) fn size_patch(size: &str) -> PatchRef {
    PatchRef::merge(
        "ConfigMap",
        Some("default"),
        "w-config",
        json!({"data": {"size": size}}),
    )
}

/// What a snapshot sink was handed, by snapshot name.
pub(crate) type Snapshots = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;

/// A snapshot sink keeping what it is handed, and where it keeps it.
pub(crate) fn recording_sink() -> (recon_testing::SnapshotSink, Snapshots) {
    let got = Snapshots::default();
    let record = got.clone();
    let sink: recon_testing::SnapshotSink =
        std::sync::Arc::new(move |name: &str, value: &Value| {
            record
                .lock()
                .unwrap()
                .push((name.to_owned(), value.clone()));
        });
    (sink, got)
}
