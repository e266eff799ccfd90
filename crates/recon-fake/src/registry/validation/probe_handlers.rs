//! A container's probes and lifecycle hooks (`pkg/apis/core/validation/validation.go`:
//! `validateLifecycle`, `validateLivenessProbe`, `validateReadinessProbe`,
//! `validateStartupProbe`, `validateProbe` and the `validateHandler` they share, with what each
//! handler holds).
//!
//! Checked: one handler each (a probe's of exec, httpGet, tcpSocket and grpc, a hook's of exec,
//! httpGet, tcpSocket and sleep), an exec command, an HTTP path, port (number or IANA name),
//! scheme and header names, a TCP or gRPC port, a sleep within the pod's grace period, the
//! probes' counters; and that an init container has hooks and probes only when it restarts
//! (`restartPolicy: Always`). Go checks neither hosts, gRPC services nor header values.
//! `lifecycle.stopSignal` is not checked: `ContainerStopSignals` is off in 1.36, and the pod
//! strategy drops the field before validation.

use recon_apimachinery::json::Value;

use super::pod::{invalid_int, non_negative};
use super::ports::{port_name_errors, port_num_errors};
use super::read::{int_at, is_set, list_at, str_at};
use crate::field::{FieldError, Path};

/// The handlers of a probe (`handlerFromProbe`), in the order `validateHandler` checks them.
const PROBE_HANDLERS: &[&str] = &["exec", "httpGet", "tcpSocket", "grpc"];

/// The handlers of a lifecycle hook (`handlerFromLifecycle`), in the same order.
const HOOK_HANDLERS: &[&str] = &["exec", "httpGet", "tcpSocket", "sleep"];

/// The schemes `validateHTTPGetAction` supports, as `sets.List` sorts them.
const HTTP_SCHEMES: &[&str] = &["HTTP", "HTTPS"];

/// The probes of a container, in the order `validateContainers` checks them.
const PROBES: &[&str] = &["livenessProbe", "readinessProbe", "startupProbe"];

/// What `validateContainers` checks of a regular container's lifecycle and probes (and
/// `validateInitContainers` of a restartable init container's): the lifecycle hooks, then the
/// liveness, readiness and startup probes. `grace_period` is the pod's
/// `terminationGracePeriodSeconds`.
pub(super) fn container_handlers(
    container: &Value,
    grace_period: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let c = Some(container);
    let mut errors = Vec::new();
    if let Some(lifecycle) = c.and_then(|c| c.get("lifecycle")).filter(|l| !l.is_null()) {
        errors.extend(self::lifecycle(
            lifecycle,
            grace_period,
            &path.child("lifecycle"),
        ));
    }
    for key in PROBES {
        if let Some(probe) = c.and_then(|c| c.get(*key)).filter(|p| !p.is_null()) {
            errors.extend(self::probe(probe, key, grace_period, &path.child(key)));
        }
    }
    errors
}

/// What `validateInitContainers` says of the hooks and probes of an init container that does
/// not restart: none may be set.
pub(super) fn forbidden_for_init_container(container: &Value, path: &Path) -> Vec<FieldError> {
    ["lifecycle"]
        .iter()
        .chain(PROBES)
        .filter(|key| is_set(Some(container), key))
        .map(|key| {
            FieldError::forbidden(
                path.child(key),
                "may not be set for init containers without restartPolicy=Always",
            )
        })
        .collect()
}

/// `validateLifecycle`: the postStart and preStop hooks. (`stopSignal`: see the module.)
fn lifecycle(lifecycle: &Value, grace_period: Option<i64>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for key in ["postStart", "preStop"] {
        if let Some(hook) = lifecycle.get(key).filter(|h| !h.is_null()) {
            errors.extend(handler(hook, HOOK_HANDLERS, grace_period, &path.child(key)));
        }
    }
    errors
}

/// `validateProbe` (the handler, counters that are not negative, a positive grace period),
/// then `validateLivenessProbe` and `validateStartupProbe` (a success threshold of 1) or
/// `validateReadinessProbe` (no grace period of its own) as `kind` says.
fn probe(probe: &Value, kind: &str, grace_period: Option<i64>, path: &Path) -> Vec<FieldError> {
    let p = Some(probe);
    let mut errors = handler(probe, PROBE_HANDLERS, grace_period, path);
    for key in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        errors.extend(non_negative(p, key, path));
    }
    if let Some(grace) = int_at(p, "terminationGracePeriodSeconds").filter(|g| *g <= 0) {
        errors.push(invalid_int(
            &path.child("terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        ));
    }
    if kind == "readinessProbe" {
        if let Some(grace) = int_at(p, "terminationGracePeriodSeconds") {
            errors.push(invalid_int(
                &path.child("terminationGracePeriodSeconds"),
                grace,
                "must not be set for readinessProbes",
            ));
        }
    } else {
        let threshold = int_at(p, "successThreshold").unwrap_or(0);
        if threshold != 1 {
            errors.push(invalid_int(
                &path.child("successThreshold"),
                threshold,
                "must be 1",
            ));
        }
    }
    errors
}

/// `validateHandler` of the probe or hook `v`, whose possible handlers are `handlers`: the
/// first one set is checked, each later one is forbidden, none is required.
fn handler(
    v: &Value,
    handlers: &[&str],
    grace_period: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut found = false;
    for key in handlers.iter().filter(|key| is_set(Some(v), key)) {
        let at = path.child(key);
        if found {
            errors.push(FieldError::forbidden(
                at,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        found = true;
        let action = v.get(*key);
        match *key {
            // validateExecAction
            "exec" if list_at(action, "command").is_empty() => {
                errors.push(FieldError::required(at.child("command"), ""));
            }
            "httpGet" => errors.extend(http_get(action, &at)),
            // validateTCPSocketAction
            "tcpSocket" => errors.extend(port_num_or_name(action, &at.child("port"))),
            // validateGRPCAction: its port is a number.
            "grpc" => {
                let port = int_at(action, "port").unwrap_or(0);
                errors.extend(port_num(port, &at.child("port")));
            }
            "sleep" => errors.extend(sleep(action, grace_period, &at)),
            _ => {}
        }
    }
    if !found {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    errors
}

/// `validateHTTPGetAction`: a path (the defaulting gives one), a port, a supported scheme,
/// header names (each reported on `httpHeaders`, without its index).
fn http_get(action: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if str_at(action, "path").is_empty() {
        errors.push(FieldError::required(path.child("path"), ""));
    }
    errors.extend(port_num_or_name(action, &path.child("port")));
    let scheme = str_at(action, "scheme");
    if !HTTP_SCHEMES.contains(&scheme) {
        errors.push(FieldError::not_supported(
            path.child("scheme"),
            scheme,
            HTTP_SCHEMES,
        ));
    }
    for header in list_at(action, "httpHeaders") {
        let name = str_at(Some(header), "name");
        if let Some(message) = http_header_name_error(name) {
            errors.push(FieldError::invalid(
                path.child("httpHeaders"),
                name,
                message,
            ));
        }
    }
    errors
}

/// `validation.IsHTTPHeaderName`: `[-A-Za-z0-9]+`.
fn http_header_name_error(name: &str) -> Option<&'static str> {
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    (!valid).then_some(
        "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. \
         'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
    )
}

/// `ValidatePortNumOrName` of the int-or-string `port` of `action`: a number is a port number,
/// a string an IANA service name. A missing port is the number 0.
fn port_num_or_name(action: Option<&Value>, path: &Path) -> Vec<FieldError> {
    match action.and_then(|a| a.get("port")) {
        Some(Value::String(name)) => port_name_errors(name)
            .into_iter()
            .map(|message| FieldError::invalid(path, name, message))
            .collect(),
        other => port_num(other.and_then(Value::as_i64).unwrap_or(0), path),
    }
}

/// `validation.IsValidPortNum`, the number printed as the value.
fn port_num(port: i64, path: &Path) -> Vec<FieldError> {
    port_num_errors(port)
        .into_iter()
        .map(|message| invalid_int(path, port, &message))
        .collect()
}

/// `validateSleepAction` with `AllowPodLifecycleSleepActionZeroValue` (its gate is locked on in
/// 1.36): between 0 and the pod's grace period, reported on `sleep` itself. Without a grace
/// period (already an error of its own) nothing is checked.
fn sleep(action: Option<&Value>, grace_period: Option<i64>, path: &Path) -> Option<FieldError> {
    let grace = grace_period?;
    let seconds = int_at(action, "seconds").unwrap_or(0);
    (seconds < 0 || seconds > grace).then(|| {
        invalid_int(
            path,
            seconds,
            &format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})"),
        )
    })
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_probe_checks_its_first_handler_and_forbids_the_others() {
        let probe = json!({"httpGet": {"path": "/", "port": "HTTP", "scheme": "FTP"},
                           "grpc": {"port": 1}, "successThreshold": 1});
        let path = Path::new("p");
        assert_eq!(
            texts(&super::probe(&probe, "livenessProbe", Some(30), &path)),
            [
                r#"p.httpGet.port: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"#,
                r#"p.httpGet.port: Invalid value: "HTTP": must contain at least one letter (a-z)"#,
                r#"p.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS""#,
                "p.grpc: Forbidden: may not specify more than 1 handler type",
            ]
        );
    }

    #[test]
    fn a_sleep_stays_within_the_grace_period() {
        let hook = json!({"sleep": {"seconds": 31}});
        let errors = handler(&hook, HOOK_HANDLERS, Some(30), &Path::new("h"));
        assert_eq!(
            texts(&errors),
            [
                "h.sleep: Invalid value: 31: must be non-negative and less than \
              terminationGracePeriodSeconds (30)"
            ]
        );
        assert!(handler(&hook, HOOK_HANDLERS, None, &Path::new("h")).is_empty());
    }

    #[test]
    fn header_names_are_tokens() {
        assert!(http_header_name_error("X-Trace-1").is_none());
        assert!(http_header_name_error("X_Trace").is_some());
        assert!(http_header_name_error("").is_some());
    }
}
