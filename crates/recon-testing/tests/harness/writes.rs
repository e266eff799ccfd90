//! Expected writes of a reconcile: creates, updates, patches (compared as JSON or byte for
//! byte with `exact`), applies, deletes and deleteCollections.

use crate::sprocket::Sprocket;
use kube::CustomResourceExt;
use recon_testing::{
    CaseStatus, DeleteCollectionRef, PatchRef, PatchType, ReconcilerTests, TestCase,
};
use serde_json::json;

use crate::support::*;

// ---------------------------------------------------------------------------------------------
// creates
// ---------------------------------------------------------------------------------------------

/// A create of `w-config` at size `size`.
fn config_map_created(size: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "w-config", "labels": {"app": "w"}},
        "data": {"size": size},
    })
}

#[tokio::test]
async fn creates_are_compared_by_the_created_object() {
    let creating = |size| {
        TestCase::reconcile(request())
            .given(&sprocket(3))
            .expect_create(&config_map_created(size))
    };
    assert_compared(
        with(create_config_map),
        creating("3"),
        creating("4"),
        "expect.creates[0]",
        &["-    \"size\": \"4\"", "+    \"size\": \"3\""],
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// updates
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn updates_are_compared_by_the_replaced_object() {
    let updating = |data| with_config_map_at_1(2).expect_update(&config_map("w-config", data));
    assert_compared(
        with(update_config_map),
        updating(json!({"size": "2"})),
        updating(json!({"size": "1", "extra": "x"})),
        "expect.updates[0]",
        &[
            "-    \"extra\": \"x\",",
            "-    \"size\": \"1\"",
            "+    \"size\": \"2\"",
        ],
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// patches, compared as JSON
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn patches_are_compared_as_json() {
    assert_compared(
        with(patch_config_map),
        with_config_map_at_1(5).expect_patch(size_patch("5")),
        with_config_map_at_1(5).expect_patch(size_patch("6")),
        "expect.patches[0]",
        &["-      \"size\": \"6\"", "+      \"size\": \"5\""],
    )
    .await;
}

#[tokio::test]
async fn patches_fail_when_the_patch_type_differs() {
    let report = check(
        "patches its config map",
        with_config_map_at_1(5).expect_patch(PatchRef::json(
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
        with_config_map_at_1(5).expect_patch(size_patch("5").exactly(r#"{"data":{"size":"5"}}"#)),
        with(patch_config_map),
    )
    .await;
    passes(&report);
}

#[tokio::test]
async fn exact_patches_fail_on_a_byte_difference_even_when_the_json_is_equal() {
    let report = check(
        "patches its config map",
        with_config_map_at_1(5).expect_patch(size_patch("5").exactly(r#"{"data": {"size": "5"}}"#)),
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
        .crd(&Sprocket::crd())
        .case(
            "right bytes",
            with_config_map_at_1(5).expect_patch(exact_only(r#"{"data":{"size":"5"}}"#)),
        )
        .case(
            "wrong bytes",
            with_config_map_at_1(5).expect_patch(exact_only(r#"{"data":{"size":"7"}}"#)),
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
    apply_of(
        "v1",
        "ConfigMap",
        "w-applied",
        json!({"data": {"size": size}}),
    )
}

#[tokio::test]
async fn applies_are_compared_by_the_applied_configuration() {
    let applying = |size| {
        TestCase::reconcile(request())
            .given(&sprocket(8))
            .expect_apply(applied(size))
    };
    assert_compared(
        with(apply_config_map),
        applying("8"),
        applying("9"),
        "expect.applies[0]",
        &["-      \"size\": \"9\"", "+      \"size\": \"8\""],
    )
    .await;
}

#[tokio::test]
async fn an_apply_is_not_a_patch() {
    let report = check(
        "applies its config map",
        TestCase::reconcile(request())
            .given(&sprocket(8))
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

/// The sprocket's reconcile, with its config map `w-config` in the cluster.
fn with_its_config_map() -> TestCase {
    TestCase::reconcile(request())
        .given(&sprocket(1))
        .given(&config_map("w-config", json!({})))
}

#[tokio::test]
async fn deletes_are_compared_by_the_deleted_object() {
    assert_compared(
        with(delete_config_map),
        with_its_config_map().expect_delete(delete_ref("w-config")),
        with_its_config_map().expect_delete(delete_ref("w-settings")),
        "expect.deletes[0]",
        &["-  \"name\": \"w-settings\",", "+  \"name\": \"w-config\","],
    )
    .await;
}

#[tokio::test]
async fn a_group_in_a_delete_expectation_is_compared() {
    let mut wrong_group = delete_ref("w-config");
    wrong_group.group = Some("apps".into());
    let mut core_group = delete_ref("w-config");
    core_group.group = Some(String::new());
    let given = with_its_config_map;
    let report = ReconcilerTests::new()
        .crd(&Sprocket::crd())
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
async fn delete_collections_are_compared_by_their_selector() {
    assert_compared(
        with(delete_config_maps),
        with_its_config_map().expect_delete_collection(delete_collection_ref("app=w")),
        with_its_config_map().expect_delete_collection(delete_collection_ref("app=sprocket")),
        "expect.deleteCollections[0]",
        &[
            "-  \"labelSelector\": \"app=sprocket\",",
            "+  \"labelSelector\": \"app=w\",",
        ],
    )
    .await;
}
