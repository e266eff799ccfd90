//! The API server's own configuration: admission webhooks and policies
//! (`pkg/apis/admissionregistration/v1/defaults.go`) and API priority and fairness
//! (`pkg/apis/flowcontrol/v1/defaults.go`).

use recon_apimachinery::json;

use super::{default_nil, default_zero, field, field_or_new, items};
use crate::wire::object::Object;

/// `SetDefaults_ValidatingWebhook` / `SetDefaults_MutatingWebhook`, each webhook of a
/// configuration.
pub(super) fn webhook_configuration(obj: &mut Object, mutating: bool) {
    for webhook in items(obj, "webhooks") {
        default_nil(webhook, "failurePolicy", "Fail");
        default_nil(webhook, "matchPolicy", "Equivalent");
        default_nil(webhook, "namespaceSelector", json!({}));
        default_nil(webhook, "objectSelector", json!({}));
        default_nil(webhook, "timeoutSeconds", 10);
        if mutating {
            default_nil(webhook, "reinvocationPolicy", "Never");
        }
        rules(webhook, "rules");
        if let Some(service) = field(webhook, "clientConfig").and_then(|c| field(c, "service")) {
            default_nil(service, "port", 443);
        }
    }
}

/// `SetDefaults_ValidatingAdmissionPolicySpec` / `SetDefaults_MutatingAdmissionPolicySpec`.
pub(super) fn admission_policy(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_nil(spec, "failurePolicy", "Fail");
    if let Some(constraints) = field(spec, "matchConstraints") {
        match_resources(constraints);
    }
}

/// A policy binding's `matchResources`, when it has some.
pub(super) fn admission_policy_binding(obj: &mut Object) {
    if let Some(resources) = field(obj, "spec").and_then(|s| field(s, "matchResources")) {
        match_resources(resources);
    }
}

/// `SetDefaults_MatchResources`.
fn match_resources(resources: &mut Object) {
    default_nil(resources, "matchPolicy", "Equivalent");
    default_nil(resources, "namespaceSelector", json!({}));
    default_nil(resources, "objectSelector", json!({}));
    rules(resources, "resourceRules");
    rules(resources, "excludeResourceRules");
}

/// `SetDefaults_Rule`: a rule applies to every scope unless it says otherwise.
fn rules(obj: &mut Object, key: &str) {
    for rule in items(obj, key) {
        default_nil(rule, "scope", "*");
    }
}

/// `SetDefaults_FlowSchemaSpec`.
pub(super) fn flow_schema(obj: &mut Object) {
    if let Some(spec) = field_or_new(obj, "spec") {
        default_zero(spec, "matchingPrecedence", 1000);
    }
}

/// `SetDefaults_PriorityLevelConfiguration` with its limited and exempt parts, and a queuing
/// configuration's when there is one (none is made: validation requires it for `Queue`).
pub(super) fn priority_level_configuration(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    if let Some(limited) = field(spec, "limited") {
        default_nil(limited, "nominalConcurrencyShares", 30);
        default_nil(limited, "lendablePercent", 0);
        if let Some(response) = field(limited, "limitResponse")
            && let Some(queuing) = field(response, "queuing")
        {
            default_zero(queuing, "queues", 64);
            default_zero(queuing, "handSize", 8);
            default_zero(queuing, "queueLengthLimit", 50);
        }
    }
    if let Some(exempt) = field(spec, "exempt") {
        default_nil(exempt, "nominalConcurrencyShares", 0);
        default_nil(exempt, "lendablePercent", 0);
    }
}
