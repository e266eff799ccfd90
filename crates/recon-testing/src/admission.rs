//! Admission webhook cases: the request a case may write short and the runner completes, the
//! response's wire form checked as kube-apiserver reads it, and the written form a case
//! expects ([`ResponseSpec`]).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use recon_core::admission::{
    ADMISSION_API_VERSION, AdmissionKind, AdmissionRequest, AdmissionResponse, AdmissionReview,
    AdmissionStatus,
};
use recon_fake::ApiServer;
use serde_json::{Map, Value, json};

use crate::compare::Mismatch;

/// The `uid` of an admission request whose case leaves it out.
pub const DEFAULT_ADMISSION_UID: &str = "00000000-0000-0000-0000-000000000001";

/// The fields of an `admission.k8s.io/v1` `AdmissionRequest`.
const REQUEST_FIELDS: [&str; 15] = [
    "uid",
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestResource",
    "requestSubResource",
    "name",
    "namespace",
    "operation",
    "userInfo",
    "object",
    "oldObject",
    "dryRun",
    "options",
];

/// The fields of a response as a case writes it.
const RESPONSE_FIELDS: [&str; 5] = ["allowed", "status", "patch", "warnings", "auditAnnotations"];

/// The response an admission webhook case expects, as the case writes it: whether the request
/// is allowed, and the `status`, `patch` (RFC 6902 operations), `warnings` and
/// `auditAnnotations` the webhook answers with. The `uid` is not written: the runner checks it
/// against the request's. A case that expects no response expects
/// [`ResponseSpec::allowed()`]: an allowed request, without a patch.
///
/// ```
/// use recon_core::admission::AdmissionDenied;
/// use recon_testing::ResponseSpec;
/// use serde_json::json;
///
/// let mutated = ResponseSpec::allowed()
///     .patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "a"}}]))
///     .warning("team defaulted to a");
/// assert_eq!(mutated.to_value()["warnings"], json!(["team defaulted to a"]));
///
/// let refused = ResponseSpec::denied(422, "Invalid", "spec.size: must be positive");
/// let same = ResponseSpec::denied_with(AdmissionDenied::invalid("spec.size: must be positive").status());
/// assert_eq!(refused, same);
/// assert_eq!(refused.to_value(), json!({
///     "allowed": false,
///     "status": {"code": 422, "reason": "Invalid", "message": "spec.size: must be positive",
///                "status": "Failure"},
/// }));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSpec {
    allowed: bool,
    status: Option<Value>,
    patch: Option<Value>,
    warnings: Vec<String>,
    audit_annotations: BTreeMap<String, String>,
}

impl ResponseSpec {
    /// The request is allowed (add a [`patch`](Self::patch) for a mutation).
    pub fn allowed() -> Self {
        ResponseSpec {
            allowed: true,
            status: None,
            patch: None,
            warnings: Vec::new(),
            audit_annotations: BTreeMap::new(),
        }
    }

    /// The request is refused with `code`, `reason` and `message`, and `status: Failure`: what
    /// an `AdmissionDenied` error gives (an error of another type gives 500 `InternalError`
    /// with its message).
    pub fn denied(code: u16, reason: &str, message: &str) -> Self {
        ResponseSpec::denied_with(AdmissionStatus {
            code: Some(i32::from(code)),
            message: Some(message.to_owned()),
            reason: Some(reason.to_owned()),
            status: Some("Failure".to_owned()),
            details: None,
        })
    }

    /// The request is refused with `status` (only the fields it sets are expected).
    pub fn denied_with(status: AdmissionStatus) -> Self {
        ResponseSpec {
            allowed: false,
            status: serde_json::to_value(status).ok(),
            ..ResponseSpec::allowed()
        }
    }

    /// The same response with the patch `operations`: a JSON array of RFC 6902 operations,
    /// as the webhook's base64 `patch` decodes to.
    #[must_use]
    pub fn patch(mut self, operations: Value) -> Self {
        self.patch = Some(operations);
        self
    }

    /// The same response with the warning `warning` after those already expected.
    #[must_use]
    pub fn warning(mut self, warning: &str) -> Self {
        self.warnings.push(warning.to_owned());
        self
    }

    /// The same response with the audit annotation `key: value`.
    ///
    /// ```
    /// use recon_testing::ResponseSpec;
    /// use serde_json::json;
    ///
    /// let response = ResponseSpec::allowed().audit_annotation("decided-by", "quota");
    /// assert_eq!(response.to_value(),
    ///     json!({"allowed": true, "auditAnnotations": {"decided-by": "quota"}}));
    /// ```
    #[must_use]
    pub fn audit_annotation(mut self, key: &str, value: &str) -> Self {
        self.audit_annotations
            .insert(key.to_owned(), value.to_owned());
        self
    }

    /// The response as a case writes it (the `response` of `expect`).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("allowed".to_owned(), Value::Bool(self.allowed));
        if let Some(status) = &self.status {
            map.insert("status".to_owned(), status.clone());
        }
        if let Some(patch) = &self.patch {
            map.insert("patch".to_owned(), patch.clone());
        }
        if !self.warnings.is_empty() {
            map.insert("warnings".to_owned(), json!(self.warnings));
        }
        if !self.audit_annotations.is_empty() {
            map.insert("auditAnnotations".to_owned(), json!(self.audit_annotations));
        }
        Value::Object(map)
    }
}

impl From<ResponseSpec> for Value {
    fn from(spec: ResponseSpec) -> Value {
        spec.to_value()
    }
}

/// The response a case without `response` expects: allowed, no patch.
pub(crate) fn default_response() -> Value {
    ResponseSpec::allowed().to_value()
}

/// What is wrong with the `admissionRequest` of a case, before anything runs.
pub(crate) fn request_problems(request: &Value) -> Vec<String> {
    let Value::Object(map) = request else {
        return vec![
            "`admissionRequest` must be a mapping: an admission.k8s.io/v1 AdmissionRequest"
                .to_owned(),
        ];
    };
    let mut problems = Vec::new();
    if map.get("operation").is_none_or(Value::is_null) {
        problems.push(
            "`admissionRequest.operation` is required: CREATE, UPDATE, DELETE or CONNECT"
                .to_owned(),
        );
    }
    for key in map.keys() {
        if !REQUEST_FIELDS.contains(&key.as_str()) {
            problems.push(format!(
                "`admissionRequest` has an unknown field `{key}`; an AdmissionRequest has {}",
                REQUEST_FIELDS.join(", ")
            ));
        }
    }
    problems
}

/// What is wrong with an expected response (at `at`, such as `expect.response`) as written.
pub(crate) fn response_problems(response: &Value, at: &str) -> Vec<String> {
    let Value::Object(map) = response else {
        return vec![format!(
            "`{at}` must be a mapping such as `{{allowed: true}}`"
        )];
    };
    let mut problems = Vec::new();
    for key in map.keys() {
        match key.as_str() {
            k if RESPONSE_FIELDS.contains(&k) => {}
            "uid" => problems.push(format!(
                "`{at}.uid`: leave it out; the runner checks the response's uid against the request's"
            )),
            "patchType" => problems.push(format!(
                "`{at}.patchType`: leave it out; `patch` is written as its RFC 6902 operations, and a patch is always a JSONPatch"
            )),
            other => problems.push(format!(
                "`{at}` has an unknown field `{other}`; a response is written with {}",
                RESPONSE_FIELDS.join(", ")
            )),
        }
    }
    match map.get("allowed") {
        Some(Value::Bool(_)) => {}
        None => problems.push(format!("`{at}.allowed` is required: true or false")),
        Some(other) => problems.push(format!("`{at}.allowed` must be true or false, not {other}")),
    }
    if let Some(patch) = map.get("patch")
        && let Err(e) = check_operations(patch)
    {
        problems.push(format!("`{at}.patch`: {e}"));
    }
    problems
}

/// The subject of a request: the field that holds the object judged.
fn subject_field(operation: Option<&str>) -> &'static str {
    match operation {
        Some("DELETE") => "oldObject",
        _ => "object",
    }
}

/// The request of a case with what it left out filled in: `uid` (a fixed one), `kind` (from
/// the subject's `apiVersion` and `kind`), `resource` (the plural `server`'s discovery serves
/// for that kind), and `name` and `namespace` (from the subject's metadata).
pub(crate) async fn complete_request(
    written: &Value,
    server: &ApiServer,
) -> Result<AdmissionRequest, String> {
    let Value::Object(written) = written else {
        return Err("must be a mapping: an admission.k8s.io/v1 AdmissionRequest".to_owned());
    };
    let mut request = written.clone();
    let field = subject_field(request.get("operation").and_then(Value::as_str));
    let subject = request.get(field).filter(|v| !v.is_null()).cloned();
    let metadata = subject.as_ref().and_then(|s| s.get("metadata")).cloned();
    request
        .entry("uid")
        .or_insert_with(|| DEFAULT_ADMISSION_UID.into());
    if !request.contains_key("kind") {
        let Some(subject) = &subject else {
            return Err(format!(
                "`kind` is left out and there is no `{field}` to take it from: give one or the other"
            ));
        };
        let text = |key: &str| subject.get(key).and_then(Value::as_str);
        let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
            return Err(format!(
                "`kind` is left out and `{field}` has no `apiVersion` and `kind` to take it from: give them"
            ));
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        request.insert(
            "kind".to_owned(),
            json!({"group": group, "version": version, "kind": kind}),
        );
    }
    if !request.contains_key("resource") {
        let kind: AdmissionKind = serde_json::from_value(request["kind"].clone())
            .map_err(|e| format!("`kind` is not a group, version and kind: {e}"))?;
        let plural = plural_of(server, &kind).await?;
        request.insert(
            "resource".to_owned(),
            json!({"group": kind.group, "version": kind.version, "resource": plural}),
        );
    }
    for key in ["name", "namespace"] {
        if !request.contains_key(key)
            && let Some(value) = metadata.as_ref().and_then(|m| m.get(key))
        {
            request.insert(key.to_owned(), value.clone());
        }
    }
    serde_json::from_value(Value::Object(request)).map_err(|e| e.to_string())
}

/// The resource (plural) `server` serves objects of `kind` as, from its discovery (read by the
/// harness, not the code under test).
async fn plural_of(server: &ApiServer, kind: &AdmissionKind) -> Result<String, String> {
    let client = server.setup_client();
    let api_version = if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    };
    let list = if kind.group.is_empty() {
        client.list_core_api_resources(&api_version).await
    } else {
        client.list_api_group_resources(&api_version).await
    };
    let unknown = || {
        format!(
            "the cluster serves no kind {} in {api_version} (it knows the built-in kinds and \
             those of the table's CRDs), so `resource` cannot be filled in: install its CRD \
             with `crd` (or the suite's `crds`), or give `resource`",
            kind.kind
        )
    };
    match list {
        Ok(list) => list
            .resources
            .iter()
            .find(|r| r.kind == kind.kind && !r.name.contains('/'))
            .map(|r| r.name.clone())
            .ok_or_else(unknown),
        // An unserved group or version is a plain 404 (`404 page not found`), as on a real server.
        Err(kube::Error::Api(status)) if status.code == 404 => Err(unknown()),
        Err(e) => Err(format!(
            "cannot read the cluster's discovery of {api_version} to fill in `resource`: {e}"
        )),
    }
}

/// The response as the webhook would send it, checked as kube-apiserver reads it, and in the
/// form a case writes it (`None` when it cannot be read at all).
pub(crate) fn read_response(
    response: &AdmissionResponse,
    request_uid: &str,
) -> (Option<Value>, Vec<Mismatch>) {
    match serde_json::to_vec(&AdmissionReview::of_response(response.clone())) {
        Ok(body) => read_wire(&body, request_uid),
        Err(e) => (
            None,
            vec![Mismatch::new(
                "response",
                format!("the AdmissionReview cannot be serialised: {e}"),
            )],
        ),
    }
}

/// Reads the body of an answer as kube-apiserver does: an `admission.k8s.io/v1`
/// `AdmissionReview` whose response has the request's uid, a `patch` if and only if
/// `patchType` is `JSONPatch`, and that patch base64 of a JSON array of RFC 6902 operations.
/// Returns the response as a case writes it, and every rule it breaks.
pub(crate) fn read_wire(body: &[u8], request_uid: &str) -> (Option<Value>, Vec<Mismatch>) {
    let mut problems = Vec::new();
    let review: Value = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(e) => {
            let why = format!("the answer is not JSON: {e}");
            return (None, vec![Mismatch::new("response", why)]);
        }
    };
    let field = |key: &str| review.get(key).and_then(Value::as_str).unwrap_or("missing");
    if field("apiVersion") != ADMISSION_API_VERSION || field("kind") != "AdmissionReview" {
        problems.push(Mismatch::new(
            "response",
            format!(
                "the answer is not an {ADMISSION_API_VERSION} AdmissionReview (apiVersion {}, kind {})",
                field("apiVersion"),
                field("kind")
            ),
        ));
    }
    let Some(Value::Object(response)) = review.get("response") else {
        problems.push(Mismatch::new(
            "response",
            "the AdmissionReview has no response",
        ));
        return (None, problems);
    };
    match response.get("uid") {
        Some(Value::String(uid)) if uid == request_uid => {}
        Some(Value::String(uid)) => problems.push(Mismatch::new(
            "response.uid",
            format!(
                "is {uid:?}, not the request's {request_uid:?}: kube-apiserver refuses a response to another request"
            ),
        )),
        _ => problems.push(Mismatch::new(
            "response.uid",
            format!("is missing; it must be the request's {request_uid:?}"),
        )),
    }
    if !response.get("allowed").is_some_and(Value::is_boolean) {
        problems.push(Mismatch::new(
            "response.allowed",
            "is missing or not a boolean",
        ));
    }
    let present = |key: &str| response.get(key).filter(|v| !v.is_null());
    let mut written = response.clone();
    written.remove("uid");
    written.remove("patchType");
    match (present("patch"), present("patchType")) {
        (None, None) => {
            written.remove("patch");
        }
        (Some(_), None) => problems.push(Mismatch::new(
            "response.patchType",
            "is missing: a patch needs `patchType: JSONPatch`",
        )),
        (None, Some(_)) => {
            written.remove("patch");
            problems.push(Mismatch::new(
                "response.patch",
                "is missing while `patchType` is set: kube-apiserver refuses a patch type without a patch",
            ));
        }
        (Some(_), Some(kind)) if kind != "JSONPatch" => problems.push(Mismatch::new(
            "response.patchType",
            format!("is {kind}; JSONPatch is the only patch type of {ADMISSION_API_VERSION}"),
        )),
        (Some(patch), Some(_)) => match decode_patch(patch) {
            Ok(operations) => {
                written.insert("patch".to_owned(), operations);
            }
            Err(e) => problems.push(Mismatch::new("response.patch", e)),
        },
    }
    (Some(Value::Object(written)), problems)
}

/// The operations a wire `patch` holds: base64 of a JSON array of RFC 6902 operations.
fn decode_patch(patch: &Value) -> Result<Value, String> {
    let Value::String(encoded) = patch else {
        return Err(format!(
            "is {patch}, not a string: kube-apiserver reads the patch as base64"
        ));
    };
    let bytes = BASE64
        .decode(encoded.as_bytes())
        .map_err(|e| format!("is not base64: {e}"))?;
    let operations: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("does not decode to JSON: {e}"))?;
    check_operations(&operations).map_err(|e| format!("does not decode to a JSON Patch: {e}"))?;
    Ok(operations)
}

/// Checks that `operations` is a JSON array of RFC 6902 operations (each with what its `op`
/// needs, paths RFC 6901 pointers).
pub(crate) fn check_operations(operations: &Value) -> Result<(), String> {
    serde_json::from_value::<json_patch::Patch>(operations.clone())
        .map(drop)
        .map_err(|e| format!("{operations} is not a list of RFC 6902 operations: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UID: &str = "u-1";

    fn review(response: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response,
        }))
        .unwrap()
    }

    fn labels(problems: &[Mismatch]) -> Vec<String> {
        problems
            .iter()
            .map(|m| format!("{}: {}", m.expectation, m.detail))
            .collect()
    }

    #[test]
    fn a_well_formed_answer_reads_as_its_written_form() {
        let patch = "W3sib3AiOiJyZW1vdmUiLCJwYXRoIjoiL3NwZWMveCJ9XQ=="; // [{"op":"remove","path":"/spec/x"}]
        let body = review(json!({
            "uid": UID, "allowed": true, "patch": patch, "patchType": "JSONPatch",
            "warnings": ["w"],
        }));
        let (written, problems) = read_wire(&body, UID);
        assert!(problems.is_empty(), "{:?}", labels(&problems));
        assert_eq!(
            written,
            Some(
                json!({"allowed": true, "patch": [{"op": "remove", "path": "/spec/x"}], "warnings": ["w"]})
            )
        );
    }

    #[test]
    fn an_answer_for_another_request_is_a_problem() {
        let (_, problems) = read_wire(&review(json!({"uid": "other", "allowed": true})), UID);
        assert_eq!(
            labels(&problems),
            [
                "response.uid: is \"other\", not the request's \"u-1\": kube-apiserver refuses a response to another request"
            ]
        );
    }

    #[test]
    fn a_review_of_another_kind_or_without_a_response_is_a_problem() {
        let body = serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "Status"})).unwrap();
        let (written, problems) = read_wire(&body, UID);
        assert_eq!(written, None);
        assert_eq!(
            labels(&problems),
            [
                "response: the answer is not an admission.k8s.io/v1 AdmissionReview (apiVersion v1, kind Status)",
                "response: the AdmissionReview has no response",
            ]
        );
    }

    #[test]
    fn patch_and_patch_type_go_together() {
        let (_, problems) = read_wire(
            &review(json!({"uid": UID, "allowed": true, "patch": "W10="})),
            UID,
        );
        assert_eq!(
            labels(&problems),
            ["response.patchType: is missing: a patch needs `patchType: JSONPatch`"]
        );
        let (_, problems) = read_wire(
            &review(json!({"uid": UID, "allowed": true, "patchType": "JSONPatch"})),
            UID,
        );
        assert!(labels(&problems)[0].starts_with("response.patch: is missing"));
        let (_, problems) = read_wire(
            &review(
                json!({"uid": UID, "allowed": true, "patch": "W10=", "patchType": "MergePatch"}),
            ),
            UID,
        );
        assert!(labels(&problems)[0].contains("response.patchType: is \"MergePatch\"; JSONPatch is the only patch type of admission.k8s.io/v1"));
    }

    #[test]
    fn a_patch_must_be_base64_of_rfc_6902_operations() {
        let with_patch = |patch: &str| {
            read_wire(
                &review(
                    json!({"uid": UID, "allowed": true, "patch": patch, "patchType": "JSONPatch"}),
                ),
                UID,
            )
            .1
        };
        assert!(labels(&with_patch("[]"))[0].contains("response.patch: is not base64"));
        // {"op":"add"}: an object, not a list.
        assert!(
            labels(&with_patch("eyJvcCI6ImFkZCJ9"))[0]
                .contains("is not a list of RFC 6902 operations")
        );
        // [{"op":"add","path":"/a"}]: add without a value.
        assert!(
            labels(&with_patch("W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EifV0="))[0]
                .contains("missing field `value`")
        );
        // not JSON at all
        assert!(labels(&with_patch("bm90IGpzb24="))[0].contains("does not decode to JSON"));
    }

    #[test]
    fn operations_are_checked_one_by_one() {
        assert!(check_operations(&json!([])).is_ok());
        assert!(check_operations(&json!([{"op": "move", "from": "/a", "path": "/b~1c"}])).is_ok());
        for bad in [
            json!([{"op": "remove", "path": "/a"}, {"op": "merge", "path": ""}]),
            json!([{"op": "copy", "path": "/a"}]),
            json!([{"op": "remove", "path": "a"}]),
            json!([{"op": "remove", "path": "/a~2"}]),
        ] {
            let err = check_operations(&bad).unwrap_err();
            assert!(
                err.contains("is not a list of RFC 6902 operations"),
                "{err}"
            );
        }
    }

    #[test]
    fn an_expected_response_is_checked_as_written() {
        assert!(response_problems(&json!({"allowed": true}), "expect.response").is_empty());
        let problems = response_problems(
            &json!({"uid": "u", "patchType": "JSONPatch", "allow": true, "patch": {}}),
            "expect.response",
        );
        assert_eq!(problems.len(), 5, "{problems:#?}");
        assert!(problems[0].contains("`expect.response` has an unknown field `allow`"));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`expect.response.uid`: leave it out"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`expect.response.allowed` is required"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`expect.response.patch`: {}"))
        );
    }

    #[test]
    fn a_request_needs_an_operation_and_known_fields() {
        assert!(request_problems(&json!({"operation": "CREATE"})).is_empty());
        assert_eq!(
            request_problems(&json!({"oldobject": {}})),
            [
                "`admissionRequest.operation` is required: CREATE, UPDATE, DELETE or CONNECT",
                "`admissionRequest` has an unknown field `oldobject`; an AdmissionRequest has uid, kind, resource, subResource, requestKind, requestResource, requestSubResource, name, namespace, operation, userInfo, object, oldObject, dryRun, options",
            ]
        );
        assert_eq!(request_problems(&json!("CREATE")).len(), 1);
    }
}
