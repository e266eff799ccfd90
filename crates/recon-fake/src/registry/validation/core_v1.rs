//! The kinds of the core API group, and Events of both core/v1 and events.k8s.io/v1, each
//! handed to the file that validates it (`pkg/apis/core/validation/validation.go`,
//! `events.go`).

use super::{
    claim, config_map_secret, events::Event, namespace, replication_controller, service::Service,
};
use crate::field::FieldError;
use crate::wire::object::Object;

/// The errors of creating `obj`, a core `kind` (or an events.k8s.io Event).
pub(super) fn validate_create(group: &str, kind: &str, obj: &Object) -> Vec<FieldError> {
    match kind {
        "Event" => Event::of(group, obj).validate_create(),
        "Service" => Service::of(obj, true).validate(None),
        "ConfigMap" => config_map_secret::validate_config_map(obj),
        "Secret" => config_map_secret::validate_secret(obj),
        "Namespace" => namespace::validate(obj),
        "PersistentVolumeClaim" => claim::validate_create(obj),
        "ReplicationController" => replication_controller::validate_create(obj),
        _ => Vec::new(),
    }
}

/// The errors of updating `old` to `new` through the main endpoint.
pub(super) fn validate_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    match kind {
        "Event" => Event::of(group, new).validate_update(&Event::of(group, old)),
        "Service" => Service::of(new, false).validate_update(&Service::of(old, false)),
        "ConfigMap" => config_map_secret::validate_config_map_update(new, old),
        "Secret" => config_map_secret::validate_secret_update(new, old),
        "PersistentVolumeClaim" => claim::validate_update(new, old),
        "ReplicationController" => replication_controller::validate_update(new, old),
        _ => Vec::new(),
    }
}

/// The errors of updating `old` to `new` through `/status`.
pub(super) fn validate_status_update(
    _group: &str,
    kind: &str,
    new: &Object,
    _old: &Object,
) -> Vec<FieldError> {
    match kind {
        "Namespace" => namespace::validate_status(new),
        "PersistentVolumeClaim" => claim::validate_status_update(new),
        "ReplicationController" => replication_controller::validate_status_update(new),
        _ => Vec::new(),
    }
}
