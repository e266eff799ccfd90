//! The other core/v1 kinds (ConfigMap, Secret, Service, Namespace, PersistentVolumeClaim,
//! ServiceAccount, ...) and Events, core/v1 and events.k8s.io/v1
//! (`pkg/apis/core/validation/validation.go`, `events.go`).

use recon_apimachinery::names::{dns1123_subdomain_name_errors, label_key_errors};
use serde_json::Value;

use super::Path;
use crate::registry::events::events_v1_to_core;
use crate::wire::field_error::FieldError;
use crate::wire::object::{Object, meta_str};

pub(super) fn validate_create(group: &str, kind: &str, obj: &Object) -> Vec<FieldError> {
    match kind {
        "Event" => Event::of(group, obj).validate_create(),
        _ => Vec::new(),
    }
}

pub(super) fn validate_update(
    group: &str,
    kind: &str,
    new: &Object,
    old: &Object,
) -> Vec<FieldError> {
    match kind {
        "Event" => Event::of(group, new).validate_update(&Event::of(group, old)),
        _ => Vec::new(),
    }
}

pub(super) fn validate_status_update(
    _group: &str,
    _kind: &str,
    _new: &Object,
    _old: &Object,
) -> Vec<FieldError> {
    Vec::new()
}

/// An Event as validation sees it: in core/v1 field names (`events.go` validates the internal
/// type, so its paths say `firstTimestamp` whichever API wrote it), and whether the request came
/// through events.k8s.io/v1, which checks more.
struct Event {
    core: Object,
    strict: bool,
}

impl Event {
    fn of(group: &str, obj: &Object) -> Event {
        let strict = group == "events.k8s.io";
        let core = if strict {
            events_v1_to_core(obj)
        } else {
            obj.clone()
        };
        Event { core, strict }
    }

    fn str(&self, key: &str) -> &str {
        self.core.get(key).and_then(Value::as_str).unwrap_or("")
    }

    fn is_set(&self, key: &str) -> bool {
        self.core.get(key).is_some_and(|v| !v.is_null())
    }

    /// `ValidateEventCreate`.
    fn validate_create(&self) -> Vec<FieldError> {
        let mut errors = self.legacy();
        if !self.strict {
            return errors;
        }
        for message in dns1123_subdomain_name_errors(meta_str(&self.core, "name")) {
            errors.push(FieldError::invalid(
                "metadata.name",
                meta_str(&self.core, "name"),
                message,
            ));
        }
        errors.extend(self.series());
        if !self.is_set("eventTime") {
            errors.push(FieldError::required("eventTime", ""));
        }
        let ty = self.str("type");
        if ty != "Normal" && ty != "Warning" {
            errors.push(FieldError::invalid(
                "type",
                "",
                format!("has invalid value: {ty}"),
            ));
        }
        for (key, set) in [
            ("firstTimestamp", self.is_set("firstTimestamp")),
            ("lastTimestamp", self.is_set("lastTimestamp")),
            (
                "count",
                self.core.get("count").and_then(Value::as_i64).unwrap_or(0) != 0,
            ),
            ("source", self.source_set()),
        ] {
            if set {
                errors.push(FieldError::invalid(key, "", "needs to be unset"));
            }
        }
        errors
    }

    /// `ValidateEventUpdate`, as far as the fields written as strings go.
    fn validate_update(&self, old: &Event) -> Vec<FieldError> {
        let mut errors = self.legacy();
        if !self.strict {
            return errors;
        }
        if self.core.get("series") != old.core.get("series") {
            errors.extend(self.series());
        }
        for key in [
            "reason",
            "message",
            "reason",
            "type",
            "action",
            "reportingComponent",
            "reportingInstance",
        ] {
            if self.str(key) != old.str(key) {
                let path = match key {
                    "reportingComponent" => "reportingController",
                    other => other,
                };
                errors.push(FieldError::invalid(
                    path,
                    self.str(key),
                    "field is immutable",
                ));
            }
        }
        errors
    }

    fn source_set(&self) -> bool {
        let source = self.core.get("source");
        ["component", "host"].iter().any(|key| {
            source
                .and_then(|s| s.get(*key))
                .and_then(Value::as_str)
                .is_some_and(|v| !v.is_empty())
        })
    }

    /// `validateV1EventSeries`.
    fn series(&self) -> Vec<FieldError> {
        let Some(series) = self.core.get("series").filter(|s| !s.is_null()) else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            errors.push(FieldError::invalid(
                "series.count",
                "",
                "should be at least 2",
            ));
        }
        if series.get("lastObservedTime").is_none_or(Value::is_null) {
            errors.push(FieldError::required("series.lastObservedTime", ""));
        }
        errors
    }

    /// `legacyValidateEvent`: every Event, whichever API writes it.
    fn legacy(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let namespace = meta_str(&self.core, "namespace");
        let involved = Path::new("involvedObject").child("namespace");
        let involved_namespace = self
            .core
            .get("involvedObject")
            .and_then(|o| o.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let mismatch = || {
            FieldError::invalid(
                &involved,
                involved_namespace,
                "does not match event.namespace",
            )
        };
        if !self.is_set("eventTime") {
            let matches = if involved_namespace.is_empty() {
                namespace.is_empty() || namespace == "default"
            } else {
                namespace == involved_namespace
            };
            if !matches {
                errors.push(mismatch());
            }
        } else {
            if involved_namespace.is_empty() && namespace != "default" && namespace != "kube-system"
            {
                errors.push(mismatch());
            }
            // Named as the request's version names it.
            let controller = if self.strict {
                "reportingController"
            } else {
                "reportingComponent"
            };
            let reporting = self.str("reportingComponent");
            if reporting.is_empty() {
                errors.push(FieldError::required(controller, ""));
            }
            for message in label_key_errors(reporting) {
                errors.push(FieldError::invalid(controller, reporting, message));
            }
            let mut limited = |key: &str, limit: usize, required: bool| {
                let value = self.str(key);
                if required && value.is_empty() {
                    errors.push(FieldError::required(key, ""));
                }
                if value.len() > limit {
                    errors.push(FieldError::invalid(
                        key,
                        "",
                        format!("can have at most {limit} characters"),
                    ));
                }
            };
            limited("reportingInstance", 128, true);
            limited("action", 128, true);
            limited("reason", 128, true);
            limited("message", 1024, false);
        }
        for message in dns1123_subdomain_name_errors(namespace) {
            errors.push(FieldError::invalid("namespace", namespace, message));
        }
        errors
    }
}
