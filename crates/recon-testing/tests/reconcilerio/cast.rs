//! `reconcilers/cast_test.go`: `CastResource`, a sub-reconciler for one type run on a resource
//! of another, its changes patched back.
//!
//! The cases reconcile [`CastTestResource`]: reconciler.io's `TestResource` with what these
//! cases need of its spec and [`TestResource`](crate::test_resource::TestResource) leaves out,
//! the pod `template` and the `errOnMarshal` / `errOnUnmarshal` flags, which make the spec
//! refuse to be written or read. Its CRD has no schema, so that the in-memory server keeps the
//! template of the resource it seeds (the `TestResource` CRD would prune it).
//!
//! The cases viewing the resource as a k8s-openapi `Deployment` need recon to read it without
//! its `apiVersion` and `kind`, which the `Deployment` refuses (fixed with this port).
//!
//! Adapted: "return subreconciler err, preserves result and status update" replaces the
//! Deployment's condition keeping its transition time (Go's has none; the resource's
//! `metav1.Condition` requires one, and comparisons leave it out).
//!
//! Left out (a resource recon-testing cannot hold: it reads the case's resource into its type
//! and writes it to compare it, where Go's table keeps the object as built):
//! - "marshal error": the resource refuses to be written (`errOnMarshal`);
//! - "unmarshal error": the resource refuses to be read (`errOnUnmarshal`).
//!
//! recon's errors for a resource that is not written or read as the cast type are those of
//! "cast mutation patch error" here and of `tests/tree/cast.rs`.
//!
//! Left out (Go-only mechanics): `TestCastResource_Validate` (5 cases): `Validate` refuses a
//! `CastResource` without a `Reconciler` (recon's constructor takes it) or with an invalid
//! nested `SyncReconciler` (recon_core::guide::reconciler_io: nothing is validated at
//! setup).
//!
//! Differing (kept, skipped, `// differs:` says what recon does):
//! - "cast mutation patch apply error".

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{CustomResource, CustomResourceExt, Resource};
use recon_core::{CastResource, Error, Event, IntoBoxed, Outcome, SyncReconciler};
use recon_testing::{EventRef, SubReconcilerTests, TestCase, TestEnv};
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::children_support::ready;
use crate::test_resource::{NAME, TestResourceStatus, meta, ready_unknown_status};

/// reconciler.io's `TestResource` spec as the cast tests use it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "testing.reconciler.runtime",
    version = "v1",
    kind = "TestResource",
    root = "CastTestResource",
    namespaced,
    status = "TestResourceStatus",
    schema = "disabled"
)]
pub struct CastTestResourceSpec {
    pub fields: BTreeMap<String, String>,
    pub template: Option<PodTemplateSpec>,
    /// Writing the spec fails.
    pub err_on_marshal: bool,
    /// Reading the spec fails.
    pub err_on_unmarshal: bool,
}

/// The spec as written and read.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    fields: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    template: Option<PodTemplateSpec>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    err_on_marshal: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    err_on_unmarshal: bool,
}

impl Serialize for CastTestResourceSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.err_on_marshal {
            return Err(S::Error::custom("ErrOnMarshal true"));
        }
        RawSpec {
            fields: self.fields.clone(),
            template: self.template.clone(),
            err_on_marshal: false,
            err_on_unmarshal: self.err_on_unmarshal,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CastTestResourceSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawSpec::deserialize(deserializer)?;
        if raw.err_on_unmarshal {
            return Err(D::Error::custom("ErrOnUnmarshal true"));
        }
        Ok(CastTestResourceSpec {
            fields: raw.fields,
            template: raw.template,
            err_on_marshal: raw.err_on_marshal,
            err_on_unmarshal: false,
        })
    }
}

/// The Go tests' `resource`: [`NAME`], its `Ready` condition initializing.
fn resource() -> CastTestResource {
    CastTestResource {
        metadata: meta(NAME),
        spec: CastTestResourceSpec::default(),
        status: Some(ready_unknown_status()),
    }
}

/// The sub-reconciler the case's metadata names.
fn sub_reconciler(env: &TestEnv) -> recon_core::BoxSubReconciler<CastTestResource> {
    let name = env
        .metadata("SubReconciler")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let deployment = SyncReconciler::<Deployment>::new("SyncReconciler");
    let same = SyncReconciler::<CastTestResource>::new("SyncReconciler");
    match name {
        "events the container name" => CastResource::<CastTestResource, Deployment>::new(
            deployment.sync(async |ctx, resource| {
                let container = resource
                    .spec
                    .template
                    .spec
                    .as_ref()
                    .and_then(|s| s.containers.first())
                    .map(|c| c.name.clone())
                    .ok_or_else(|| Error::msg("the deployment has no container"))?;
                ctx.publish(
                    &resource.object_ref(&()),
                    Event::normal("Test", "Test", container),
                )
                .await;
                Ok(())
            }),
        )
        .boxed(),
        "mutates" => {
            CastResource::<CastTestResource, Deployment>::new(deployment.sync(
                async |_, resource| {
                    let spec = &mut resource.spec;
                    // A mutation that exists on the original resource and is reflected.
                    spec.template.metadata.get_or_insert_default().name =
                        Some("mutation".to_owned());
                    // A mutation that does not exist on the original resource and is dropped.
                    spec.paused = Some(true);
                    Ok(())
                },
            ))
            .boxed()
        }
        "requeues" => CastResource::<CastTestResource, Deployment>::new(
            deployment.sync(async |_, _| Ok(Outcome::requeue())),
        )
        .boxed(),
        "fails after a status change" => CastResource::<CastTestResource, Deployment>::new(
            deployment.sync(async |_, resource| {
                let conditions = resource
                    .status
                    .get_or_insert_default()
                    .conditions
                    .get_or_insert_default();
                let kept = conditions
                    .first()
                    .and_then(|c| c.last_transition_time.clone());
                let failed = DeploymentCondition {
                    type_: Some("Ready".to_owned()),
                    status: Some("False".to_owned()),
                    reason: Some("Failed".to_owned()),
                    message: Some("expected error".to_owned()),
                    last_transition_time: kept,
                    last_update_time: None,
                };
                match conditions.first_mut() {
                    Some(first) => *first = failed,
                    None => conditions.push(failed),
                }
                Err::<(), _>(Error::msg("subreconciler error").with_outcome(Outcome::requeue()))
            }),
        )
        .boxed(),
        "sets errOnMarshal and fails" => {
            CastResource::<CastTestResource, CastTestResource>::new(same.sync(async |_, r| {
                r.spec.err_on_marshal = true;
                Err::<(), _>(Error::msg("subreconciler error"))
            }))
            .boxed()
        }
        "sets errOnUnmarshal and fails" => {
            CastResource::<CastTestResource, CastTestResource>::new(same.sync(async |_, r| {
                r.spec.err_on_unmarshal = true;
                Err::<(), _>(Error::msg("subreconciler error"))
            }))
            .boxed()
        }
        other => panic!("no sub-reconciler {other:?}"),
    }
}

// ---- TestCastResource ----

#[test]
fn cast_resource() {
    let case = |resource: &CastTestResource, sub: &str| {
        TestCase::sub_reconcile(resource).metadata("SubReconciler", &sub)
    };
    let with_container = CastTestResource {
        spec: CastTestResourceSpec {
            template: Some(PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "test-container".to_owned(),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            }),
            ..CastTestResourceSpec::default()
        },
        ..resource()
    };
    let mutated = CastTestResource {
        spec: CastTestResourceSpec {
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    name: Some("mutation".to_owned()),
                    ..ObjectMeta::default()
                }),
                spec: None,
            }),
            ..CastTestResourceSpec::default()
        },
        ..resource()
    };
    let failed = CastTestResource {
        status: Some(TestResourceStatus {
            conditions: vec![ready("False", "Failed", "expected error")],
            ..TestResourceStatus::default()
        }),
        ..resource()
    };
    let unmarshal_flagged = CastTestResource {
        spec: CastTestResourceSpec {
            err_on_unmarshal: true,
            ..CastTestResourceSpec::default()
        },
        // The unmarshal error loses the initializing `Ready` condition while the patch is
        // applied.
        status: Some(TestResourceStatus::default()),
        ..resource()
    };
    SubReconcilerTests::new()
        .crd(&CastTestResource::crd())
        .case(
            "sync success",
            case(&with_container, "events the container name")
                .expect_event(EventRef::normal("Test", "test-container")),
        )
        .case(
            "cast mutation",
            case(&resource(), "mutates").expect_resource(&mutated),
        )
        .case(
            "return subreconciler result",
            case(&resource(), "requeues").expect_result(Outcome::requeue()),
        )
        .case(
            "return subreconciler err, preserves result and status update",
            case(&resource(), "fails after a status change")
                .expect_result(Outcome::requeue())
                .expect_resource(&failed)
                .expect_error("subreconciler error"),
        )
        .case(
            "cast mutation patch error",
            case(&resource(), "sets errOnMarshal and fails").expect_error("subreconciler error"),
        )
        .case(
            // differs: a change that cannot be patched back leaves the resource as it was (and
            // the error says so beside the sub-reconciler's); Go's patch is half applied when
            // the resource refuses to be read, setting `errOnUnmarshal` and dropping the
            // conditions.
            "cast mutation patch apply error",
            case(&resource(), "sets errOnUnmarshal and fails")
                .expect_resource(&unmarshal_flagged)
                .expect_error("subreconciler error")
                .skip(),
        )
        .run(sub_reconciler);
}
