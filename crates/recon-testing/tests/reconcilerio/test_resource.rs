//! reconciler.io's `TestResource` (`internal/resources/resource.go`): a namespaced kind of
//! group `testing.reconciler.runtime` whose spec and status each hold a map of string
//! `fields`, the status also conditions and `observedGeneration`, as its tests use them. Beside
//! it, the other types of `internal/resources` the ported tests reconcile: `TestDuck` (a
//! duck view of `TestResource`), `TestResourceNoStatus`, `TestResourceEmptyStatus` and
//! `TestResourceUnexportedFields` (fields that never reach the wire).
//!
//! Every type there defaults its spec (`Default` sets `spec.fields.Defaulter` to `ran`), and
//! reconciler.io's `ResourceReconciler` calls it on the resource it reads; here that is
//! [`default_fields`], given to the root as its `default_resource` hook. Go's `TestResource`
//! writes `status: {}` even when empty and has a `template` in its spec; neither matters to
//! the tests ported, and the Rust types leave them out.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use kube::api::ObjectMeta;
use recon_core::{Condition, ConditionSet, Context, Error, impl_conditioned_status};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The namespace of every test's resource.
pub const NAMESPACE: &str = "test-namespace";
/// The name of most tests' resource.
pub const NAME: &str = "test-resource";
/// The finalizer that keeps a deleted resource terminating.
pub const FINALIZER: &str = "test.finalizer";

/// The spec: string fields the tests' reconcilers read and write.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResource",
    namespaced,
    status = "TestResourceStatus"
)]
pub struct TestResourceSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

/// The status: conditions (the `Ready` set), `observedGeneration` and string fields.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestResourceStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

impl_conditioned_status!(TestResourceStatus, ConditionSet::living(&[]));

/// The port of the types' `Default`: `spec.fields.Defaulter` is `ran`.
pub trait Defaulted {
    /// The spec's fields.
    fn spec_fields(&mut self) -> &mut BTreeMap<String, String>;
}

impl Defaulted for TestResource {
    fn spec_fields(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.spec.fields
    }
}

impl Defaulted for TestDuck {
    fn spec_fields(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.spec.fields
    }
}

impl Defaulted for TestResourceNoStatus {
    fn spec_fields(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.spec.fields
    }
}

impl Defaulted for TestResourceEmptyStatus {
    fn spec_fields(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.spec.fields
    }
}

impl Defaulted for TestResourceUnexportedFields {
    fn spec_fields(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.spec.fields
    }
}

/// The root's `default_resource` hook for any of the test types.
pub fn default_fields<R: Defaulted>(_: &Context, resource: &mut R) -> Result<(), Error> {
    resource
        .spec_fields()
        .insert("Defaulter".to_owned(), "ran".to_owned());
    Ok(())
}

/// `TestDuck` (`resource_duck.go`): a view of `TestResource` through a type of its own, with a
/// spec of its own (`immutable` besides `fields`) and the same status. reconciler.io treats a
/// type its scheme does not know as a duck and patches its status; here the root is told
/// (`StatusStrategy::MergePatch`).
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResource",
    root = "TestDuck",
    namespaced,
    status = "TestResourceStatus"
)]
pub struct TestDuckSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

/// `TestResourceNoStatus` (`resource_without_status.go`): a spec and no status.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResourceNoStatus",
    namespaced
)]
pub struct TestResourceNoStatusSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

/// `TestResourceEmptyStatus` (`resource_with_empty_status.go`): a status with no fields.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResourceEmptyStatus",
    namespaced,
    status = "TestResourceEmptyStatusStatus"
)]
pub struct TestResourceEmptyStatusSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

/// The empty status.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct TestResourceEmptyStatusStatus {}

/// `TestResourceUnexportedFields` (`resource_with_unexported_fields.go`): spec and status each
/// hold, beside what `TestResource` has, fields Go does not export, here fields serde skips:
/// they live in memory and never reach the wire.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResourceUnexportedFields",
    namespaced,
    status = "TestResourceUnexportedFieldsStatus"
)]
pub struct TestResourceUnexportedFieldsSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    #[serde(skip)]
    pub unexported_fields: BTreeMap<String, String>,
}

/// The status with fields that are not serialised.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestResourceUnexportedFieldsStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    #[serde(skip)]
    pub unexported_fields: BTreeMap<String, String>,
}

impl_conditioned_status!(
    TestResourceUnexportedFieldsStatus,
    ConditionSet::living(&[])
);

impl TestResourceUnexportedFields {
    /// `ReflectUnexportedFieldsToStatus`: the spec's unexported fields become the status's.
    pub fn reflect_unexported_fields_to_status(&mut self) {
        let fields = self.spec.unexported_fields.clone();
        self.status.get_or_insert_default().unexported_fields = fields;
    }
}

/// The metadata of the resource `name` in [`NAMESPACE`].
pub fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        namespace: Some(NAMESPACE.to_owned()),
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

/// The condition dies' `ConditionBlank.Type(Ready).Status(Unknown).Reason("Initializing")`.
/// Go leaves its transition time zero; here it is the cases' default clock (comparisons leave
/// transition times out).
pub fn ready_unknown() -> Condition {
    Condition {
        type_: "Ready".to_owned(),
        status: "Unknown".to_owned(),
        reason: "Initializing".to_owned(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: Time(recon_testing::DEFAULT_NOW.parse().expect("a timestamp")),
    }
}

/// A blank `TestResource` named [`NAME`].
pub fn test_resource() -> TestResource {
    TestResource {
        metadata: meta(NAME),
        spec: TestResourceSpec::default(),
        status: None,
    }
}

/// A status holding only the `Ready` condition reconciler.io's dies give, not initialized.
pub fn ready_unknown_status() -> TestResourceStatus {
    TestResourceStatus {
        conditions: vec![ready_unknown()],
        ..TestResourceStatus::default()
    }
}

/// `deletedAt` of the Go tests, as a `deletionTimestamp`.
pub fn deleted_at() -> Time {
    Time("1970-01-01T00:00:02Z".parse().expect("a timestamp"))
}

/// `resource` deleted while [`FINALIZER`] keeps it: terminating.
pub fn terminating(mut metadata: ObjectMeta) -> ObjectMeta {
    metadata.deletion_timestamp = Some(deleted_at());
    metadata.finalizers = Some(vec![FINALIZER.to_owned()]);
    metadata
}
