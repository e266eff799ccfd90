//! apps/v1 and batch/v1: `SetDefaults_Deployment`, `_StatefulSet`, `_DaemonSet`,
//! `_ReplicaSet`, `_Job`, `_CronJob`, and their pod templates.

use recon_apimachinery::json;

use super::{
    core_v1, default_nil, default_zero, field, field_or_new, is_nil, items, label_if_unlabelled,
    pod, str_of, template_labels,
};
use crate::wire::object::Object;

/// The pod template at `spec.template`.
fn template(spec: &mut Object) {
    if let Some(template) = field_or_new(spec, "template") {
        pod::template(template);
    }
}

pub(super) fn deployment(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_nil(spec, "replicas", 1);
    if let Some(strategy) = field_or_new(spec, "strategy") {
        default_zero(strategy, "type", "RollingUpdate");
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = field_or_new(strategy, "rollingUpdate")
        {
            default_nil(rolling, "maxUnavailable", "25%");
            default_nil(rolling, "maxSurge", "25%");
        }
    }
    default_nil(spec, "revisionHistoryLimit", 10);
    default_nil(spec, "progressDeadlineSeconds", 600);
    template(spec);
}

pub(super) fn stateful_set(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_zero(spec, "podManagementPolicy", "OrderedReady");
    if let Some(strategy) = field_or_new(spec, "updateStrategy") {
        if super::is_zero(strategy, "type") {
            strategy.insert("type".into(), "RollingUpdate".into());
            default_nil(strategy, "rollingUpdate", json!({}));
        }
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = field(strategy, "rollingUpdate")
        {
            default_nil(rolling, "partition", 0);
        }
    }
    if let Some(policy) = field_or_new(spec, "persistentVolumeClaimRetentionPolicy") {
        default_zero(policy, "whenDeleted", "Retain");
        default_zero(policy, "whenScaled", "Retain");
    }
    default_nil(spec, "replicas", 1);
    default_nil(spec, "revisionHistoryLimit", 10);
    template(spec);
    for claim in items(spec, "volumeClaimTemplates") {
        core_v1::persistent_volume_claim(claim);
        // The StatefulSet strategy names each claim template's type.
        claim.insert("apiVersion".into(), json!("v1"));
        claim.insert("kind".into(), json!("PersistentVolumeClaim"));
    }
}

pub(super) fn daemon_set(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    if let Some(strategy) = field_or_new(spec, "updateStrategy") {
        default_zero(strategy, "type", "RollingUpdate");
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = field_or_new(strategy, "rollingUpdate")
        {
            default_nil(rolling, "maxUnavailable", 1);
            default_nil(rolling, "maxSurge", 0);
        }
    }
    default_nil(spec, "revisionHistoryLimit", 10);
    template(spec);
}

pub(super) fn replica_set(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_nil(spec, "replicas", 1);
    template(spec);
}

pub(super) fn job(obj: &mut Object) {
    if let Some(labels) = template_labels(obj) {
        label_if_unlabelled(obj, labels);
    }
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    job_spec(spec);
}

fn job_spec(spec: &mut Object) {
    if is_nil(spec, "completions") && is_nil(spec, "parallelism") {
        spec.insert("completions".into(), 1.into());
        spec.insert("parallelism".into(), 1.into());
    }
    default_nil(spec, "parallelism", 1);
    let backoff = if is_nil(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    default_nil(spec, "backoffLimit", backoff);
    default_nil(spec, "completionMode", "NonIndexed");
    default_nil(spec, "suspend", false);
    let replacement = if is_nil(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    default_nil(spec, "podReplacementPolicy", replacement);
    default_nil(spec, "manualSelector", false);
    pod_failure_policy(spec);
    template(spec);
}

/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern`: a pod condition pattern matches `True`.
fn pod_failure_policy(spec: &mut Object) {
    if let Some(policy) = field(spec, "podFailurePolicy") {
        for rule in items(policy, "rules") {
            for pattern in items(rule, "onPodConditions") {
                default_zero(pattern, "status", "True");
            }
        }
    }
}

pub(super) fn cron_job(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    default_zero(spec, "concurrencyPolicy", "Allow");
    default_nil(spec, "suspend", false);
    default_nil(spec, "successfulJobsHistoryLimit", 3);
    default_nil(spec, "failedJobsHistoryLimit", 1);
    // The job template gets its pod spec's defaults, not a Job's. (Its `metadata` is a
    // struct: always there.)
    let Some(job_template) = field_or_new(spec, "jobTemplate") else {
        return;
    };
    default_nil(job_template, "metadata", json!({}));
    if let Some(job_spec) = field_or_new(job_template, "spec") {
        pod_failure_policy(job_spec);
        template(job_spec);
    }
}
