//! The harness's own tests: each expectation kind passes when met and fails with a readable
//! diff when not, every mismatch of every case is reported, and the rest of the table features
//! (server fields, skip and focus, hooks, reactors, additional configs, determinism, snapshots,
//! colour) behave as the crate docs say. Reports are checked through their captured text
//! (`Report::render(false)`), never by eye.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::widget::{WIDGET, Widget};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{CustomResource, CustomResourceExt, Resource};
use recon_core::{
    Condition, Context, Error, Event, IntoBoxed, Outcome, Reference, Request, ResourceReconciler,
    Sequence, Stasher, StatusStrategy, SyncReconciler,
};
use recon_fake::{Failure, Verb};
use recon_testing::{
    CaseStatus, DeleteCollectionRef, DeleteRef, ErrorSignal, EventRef, ExpectConfig, Expectations,
    FailureSpec, OutcomeSpec, PatchRef, PatchType, ReactorSpec, ReconcilerTestSuite,
    ReconcilerTests, Report, SnapshotSink, SubReconcilerTests, TestCase, TestEnv, json_diff,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// The resource under test and small reconcilers, one write each.
// ---------------------------------------------------------------------------------------------

/// A typed stash key.
const SIZE: Stasher<i32> = Stasher::new("size");

fn widget(size: i32) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": size},
    })
}

fn widget_with_status(size: i32, status: Value) -> Value {
    let mut w = widget(size);
    w["status"] = status;
    w
}

fn config_map(name: &str, data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "w"}},
        "data": data,
    })
}

fn request() -> Request {
    Request::namespaced("default", "w")
}

fn configmaps(ctx: &Context) -> Api<ConfigMap> {
    Api::namespaced(ctx.config().client().clone(), "default")
}

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// Creates the config map `w-config` holding the widget's size.
fn create_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("CreateConfigMap").sync(async |ctx, w| {
        let cm: ConfigMap = from_json(json!({
            "metadata": {"name": "w-config", "labels": {"app": "w"}},
            "data": {"size": w.spec.size.to_string()},
        }));
        configmaps(ctx).create(&PostParams::default(), &cm).await?;
        Ok(())
    })
}

/// Replaces `w-config` (read first) with the widget's size.
fn update_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("UpdateConfigMap").sync(async |ctx, w| {
        let api = configmaps(ctx);
        let mut cm = api.get("w-config").await?;
        cm.data
            .get_or_insert_default()
            .insert("size".into(), w.spec.size.to_string());
        api.replace("w-config", &PostParams::default(), &cm).await?;
        Ok(())
    })
}

/// Merge-patches the widget's size into `w-config`.
fn patch_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("PatchConfigMap").sync(async |ctx, w| {
        let patch = json!({"data": {"size": w.spec.size.to_string()}});
        configmaps(ctx)
            .patch("w-config", &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(())
    })
}

/// Whether an error is the in-memory server's answer to server-side apply, which it does not
/// implement (501): the request is still recorded, which is all the harness reads.
fn apply_not_implemented(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 501)
}

/// Server-side applies `w-applied`.
fn apply_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("ApplyConfigMap").sync(async |ctx, w| {
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "w-applied"},
            "data": {"size": w.spec.size.to_string()},
        });
        let params = PatchParams::apply("widgets");
        match configmaps(ctx)
            .patch("w-applied", &params, &Patch::Apply(body))
            .await
        {
            Err(e) if !apply_not_implemented(&e) => Err(e.into()),
            _ => Ok(()),
        }
    })
}

/// Server-side applies the widget's status itself (rather than through a `StatusStrategy`, so
/// the in-memory server's 501 can be tolerated).
fn apply_status() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("ApplyStatus").sync(async |ctx, w| {
        let api: Api<Widget> = Api::namespaced(ctx.config().client().clone(), "default");
        let body = json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "status": {"ready": w.spec.size > 0},
        });
        let params = PatchParams::apply("widgets").force();
        match api.patch_status("w", &params, &Patch::Apply(body)).await {
            Err(e) if !apply_not_implemented(&e) => Err(e.into()),
            _ => Ok(()),
        }
    })
}

/// Deletes `w-config`.
fn delete_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("DeleteConfigMap").sync(async |ctx, _w| {
        configmaps(ctx)
            .delete("w-config", &DeleteParams::default())
            .await?;
        Ok(())
    })
}

/// Deletes every config map labelled `app=w`.
fn delete_config_maps() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("DeleteConfigMaps").sync(async |ctx, _w| {
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
fn set_ready() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("SetReady").sync(async |_ctx, w| {
        w.status.get_or_insert_default().ready = Some(w.spec.size > 0);
        Ok(())
    })
}

/// Marks the `Sized` condition true (with `manage_status`, `Ready` follows).
fn mark_sized() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("MarkSized").sync(async |ctx, w| {
        let status = w.status.get_or_insert_default();
        WIDGET
            .manage(&mut status.conditions, ctx.now())
            .mark_true("Sized", "Sized", "");
        Ok(())
    })
}

/// Publishes a Normal event with the size.
fn publish_size() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("PublishSize").sync(async |ctx, w| {
        let note = format!("size is {}", w.spec.size);
        ctx.publish(&w.object_ref(&()), Event::normal("Sized", "Size", note))
            .await;
        Ok(())
    })
}

/// Asks to be reconciled again in 30 seconds.
fn requeue_later() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("RequeueLater")
        .sync(async |_ctx, _w| Ok(Outcome::requeue_after(Duration::from_secs(30))))
}

/// Fails for a negative size.
pub(crate) fn reject_negative() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("RejectNegative").sync(async |_ctx, w| {
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
fn panic_on_zero() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("PanicOnZero").sync(async |_ctx, w| {
        assert!(w.spec.size != 0, "size is zero");
        Ok(())
    })
}

/// Creates a config map with a generated name and records its name and uid in the status.
fn create_generated() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("CreateGenerated").sync(async |ctx, w| {
        let cm: ConfigMap = from_json(json!({"metadata": {"generateName": "w-"}}));
        let created = configmaps(ctx).create(&PostParams::default(), &cm).await?;
        let status = w.status.get_or_insert_default();
        status.config_map = created.metadata.name;
        status.config_map_uid = created.metadata.uid;
        Ok(())
    })
}

/// Creates `w-config` in the cluster of `other` instead of the default one.
fn create_config_map_in(other: recon_core::Config) -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("CreateElsewhere").sync_with(other, async |_ctx, other, w| {
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

/// Sub-reconciler: labels the widget with its size.
fn label_size() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("LabelSize").sync(async |_ctx, w| {
        let size = w.spec.size.to_string();
        w.metadata
            .labels
            .get_or_insert_default()
            .insert("size".into(), size);
        Ok(())
    })
}

/// Sub-reconciler: stashes the size as JSON under `size` (no `stash_type` needed).
fn stash_size_as_json() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("StashSizeAsJson").sync(async |ctx, w| {
        ctx.stash().store("size", json!(w.spec.size));
        Ok(())
    })
}

/// Sub-reconciler: stashes the size as an `i32` with the typed stasher.
fn stash_size_typed() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("StashSizeTyped").sync(async |ctx, w| {
        SIZE.store(ctx, w.spec.size);
        Ok(())
    })
}

/// Sub-reconciler: reads the typed stash and labels the widget with it.
fn label_stashed_size() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("LabelStashedSize").sync(async |ctx, w| {
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
fn with(sub: fn() -> SyncReconciler<Widget>) -> impl Fn(&TestEnv) -> ResourceReconciler<Widget> {
    move |env| ResourceReconciler::new(env.config(), sub())
}

/// Runs one reconciler case named `name`.
async fn check(
    name: &str,
    case: TestCase,
    factory: impl Fn(&TestEnv) -> ResourceReconciler<Widget>,
) -> Report {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(name, case)
        .check(factory)
        .await
}

/// Runs one sub-reconciler case named `name`.
async fn check_sub(name: &str, case: TestCase, sub: fn() -> SyncReconciler<Widget>) -> Report {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(name, case)
        .check(move |_| sub())
        .await
}

/// The plain report of a table that must have failed.
#[track_caller]
fn failure(report: &Report) -> String {
    let text = report.render(false);
    assert!(!report.passed(), "the table passed:\n{text}");
    text
}

/// Asserts the report passed, showing it otherwise.
#[track_caller]
fn passes(report: &Report) {
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
fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} is missing from:\n{text}");
    }
}

/// The labels of the mismatches of the case `name`.
fn mismatches(report: &Report, name: &str) -> Vec<String> {
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

/// The message of a caught panic.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default(),
    }
}

/// The text with ANSI escape sequences removed.
fn strip_ansi(text: &str) -> String {
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

fn status_patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

fn ready_patch(ready: bool) -> PatchRef {
    PatchRef::merge(
        "Widget",
        Some("default"),
        "w",
        json!({"status": {"ready": ready}}),
    )
}

// ---------------------------------------------------------------------------------------------
// creates
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn creates_pass_when_the_created_object_matches() {
    let report = check(
        "creates its config map",
        TestCase::reconcile(request())
            .given(&widget(3))
            .expect_create(&json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w-config", "labels": {"app": "w"}},
                "data": {"size": "3"},
            })),
        with(create_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn creates_fail_with_a_diff_of_the_created_object() {
    let report = check(
        "creates its config map",
        TestCase::reconcile(request())
            .given(&widget(3))
            .expect_create(&json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w-config", "labels": {"app": "w"}},
                "data": {"size": "4"},
            })),
        with(create_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "1 of 1 cases failed, 0 skipped",
            "case \"creates its config map\" failed:",
            "expect.creates[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-    \"size\": \"4\"",
            "+    \"size\": \"3\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "creates its config map"),
        ["expect.creates[0]"]
    );
}

// ---------------------------------------------------------------------------------------------
// updates
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn updates_pass_when_the_replaced_object_matches() {
    let report = check(
        "updates its config map",
        TestCase::reconcile(request())
            .given(&widget(2))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_update(&config_map("w-config", json!({"size": "2"}))),
        with(update_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn updates_fail_with_a_diff_of_the_replaced_object() {
    let report = check(
        "updates its config map",
        TestCase::reconcile(request())
            .given(&widget(2))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_update(&config_map("w-config", json!({"size": "1", "extra": "x"}))),
        with(update_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"updates its config map\" failed:",
            "expect.updates[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-    \"extra\": \"x\",",
            "-    \"size\": \"1\"",
            "+    \"size\": \"2\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "updates its config map"),
        ["expect.updates[0]"]
    );
}

// ---------------------------------------------------------------------------------------------
// patches, compared as JSON
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn patches_pass_when_the_body_is_the_same_json() {
    let report = check(
        "patches its config map",
        TestCase::reconcile(request())
            .given(&widget(5))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_patch(PatchRef::merge(
                "ConfigMap",
                Some("default"),
                "w-config",
                json!({"data": {"size": "5"}}),
            )),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn patches_fail_with_a_diff_of_the_body() {
    let report = check(
        "patches its config map",
        TestCase::reconcile(request())
            .given(&widget(5))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_patch(PatchRef::merge(
                "ConfigMap",
                Some("default"),
                "w-config",
                json!({"data": {"size": "6"}}),
            )),
        with(patch_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"patches its config map\" failed:",
            "expect.patches[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"size\": \"6\"",
            "+      \"size\": \"5\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "patches its config map"),
        ["expect.patches[0]"]
    );
}

#[tokio::test]
async fn patches_fail_when_the_patch_type_differs() {
    let report = check(
        "patches its config map",
        TestCase::reconcile(request())
            .given(&widget(5))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_patch(PatchRef::json(
                "ConfigMap",
                Some("default"),
                "w-config",
                json!({"data": {"size": "5"}}),
            )),
        with(patch_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.patches[0]: differs (-expected, +actual):",
            "-  \"type\": \"json\"",
            "+  \"type\": \"merge\"",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// patches with `exact`: the body on the wire, byte for byte
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn exact_patches_pass_when_the_wire_body_is_identical() {
    let report = check(
        "patches its config map",
        TestCase::reconcile(request())
            .given(&widget(5))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_patch(
                PatchRef::merge(
                    "ConfigMap",
                    Some("default"),
                    "w-config",
                    json!({"data": {"size": "5"}}),
                )
                .exactly(r#"{"data":{"size":"5"}}"#),
            ),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn exact_patches_fail_on_a_byte_difference_even_when_the_json_is_equal() {
    let report = check(
        "patches its config map",
        TestCase::reconcile(request())
            .given(&widget(5))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_patch(
                PatchRef::merge(
                    "ConfigMap",
                    Some("default"),
                    "w-config",
                    json!({"data": {"size": "5"}}),
                )
                .exactly(r#"{"data": {"size": "5"}}"#),
            ),
        with(patch_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"patches its config map\" failed:",
            "expect.patches[0].exact: the body on the wire differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            r#"-{"data": {"size": "5"}}"#,
            r#"+{"data":{"size":"5"}}"#,
        ],
    );
    // The JSON comparison itself found nothing: only the bytes differ.
    assert_eq!(
        mismatches(&report, "patches its config map"),
        ["expect.patches[0].exact"]
    );
}

#[tokio::test]
async fn an_exact_only_patch_is_compared_by_its_bytes_alone() {
    let exact_only = |body: &str| PatchRef {
        kind: "ConfigMap".into(),
        group: None,
        namespace: Some("default".into()),
        name: "w-config".into(),
        patch_type: PatchType::Merge,
        patch: None,
        exact: Some(body.into()),
        ..Default::default()
    };
    let table = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "right bytes",
            TestCase::reconcile(request())
                .given(&widget(5))
                .given(&config_map("w-config", json!({"size": "1"})))
                .expect_patch(exact_only(r#"{"data":{"size":"5"}}"#)),
        )
        .case(
            "wrong bytes",
            TestCase::reconcile(request())
                .given(&widget(5))
                .given(&config_map("w-config", json!({"size": "1"})))
                .expect_patch(exact_only(r#"{"data":{"size":"7"}}"#)),
        );
    let report = table.check(with(patch_config_map)).await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    assert_eq!(
        mismatches(&report, "wrong bytes"),
        ["expect.patches[0].exact"]
    );
    assert_contains(
        &failure(&report),
        &[r#"-{"data":{"size":"7"}}"#, r#"+{"data":{"size":"5"}}"#],
    );
}

// ---------------------------------------------------------------------------------------------
// applies
// ---------------------------------------------------------------------------------------------

fn applied(size: &str) -> PatchRef {
    PatchRef::apply(
        "ConfigMap",
        Some("default"),
        "w-applied",
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "w-applied"},
            "data": {"size": size},
        }),
    )
}

#[tokio::test]
async fn applies_pass_when_the_applied_configuration_matches() {
    let report = check(
        "applies its config map",
        TestCase::reconcile(request())
            .given(&widget(8))
            .expect_apply(applied("8")),
        with(apply_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn applies_fail_with_a_diff_of_the_applied_configuration() {
    let report = check(
        "applies its config map",
        TestCase::reconcile(request())
            .given(&widget(8))
            .expect_apply(applied("9")),
        with(apply_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"applies its config map\" failed:",
            "expect.applies[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"size\": \"9\"",
            "+      \"size\": \"8\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "applies its config map"),
        ["expect.applies[0]"]
    );
}

#[tokio::test]
async fn an_apply_is_not_a_patch() {
    let report = check(
        "applies its config map",
        TestCase::reconcile(request())
            .given(&widget(8))
            .expect_patch(applied("8")),
        with(apply_config_map),
    )
    .await;
    assert_eq!(
        mismatches(&report, "applies its config map"),
        ["expect.patches[0]", "expect.applies[0]"]
    );
}

// ---------------------------------------------------------------------------------------------
// deletes and deleteCollections
// ---------------------------------------------------------------------------------------------

fn delete_ref(name: &str) -> DeleteRef {
    DeleteRef::new("ConfigMap", Some("default"), name)
}

#[tokio::test]
async fn deletes_pass_when_the_deleted_object_matches() {
    let report = check(
        "deletes its config map",
        TestCase::reconcile(request())
            .given(&widget(1))
            .given(&config_map("w-config", json!({})))
            .expect_delete(delete_ref("w-config")),
        with(delete_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn deletes_fail_with_a_diff_of_the_deleted_object() {
    let report = check(
        "deletes its config map",
        TestCase::reconcile(request())
            .given(&widget(1))
            .given(&config_map("w-config", json!({})))
            .expect_delete(delete_ref("w-settings")),
        with(delete_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"deletes its config map\" failed:",
            "expect.deletes[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-  \"name\": \"w-settings\",",
            "+  \"name\": \"w-config\",",
        ],
    );
}

#[tokio::test]
async fn a_group_in_a_delete_expectation_is_compared() {
    let mut wrong_group = delete_ref("w-config");
    wrong_group.group = Some("apps".into());
    let mut core_group = delete_ref("w-config");
    core_group.group = Some(String::new());
    let given = || {
        TestCase::reconcile(request())
            .given(&widget(1))
            .given(&config_map("w-config", json!({})))
    };
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case("core group", given().expect_delete(core_group))
        .case("wrong group", given().expect_delete(wrong_group))
        .check(with(delete_config_map))
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    assert_contains(
        &failure(&report),
        &["-  \"group\": \"apps\",", "+  \"group\": \"\","],
    );
}

fn delete_collection_ref(selector: &str) -> DeleteCollectionRef {
    DeleteCollectionRef::new("ConfigMap", Some("default")).label_selector(selector)
}

#[tokio::test]
async fn delete_collections_pass_when_the_selector_matches() {
    let report = check(
        "deletes its config maps",
        TestCase::reconcile(request())
            .given(&widget(1))
            .given(&config_map("w-config", json!({})))
            .expect_delete_collection(delete_collection_ref("app=w")),
        with(delete_config_maps),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn delete_collections_fail_with_a_diff_of_the_selector() {
    let report = check(
        "deletes its config maps",
        TestCase::reconcile(request())
            .given(&widget(1))
            .given(&config_map("w-config", json!({})))
            .expect_delete_collection(delete_collection_ref("app=widget")),
        with(delete_config_maps),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"deletes its config maps\" failed:",
            "expect.deleteCollections[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-  \"labelSelector\": \"app=widget\",",
            "+  \"labelSelector\": \"app=w\",",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// statusUpdates, statusPatches, statusApplies
// ---------------------------------------------------------------------------------------------

fn updating_status(env: &TestEnv) -> ResourceReconciler<Widget> {
    ResourceReconciler::new(env.config(), set_ready()).status_strategy(StatusStrategy::Update)
}

#[tokio::test]
async fn status_updates_pass_when_identity_and_status_match() {
    let report = check(
        "updates its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_update(&widget_with_status(1, json!({"ready": true})))
            .expect_event(EventRef::normal("StatusUpdated", "Updated status")),
        updating_status,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_updates_compare_only_identity_and_status() {
    // The spec differs from what was sent, but only identity and status are compared.
    let report = check(
        "updates its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_update(&widget_with_status(99, json!({"ready": true})))
            .expect_event(EventRef::normal("StatusUpdated", "Updated status")),
        updating_status,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_updates_fail_with_a_diff_of_the_status() {
    let report = check(
        "updates its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_update(&widget_with_status(1, json!({"ready": false})))
            .expect_event(EventRef::normal("StatusUpdated", "Updated status")),
        updating_status,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"updates its status\" failed:",
            "expect.statusUpdates[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-    \"ready\": false",
            "+    \"ready\": true",
        ],
    );
    assert_eq!(
        mismatches(&report, "updates its status"),
        ["expect.statusUpdates[0]"]
    );
}

#[tokio::test]
async fn status_patches_pass_when_the_patch_matches() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(ready_patch(true))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_patches_fail_with_a_diff_of_the_patch() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(ready_patch(false))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "1 of 1 cases failed, 0 skipped",
            "case \"patches its status\" failed:",
            "expect.statusPatches[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"ready\": false",
            "+      \"ready\": true",
        ],
    );
    assert_eq!(
        mismatches(&report, "patches its status"),
        ["expect.statusPatches[0]"]
    );
}

#[tokio::test]
async fn a_status_patch_is_not_a_patch_of_the_object() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_patch(ready_patch(true))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    assert_eq!(
        mismatches(&report, "patches its status"),
        ["expect.patches[0]", "expect.statusPatches[0]"]
    );
}

fn status_applied(ready: bool) -> PatchRef {
    PatchRef::apply(
        "Widget",
        Some("default"),
        "w",
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "status": {"ready": ready},
        }),
    )
}

#[tokio::test]
async fn status_applies_pass_when_the_applied_status_matches() {
    let report = check(
        "applies its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_apply(status_applied(true)),
        with(apply_status),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn status_applies_fail_with_a_diff_of_the_applied_status() {
    let report = check(
        "applies its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_apply(status_applied(false)),
        with(apply_status),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"applies its status\" failed:",
            "expect.statusApplies[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"ready\": false",
            "+      \"ready\": true",
        ],
    );
    assert_eq!(
        mismatches(&report, "applies its status"),
        ["expect.statusApplies[0]"]
    );
}

// ---------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn events_pass_when_type_reason_and_note_match() {
    let report = check(
        "publishes its size",
        TestCase::reconcile(request())
            .given(&widget(4))
            .expect_event(EventRef::normal("Sized", "size is 4")),
        with(publish_size),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn events_fail_with_a_diff_of_type_and_note() {
    let report = check(
        "publishes its size",
        TestCase::reconcile(request())
            .given(&widget(4))
            .expect_event(EventRef::warning("Sized", "size is 5")),
        with(publish_size),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"publishes its size\" failed:",
            "expect.events[0]: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-  \"note\": \"size is 5\",",
            "+  \"note\": \"size is 4\",",
            "-  \"type\": \"Warning\"",
            "+  \"type\": \"Normal\"",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// result and error
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn result_passes_when_the_outcome_matches() {
    let report = check(
        "requeues later",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_result(Outcome::requeue_after(Duration::from_secs(30))),
        with(requeue_later),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn result_fails_with_a_diff_of_the_outcome() {
    let report = check(
        "requeues later",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_result(Outcome::requeue_after(Duration::from_secs(90))),
        with(requeue_later),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"requeues later\" failed:",
            "expect.result: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-  \"requeueAfter\": \"1m 30s\"",
            "+  \"requeueAfter\": \"30s\"",
        ],
    );
}

#[tokio::test]
async fn result_defaults_to_nothing_more_to_do() {
    let report = check(
        "requeues later",
        TestCase::reconcile(request()).given(&widget(1)),
        with(requeue_later),
    )
    .await;
    assert_eq!(mismatches(&report, "requeues later"), ["expect.result"]);
    assert_contains(
        &failure(&report),
        &["-{}", "+{", "+  \"requeueAfter\": \"30s\""],
    );
}

#[tokio::test]
async fn an_unreadable_requeue_after_fails_the_case() {
    let mut case = TestCase::reconcile(request()).given(&widget(1));
    case.expect.result = OutcomeSpec {
        requeue: false,
        requeue_after: Some("soon".into()),
    };
    let report = check("requeues later", case, with(requeue_later)).await;
    assert_contains(
        &failure(&report),
        &["case: result.requeueAfter \"soon\" is not a duration"],
    );
}

#[tokio::test]
async fn error_passes_when_the_message_contains_the_text() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&widget(-1))
            .expect_error("must not be negative"),
        with(reject_negative),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn an_empty_error_text_accepts_any_error() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&widget(-1))
            .expect_error(""),
        with(reject_negative),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn error_fails_when_the_message_does_not_contain_the_text() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&widget(-1))
            .expect_error("must be positive"),
        with(reject_negative),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"rejects a negative size\" failed:",
            "expect.error: the error \"size must not be negative, got -1\" does not contain \"must be positive\"",
        ],
    );
}

#[tokio::test]
async fn error_fails_when_the_reconcile_succeeds() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_error("must not be negative"),
        with(reject_negative),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.error: the reconcile succeeded; expected an error containing \"must not be negative\"",
        ],
    );
}

#[tokio::test]
async fn an_unexpected_error_fails_the_case_with_its_message() {
    let report = check(
        "rejects a negative size",
        TestCase::reconcile(request()).given(&widget(-1)),
        with(reject_negative),
    )
    .await;
    assert_contains(
        &failure(&report),
        &["expect.error: the reconcile failed: size must not be negative, got -1"],
    );
    assert_eq!(
        mismatches(&report, "rejects a negative size"),
        ["expect.error"],
        "no result is compared when the reconcile failed"
    );
}

// ---------------------------------------------------------------------------------------------
// shouldPanic
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn should_panic_passes_when_the_reconcile_panics() {
    let report = check(
        "panics on zero",
        TestCase::reconcile(request())
            .given(&widget(0))
            .should_panic(),
        with(panic_on_zero),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn should_panic_fails_when_the_reconcile_does_not_panic() {
    let report = check(
        "panics on zero",
        TestCase::reconcile(request())
            .given(&widget(1))
            .should_panic(),
        with(panic_on_zero),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"panics on zero\" failed:",
            "shouldPanic: the reconcile did not panic",
        ],
    );
    assert_eq!(mismatches(&report, "panics on zero"), ["shouldPanic"]);
}

#[tokio::test]
async fn an_unexpected_panic_fails_the_case_with_its_message() {
    let report = check(
        "panics on zero",
        TestCase::reconcile(request()).given(&widget(0)),
        with(panic_on_zero),
    )
    .await;
    assert_contains(
        &failure(&report),
        &["shouldPanic: the reconcile panicked: size is zero"],
    );
}

// ---------------------------------------------------------------------------------------------
// resource and stashed (sub-reconcilers)
// ---------------------------------------------------------------------------------------------

fn labelled_widget(size: i32, label: &str) -> Value {
    let mut w = widget(size);
    w["metadata"]["labels"] = json!({"size": label});
    w
}

#[tokio::test]
async fn resource_passes_when_the_sub_reconciler_leaves_it_as_expected() {
    let report = check_sub(
        "labels the widget",
        TestCase::sub_reconcile(&widget(3)).expect_resource(&labelled_widget(3, "3")),
        label_size,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn resource_fails_with_a_diff_of_the_resulting_resource() {
    let report = check_sub(
        "labels the widget",
        TestCase::sub_reconcile(&widget(3)).expect_resource(&labelled_widget(3, "4")),
        label_size,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"labels the widget\" failed:",
            "expect.resource: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-      \"size\": \"4\"",
            "+      \"size\": \"3\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "labels the widget"),
        ["expect.resource"]
    );
}

#[tokio::test]
async fn without_an_expected_resource_it_must_be_unchanged() {
    // A sub-reconciler that only stashes leaves the resource as it was: that passes.
    let report = check_sub(
        "changes nothing",
        TestCase::sub_reconcile(&widget(3)).expect_stashed("size", &3),
        stash_size_as_json,
    )
    .await;
    passes(&report);
    // One that labels it, with no `expect.resource`, fails with the change as the diff.
    let report = check_sub(
        "labels the widget",
        TestCase::sub_reconcile(&widget(3)),
        label_size,
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.resource: differs (-expected, +actual):",
            "+    \"labels\": {",
            "+      \"size\": \"3\"",
        ],
    );
}

#[tokio::test]
async fn stashed_json_values_pass_when_they_match() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&widget(3)).expect_stashed("size", &3),
        stash_size_as_json,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn stashed_json_values_fail_with_a_diff() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&widget(3)).expect_stashed("size", &4),
        stash_size_as_json,
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case \"stashes the size\" failed:",
            "expect.stashed.size: differs (-expected, +actual):",
            "--- expected",
            "+++ actual",
            "-4",
            "+3",
        ],
    );
}

#[tokio::test]
async fn a_stash_key_nothing_was_stored_under_fails() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&widget(3)).expect_stashed("count", &3),
        stash_size_as_json,
    )
    .await;
    assert_contains(
        &failure(&report),
        &["expect.stashed.count: nothing was stashed under this key"],
    );
}

fn typed_stash_table(case: TestCase) -> SubReconcilerTests {
    SubReconcilerTests::new()
        .crd(&Widget::crd())
        .stash_type(SIZE)
        .case("stashes the size", case)
}

#[tokio::test]
async fn stashed_typed_values_pass_when_they_match() {
    let report = typed_stash_table(TestCase::sub_reconcile(&widget(3)).expect_stashed("size", &3))
        .check(|_| stash_size_typed())
        .await;
    passes(&report);
}

#[tokio::test]
async fn stashed_typed_values_fail_with_a_diff() {
    let report = typed_stash_table(TestCase::sub_reconcile(&widget(3)).expect_stashed("size", &4))
        .check(|_| stash_size_typed())
        .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.stashed.size: differs (-expected, +actual):",
            "-4",
            "+3",
        ],
    );
}

#[tokio::test]
async fn a_typed_value_is_not_seen_without_its_stash_type() {
    let report = check_sub(
        "stashes the size",
        TestCase::sub_reconcile(&widget(3)).expect_stashed("size", &3),
        stash_size_typed,
    )
    .await;
    assert_contains(
        &failure(&report),
        &["expect.stashed.size: nothing was stashed under this key"],
    );
}

#[tokio::test]
async fn given_stashed_values_reach_the_sub_reconciler_as_their_stash_type() {
    let report = SubReconcilerTests::new()
        .crd(&Widget::crd())
        .stash_type(SIZE)
        .case(
            "labels the stashed size",
            TestCase::sub_reconcile(&widget(3))
                .stash("size", &7)
                .expect_resource(&labelled_widget(3, "7"))
                .expect_stashed("size", &7),
        )
        .case(
            "a stashed value of the wrong type",
            TestCase::sub_reconcile(&widget(3)).stash("size", &"seven"),
        )
        .check(|_| label_stashed_size())
        .await;
    // Cases run in the order written: the stashed size first.
    assert_eq!(
        report.cases[0].status,
        CaseStatus::Passed,
        "{}",
        report.render(false)
    );
    assert_eq!(
        mismatches(&report, "a stashed value of the wrong type"),
        ["expect.error"]
    );
    assert_contains(
        &failure(&report),
        &["expect.error: the reconcile failed: stashed.size: not a i32"],
    );
}

#[tokio::test]
async fn sub_reconciler_cases_report_their_writes_too() {
    let report = SubReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "creates its config map",
            TestCase::sub_reconcile(&widget(3)).expect_create(&json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w-config", "labels": {"app": "w"}},
                "data": {"size": "2"},
            })),
        )
        .check(|_| create_config_map())
        .await;
    assert_contains(
        &failure(&report),
        &[
            "expect.creates[0]: differs",
            "-    \"size\": \"2\"",
            "+    \"size\": \"3\"",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// "not observed" and "observed but not expected"; every mismatch, every case
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_expectation_that_was_not_observed_is_reported_with_what_was_expected() {
    let report = check(
        "deletes nothing",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_delete(delete_ref("w-config")),
        with(publish_size),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.deletes[0]: was not observed; expected:",
            "\"name\": \"w-config\"",
        ],
    );
    assert_eq!(
        mismatches(&report, "deletes nothing"),
        ["expect.deletes[0]", "expect.events[0]"]
    );
}

#[tokio::test]
async fn an_observation_that_was_not_expected_is_reported_with_what_was_observed() {
    let report = check(
        "publishes its size",
        TestCase::reconcile(request()).given(&widget(4)),
        with(publish_size),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "events[0]: was observed but not expected:",
            "\"note\": \"size is 4\"",
            "\"reason\": \"Sized\"",
        ],
    );
}

#[tokio::test]
async fn every_mismatch_of_a_case_is_reported() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(ready_patch(false))
            .expect_event(EventRef::normal("StatusPatched", "Patched it")),
        with(set_ready),
    )
    .await;
    let text = failure(&report);
    assert_eq!(
        mismatches(&report, "patches its status"),
        ["expect.statusPatches[0]", "expect.events[0]"]
    );
    assert_contains(
        &text,
        &[
            "expect.statusPatches[0]: differs",
            "-      \"ready\": false",
            "+      \"ready\": true",
            "expect.events[0]: differs",
            "-  \"note\": \"Patched it\",",
            "+  \"note\": \"Patched status\",",
        ],
    );
    assert_eq!(
        text.matches("case \"patches its status\" failed:").count(),
        1
    );
}

#[tokio::test]
async fn every_failing_case_of_a_table_is_reported() {
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a: wrong status",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(false))
                .expect_event(status_patched()),
        )
        .case(
            "b: passes",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "c: missing event",
            TestCase::reconcile(request())
                .given(&widget(0))
                .expect_status_patch(ready_patch(false)),
        )
        .check(with(set_ready))
        .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "2 of 3 cases failed, 0 skipped",
            "case \"a: wrong status\" failed:",
            "case \"c: missing event\" failed:",
            "events[0]: was observed but not expected:",
        ],
    );
    assert!(!text.contains("case \"b: passes\""), "{text}");
    let names: Vec<&str> = report.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a: wrong status", "b: passes", "c: missing event"]);
}

#[tokio::test]
async fn suites_run_their_cases_in_the_order_written() {
    let report = ReconcilerTestSuite::new()
        .crd(&Widget::crd())
        .case(
            TestCase::reconcile(request())
                .named("z first")
                .given(&widget(1)),
        )
        .case(
            TestCase::reconcile(request())
                .named("a second")
                .given(&widget(1)),
        )
        .check(with(reject_negative))
        .await;
    passes(&report);
    let names: Vec<&str> = report.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["z first", "a second"]);
}

// ---------------------------------------------------------------------------------------------
// server-set fields
// ---------------------------------------------------------------------------------------------

fn conditioned(env: &TestEnv) -> ResourceReconciler<Widget> {
    ResourceReconciler::new(env.config(), mark_sized()).manage_status()
}

fn sized_conditions(ready_time: Option<&str>) -> Value {
    let mut conditions = json!([
        {"type": "Ready", "status": "True", "reason": "Ready", "message": ""},
        {"type": "Sized", "status": "True", "reason": "Sized", "message": ""},
    ]);
    if let Some(time) = ready_time {
        for c in conditions.as_array_mut().into_iter().flatten() {
            c["lastTransitionTime"] = json!(time);
        }
    }
    conditions
}

#[tokio::test]
async fn server_set_fields_are_ignored_by_default() {
    // Wrong values of server-set fields on the expected side are ignored too.
    let report = check(
        "marks the widget sized",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(PatchRef::merge(
                "Widget",
                Some("default"),
                "w",
                json!({
                    "metadata": {"resourceVersion": "999", "uid": "not-the-uid"},
                    "status": {
                        "observedGeneration": 1,
                        "conditions": sized_conditions(Some("1999-01-01T00:00:00Z")),
                    },
                }),
            ))
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn server_set_fields_of_an_updated_object_are_ignored_by_default() {
    let mut expected = config_map("w-config", json!({"size": "2"}));
    expected["metadata"]["uid"] = json!("not-the-uid");
    expected["metadata"]["resourceVersion"] = json!("999");
    expected["metadata"]["creationTimestamp"] = json!("1999-01-01T00:00:00Z");
    let report = check(
        "updates its config map",
        TestCase::reconcile(request())
            .given(&widget(2))
            .given(&config_map("w-config", json!({"size": "1"})))
            .expect_update(&expected),
        with(update_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn compare_server_fields_reports_them() {
    let report = check(
        "marks the widget sized",
        TestCase::reconcile(request())
            .given(&widget(1))
            .compare_server_fields()
            .expect_status_patch(PatchRef::merge(
                "Widget",
                Some("default"),
                "w",
                json!({"status": {"observedGeneration": 1, "conditions": sized_conditions(None)}}),
            ))
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.statusPatches[0]: differs (-expected, +actual):",
            "+    \"metadata\": {",
            "+      \"resourceVersion\": \"",
            "+          \"lastTransitionTime\": \"2024-01-01T00:00:00Z\",",
        ],
    );
}

#[tokio::test]
async fn compare_server_fields_passes_with_the_values_the_server_set() {
    let now = "2024-05-01T10:00:00Z";
    let seen = Arc::new(Mutex::new(None::<Expectations>));
    let capture = seen.clone();
    // First, find the resourceVersion the patch is locked on.
    let report = check(
        "marks the widget sized",
        TestCase::reconcile(request())
            .given(&widget(1))
            .at(now.parse().unwrap())
            .verify(move |_, observed| {
                *capture.lock().unwrap() = Some(observed.clone());
                Ok(())
            })
            .expect_status_patch(PatchRef::merge(
                "Widget",
                Some("default"),
                "w",
                json!({"status": {"observedGeneration": 1, "conditions": sized_conditions(None)}}),
            ))
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    passes(&report);
    let observed = seen.lock().unwrap().clone().unwrap();
    let patch = observed.status_patches[0].patch.clone().unwrap();
    let version = patch["metadata"]["resourceVersion"].as_str().unwrap();
    assert!(!version.is_empty());

    let report = check(
        "marks the widget sized",
        TestCase::reconcile(request())
            .given(&widget(1))
            .at(now.parse().unwrap())
            .compare_server_fields()
            .expect_status_patch(PatchRef::merge(
                "Widget",
                Some("default"),
                "w",
                json!({
                    "metadata": {"resourceVersion": version},
                    "status": {"observedGeneration": 1, "conditions": sized_conditions(Some(now))},
                }),
            ))
            .expect_event(status_patched()),
        conditioned,
    )
    .await;
    passes(&report);
}

// ---------------------------------------------------------------------------------------------
// skip and focus
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_skipped_case_is_not_run() {
    let ran = Arc::new(Mutex::new(0));
    let counter = ran.clone();
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "skipped",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(false))
                .prepare(move |_| {
                    *counter.lock().unwrap() += 1;
                    Ok(())
                })
                .skip(),
        )
        .case(
            "runs",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .check(with(set_ready))
        .await;
    passes(&report);
    assert_eq!(*ran.lock().unwrap(), 0);
    assert_eq!(report.cases[0].name, "skipped");
    assert_eq!(report.cases[0].status, CaseStatus::Skipped);
    assert!(
        report
            .render(false)
            .starts_with("0 of 2 cases failed, 1 skipped\n")
    );
}

#[tokio::test]
async fn a_focused_table_runs_only_focused_cases_and_never_passes() {
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "focused",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched())
                .focus(),
        )
        .case(
            "left out",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(false)),
        )
        .check(with(set_ready))
        .await;
    assert_eq!(report.focused, 1);
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    assert_eq!(report.cases[1].status, CaseStatus::Skipped);
    assert!(!report.passed(), "a focused table must not pass");
    let text = report.render(false);
    assert_contains(
        &text,
        &[
            "0 of 2 cases failed, 1 skipped",
            "1 of 2 cases are focused: remove `focus` before committing",
        ],
    );
    assert!(!text.contains("case \"left out\""), "{text}");
}

// ---------------------------------------------------------------------------------------------
// hooks
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn prepare_runs_before_the_reconcile() {
    // The config map the reconciler updates exists only because `prepare` stored it.
    let report = check(
        "updates a prepared config map",
        TestCase::reconcile(request())
            .given(&widget(2))
            .prepare(|env| {
                env.server()
                    .seed(&config_map("w-config", json!({"size": "1"})))
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
            .expect_update(&config_map("w-config", json!({"size": "2"}))),
        with(update_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn prepare_can_arm_a_reactor() {
    let report = check(
        "patch fails",
        TestCase::reconcile(request())
            .given(&widget(2))
            .given(&config_map("w-config", json!({"size": "1"})))
            .prepare(|env| {
                env.server()
                    .on(Verb::Patch, "configmaps")
                    .fail(Failure::Internal("etcd is down".into()));
                Ok(())
            })
            .expect_patch(PatchRef::merge(
                "ConfigMap",
                Some("default"),
                "w-config",
                json!({"data": {"size": "2"}}),
            ))
            .expect_error("etcd is down"),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn a_failing_prepare_fails_the_case_without_running_it() {
    let report = check(
        "prepare fails",
        TestCase::reconcile(request())
            .given(&widget(1))
            .prepare(|_| Err("no cluster for you".into())),
        with(panic_on_zero),
    )
    .await;
    assert_contains(&failure(&report), &["prepare: no cluster for you"]);
    assert_eq!(mismatches(&report, "prepare fails"), ["prepare"]);
}

#[tokio::test]
async fn verify_sees_what_was_observed_and_its_error_fails_the_case() {
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "verify passes",
            TestCase::reconcile(request())
                .given(&widget(4))
                .expect_event(EventRef::normal("Sized", "size is 4"))
                .verify(|_, seen| {
                    if seen.events.len() == 1 && seen.events[0].reason == "Sized" {
                        Ok(())
                    } else {
                        Err(format!("unexpected events {:?}", seen.events))
                    }
                }),
        )
        .case(
            "verify fails",
            TestCase::reconcile(request())
                .given(&widget(4))
                .expect_event(EventRef::normal("Sized", "size is 5"))
                .verify(|_, _| Err("the widget is not shiny".into())),
        )
        .check(with(publish_size))
        .await;
    assert_eq!(report.cases[0].status, CaseStatus::Passed);
    let text = failure(&report);
    assert_contains(&text, &["verify: the widget is not shiny"]);
    assert_eq!(
        mismatches(&report, "verify fails"),
        ["expect.events[0]", "verify"],
        "verify runs after the table's own comparisons, and both are reported"
    );
}

#[tokio::test]
async fn cleanup_runs_even_when_the_case_fails_and_its_error_fails_the_case() {
    let cleaned = Arc::new(Mutex::new(Vec::new()));
    let (a, b) = (cleaned.clone(), cleaned.clone());
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "fails, then cleans up",
            TestCase::reconcile(request())
                .given(&widget(-1))
                .cleanup(move |_| {
                    a.lock().unwrap().push("fails");
                    Ok(())
                }),
        )
        .case(
            "passes, cleanup fails",
            TestCase::reconcile(request())
                .given(&widget(1))
                .cleanup(move |_| {
                    b.lock().unwrap().push("passes");
                    Err("could not clean up".into())
                }),
        )
        .check(with(reject_negative))
        .await;
    assert_eq!(*cleaned.lock().unwrap(), ["fails", "passes"]);
    assert_eq!(
        mismatches(&report, "fails, then cleans up"),
        ["expect.error"]
    );
    assert_eq!(mismatches(&report, "passes, cleanup fails"), ["cleanup"]);
    assert_contains(&failure(&report), &["cleanup: could not clean up"]);
}

// ---------------------------------------------------------------------------------------------
// reactors
// ---------------------------------------------------------------------------------------------

fn conflict_on_configmap_patch() -> ReactorSpec {
    ReactorSpec {
        verb: "patch".into(),
        resource: "configmaps".into(),
        group: None,
        subresource: None,
        namespace: None,
        name: Some("w-config".into()),
        times: Some(1),
        fail: FailureSpec::Conflict,
    }
}

fn patched_size(size: &str) -> PatchRef {
    PatchRef::merge(
        "ConfigMap",
        Some("default"),
        "w-config",
        json!({"data": {"size": size}}),
    )
}

#[tokio::test]
async fn a_reactor_fails_the_write_and_the_case_can_expect_the_error() {
    let report = check(
        "conflict",
        TestCase::reconcile(request())
            .given(&widget(2))
            .given(&config_map("w-config", json!({"size": "1"})))
            .reactor(conflict_on_configmap_patch())
            // The refused patch was still sent: it is observed.
            .expect_patch(patched_size("2"))
            .expect_error("the object has been modified"),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn a_reactor_failure_not_expected_is_reported() {
    let report = check(
        "conflict",
        TestCase::reconcile(request())
            .given(&widget(2))
            .given(&config_map("w-config", json!({"size": "1"})))
            .reactor(conflict_on_configmap_patch())
            .expect_patch(patched_size("2")),
        with(patch_config_map),
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "expect.error: the reconcile failed: ",
            "the object has been modified",
        ],
    );
    assert_eq!(mismatches(&report, "conflict"), ["expect.error"]);
}

#[tokio::test]
async fn an_invalid_reactor_fails_the_case_setup() {
    let mut reactor = conflict_on_configmap_patch();
    reactor.verb = "frobnicate".into();
    let report = check(
        "bad reactor",
        TestCase::reconcile(request())
            .given(&widget(2))
            .reactor(reactor),
        with(patch_config_map),
    )
    .await;
    assert_contains(
        &failure(&report),
        &["case setup: reactors[0]: \"frobnicate\" is not a verb"],
    );
}

// ---------------------------------------------------------------------------------------------
// additional configs
// ---------------------------------------------------------------------------------------------

fn other_cluster(size: &str, note: &str) -> ExpectConfig {
    ExpectConfig {
        expect: Expectations {
            creates: vec![json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "w-config"},
                "data": {"size": size},
            })],
            events: vec![EventRef::normal("Mirrored", note)],
            ..Expectations::default()
        },
        ..ExpectConfig::default()
    }
}

fn mirroring(env: &TestEnv) -> ResourceReconciler<Widget> {
    let other = env
        .config_named("other")
        .expect("the case has an `other` config");
    ResourceReconciler::new(env.config(), create_config_map_in(other))
}

#[tokio::test]
async fn writes_to_an_additional_config_are_compared_with_its_expectations() {
    let report = check(
        "mirrors",
        TestCase::reconcile(request())
            .given(&widget(6))
            .additional_config("other", other_cluster("6", "mirrored")),
        mirroring,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn a_mismatch_in_an_additional_config_is_reported_under_its_name() {
    let report = check(
        "mirrors",
        TestCase::reconcile(request())
            .given(&widget(6))
            .additional_config("other", other_cluster("7", "mirrored it")),
        mirroring,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &[
            "case \"mirrors\" failed:",
            "additionalConfigs.other.expect.creates[0]: differs (-expected, +actual):",
            "-    \"size\": \"7\"",
            "+    \"size\": \"6\"",
            "additionalConfigs.other.expect.events[0]: differs (-expected, +actual):",
            "-  \"note\": \"mirrored it\",",
            "+  \"note\": \"mirrored\",",
        ],
    );
    assert_eq!(
        mismatches(&report, "mirrors"),
        [
            "additionalConfigs.other.expect.creates[0]",
            "additionalConfigs.other.expect.events[0]"
        ]
    );
}

#[tokio::test]
async fn writes_to_an_additional_config_are_not_expected_in_the_default_one() {
    let report = check(
        "mirrors",
        TestCase::reconcile(request())
            .given(&widget(6))
            .additional_config("other", ExpectConfig::default()),
        mirroring,
    )
    .await;
    assert_eq!(
        mismatches(&report, "mirrors"),
        [
            "additionalConfigs.other.expect.creates[0]",
            "additionalConfigs.other.expect.events[0]"
        ]
    );
    assert_contains(
        &failure(&report),
        &["additionalConfigs.other.expect.creates[0]: was observed but not expected:"],
    );
}

// ---------------------------------------------------------------------------------------------
// determinism
// ---------------------------------------------------------------------------------------------

/// What one run of a case observed: its expectations and the server's answers to its creates.
type Observation = (Expectations, Vec<Value>);

fn generating_table(runs: Arc<Mutex<Vec<Observation>>>) -> ReconcilerTests {
    ReconcilerTests::new().crd(&Widget::crd()).case(
        "creates a config map with a generated name",
        TestCase::reconcile(request())
            .given(&widget(1))
            .compare_server_fields()
            .verify(move |env, seen| {
                let created: Vec<Value> = env
                    .server()
                    .requests()
                    .iter()
                    .filter(|r| r.verb == Verb::Create)
                    .filter_map(|r| r.response_json())
                    .collect();
                runs.lock().unwrap().push((seen.clone(), created));
                Ok(())
            }),
    )
}

#[tokio::test]
async fn two_runs_of_a_table_observe_the_same_things() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let table = generating_table(runs.clone());
    let first = table.check(with(create_generated)).await;
    let second = table.check(with(create_generated)).await;
    assert_eq!(first, second, "the reports differ");

    let runs = runs.lock().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0], runs[1], "the observations differ");
    let (seen, created) = &runs[0];
    let name = created[0]["metadata"]["name"].as_str().unwrap();
    let uid = created[0]["metadata"]["uid"].as_str().unwrap();
    assert!(name.starts_with("w-") && name.len() > 2, "{name}");
    assert!(!uid.is_empty());
    // The generated name and uid reach the observed status patch, the same in both runs.
    let status = &seen.status_patches[0].patch.as_ref().unwrap()["status"];
    assert_eq!(status["configMap"], json!(name));
    assert_eq!(status["configMapUid"], json!(uid));
}

#[tokio::test]
async fn observations_replayed_as_expectations_pass() {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let first = generating_table(runs.clone())
        .check(with(create_generated))
        .await;
    assert!(!first.passed(), "nothing was expected yet");
    let observed = runs.lock().unwrap()[0].0.clone();
    let report = check(
        "creates a config map with a generated name",
        TestCase::reconcile(request())
            .given(&widget(1))
            .compare_server_fields()
            .expect(observed),
        with(create_generated),
    )
    .await;
    passes(&report);
}

// ---------------------------------------------------------------------------------------------
// snapshots
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_snapshot_case_hands_what_it_observed_to_the_sink() {
    let got = Arc::new(Mutex::new(Vec::<(String, Value)>::new()));
    let record = got.clone();
    let sink: SnapshotSink = Arc::new(move |name: &str, value: &Value| {
        record
            .lock()
            .unwrap()
            .push((name.to_owned(), value.clone()));
    });
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .snapshots(sink)
        .case(
            "Snapshot: ready widget",
            // `expect` is not compared in a snapshot case.
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(false))
                .snapshot(),
        )
        .check(with(set_ready))
        .await;
    passes(&report);
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 1);
    let (name, value) = &got[0];
    assert_eq!(name, "snapshot__ready_widget");
    let patch = &value["statusPatches"][0];
    assert_eq!(patch["kind"], "Widget");
    assert_eq!(patch["type"], "merge");
    assert_eq!(patch["patch"]["status"], json!({"ready": true}));
    assert!(
        patch.get("exact").is_none(),
        "exact bodies are left out of snapshots: {value}"
    );
    assert_eq!(value["events"][0]["reason"], "StatusPatched");
}

#[tokio::test]
async fn a_rejected_snapshot_fails_the_case() {
    let sink: SnapshotSink = Arc::new(|_: &str, _: &Value| panic!("snapshot assertion failed"));
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .snapshots(sink)
        .case(
            "ready widget",
            TestCase::reconcile(request()).given(&widget(1)).snapshot(),
        )
        .check(with(set_ready))
        .await;
    assert_contains(
        &failure(&report),
        &[
            "snapshot: \"ready_widget\" is new or does not match; accept it with `cargo insta review` (after `cargo install cargo-insta`) or by running the test again with `INSTA_UPDATE=always`",
        ],
    );
}

#[tokio::test]
async fn a_snapshot_case_without_a_sink_fails() {
    let report = check(
        "ready widget",
        TestCase::reconcile(request()).given(&widget(1)).snapshot(),
        with(set_ready),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "snapshot: the case asks for a snapshot but the table has no snapshot sink: add `.snapshots(recon_testing::snapshot!())`",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// running tables
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn assert_passed_panics_with_the_rendered_report() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(ready_patch(false))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    let caught = std::panic::catch_unwind(|| report.assert_passed()).unwrap_err();
    let message = panic_message(caught);
    // The colour of the diffs depends on the terminal (see the colour tests); the text does not.
    assert_eq!(strip_ansi(&message), strip_ansi(&report.render(false)));
    assert_contains(&message, &["expect.statusPatches[0]"]);
}

#[tokio::test]
async fn assert_passed_does_not_panic_for_a_passing_report() {
    let report = check(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(ready_patch(true))
            .expect_event(status_patched()),
        with(set_ready),
    )
    .await;
    report.assert_passed();
}

#[test]
fn run_needs_no_runtime_and_passes_quietly() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "patches its status",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .run(with(set_ready));
}

#[test]
fn run_panics_with_the_report_when_a_case_fails() {
    let table = ReconcilerTests::new().crd(&Widget::crd()).case(
        "patches its status",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_status_patch(ready_patch(false))
            .expect_event(status_patched()),
    );
    let caught =
        std::panic::catch_unwind(AssertUnwindSafe(|| table.run(with(set_ready)))).unwrap_err();
    assert_contains(
        &strip_ansi(&panic_message(caught)),
        &[
            "case \"patches its status\" failed:",
            "-      \"ready\": false",
        ],
    );
}

#[tokio::test]
async fn run_inside_a_runtime_points_to_run_async() {
    let table = ReconcilerTests::new().crd(&Widget::crd());
    let caught =
        std::panic::catch_unwind(AssertUnwindSafe(|| table.run(with(set_ready)))).unwrap_err();
    assert_contains(
        &panic_message(caught),
        &["call `run_async(..).await` instead"],
    );
}

#[tokio::test]
async fn run_async_passes_quietly() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "patches its status",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .run_async(with(set_ready))
        .await;
}

// ---------------------------------------------------------------------------------------------
// malformed cases
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_reconciler_case_without_a_request_fails() {
    let mut case = TestCase::reconcile(request()).given(&widget(1));
    case.request = None;
    let report = check("no request", case, with(set_ready)).await;
    assert_contains(
        &failure(&report),
        &[
            "case \"no request\" failed:",
            "case: a reconciler case needs a `request`",
        ],
    );
}

#[tokio::test]
async fn sub_reconciler_fields_in_a_reconciler_case_fail() {
    let report = check(
        "sub fields",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_resource(&widget(1))
            .expect_stashed("size", &1),
        with(set_ready),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case: `resource` belongs to sub-reconciler cases; give the object in `given`",
            "case: `stashed` belongs to sub-reconciler cases",
        ],
    );
}

#[tokio::test]
async fn a_sub_reconciler_case_without_a_resource_fails() {
    let report = check_sub("no resource", TestCase::reconcile(request()), label_size).await;
    assert_contains(
        &failure(&report),
        &[
            "case: a sub-reconciler case needs a `resource`",
            "case: `request` belongs to reconciler cases; the resource's name is the request",
        ],
    );
}

#[tokio::test]
async fn an_object_the_cluster_cannot_hold_fails_the_case_setup() {
    let report = check(
        "unknown kind",
        TestCase::reconcile(request()).given(&json!({
            "apiVersion": "example.com/v1",
            "kind": "Gizmo",
            "metadata": {"name": "g", "namespace": "default"},
        })),
        with(set_ready),
    )
    .await;
    assert_contains(
        &failure(&report),
        &[
            "case setup: given[0]: no served resource has apiVersion \"example.com/v1\" and kind \"Gizmo\"",
        ],
    );
}

#[tokio::test]
async fn a_duplicate_case_name_is_not_silently_dropped() {
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "patches its status",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(false))
                .expect_event(status_patched()),
        )
        .case(
            "patches its status",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .check(with(set_ready))
        .await;
    assert!(
        report.cases.len() == 2 || !report.passed(),
        "the first case was dropped without a word: {report:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// colour
// ---------------------------------------------------------------------------------------------

#[test]
fn a_coloured_diff_has_ansi_codes() {
    let diff = json_diff(&json!({"ready": true}), &json!({"ready": false}), true).unwrap();
    assert_contains(
        &diff,
        &[
            "\x1b[31m--- expected\x1b[0m",
            "\x1b[32m+++ actual\x1b[0m",
            "\x1b[31m-  \"ready\": true\x1b[0m",
        ],
    );
    let plain = json_diff(&json!({"ready": true}), &json!({"ready": false}), false).unwrap();
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert_eq!(strip_ansi(&diff), plain);
}

#[test]
fn a_plain_render_has_no_ansi_codes_and_a_coloured_one_has() {
    // Whatever stderr is (a terminal or not), `render` colours only when asked.
    let report = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(check(
            "patches its status",
            TestCase::reconcile(request())
                .given(&widget(1))
                .expect_status_patch(ready_patch(false))
                .focus(),
            with(set_ready),
        ));
    let plain = report.render(false);
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert_contains(
        &plain,
        &["-      \"ready\": false", "+      \"ready\": true"],
    );
    let coloured = report.render(true);
    assert_contains(
        &coloured,
        &[
            "\x1b[1;31mcase \"patches its status\" failed:\x1b[0m",
            "\x1b[1;31m1 of 1 cases are focused",
        ],
    );
    assert_eq!(strip_ansi(&coloured), plain);
}

// ---------------------------------------------------------------------------------------------
// a resource type that does not round-trip its JSON
// ---------------------------------------------------------------------------------------------

/// A resource whose status serialises every field, absent or not, like the crate docs' example
/// (`Option` fields without `skip_serializing_if`, `#[serde(default)]` lists).
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus"
)]
pub struct GadgetSpec {
    pub size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub message: Option<String>,
}

#[tokio::test]
async fn an_untouched_resource_passes_whatever_its_type_serialises() {
    let noop = || SyncReconciler::<Gadget>::new("Noop").sync(async |_, _| Ok(()));
    let report = SubReconcilerTests::new()
        .crd(&Gadget::crd())
        .case(
            "leaves the gadget alone",
            TestCase::sub_reconcile(&json!({
                "apiVersion": "example.com/v1",
                "kind": "Gadget",
                "metadata": {"name": "g", "namespace": "default"},
                "spec": {"size": 1},
                "status": {"message": "hi"},
            })),
        )
        .check(move |_| noop())
        .await;
    passes(&report);
}

// ---------------------------------------------------------------------------------------------
// metadata, factory panics, results of failed reconciles
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_factory_reads_each_cases_metadata_to_build_its_reconciler() {
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "ready",
            TestCase::reconcile(request())
                .given(&widget(1))
                .metadata("step", &"set_ready")
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .case(
            "untouched",
            TestCase::reconcile(request())
                .given(&widget(1))
                .metadata("step", &"none"),
        )
        .check(|env| {
            let step = env.metadata("step").and_then(Value::as_str);
            let sub = match step {
                Some("set_ready") => set_ready(),
                _ => SyncReconciler::<Widget>::new("Noop").sync(async |_, _| Ok(())),
            };
            ResourceReconciler::new(env.config(), sub)
        })
        .await;
    passes(&report);
}

#[tokio::test]
async fn a_factory_that_panics_fails_its_case_and_the_others_still_run() {
    let report = ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "needs another config",
            TestCase::reconcile(request()).given(&widget(1)),
        )
        .case(
            "needs nothing",
            TestCase::reconcile(request())
                .given(&widget(1))
                .metadata("plain", &true)
                .expect_status_patch(ready_patch(true))
                .expect_event(status_patched()),
        )
        .check(|env| {
            let config = match env.metadata("plain") {
                Some(_) => env.config(),
                None => env.config_named("other").expect("a config named other"),
            };
            ResourceReconciler::new(config, set_ready())
        })
        .await;
    assert_eq!(mismatches(&report, "needs another config"), ["shouldPanic"]);
    assert_contains(
        &failure(&report),
        &["the factory panicked: a config named other"],
    );
    assert_eq!(report.cases[1].status, CaseStatus::Passed);
}

/// A sequence asking for a requeue in 10s, then failing: its error carries the requeue.
fn requeue_then_fail() -> Sequence<Widget> {
    let requeue = SyncReconciler::<Widget>::new("Requeue")
        .sync(async |_, _| Ok(Outcome::requeue_after(Duration::from_secs(10))));
    let fail =
        SyncReconciler::<Widget>::new("Fail").sync(async |_, _| Err::<(), _>(Error::msg("boom")));
    Sequence::new([requeue.boxed(), fail.boxed()])
}

#[tokio::test]
async fn a_sub_reconcilers_error_must_carry_the_expected_result() {
    let table = |result: Outcome| {
        SubReconcilerTests::new().crd(&Widget::crd()).case(
            "fails after asking for a requeue",
            TestCase::sub_reconcile(&widget(1))
                .expect_error("boom")
                .expect_result(result),
        )
    };
    passes(
        &table(Outcome::requeue_after(Duration::from_secs(10)))
            .check(|_| requeue_then_fail())
            .await,
    );
    let report = table(Outcome::done()).check(|_| requeue_then_fail()).await;
    assert_eq!(
        mismatches(&report, "fails after asking for a requeue"),
        ["expect.result"]
    );
    assert_contains(&failure(&report), &["+  \"requeueAfter\": \"10s\""]);
}

#[tokio::test]
async fn a_reconciler_case_cannot_expect_both_an_error_and_a_result() {
    let report = check(
        "fails",
        TestCase::reconcile(request())
            .given(&widget(1))
            .expect_error("boom")
            .expect_result(Outcome::requeue()),
        |env| ResourceReconciler::new(env.config(), requeue_then_fail()),
    )
    .await;
    assert_eq!(mismatches(&report, "fails"), ["case"]);
    assert_contains(&failure(&report), &["expect only the error"]);
}

// ---------------------------------------------------------------------------------------------
// tracks
// ---------------------------------------------------------------------------------------------

/// Tracks the config map `w-config` (found or not).
fn track_config_map() -> SyncReconciler<Widget> {
    SyncReconciler::<Widget>::new("TrackConfigMap").sync(async |ctx, _| {
        let _: Option<ConfigMap> = ctx.track_and_get(Some("default"), "w-config").await?;
        Ok(())
    })
}

fn tracked(name: &str) -> Reference {
    Reference::of::<ConfigMap>(Some("default"), name)
}

#[tokio::test]
async fn tracks_pass_when_the_tracked_references_match() {
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&widget(1)).expect_track(request(), tracked("w-config")),
        track_config_map,
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn tracks_fail_with_a_diff_of_the_reference() {
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&widget(1)).expect_track(request(), tracked("w-settings")),
        track_config_map,
    )
    .await;
    assert_eq!(
        mismatches(&report, "tracks its config map"),
        ["expect.tracks[0]"]
    );
    assert_contains(
        &failure(&report),
        &[
            "-    \"name\": \"w-settings\",",
            "+    \"name\": \"w-config\",",
        ],
    );
}

#[tokio::test]
async fn an_unexpected_track_is_reported() {
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&widget(1)),
        track_config_map,
    )
    .await;
    assert_eq!(
        mismatches(&report, "tracks its config map"),
        ["expect.tracks[0]"]
    );
    assert_contains(
        &failure(&report),
        &["was observed but not expected", "\"w-config\""],
    );
}

#[tokio::test]
async fn a_malformed_given_track_fails_the_case_setup() {
    let mut bad = tracked("w-config");
    bad.selector = Some("app=w".into());
    let report = check_sub(
        "tracks its config map",
        TestCase::sub_reconcile(&widget(1)).given_track(request(), bad),
        track_config_map,
    )
    .await;
    assert_eq!(mismatches(&report, "tracks its config map"), ["case setup"]);
    assert_contains(
        &failure(&report),
        &[
            "givenTracks[0]: cannot track ConfigMap.core in default named \"w-config\": needs exactly one of name and selector",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// error signals
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_error_signal_the_error_does_not_carry_fails_the_case() {
    let report = check_sub(
        "a negative size is refused",
        TestCase::sub_reconcile(&widget(-1))
            .expect_error("size must not be negative")
            .expect_error_signal(ErrorSignal::Quiet),
        reject_negative,
    )
    .await;
    let text = failure(&report);
    assert_contains(
        &text,
        &["expect.errorSignals: the error does not carry [Quiet]; it carries []"],
    );
}

// ---------------------------------------------------------------------------------------------
// additional reconciles
// ---------------------------------------------------------------------------------------------

/// Counts its calls in the instance and publishes the count: state an additional reconcile
/// sees only if it runs the same instance.
fn counting() -> SyncReconciler<Widget> {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    SyncReconciler::<Widget>::new("Count").sync_with(calls, async |ctx, calls, w| {
        let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        ctx.publish(
            &w.object_ref(&()),
            recon_core::Event::normal("Called", "Count", format!("call {n}")),
        )
        .await;
        Ok(())
    })
}

#[tokio::test]
async fn an_additional_reconcile_runs_the_same_instance_in_its_own_cluster() {
    let first = TestCase::sub_reconcile(&widget(1))
        .expect_event(EventRef::normal("Called", "call 1"))
        .additional_reconcile(
            TestCase::sub_reconcile(&widget(2))
                .named("again")
                .expect_event(EventRef::normal("Called", "call 2")),
        )
        .additional_reconcile(TestCase::sub_reconcile(&widget(3)).named("skipped").skip());
    let report = check_sub("first", first, counting).await;
    passes(&report);
    let names: Vec<(&str, &CaseStatus)> = report
        .cases
        .iter()
        .map(|c| (c.name.as_str(), &c.status))
        .collect();
    assert_eq!(
        names,
        [
            ("first", &CaseStatus::Passed),
            ("first / again", &CaseStatus::Passed),
            ("first / skipped", &CaseStatus::Skipped),
        ]
    );
}

#[tokio::test]
async fn a_failing_additional_reconcile_fails_the_table_under_its_own_name() {
    let first = TestCase::sub_reconcile(&widget(1))
        .expect_event(EventRef::normal("Called", "call 1"))
        .additional_reconcile(
            TestCase::sub_reconcile(&widget(2))
                .named("again")
                .expect_event(EventRef::normal("Called", "call 1")),
        );
    let text = failure(&check_sub("first", first, counting).await);
    assert_contains(&text, &["case \"first / again\" failed:", "call 2"]);
}
