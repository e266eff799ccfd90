//! `reconcilers/childset_test.go`: `ChildSetReconciler` with reconciler.io's testing
//! `StubObjectManager` ([`StubObjectManager`]) keeping ConfigMaps identified by the annotation
//! [`ID_KEY`] (`blue`, `green`), reflected in the [`TestResource`]'s status fields as
//! `<id>.<key>` and its `Ready` condition.
//!
//! Adapted:
//! - the parent has a uid ([`UID`], see there);
//! - `in sync with children`: `CalledAtMostTimes("list", ..., 1)` is a check that the
//!   children were listed at most once, over the requests the fake server recorded;
//! - `defines a finalizer when requested`: reconciler.io's `Finalizer` field of the reconciler
//!   is the finalizer of recon's [`UpdatingObjectManager`] (the stub has none), which is
//!   used for that case (the children being in sync, it sends nothing for them).
//!
//! Skipped (Go-only mechanics):
//! - `TestChildSetReconciler_Validate`: `Validate` of required fields and of the
//!   `SkipOwnerReference`/`Finalizer`/`OurChild`/`ListOptions` combinations; recon's
//!   constructor takes the hooks and `without_owner_reference` takes `our_child` and the list
//!   options, so a missing one does not compile.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use recon_core::{
    ChildListOptions, ChildSetReconciler, ChildSetResult, Error, ObjectManager,
    OnlyReconcileChildStatus, UpdatingObjectManager,
};
use recon_fake::RequestOrigin;
use recon_testing::{EventRef, PatchRef, StubObjectManager, SubReconcilerTests, TestCase, TestEnv};
use serde_json::{Value, json};

use crate::children_support::*;
use crate::test_resource::{FINALIZER, NAME, NAMESPACE, TestResource};

/// The annotation holding a child's id.
const ID_KEY: &str = "testing.reconciler.runtime/child-id";

fn variant(env: &TestEnv) -> &str {
    env.metadata("variant")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The child `test-resource-<id>` (no id annotation for `""`), holding `foo: <value>`.
fn child(id: &str, value: &str) -> Value {
    let name = if id.is_empty() {
        NAME.to_owned()
    } else {
        format!("{NAME}-{id}")
    };
    let mut cm = config_map(NAMESPACE, &name, true, &[("foo", value)]);
    if !id.is_empty() {
        cm["metadata"]["annotations"] = json!({ ID_KEY: id });
    }
    cm
}

/// The child as the desired-children hook returns it (no owner reference).
fn desired(id: &str, value: &str) -> ConfigMap {
    let mut cm = child(id, value);
    cm["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("ownerReferences");
    serde_json::from_value(cm).expect("a ConfigMap")
}

/// The given child: created at `created` with `uid`.
fn given(id: &str, created: &str, uid: &str) -> Value {
    let mut cm = child(id, "bar");
    cm["metadata"]["creationTimestamp"] = json!(created);
    cm["metadata"]["uid"] = json!(uid);
    cm
}

const NOW: &str = "2024-01-01T00:00:00Z";
const AN_HOUR_AGO: &str = "2023-12-31T23:00:00Z";

fn blue_given() -> Value {
    given("blue", NOW, "a0e91ff9-bf42-4bc7-9253-2a6581b07e4d")
}

/// Green is older than blue.
fn green_given() -> Value {
    given("green", AN_HOUR_AGO, "62af4b9a-767a-4f32-b62c-e4bccbfa8ef0")
}

/// The Go tests' `configMapGiven`: a child without an id.
fn no_id_given() -> Value {
    given("", NOW, "3b298fdb-b0b6-4603-9708-939e05daf183")
}

fn blue_green() -> [(&'static str, &'static str); 2] {
    [("blue.foo", "bar"), ("green.foo", "bar")]
}

/// The Go tests' default `ReflectChildrenStatusOnParent`.
fn reflect(parent: &mut TestResource, result: &ChildSetResult<ConfigMap>) -> Result<(), Error> {
    let status = parent.status.get_or_insert_default();
    if let Some(err) = result.errors().next() {
        if let Some(api) = err.as_api_error()
            && api.reason == "AlreadyExists"
        {
            let name = api
                .details
                .as_ref()
                .map(|d| d.name.clone())
                .unwrap_or_default();
            status.conditions = vec![ready(
                "False",
                "NameConflict",
                &format!("{name:?} already exists"),
            )];
        }
        return Ok(());
    }
    status.fields.clear();
    for item in &result.children {
        let Some(child) = &item.child else { continue };
        for (k, v) in child.data.iter().flatten() {
            status.fields.insert(format!("{}.{k}", item.id), v.clone());
        }
    }
    status.conditions = vec![ready("True", "Ready", "")];
    Ok(())
}

fn identify(child: &ConfigMap) -> String {
    child
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ID_KEY))
        .cloned()
        .unwrap_or_default()
}

/// The Go tests' `defaultChildSetReconciler` changed as the case's variant says.
fn build(variant: &str) -> ChildSetReconciler<TestResource, ConfigMap> {
    let wanted = variant.to_owned();
    // `known`: the children listed (reconciler.io's `RetrieveKnownChildren`).
    let desired_children = move |_: &recon_core::Context, _: &TestResource, known: &[ConfigMap]| {
        Ok(match wanted.as_str() {
            "blue and green" | "finalizer" => vec![desired("blue", "bar"), desired("green", "bar")],
            "blue" => vec![desired("blue", "bar")],
            "known children" => known.to_vec(),
            "oldest known child" => {
                let mut children = known.to_vec();
                children.sort_by_key(|c| c.metadata.creation_timestamp.as_ref().map(|t| t.0));
                children.truncate(1);
                children
            }
            "updated" => vec![
                desired("blue", "updated-blue"),
                desired("green", "updated-green"),
            ],
            "empty id" => vec![desired("", "bar")],
            "duplicate ids" => {
                let mut green = desired("green", "bar");
                green
                    .metadata
                    .annotations
                    .get_or_insert_default()
                    .insert(ID_KEY.to_owned(), "blue".to_owned());
                vec![desired("blue", "bar"), green]
            }
            "status only" => return Err(OnlyReconcileChildStatus.into()),
            "desired error" => return Err(Error::msg("test")),
            _ => vec![],
        })
    };
    let reflect =
        |_: &recon_core::Context, parent: &mut TestResource, result: &ChildSetResult<ConfigMap>| {
            reflect(parent, result)
        };
    if variant == "finalizer" {
        let manager: UpdatingObjectManager<ConfigMap> =
            UpdatingObjectManager::new(|current: &mut ConfigMap, desired: &ConfigMap| {
                current.data = desired.data.clone();
            })
            .finalizer(FINALIZER);
        return with_manager(manager, desired_children, reflect).without_owner_reference(
            |_, _| true,
            |_, _| ChildListOptions::in_namespace(NAMESPACE),
        );
    }
    with_manager(StubObjectManager::new(), desired_children, reflect)
}

fn with_manager(
    manager: impl ObjectManager<TestResource, ConfigMap> + 'static,
    desired_children: impl Fn(
        &recon_core::Context,
        &TestResource,
        &[ConfigMap],
    ) -> Result<Vec<ConfigMap>, Error>
    + Send
    + Sync
    + 'static,
    reflect: impl Fn(
        &recon_core::Context,
        &mut TestResource,
        &ChildSetResult<ConfigMap>,
    ) -> Result<(), Error>
    + Send
    + Sync
    + 'static,
) -> ChildSetReconciler<TestResource, ConfigMap> {
    ChildSetReconciler::with_known_children(manager, desired_children, identify, reflect)
}

/// The lists of ConfigMaps the reconcile sent.
fn lists_sent(env: &TestEnv) -> usize {
    env.server()
        .requests()
        .iter()
        .filter(|r| {
            r.origin == RequestOrigin::Client
                && r.method == "GET"
                && r.path == format!("/api/v1/namespaces/{NAMESPACE}/configmaps")
        })
        .count()
}

#[test]
fn child_set_reconciler() {
    let case =
        |r: TestResource, variant: &str| TestCase::sub_reconcile(&r).metadata("variant", &variant);
    let mut with_finalizer = parent(true, &[], &blue_green());
    with_finalizer.metadata.finalizers = Some(vec![FINALIZER.to_owned()]);
    let cases = vec![
        ("in sync no children", case(parent(true, &[], &[]), "")),
        (
            "in sync with children",
            case(parent(true, &[], &blue_green()), "blue and green")
                .given(&blue_given())
                .given(&green_given())
                .verify(|env, _| match lists_sent(env) {
                    0 | 1 => Ok(()),
                    n => Err(format!("listed the children {n} times")),
                }),
        ),
        (
            "preserve existing children",
            case(parent(true, &[], &blue_green()), "known children")
                .given(&blue_given())
                .given(&green_given()),
        ),
        (
            "garbage collect all but oldest child",
            case(parent(true, &[], &blue_green()), "oldest known child")
                .given(&blue_given())
                .given(&green_given())
                .expect_resource(&parent(true, &[], &[("green.foo", "bar")]))
                .expect_delete(delete_config_map(&format!("{NAME}-blue"))),
        ),
        (
            "ignores resources that are not ours",
            case(parent(true, &[], &blue_green()), "blue and green")
                .given(&blue_given())
                .given(&green_given())
                .given(&config_map(NAMESPACE, NAME, false, &[])),
        ),
        (
            "create green child, preserving blue child",
            case(parent(true, &[], &[("blue.foo", "bar")]), "blue and green")
                .given(&blue_given())
                .expect_resource(&parent(true, &[], &blue_green()))
                .expect_create(&child("green", "bar")),
        ),
        (
            "delete green child, preserving blue child",
            case(parent(true, &[], &blue_green()), "blue")
                .given(&blue_given())
                .given(&green_given())
                .expect_resource(&parent(true, &[], &[("blue.foo", "bar")]))
                .expect_delete(delete_config_map(&format!("{NAME}-green"))),
        ),
        (
            "update children",
            case(parent(true, &[], &blue_green()), "updated")
                .given(&blue_given())
                .given(&green_given())
                .expect_resource(&parent(
                    true,
                    &[],
                    &[("blue.foo", "updated-blue"), ("green.foo", "updated-green")],
                ))
                .expect_update(&child("blue", "updated-blue"))
                .expect_update(&child("green", "updated-green")),
        ),
        (
            "errors for desired children with empty id",
            case(parent(true, &[], &[]), "empty id").expect_error(""),
        ),
        (
            "errors for desired children with duplicate ids",
            case(parent(true, &[], &[]), "duplicate ids").expect_error(""),
        ),
        ("deletes actual children with duplicate ids", {
            let mut green_as_blue = green_given();
            green_as_blue["metadata"]["annotations"][ID_KEY] = json!("blue");
            // differs: recon keeps the child of the desired name and deletes only the
            // other one (recon_core::guide::reconciler_io, duplicate children, there said of ChildReconciler).
            case(parent(true, &[], &[("blue.foo", "bar")]), "blue")
                .given(&blue_given())
                .given(&green_as_blue)
                .expect_delete(delete_config_map(&format!("{NAME}-blue")))
                .expect_delete(delete_config_map(&format!("{NAME}-green")))
                .expect_create(&child("blue", "bar"))
                .skip()
        }),
        (
            "deletes actual child resource missing id",
            case(parent(true, &[], &blue_green()), "blue and green")
                .given(&blue_given())
                .given(&green_given())
                .given(&no_id_given())
                .expect_delete(delete_config_map(NAME)),
        ),
        (
            "defines a finalizer when requested",
            case(parent(true, &[], &blue_green()), "finalizer")
                .given(&blue_given())
                .given(&green_given())
                .expect_resource(&with_finalizer)
                .expect_event(EventRef::normal(
                    "FinalizerPatched",
                    &format!("Patched finalizer {FINALIZER:?}"),
                ))
                .expect_patch(PatchRef::merge(
                    "TestResource",
                    Some(NAMESPACE),
                    NAME,
                    json!({"metadata": {"finalizers": [FINALIZER], "resourceVersion": "999"}}),
                )),
        ),
        (
            "forwards error listing children",
            case(parent(true, &[], &blue_green()), "blue and green")
                .given(&blue_given())
                .given(&green_given())
                .reactor(induce("list", "configmaps"))
                .expect_error(""),
        ),
        (
            "forwards error from child reconciler",
            // differs: recon goes on with the other children after a failure (it also
            // creates green).
            case(parent(true, &[], &[]), "blue and green")
                .reactor(induce("create", "configmaps"))
                .expect_create(&child("blue", "bar"))
                .expect_error("")
                .skip(),
        ),
        (
            "skip resource manager operations when OnlyReconcileChildStatus is returned",
            case(parent(false, &[], &[]), "status only")
                .given(&blue_given())
                .given(&green_given())
                .expect_resource(&parent(true, &[], &blue_green())),
        ),
        (
            "skip resource manager operations when OnlyReconcileChildStatus is returned, even when there are no actual or desired children",
            case(parent(false, &[], &blue_green()), "status only").expect_resource(&parent(
                true,
                &[],
                &[],
            )),
        ),
        (
            "errors when desired children returns an error",
            case(parent(true, &[], &[]), "desired error").expect_error("test"),
        ),
    ];
    cases
        .into_iter()
        .fold(
            SubReconcilerTests::new().crd(&TestResource::crd()),
            |t, (name, c)| t.case(name, c),
        )
        .run(|env| build(variant(env)));
}
