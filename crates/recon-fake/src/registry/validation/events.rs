//! Events, core/v1 and events.k8s.io/v1 (`pkg/apis/core/validation/events.go`).

use std::borrow::Cow;

use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::{dns1123_subdomain_name_errors, label_key_errors};

use super::read::str_at;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::registry::events::events_v1_to_core;
use crate::wire::object::{Object, meta_str};

/// An Event as validation sees it: in core/v1 field names (`events.go` validates the internal
/// type, so its paths say `firstTimestamp` whichever API wrote it), and whether the request came
/// through events.k8s.io/v1, which checks more. A core/v1 Event is borrowed: Events are
/// written often.
pub(super) struct Event<'a> {
    core: Cow<'a, Object>,
    strict: bool,
}

impl<'a> Event<'a> {
    pub(super) fn of(group: &str, obj: &'a Object) -> Event<'a> {
        let strict = group == "events.k8s.io";
        let core = if strict {
            Cow::Owned(events_v1_to_core(obj))
        } else {
            Cow::Borrowed(obj)
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
    pub(super) fn validate_create(&self) -> Vec<FieldError> {
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

    /// `ValidateEventUpdate`: through events.k8s.io/v1 nothing the Event says may change; each
    /// field is compared and printed as the internal type holds it, in the order checked
    /// (`reason` twice, as the real one checks it twice).
    pub(super) fn validate_update(&self, old: &Event<'_>) -> Vec<FieldError> {
        let mut errors = self.legacy();
        if !self.strict {
            return errors;
        }
        if self.core.get("series") != old.core.get("series") {
            errors.extend(self.series());
        }
        for key in [
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "reason",
            "type",
            "eventTime",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ] {
            let (value, old_value) = (self.go_value(key), old.go_value(key));
            if value != old_value {
                let path = match key {
                    "reportingComponent" => "reportingController",
                    other => other,
                };
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path,
                    value,
                    "field is immutable",
                ));
            }
        }
        errors
    }

    /// Field `key` as `field.Invalid` prints the internal Go value: strings quoted, the count
    /// as a number, timestamps as their JSON (`null` when unset), and the untagged structs
    /// `ObjectReference` and `EventSource` as JSON with Go's field names.
    fn go_value(&self, key: &str) -> BadValue {
        const REFERENCE: [(&str, &str); 7] = [
            ("Kind", "kind"),
            ("Namespace", "namespace"),
            ("Name", "name"),
            ("UID", "uid"),
            ("APIVersion", "apiVersion"),
            ("ResourceVersion", "resourceVersion"),
            ("FieldPath", "fieldPath"),
        ];
        const SOURCE: [(&str, &str); 2] = [("Component", "component"), ("Host", "host")];
        let field = self.core.get(key).filter(|v| !v.is_null());
        let go_struct = |fields: &[(&str, &str)]| {
            let mut object = Map::new();
            for (go, json_name) in fields {
                object.insert((*go).to_owned(), json!(str_at(field, json_name)));
            }
            let names: Vec<&str> = fields.iter().map(|(go, _)| *go).collect();
            BadValue::go_struct(&Value::Object(object), &names)
        };
        match key {
            "involvedObject" => go_struct(&REFERENCE),
            // A nil `*ObjectReference` marshals as `null`.
            "related" if field.is_none() => BadValue::Raw("null".to_owned()),
            "related" => go_struct(&REFERENCE),
            "source" => go_struct(&SOURCE),
            "count" => BadValue::Raw(field.and_then(Value::as_i64).unwrap_or(0).to_string()),
            "firstTimestamp" | "lastTimestamp" | "eventTime" => {
                BadValue::json(field.unwrap_or(&Value::Null))
            }
            _ => BadValue::Str(self.str(key).to_owned()),
        }
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
