//! admissionregistration.k8s.io/v1: webhook configurations and admission policies with their
//! bindings (`pkg/registry/admissionregistration/<resource>/strategy.go`), and
//! apiregistration.k8s.io/v1 `APIService` (kube-aggregator's `pkg/registry/apiservice`).

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;

use super::{builtin, reset, with_status};
use crate::registry::crd::set_condition;
use crate::registry::resource::{FieldLabels, GenerationRule, ResourceType, TypeHooks};

/// Every admission and aggregation type is listed in the `api-extensions` category.
const CATEGORIES: &[&str] = &["api-extensions"];

pub(super) fn types() -> Vec<ResourceType> {
    let admission = |kind: &str, plural: &str| ResourceType {
        // Each strategy sets generation 1 on create and bumps it when anything but metadata
        // changes.
        generation: GenerationRule::Spec { annotations: false },
        field_labels: FieldLabels::default_conversion(),
        ..builtin("admissionregistration.k8s.io", "v1", kind, plural, false).categories(CATEGORIES)
    };
    vec![
        // New in v1: storage keeps v1beta1 until every server of a cluster reads v1
        // (`pkg/kubeapiserver/default_storage_factory_builder.go`).
        admission("MutatingAdmissionPolicy", "mutatingadmissionpolicies").stored_at("v1beta1"),
        admission(
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
        )
        .stored_at("v1beta1"),
        webhooks(admission(
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        )),
        ResourceType {
            status_write: reset(&["spec"], &[]),
            hooks: TypeHooks {
                // `PrepareForCreate`: the status is emptied.
                prepare_create: Some(|policy| {
                    policy.insert("status".into(), json!({}));
                }),
                ..TypeHooks::default()
            },
            ..with_status(admission(
                "ValidatingAdmissionPolicy",
                "validatingadmissionpolicies",
            ))
        },
        admission(
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
        ),
        webhooks(admission(
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        )),
        ResourceType {
            status_write: reset(&["spec"], &[]),
            // `ValidateAPIService`: a path segment, then `<version>.<group>` (checked there).
            name_rule: NameRule::PathSegment,
            field_labels: FieldLabels::default_conversion(),
            hooks: TypeHooks {
                stamp: Some(available_if_local),
                ..TypeHooks::default()
            },
            ..with_status(builtin(
                "apiregistration.k8s.io",
                "v1",
                "APIService",
                "apiservices",
                false,
            ))
            .categories(CATEGORIES)
        },
    ]
}

/// A webhook configuration has no `spec`: its generation moves when its `webhooks` change.
fn webhooks(t: ResourceType) -> ResourceType {
    ResourceType {
        generation: GenerationRule::AllButMetadata,
        ..t
    }
}

/// `apiServerStrategy.PrepareForCreate`: an empty status, and a local APIService (no
/// `service`) available at once.
fn available_if_local(apiservice: &mut Map, old: Option<&Map>, now: &Value) {
    if old.is_some() {
        return;
    }
    apiservice.insert("status".into(), json!({}));
    let local = apiservice
        .get("spec")
        .and_then(|s| s.get("service"))
        .is_none_or(Value::is_null);
    if local {
        set_condition(
            apiservice,
            "Available",
            "True",
            "Local",
            "Local APIServices are always available",
            now,
        );
    }
}
