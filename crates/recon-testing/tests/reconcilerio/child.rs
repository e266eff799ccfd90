//! `reconcilers/child_test.go`: `ChildReconciler` with reconciler.io's testing
//! `StubObjectManager` ([`StubObjectManager`]) keeping a ConfigMap named after a
//! [`TestResource`] holding its spec fields, reflected in its status fields and `Ready`
//! condition. One case list serves `TestChildReconciler` (typed parent and child),
//! `TestChildReconciler_Unstructured` (`DynamicObject` parent and child) and
//! `TestChildReconciler_Duck` (a [`TestDuck`] parent).
//!
//! Adapted: the parent has a uid ([`UID`], see there); the invalid child's 422 is the fake
//! server's status with reason `Invalid` and no details, so the reflect hook names the child
//! from the parent (the Go child has the parent's name).
//!
//! Left out (recon_core::guide::reconciler_io, duplicate children: recon keeps one
//! child and deletes the others, reconciler.io deletes them all and creates the desired one):
//! - `delete duplicate children` (typed and unstructured);
//! - `error deleting duplicate children` (typed and unstructured).
//!
//! Skipped (Go-only mechanics):
//! - `TestChildReconciler_Validate`: `Validate` of required fields and of `SkipOwnerReference`
//!   combinations; recon's constructor takes the hooks and `without_owner_reference` takes
//!   `our_child` and the list options, so a missing one does not compile.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{ApiResource, DynamicObject};
use recon_core::{
    ChildListOptions, ChildReconciler, Error, OnlyReconcileChildStatus, Reconciled, Reference,
    Request,
};
use recon_testing::{StubObjectManager, SubReconcilerTests, TestCase, TestEnv};
use serde_json::{Value, json};

use crate::children_support::*;
use crate::test_resource::{NAME, NAMESPACE, TestDuck, TestResource, terminating};

/// The case's `variant` metadata (how the factory changes the default reconciler).
fn variant(env: &TestEnv) -> &str {
    env.metadata("variant")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The Go tests' `defaultChildReconciler`, changed as the case's variant says, for any parent
/// type `P` that reads as a [`TestResource`] and any child type `C` that reads as a ConfigMap.
fn build<P: Reconciled, C: Reconciled>(
    variant: &str,
    parent_type: P::DynamicType,
    child_type: C::DynamicType,
) -> ChildReconciler<P, C> {
    let desired_variant = variant.to_owned();
    let reflect_panics = variant == "return error rather than reflect";
    let reconciler = ChildReconciler::new_with(
        parent_type,
        child_type.clone(),
        StubObjectManager::new_with(child_type),
        move |_, parent: &P| {
            match desired_variant.as_str() {
                "status only" => return Err(OnlyReconcileChildStatus.into()),
                "desired error" => return Err(Error::msg("test error")),
                _ => {}
            }
            let parent: TestResource = convert(parent);
            if parent.spec.fields.is_empty() {
                return Ok(None);
            }
            let mut child = config_map(
                parent.metadata.namespace.as_deref().unwrap_or_default(),
                parent.metadata.name.as_deref().unwrap_or_default(),
                false,
                &[],
            );
            child["data"] = serde_json::to_value(&parent.spec.fields).map_err(Error::new)?;
            if desired_variant == "custom owner reference" {
                let mut owner = owner_reference();
                owner["blockOwnerDeletion"] = json!(false);
                child["metadata"]["ownerReferences"] = json!([owner]);
            }
            Ok(Some(serde_json::from_value(child).map_err(Error::new)?))
        },
        move |_, parent: &mut P, child: Result<Option<&C>, Error>| {
            assert!(!reflect_panics, "the reflect hook should not be called");
            let typed: TestResource = convert(parent);
            let mut status = typed.status.unwrap_or_default();
            let child = child.map(|c| c.map(convert::<C, ConfigMap>));
            reflect_on(
                &mut status,
                child,
                typed.metadata.name.as_deref().unwrap_or(NAME),
            );
            *parent = with_status_of(parent, &status);
            Ok(())
        },
    );
    match variant {
        "in other namespace" => {
            reconciler.list_options(|_, _| ChildListOptions::in_namespace("other-ns"))
        }
        "ignore extraneous" => reconciler.our_child(|_, _| false),
        "finalization" => reconciler.without_owner_reference(
            |_, _| true,
            |_, _| ChildListOptions::in_namespace(NAMESPACE),
        ),
        "return error rather than reflect" => {
            reconciler.reflected_error_reasons(Vec::<String>::new())
        }
        _ => reconciler,
    }
}

/// Which Go table a case list is for.
#[derive(Clone, Copy, PartialEq)]
enum Table {
    Typed,
    Unstructured,
}

fn case(resource: &TestResource) -> TestCase {
    TestCase::sub_reconcile(resource)
}

fn foo_bar() -> [(&'static str, &'static str); 1] {
    [("foo", "bar")]
}

/// The cases of `TestChildReconciler` (`Typed`) or `TestChildReconciler_Unstructured`.
fn child_cases(table: Table) -> Vec<(&'static str, TestCase)> {
    let created = || parent(true, &foo_bar(), &foo_bar());
    let mut cases = vec![
        ("preserve no child", case(&parent(true, &[], &[]))),
        (
            "child is in sync",
            case(&parent(true, &foo_bar(), &foo_bar())).given(&config_map_given()),
        ),
        (
            "child is in sync, in a different namespace",
            case(&parent(true, &foo_bar(), &foo_bar()))
                .given(&config_map("other-ns", NAME, true, &foo_bar()))
                .metadata("variant", &"in other namespace"),
        ),
        (
            "create child",
            case(&parent(false, &foo_bar(), &[]))
                .expect_resource(&created())
                .expect_create(&config_map_given()),
        ),
    ];
    if table == Table::Typed {
        let mut custom = config_map_given();
        custom["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = json!(false);
        cases.push((
            "create child with custom owner reference",
            case(&parent(false, &foo_bar(), &[]))
                .metadata("variant", &"custom owner reference")
                .expect_resource(&created())
                .expect_create(&custom),
        ));
    }
    let foo_new = [("foo", "bar"), ("new", "field")];
    let given_new = config_map(NAMESPACE, NAME, true, &foo_new);
    cases.extend([
        (
            "update child",
            case(&parent(true, &foo_new, &foo_bar()))
                .given(&config_map_given())
                .expect_resource(&parent(true, &foo_new, &foo_new))
                .expect_update(&given_new),
        ),
        (
            "delete child",
            case(&parent(true, &[], &[]))
                .given(&config_map_given())
                .expect_delete(delete_config_map(NAME)),
        ),
        (
            "ignore extraneous children",
            case(&parent(true, &[], &[]))
                .given(&config_map_given())
                .metadata("variant", &"ignore extraneous"),
        ),
    ]);
    if table == Table::Typed {
        let mut deleting = parent(true, &[], &[]);
        deleting.metadata = terminating(deleting.metadata);
        cases.extend([
            (
                "delete child during finalization",
                case(&deleting)
                    .given(&config_map(NAMESPACE, NAME, false, &foo_bar()))
                    .metadata("variant", &"finalization")
                    .expect_delete(delete_config_map(NAME)),
            ),
            (
                "invalid child",
                case(&parent(true, &foo_bar(), &[]))
                    .reactor(invalid("create", "configmaps", NAME))
                    .expect_resource(&not_ready(
                        parent(true, &foo_bar(), &[]),
                        "InvalidChild",
                        "\"test-resource\" was rejected by the api server",
                    ))
                    .expect_create(&config_map_given()),
            ),
            (
                "invalid child - return error rather than reflect",
                case(&parent(true, &foo_bar(), &[]))
                    .reactor(invalid("create", "configmaps", NAME))
                    .metadata("variant", &"return error rather than reflect")
                    .expect_error("")
                    .expect_resource(&parent(true, &foo_bar(), &[]))
                    .expect_create(&config_map_given()),
            ),
        ]);
    }
    cases.extend([
        (
            "child name collision",
            case(&parent(true, &foo_bar(), &[]))
                .api_given(&config_map(NAMESPACE, NAME, false, &foo_bar()))
                .reactor(recon_testing::ReactorSpec::new(
                    "create",
                    "configmaps",
                    recon_testing::FailureSpec::AlreadyExists,
                ))
                .expect_resource(&not_ready(
                    parent(true, &foo_bar(), &[]),
                    "NameConflict",
                    "\"test-resource\" already exists",
                ))
                .expect_create(&config_map_given())
                .expect_track(
                    Request::namespaced(NAMESPACE, NAME),
                    Reference::of::<ConfigMap>(Some(NAMESPACE), NAME),
                ),
        ),
        (
            "child name collision, stale informer cache",
            case(&parent(true, &foo_bar(), &[]))
                .api_given(&config_map_given())
                .reactor(recon_testing::ReactorSpec::new(
                    "create",
                    "configmaps",
                    recon_testing::FailureSpec::AlreadyExists,
                ))
                .expect_create(&config_map_given())
                .expect_error(""),
        ),
        (
            "status only reconcile",
            case(&parent(false, &[], &[]))
                .given(&config_map_given())
                .metadata("variant", &"status only")
                .expect_resource(&parent(true, &[], &foo_bar())),
        ),
        (
            "error listing children",
            case(&parent(true, &[], &[]))
                .reactor(induce("list", "configmaps"))
                .expect_error(""),
        ),
        (
            "error creating child",
            case(&parent(false, &foo_bar(), &[]))
                .reactor(induce("create", "configmaps"))
                .expect_create(&config_map_given())
                .expect_error(""),
        ),
        (
            "error updating child",
            case(&parent(true, &foo_new, &foo_bar()))
                .given(&config_map_given())
                .reactor(induce("update", "configmaps"))
                .expect_update(&given_new)
                .expect_error(""),
        ),
        (
            "error deleting child",
            case(&parent(true, &[], &[]))
                .given(&config_map_given())
                .reactor(induce("delete", "configmaps"))
                .expect_delete(delete_config_map(NAME))
                .expect_error(""),
        ),
        (
            "error creating desired child",
            case(&parent(false, &[], &[]))
                .metadata("variant", &"desired error")
                .expect_error("test error"),
        ),
    ]);
    cases
}

fn sub_tests(cases: Vec<(&'static str, TestCase)>) -> SubReconcilerTests {
    cases.into_iter().fold(
        SubReconcilerTests::new().crd(&TestResource::crd()),
        |t, (name, c)| t.case(name, c),
    )
}

#[test]
fn child_reconciler() {
    sub_tests(child_cases(Table::Typed))
        .run(|env| build::<TestResource, ConfigMap>(variant(env), (), ()));
}

#[test]
fn child_reconciler_unstructured() {
    sub_tests(child_cases(Table::Unstructured)).run(|env| {
        build::<DynamicObject, DynamicObject>(
            variant(env),
            ApiResource::erase::<TestResource>(&()),
            ApiResource::erase::<ConfigMap>(&()),
        )
    });
}

#[test]
fn child_reconciler_duck() {
    let mut custom = config_map_given();
    custom["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = json!(false);
    let duck = |r: TestResource| -> TestDuck { convert(&r) };
    sub_tests(vec![
        (
            "create child",
            TestCase::sub_reconcile(&duck(parent(false, &foo_bar(), &[])))
                .expect_resource(&duck(parent(true, &foo_bar(), &foo_bar())))
                .expect_create(&config_map_given()),
        ),
        (
            "create child with custom owner reference",
            TestCase::sub_reconcile(&duck(parent(false, &foo_bar(), &[])))
                .metadata("variant", &"custom owner reference")
                .expect_resource(&duck(parent(true, &foo_bar(), &foo_bar())))
                .expect_create(&custom),
        ),
    ])
    .run(|env| build::<TestDuck, ConfigMap>(variant(env), (), ()));
}
