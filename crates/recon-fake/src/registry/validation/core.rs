//! The other core/v1 kinds (ConfigMap, Secret, Service, Namespace, ServiceAccount, ...; claims
//! and ReplicationControllers have files of their own) and Events, core/v1 and
//! events.k8s.io/v1 (`pkg/apis/core/validation/validation.go`, `events.go`).

use std::borrow::Cow;
use std::collections::BTreeSet;

use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors, label_value_errors,
};
use serde_json::{Map, Value, json};

use super::read::{is_set, list_at, str_at};
use super::service_addresses::{cidr_errors, external_ip_errors};
use super::{claim, replication_controller};
use crate::field::Path;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::handlers::validation::STANDARD_FINALIZERS;
use crate::registry::events::events_v1_to_core;
use crate::wire::object::{Object, meta_str};

pub(super) fn validate_create(group: &str, kind: &str, obj: &Object) -> Vec<FieldError> {
    match kind {
        "Event" => Event::of(group, obj).validate_create(),
        "Service" => Service::of(obj, true).validate(None),
        "ConfigMap" => validate_config_map(obj),
        "Secret" => validate_secret(obj),
        "Namespace" => validate_namespace(obj),
        "PersistentVolumeClaim" => claim::validate_create(obj),
        "ReplicationController" => replication_controller::validate_create(obj),
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
        "Service" => Service::of(new, false).validate_update(&Service::of(old, false)),
        "ConfigMap" => validate_config_map_update(new, old),
        "Secret" => validate_secret_update(new, old),
        "PersistentVolumeClaim" => claim::validate_update(new, old),
        "ReplicationController" => replication_controller::validate_update(new, old),
        _ => Vec::new(),
    }
}

pub(super) fn validate_status_update(
    _group: &str,
    kind: &str,
    new: &Object,
    _old: &Object,
) -> Vec<FieldError> {
    match kind {
        "Namespace" => validate_namespace_status(new),
        "PersistentVolumeClaim" => claim::validate_status_update(new),
        "ReplicationController" => replication_controller::validate_status_update(new),
        _ => Vec::new(),
    }
}

/// `ValidateNamespaceStatusUpdate`: the phase follows `deletionTimestamp` (the path is spelt
/// `status.Phase`, as the real one spells it).
fn validate_namespace_status(obj: &Object) -> Vec<FieldError> {
    let phase = obj
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let deleting = obj
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|t| !t.is_null());
    let (expected, detail) = if deleting {
        (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if phase == expected {
        return Vec::new();
    }
    vec![FieldError::invalid("status.Phase", phase, detail)]
}

/// An Event as validation sees it: in core/v1 field names (`events.go` validates the internal
/// type, so its paths say `firstTimestamp` whichever API wrote it), and whether the request came
/// through events.k8s.io/v1, which checks more. A core/v1 Event is borrowed: Events are
/// written often.
struct Event<'a> {
    core: Cow<'a, Object>,
    strict: bool,
}

impl<'a> Event<'a> {
    fn of(group: &str, obj: &'a Object) -> Event<'a> {
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

    /// `ValidateEventUpdate`: through events.k8s.io/v1 nothing the Event says may change; each
    /// field is compared and printed as the internal type holds it, in the order checked
    /// (`reason` twice, as the real one checks it twice).
    fn validate_update(&self, old: &Event<'_>) -> Vec<FieldError> {
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
            BadValue::Raw(go_struct_json(&Value::Object(object), &names))
        };
        match key {
            "involvedObject" => go_struct(&REFERENCE),
            // A nil `*ObjectReference` marshals as `null`.
            "related" if field.is_none() => BadValue::Raw("null".to_owned()),
            "related" => go_struct(&REFERENCE),
            "source" => go_struct(&SOURCE),
            "count" => BadValue::Raw(field.and_then(Value::as_i64).unwrap_or(0).to_string()),
            "firstTimestamp" | "lastTimestamp" | "eventTime" => {
                json_value(field.unwrap_or(&Value::Null))
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

/// A value printed as `field.Error` prints what is neither a string nor a number: its JSON.
fn json_value(v: &Value) -> BadValue {
    BadValue::Raw(v.to_string())
}

/// `validation.IsValidPortNum`.
pub(super) fn port_num_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_owned()]
    }
}

/// `validation.IsValidPortName` (IANA_SVC_NAME).
pub(super) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_owned());
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_owned());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_owned());
    }
    errors
}

/// `ValidatePortNumOrName`: a number is a port number, a string a port name.
fn port_num_or_name_errors(value: &Value, path: &Path) -> Vec<FieldError> {
    match value {
        Value::String(name) => port_name_errors(name)
            .into_iter()
            .map(|m| FieldError::invalid(path, name, m))
            .collect(),
        other => {
            let n = other.as_i64().unwrap_or(0);
            port_num_errors(n)
                .into_iter()
                .map(|m| FieldError::new(ErrorType::Invalid, path, BadValue::Raw(n.to_string()), m))
                .collect()
        }
    }
}

/// `validation.IsConfigMapKey`: the keys of ConfigMaps and Secrets.
fn config_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        errors.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
             (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is \
             '[-._a-zA-Z0-9]+')"
                .to_owned(),
        );
    }
    if key == "." {
        errors.push("must not be '.'".to_owned());
    } else if key == ".." {
        errors.push("must not be '..'".to_owned());
    } else if key.starts_with("..") {
        errors.push("must not start with '..'".to_owned());
    }
    errors
}

/// The length of the bytes a base64 string (as `[]byte` fields are written) stands for.
pub(super) fn decoded_len(b64: &str) -> usize {
    let padding = b64.bytes().rev().take_while(|b| *b == b'=').count();
    (b64.len() / 4 * 3 + (b64.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

/// `core.MaxSecretSize`: what all the values of a ConfigMap or Secret may add up to.
const MAX_SECRET_SIZE: usize = 1024 * 1024;

fn too_long(path: &str) -> FieldError {
    FieldError::new(
        ErrorType::TooLong,
        path,
        BadValue::Omit,
        format!("may not be more than {MAX_SECRET_SIZE} bytes"),
    )
}

/// `ValidateConfigMap`.
fn validate_config_map(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let data = obj.get("data").and_then(Value::as_object).unwrap_or(&empty);
    let binary = obj
        .get("binaryData")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut total = 0;
    for (key, value) in data {
        let path = Path::new("data").key(key);
        for message in config_key_errors(key) {
            errors.push(FieldError::invalid(&path, key, message));
        }
        if binary.contains_key(key) {
            errors.push(FieldError::invalid(
                &path,
                key,
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary {
        for message in config_key_errors(key) {
            errors.push(FieldError::invalid(
                Path::new("binaryData").key(key),
                key,
                message,
            ));
        }
        total += value.as_str().map_or(0, decoded_len);
    }
    if total > MAX_SECRET_SIZE {
        // The whole object: `field.NewPath("")`, which prints as an empty index (recorded in
        // `limits/config-map-and-secret-data-over-1-mib`).
        errors.push(too_long("[]"));
    }
    errors
}

/// Whether `immutable: true` was set on `obj`.
fn is_immutable(obj: &Object) -> bool {
    obj.get("immutable").and_then(Value::as_bool) == Some(true)
}

fn immutable_forbidden(path: &str) -> FieldError {
    FieldError::forbidden(path, "field is immutable when `immutable` is set")
}

/// The `[]byte`/`string` maps of an immutable object, compared as `reflect.DeepEqual` does
/// (an empty map and no map differ).
fn same_field(new: &Object, old: &Object, key: &str) -> bool {
    new.get(key).filter(|v| !v.is_null()) == old.get(key).filter(|v| !v.is_null())
}

/// `ValidateConfigMapUpdate`: an immutable ConfigMap keeps `immutable`, `data` and `binaryData`.
fn validate_config_map_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if is_immutable(old) {
        if !is_immutable(new) {
            errors.push(immutable_forbidden("immutable"));
        }
        for key in ["data", "binaryData"] {
            if !same_field(new, old, key) {
                errors.push(immutable_forbidden(key));
            }
        }
    }
    errors.extend(validate_config_map(new));
    errors
}

/// `ValidateSecret`: keys, total size, and what each well-known type requires (the
/// `stringData` conversion has written every key into `data`).
fn validate_secret(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let data = obj.get("data").and_then(Value::as_object).unwrap_or(&empty);
    let mut total = 0;
    for (key, value) in data {
        for message in config_key_errors(key) {
            errors.push(FieldError::invalid(
                Path::new("data").key(key),
                key,
                message,
            ));
        }
        total += value.as_str().map_or(0, decoded_len);
    }
    if total > MAX_SECRET_SIZE {
        errors.push(too_long("data"));
    }
    let required = |key: &str| FieldError::required(Path::new("data").key(key), "");
    match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let name = obj
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                errors.push(FieldError::required(
                    Path::new("metadata")
                        .child("annotations")
                        .key("kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        ty @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if ty == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match data.get(key).and_then(Value::as_str) {
                None => errors.push(required(key)),
                Some(b64) => {
                    if let Some(message) = docker_config_error(b64) {
                        errors.push(FieldError::invalid(
                            Path::new("data").key(key),
                            "<secret contents redacted>",
                            message,
                        ));
                    }
                }
            }
        }
        // Username or password may be empty, but one of them must be there.
        "kubernetes.io/basic-auth"
            if !data.contains_key("username") && !data.contains_key("password") =>
        {
            errors.push(required("username"));
            errors.push(required("password"));
        }
        "kubernetes.io/ssh-auth"
            if data
                .get("ssh-privatekey")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty) =>
        {
            errors.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !data.contains_key(key) {
                    errors.push(required(key));
                }
            }
        }
        _ => {}
    }
    errors
}

/// What `json.Unmarshal` into a `map[string]interface{}` says of a docker config, if it
/// fails: valid JSON of another type is named as Go names it; a syntax error is reported
/// without Go's exact wording (which this server does not reproduce).
fn docker_config_error(b64: &str) -> Option<String> {
    let bytes = base64_decode(b64)?;
    let kind = match serde_json::from_slice::<Value>(&bytes) {
        Err(e) => return Some(format!("invalid JSON: {e}")),
        Ok(Value::Object(_) | Value::Null) => return None,
        Ok(Value::Array(_)) => "array",
        Ok(Value::String(_)) => "string",
        Ok(Value::Number(_)) => "number",
        Ok(Value::Bool(_)) => "bool",
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

/// Standard base64, as `[]byte` fields are written; `None` if it is not.
pub(super) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let trimmed = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in trimmed.bytes() {
        acc = (acc << 6) | digit(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

/// `ValidateSecretUpdate`: the type may not change; an immutable Secret keeps `immutable`
/// and `data`; then the new Secret is checked as on create.
fn validate_secret_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ty = |o: &Object| {
        o.get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if ty(new) != ty(old) {
        errors.push(FieldError::invalid("type", &ty(new), "field is immutable"));
    }
    if is_immutable(old) {
        if !is_immutable(new) {
            errors.push(immutable_forbidden("immutable"));
        }
        if !same_field(new, old, "data") {
            errors.push(immutable_forbidden("data"));
        }
    }
    errors.extend(validate_secret(new));
    errors
}

/// `ValidateNamespace`: `spec.finalizers` are qualified names, and those without a `/`
/// standard ones (`validateFinalizerName`; the path has no index).
fn validate_namespace(obj: &Object) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let path = Path::new("spec").child("finalizers");
    for name in list_at(obj.get("spec"), "finalizers")
        .iter()
        .filter_map(Value::as_str)
    {
        for message in label_key_errors(name) {
            errors.push(FieldError::invalid(&path, name, message));
        }
        if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
            errors.push(FieldError::invalid(
                &path,
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errors
}

/// A Service as its validation sees it.
struct Service<'a> {
    spec: Option<&'a Value>,
    /// `spec.clusterIPs`, or on create `[clusterIP]` when only that was given
    /// (`normalizeClusterIPs` of the Service storage, which runs before validation).
    cluster_ips: Vec<&'a str>,
    annotations: Option<&'a Value>,
}

impl<'a> Service<'a> {
    fn of(obj: &'a Object, creating: bool) -> Service<'a> {
        let spec = obj.get("spec");
        let mut cluster_ips: Vec<&str> = list_at(spec, "clusterIPs")
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        let cluster_ip = str_at(spec, "clusterIP");
        if creating && cluster_ips.is_empty() && !cluster_ip.is_empty() {
            cluster_ips.push(cluster_ip);
        }
        let annotations = obj.get("metadata").and_then(|m| m.get("annotations"));
        Service {
            spec,
            cluster_ips,
            annotations,
        }
    }

    fn str(&self, key: &str) -> &'a str {
        str_at(self.spec, key)
    }

    fn list(&self, key: &str) -> &'a [Value] {
        list_at(self.spec, key)
    }

    /// `isHeadlessService`.
    fn headless(&self) -> bool {
        self.cluster_ips == ["None"]
    }

    fn cluster_ips_value(&self) -> BadValue {
        if self.cluster_ips.is_empty() {
            // A nil `[]string` marshals as `null`.
            return BadValue::Raw("null".to_owned());
        }
        json_value(&json!(self.cluster_ips))
    }

    fn families(&self) -> Vec<&'a str> {
        self.list("ipFamilies")
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect()
    }

    fn policy_value(&self) -> BadValue {
        json_value(
            self.spec
                .and_then(|s| s.get("ipFamilyPolicy"))
                .unwrap_or(&Value::Null),
        )
    }

    /// `ValidateServiceUpdate`: addresses and families may be added or released, not changed,
    /// a health check node port stays, then the new Service is checked as on create.
    fn validate_update(&self, old: &Service<'_>) -> Vec<FieldError> {
        let mut errors = self.upgrade_downgrade_cluster_ips(old);
        errors.extend(self.upgrade_downgrade_families(old));
        errors.extend(self.load_balancer_class_errors(Some(old)));
        // `validateServiceExternalTrafficFieldsUpdate`.
        if old.needs_health_check()
            && self.needs_health_check()
            && self.spec.and_then(|s| s.get("healthCheckNodePort"))
                != old.spec.and_then(|s| s.get("healthCheckNodePort"))
        {
            errors.push(FieldError::forbidden(
                "spec.healthCheckNodePort",
                "field is immutable",
            ));
        }
        errors.extend(self.validate(Some(old)));
        errors
    }

    fn strings(&self, key: &str) -> Vec<&'a str> {
        self.list(key)
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect()
    }

    /// `spec.loadBalancerClass`: `None` when unset (a nil `*string`).
    fn load_balancer_class(&self) -> Option<&'a str> {
        self.spec
            .and_then(|s| s.get("loadBalancerClass"))
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().unwrap_or(""))
    }

    /// `validateLoadBalancerClassField`: between two LoadBalancer Services the class stays as
    /// it is; a LoadBalancer's class is a qualified name, no other type may have one. On
    /// update it runs before `validateService`, which runs it again without `old`, so an
    /// invalid new class is reported twice.
    fn load_balancer_class_errors(&self, old: Option<&Service<'_>>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let path = Path::new("spec").child("loadBalancerClass");
        let class = self.load_balancer_class();
        let load_balancer = self.str("type") == "LoadBalancer";
        if let Some(old) = old
            && load_balancer
            && old.str("type") == "LoadBalancer"
            && old.load_balancer_class() != class
        {
            // A `*string`, printed as its JSON.
            let value = json_value(&class.map_or(Value::Null, |c| json!(c)));
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &path,
                value,
                "may not change once set",
            ));
        }
        match class {
            Some(class) if load_balancer => {
                for message in label_key_errors(class) {
                    errors.push(FieldError::invalid(&path, class, message));
                }
            }
            Some(_) => errors.push(FieldError::forbidden(
                &path,
                "may only be used when `type` is 'LoadBalancer'",
            )),
            None => {}
        }
        errors
    }

    /// The source ranges of `validateService`: `spec.loadBalancerSourceRanges` (spelt
    /// `LoadBalancerSourceRanges` in the path, as the real one spells it), else the
    /// annotation; values may be padded with spaces; ranges the old Service had, or an
    /// annotation it had unchanged, are not re-checked.
    fn source_range_errors(&self, old: Option<&Service<'_>>) -> Vec<FieldError> {
        const ANNOTATION: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
        let mut errors = Vec::new();
        let not_load_balancer = self.str("type") != "LoadBalancer";
        let forbidden = |path: &Path| {
            FieldError::forbidden(path, "may only be used when `type` is 'LoadBalancer'")
        };
        let ranges = self.strings("loadBalancerSourceRanges");
        if !ranges.is_empty() {
            let path = Path::new("spec").child("LoadBalancerSourceRanges");
            if not_load_balancer {
                errors.push(forbidden(&path));
            }
            let old_ranges: Vec<&str> = old
                .map(|o| o.strings("loadBalancerSourceRanges"))
                .unwrap_or_default()
                .into_iter()
                .map(str::trim)
                .collect();
            for (i, range) in ranges.iter().enumerate() {
                errors.extend(cidr_errors(range.trim(), &path.index(i), &old_ranges));
            }
            return errors;
        }
        let Some(value) = self.annotation(ANNOTATION) else {
            return errors;
        };
        let path = Path::new("metadata").child("annotations").key(ANNOTATION);
        if not_load_balancer {
            errors.push(forbidden(&path));
        }
        if old.is_some_and(|o| o.annotation(ANNOTATION) == Some(value)) {
            return errors;
        }
        let value = value.trim();
        if !value.is_empty() {
            for range in value.split(',') {
                errors.extend(cidr_errors(range.trim(), &path, &[]));
            }
        }
        errors
    }

    fn annotation(&self, key: &str) -> Option<&'a str> {
        self.annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    }

    /// `validateUpgradeDowngradeClusterIPs`.
    fn upgrade_downgrade_cluster_ips(&self, old: &Service<'_>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.str("type") == "ExternalName" || old.str("type") == "ExternalName" {
            return errors;
        }
        if self.headless() && old.headless() {
            return errors;
        }
        let path = Path::new("spec").child("clusterIPs");
        let changed = |i: usize| {
            FieldError::new(
                ErrorType::Invalid,
                path.index(i),
                self.cluster_ips_value(),
                "may not change once set",
            )
        };
        let (new_ips, old_ips) = (&self.cluster_ips, &old.cluster_ips);
        if new_ips.len() == old_ips.len() {
            for (i, ip) in old_ips.iter().enumerate() {
                if new_ips.get(i) != Some(ip) {
                    errors.push(changed(i));
                }
            }
        } else if old_ips.len() > new_ips.len() {
            if new_ips.is_empty() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path.index(0),
                    self.cluster_ips_value(),
                    "primary clusterIP can not be unset",
                ));
            }
            if !new_ips.is_empty() && new_ips.first() != old_ips.first() {
                errors.push(changed(0));
            }
            if new_ips.len() == 1 && self.str("ipFamilyPolicy") != "SingleStack" {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "spec.ipFamilyPolicy",
                    self.policy_value(),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        } else if !old_ips.is_empty() && new_ips.first() != old_ips.first() {
            errors.push(changed(0));
        }
        errors
    }

    /// `validateUpgradeDowngradeIPFamilies`.
    fn upgrade_downgrade_families(&self, old: &Service<'_>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.str("type") == "ExternalName" || old.str("type") == "ExternalName" {
            return errors;
        }
        if self.headless() || old.headless() {
            return errors;
        }
        let path = Path::new("spec").child("ipFamilies").index(0);
        let (new, old_families) = (self.families(), old.families());
        let families_value = json_value(&json!(new));
        if new.len() == old_families.len() {
            for (i, family) in old_families.iter().enumerate() {
                if new.get(i) != Some(family) {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &path,
                        families_value.clone(),
                        "may not change once set",
                    ));
                }
            }
        } else if old_families.len() > new.len() {
            if self.cluster_ips.is_empty() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &path,
                    families_value,
                    "primary ipFamily can not be unset",
                ));
            }
            if !new.is_empty() && new.first() != old_families.first() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &path,
                    self.cluster_ips_value(),
                    "may not change once set",
                ));
            }
            if new.len() == 1 && self.str("ipFamilyPolicy") != "SingleStack" {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "spec.ipFamilyPolicy",
                    self.policy_value(),
                    "must be set to 'SingleStack' when releasing the secondary ipFamily",
                ));
            }
        } else if !old_families.is_empty() && !new.is_empty() && new.first() != old_families.first()
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &path,
                self.cluster_ips_value(),
                "may not change once set",
            ));
        }
        errors
    }

    /// `apiservice.NeedsHealthCheck`.
    fn needs_health_check(&self) -> bool {
        self.str("type") == "LoadBalancer" && self.str("externalTrafficPolicy") == "Local"
    }

    /// `apiservice.ExternallyAccessible`.
    fn externally_accessible(&self) -> bool {
        match self.str("type") {
            "LoadBalancer" | "NodePort" => true,
            "ClusterIP" => !self.list("externalIPs").is_empty(),
            _ => false,
        }
    }

    /// `validateService`, in its order, with `old` on update (the topology annotations and
    /// the address checks beyond families are not checked here).
    fn validate(&self, old: Option<&Service<'_>>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let spec_path = Path::new("spec");
        let ty = self.str("type");
        let ports = self.list("ports");
        let headless = self.headless();
        if ports.is_empty() && !headless && ty != "ExternalName" {
            errors.push(FieldError::required(spec_path.child("ports"), ""));
        }
        match ty {
            "LoadBalancer" | "NodePort" if headless => errors.push(FieldError::invalid(
                spec_path.child("clusterIPs").index(0),
                "None",
                format!("may not be set to 'None' for {ty} services"),
            )),
            "ExternalName" => {
                let not_here = "may not be set for ExternalName services";
                if !self.cluster_ips.is_empty() {
                    errors.push(FieldError::forbidden(
                        spec_path.child("clusterIPs"),
                        not_here,
                    ));
                }
                if !self.list("ipFamilies").is_empty() {
                    errors.push(FieldError::forbidden(
                        spec_path.child("ipFamilies"),
                        not_here,
                    ));
                }
                if is_set(self.spec, "ipFamilyPolicy") {
                    errors.push(FieldError::forbidden(
                        spec_path.child("ipFamilyPolicy"),
                        not_here,
                    ));
                }
                let name = self.str("externalName");
                let cname = name.strip_suffix('.').unwrap_or(name);
                let path = spec_path.child("externalName");
                if cname.is_empty() {
                    errors.push(FieldError::required(&path, ""));
                } else {
                    for message in dns1123_subdomain_name_errors(cname) {
                        errors.push(FieldError::invalid(&path, cname, message));
                    }
                }
            }
            _ => {}
        }
        let ports_path = spec_path.child("ports");
        let mut names = BTreeSet::new();
        for (i, port) in ports.iter().enumerate() {
            errors.extend(service_port_errors(
                port,
                ports.len() > 1,
                &mut names,
                &ports_path.index(i),
            ));
        }
        // `ValidateLabels` of the selector.
        let selector_path = spec_path.child("selector");
        if let Some(selector) = self
            .spec
            .and_then(|s| s.get("selector"))
            .and_then(Value::as_object)
        {
            for (key, value) in selector {
                for message in label_key_errors(key) {
                    errors.push(FieldError::invalid(&selector_path, key, message));
                }
                let value = value.as_str().unwrap_or("");
                for message in label_value_errors(value) {
                    errors.push(FieldError::invalid(&selector_path, value, message));
                }
            }
        }
        errors.extend(self.session_affinity_errors());
        errors.extend(self.family_errors());
        let ips_path = spec_path.child("externalIPs");
        let old_ips = old.map(|o| o.strings("externalIPs")).unwrap_or_default();
        for (i, ip) in self.strings("externalIPs").into_iter().enumerate() {
            errors.extend(external_ip_errors(ip, &ips_path.index(i), &old_ips));
        }
        let type_path = spec_path.child("type");
        if ty.is_empty() {
            errors.push(FieldError::required(&type_path, ""));
        } else if !["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"].contains(&ty) {
            errors.push(FieldError::not_supported(
                &type_path,
                ty,
                &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
            ));
        }
        let node_port = |p: &Value| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        let port_num = |p: &Value| p.get("port").and_then(Value::as_i64).unwrap_or(0);
        let protocol = |p: &'a Value| str_at(Some(p), "protocol");
        if ty == "ClusterIP" {
            for (i, port) in ports.iter().enumerate() {
                if node_port(port) != 0 {
                    errors.push(FieldError::forbidden(
                        ports_path.index(i).child("nodePort"),
                        "may not be used when `type` is 'ClusterIP'",
                    ));
                }
            }
        }
        let mut node_ports = BTreeSet::new();
        for (i, port) in ports.iter().enumerate() {
            let n = node_port(port);
            if n != 0 && !node_ports.insert((protocol(port), n)) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    ports_path.index(i).child("nodePort"),
                    BadValue::Raw(n.to_string()),
                    "",
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for (i, port) in ports.iter().enumerate() {
            let key = (protocol(port), port_num(port));
            if !seen.insert(key) {
                // The key is an internal `core.ServicePort`, printed as its JSON (Go field
                // names, no tags).
                let value = json!({
                    "Name": "", "Protocol": key.0, "AppProtocol": null, "Port": key.1,
                    "TargetPort": 0, "NodePort": 0,
                });
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    ports_path.index(i),
                    BadValue::Raw(go_struct_json(
                        &value,
                        &[
                            "Name",
                            "Protocol",
                            "AppProtocol",
                            "Port",
                            "TargetPort",
                            "NodePort",
                        ],
                    )),
                    "",
                ));
            }
        }
        errors.extend(self.source_range_errors(old));
        let allocate = spec_path.child("allocateLoadBalancerNodePorts");
        if is_set(self.spec, "allocateLoadBalancerNodePorts") && ty != "LoadBalancer" {
            errors.push(FieldError::forbidden(
                &allocate,
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
        if ty == "LoadBalancer" && !is_set(self.spec, "allocateLoadBalancerNodePorts") {
            // Without `spec.`, as the real one words it.
            errors.push(FieldError::required("allocateLoadBalancerNodePorts", ""));
        }
        errors.extend(self.load_balancer_class_errors(None));
        errors.extend(self.traffic_policy_errors());
        errors
    }

    /// The session affinity checks of `validateService` and `validateClientIPAffinityConfig`.
    fn session_affinity_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let path = Path::new("spec").child("sessionAffinity");
        let config_path = Path::new("spec").child("sessionAffinityConfig");
        match self.str("sessionAffinity") {
            "" => errors.push(FieldError::required(&path, "")),
            "ClientIP" => {
                let when = "when session affinity type is ClientIP";
                let config = self
                    .spec
                    .and_then(|s| s.get("sessionAffinityConfig"))
                    .filter(|v| !v.is_null());
                let client = config
                    .and_then(|c| c.get("clientIP"))
                    .filter(|v| !v.is_null());
                let timeout = client
                    .and_then(|c| c.get("timeoutSeconds"))
                    .filter(|v| !v.is_null());
                let timeout_path = config_path.child("clientIP").child("timeoutSeconds");
                match (config, client, timeout) {
                    (None, _, _) => errors.push(FieldError::required(&config_path, when)),
                    (_, None, _) => {
                        errors.push(FieldError::required(config_path.child("clientIP"), when))
                    }
                    (_, _, None) => errors.push(FieldError::required(&timeout_path, when)),
                    (_, _, Some(t)) => {
                        let seconds = t.as_i64().unwrap_or(0);
                        if seconds <= 0 || seconds > 86400 {
                            errors.push(FieldError::new(
                                ErrorType::Invalid,
                                &timeout_path,
                                BadValue::Raw(seconds.to_string()),
                                "must be greater than 0 and less than 86400",
                            ));
                        }
                    }
                }
            }
            "None" => {
                if is_set(self.spec, "sessionAffinityConfig") {
                    errors.push(FieldError::forbidden(
                        &config_path,
                        "must not be set when session affinity is None",
                    ));
                }
            }
            other => errors.push(FieldError::not_supported(
                &path,
                other,
                &["ClientIP", "None"],
            )),
        }
        errors
    }

    /// The stand-alone family and policy checks of `ValidateServiceClusterIPsRelatedFields`.
    fn family_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let path = Path::new("spec").child("ipFamilies");
        let mut seen = BTreeSet::new();
        for (i, family) in self.families().into_iter().enumerate() {
            if family != "IPv4" && family != "IPv6" {
                errors.push(FieldError::not_supported(
                    path.index(i),
                    family,
                    &["IPv4", "IPv6"],
                ));
            }
            if !seen.insert(family) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    path.index(i),
                    BadValue::Str(family.to_owned()),
                    "",
                ));
            }
        }
        let policy = self.str("ipFamilyPolicy");
        if is_set(self.spec, "ipFamilyPolicy")
            && !["PreferDualStack", "RequireDualStack", "SingleStack"].contains(&policy)
        {
            errors.push(FieldError::not_supported(
                "spec.ipFamilyPolicy",
                policy,
                &["PreferDualStack", "RequireDualStack", "SingleStack"],
            ));
        }
        errors
    }

    /// `validateServiceExternalTrafficPolicy`, `validateServiceInternalTrafficFieldsValue` and
    /// `validateServiceTrafficDistribution`.
    fn traffic_policy_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let external = self.str("externalTrafficPolicy");
        let external_path = "spec.externalTrafficPolicy";
        if !self.externally_accessible() {
            if !external.is_empty() {
                errors.push(FieldError::invalid(
                    external_path,
                    external,
                    "may only be set for externally-accessible services",
                ));
            }
        } else if external.is_empty() {
            errors.push(FieldError::required(external_path, ""));
        } else if external != "Cluster" && external != "Local" {
            errors.push(FieldError::not_supported(
                external_path,
                external,
                &["Cluster", "Local"],
            ));
        }
        let health = self
            .spec
            .and_then(|s| s.get("healthCheckNodePort"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let health_path = "spec.healthCheckNodePort";
        if !self.needs_health_check() {
            if health != 0 {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    health_path,
                    BadValue::Raw(health.to_string()),
                    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
                ));
            }
        } else if health == 0 {
            errors.push(FieldError::required(health_path, ""));
        } else {
            for message in port_num_errors(health) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    health_path,
                    BadValue::Raw(health.to_string()),
                    message,
                ));
            }
        }
        let internal_path = "spec.internalTrafficPolicy";
        if !is_set(self.spec, "internalTrafficPolicy") {
            if ["NodePort", "LoadBalancer", "ClusterIP"].contains(&self.str("type")) {
                errors.push(FieldError::required(internal_path, ""));
            }
        } else {
            let internal = self.str("internalTrafficPolicy");
            if internal != "Cluster" && internal != "Local" {
                errors.push(FieldError::not_supported(
                    internal_path,
                    internal,
                    &["Cluster", "Local"],
                ));
            }
        }
        if is_set(self.spec, "trafficDistribution") {
            let supported = ["PreferClose", "PreferSameZone", "PreferSameNode"];
            let value = self.str("trafficDistribution");
            if !supported.contains(&value) {
                errors.push(FieldError::not_supported(
                    "spec.trafficDistribution",
                    value,
                    &supported,
                ));
            }
        }
        errors
    }
}

/// The JSON of a Go struct without tags: `fields` in declaration order.
fn go_struct_json(value: &Value, fields: &[&str]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|f| format!("{}:{}", json!(f), value.get(*f).unwrap_or(&Value::Null)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// `validateServicePort`.
fn service_port_errors(
    port: &Value,
    require_name: bool,
    names: &mut BTreeSet<String>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let port = Some(port);
    let name = str_at(port, "name");
    let name_path = path.child("name");
    if require_name && name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    } else if !name.is_empty() {
        for message in dns1123_label_errors(name) {
            errors.push(FieldError::invalid(&name_path, name, message));
        }
        if !names.insert(name.to_owned()) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                &name_path,
                BadValue::Str(name.to_owned()),
                "",
            ));
        }
    }
    let number = port
        .and_then(|p| p.get("port"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    for message in port_num_errors(number) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("port"),
            BadValue::Raw(number.to_string()),
            message,
        ));
    }
    let protocol = str_at(port, "protocol");
    if protocol.is_empty() {
        errors.push(FieldError::required(path.child("protocol"), ""));
    } else if !["SCTP", "TCP", "UDP"].contains(&protocol) {
        errors.push(FieldError::not_supported_named(
            path.child("protocol"),
            protocol,
            &["SCTP", "TCP", "UDP"],
        ));
    }
    let target = port
        .and_then(|p| p.get("targetPort"))
        .unwrap_or(&Value::Null);
    errors.extend(port_num_or_name_errors(target, &path.child("targetPort")));
    if let Some(app) = port
        .and_then(|p| p.get("appProtocol"))
        .and_then(Value::as_str)
    {
        for message in label_key_errors(app) {
            errors.push(FieldError::invalid(path.child("appProtocol"), app, message));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_finalizers_without_a_slash_are_the_standard_ones() {
        let namespace = |finalizers: Value| {
            json!({"spec": {"finalizers": finalizers}})
                .as_object()
                .cloned()
                .unwrap_or_default()
        };
        assert!(
            validate_namespace(&namespace(json!(["kubernetes", "orphan", "a.io/b"]))).is_empty()
        );
        assert_eq!(validate_namespace(&namespace(json!(["mine"]))).len(), 1);
    }

    #[test]
    fn config_keys_follow_is_config_map_key() {
        assert!(config_key_errors("a-b_c.d").is_empty());
        assert_eq!(config_key_errors("..").len(), 1);
        assert_eq!(config_key_errors("..a").len(), 1);
        assert_eq!(config_key_errors("a b").len(), 1);
    }

    #[test]
    fn port_names_follow_iana_svc_name() {
        assert!(port_name_errors("http").is_empty());
        assert_eq!(port_name_errors("80").len(), 1);
        assert_eq!(port_name_errors("-a--b-").len(), 2);
        assert_eq!(port_name_errors("Very_Long_Name-x").len(), 2);
    }

    #[test]
    fn base64_lengths_match_the_decoded_bytes() {
        for text in ["", "eA==", "eHk=", "eHl6", "eHl6dw=="] {
            let decoded = base64_decode(text).map(|b| b.len());
            assert_eq!(decoded, Some(decoded_len(text)), "{text}");
        }
        assert_eq!(base64_decode("eA=="), Some(b"x".to_vec()));
    }
}
