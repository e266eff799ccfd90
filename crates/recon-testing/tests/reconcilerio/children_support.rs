//! What the child and child-set ports share: the parent's uid and owner reference, the
//! `Ready` condition the Go tests' dies build, JSON conversions standing in for Go's
//! reflection over typed, duck and unstructured parents, and the API failures induced.

use k8s_openapi::api::core::v1::ConfigMap;
use recon_core::{Condition, Error};
use recon_testing::{DeleteRef, FailureSpec, ReactorSpec};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::test_resource::{NAME, NAMESPACE, TestResource, TestResourceStatus, ready_unknown};

/// The uid of the parent: reconciler.io's dies leave it empty and its owner references carry
/// the empty uid; recon refuses to own a child from a parent without one (`OwnerWithoutUid`),
/// so the ported parents are stored objects with this uid.
pub const UID: &str = "7e57e57e-0000-4000-8000-000000000001";

/// `a` re-read as a `B` (Go's conversions between typed, duck and unstructured objects).
pub fn convert<A: Serialize, B: DeserializeOwned>(a: &A) -> B {
    serde_json::from_value(serde_json::to_value(a).expect("serialisable"))
        .expect("the same object in another type")
}

/// `parent` with `status` in place of its own, whatever its type.
pub fn with_status_of<P: Serialize + DeserializeOwned>(
    parent: &P,
    status: &TestResourceStatus,
) -> P {
    let mut value = serde_json::to_value(parent).expect("serialisable");
    value["status"] = serde_json::to_value(status).expect("serialisable");
    serde_json::from_value(value).expect("the parent with its new status")
}

/// The `Ready` condition with this status and reason (`MarkReady`, `MarkNotReady`).
pub fn ready(status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        ..ready_unknown()
    }
}

/// The test resource, `Ready` (`true`) or initializing (`false`), with these spec and status
/// fields, stored (uid [`UID`]).
pub fn parent(is_ready: bool, spec: &[(&str, &str)], status: &[(&str, &str)]) -> TestResource {
    let mut r = crate::test_resource::test_resource();
    r.metadata.uid = Some(UID.to_owned());
    r.spec.fields = fields(spec);
    r.status = Some(TestResourceStatus {
        conditions: vec![if is_ready {
            ready("True", "Ready", "")
        } else {
            ready_unknown()
        }],
        fields: fields(status),
        ..TestResourceStatus::default()
    });
    r
}

/// `parent` with `Ready: False` for `reason` and `message`.
pub fn not_ready(mut r: TestResource, reason: &str, message: &str) -> TestResource {
    r.status.get_or_insert_default().conditions = vec![ready("False", reason, message)];
    r
}

pub fn fields(list: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The controller reference the parent gives its children.
pub fn owner_reference() -> Value {
    json!({"apiVersion": "testing.reconciler.runtime/v1", "kind": "TestResource", "name": NAME,
           "uid": UID, "controller": true, "blockOwnerDeletion": true})
}

/// A ConfigMap `name` in `namespace` holding `data`, controlled by the parent or not.
pub fn config_map(namespace: &str, name: &str, owned: bool, data: &[(&str, &str)]) -> Value {
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name, "namespace": namespace}});
    if owned {
        cm["metadata"]["ownerReferences"] = json!([owner_reference()]);
    }
    if !data.is_empty() {
        cm["data"] = serde_json::to_value(fields(data)).expect("serialisable");
    }
    cm
}

/// The Go tests' `configMapGiven`/`configMapCreate`: the parent's child holding `foo: bar`.
pub fn config_map_given() -> Value {
    config_map(NAMESPACE, NAME, true, &[("foo", "bar")])
}

pub fn delete_config_map(name: &str) -> DeleteRef {
    DeleteRef::new("ConfigMap", Some(NAMESPACE), name)
}

/// `InduceFailure(verb, kind)` with no error given: reconciler.io's default, a 500.
pub fn induce(verb: &str, plural: &str) -> ReactorSpec {
    ReactorSpec::new(
        verb,
        plural,
        FailureSpec::Internal("inducing failure".to_owned()),
    )
}

/// `apierrs.NewInvalid` for the child `name`.
pub fn invalid(verb: &str, plural: &str, name: &str) -> ReactorSpec {
    ReactorSpec::new(
        verb,
        plural,
        FailureSpec::Status {
            code: 422,
            reason: "Invalid".to_owned(),
            message: format!(
                "ConfigMap {name:?} is invalid: metadata.name: Invalid value: {name:?}"
            ),
        },
    )
}

/// The Go tests' default `ReflectChildStatusOnParent`, on a typed status: a reflected failure
/// marks the parent not ready (by its reason), a child copies its data to the status fields.
/// `name` is the name of the child when the failure carries none in its details.
pub fn reflect_on(
    status: &mut TestResourceStatus,
    child: Result<Option<ConfigMap>, Error>,
    name: &str,
) {
    match child {
        Err(err) => {
            let Some(api) = err.as_api_error() else {
                return;
            };
            let name = api
                .details
                .as_ref()
                .map(|d| d.name.clone())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| name.to_owned());
            let reason = match api.reason.as_str() {
                "AlreadyExists" => ("NameConflict", format!("{name:?} already exists")),
                "Invalid" => (
                    "InvalidChild",
                    format!("{name:?} was rejected by the api server"),
                ),
                _ => return,
            };
            status.conditions = vec![ready("False", reason.0, &reason.1)];
        }
        Ok(None) => {
            status.fields.clear();
            status.conditions = vec![ready("True", "Ready", "")];
        }
        Ok(Some(child)) => {
            status.fields = child.data.unwrap_or_default().into_iter().collect();
            status.conditions = vec![ready("True", "Ready", "")];
        }
    }
}
