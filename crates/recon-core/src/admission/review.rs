//! The wire types of `admission.k8s.io/v1`: the `AdmissionReview` kube-apiserver posts to a
//! webhook and the one the webhook answers with.
//!
//! These are recon's own rather than kube's `kube::core::admission` types: kube 5 writes a
//! response's `patch` as an array of numbers (kube-rs issue #1781), which kube-apiserver
//! refuses; it reads `patch` as base64 (the JSON encoding of a Go `[]byte`). Here the patch is
//! held as RFC 6902 operations and written as base64 with `patchType: JSONPatch`, and an
//! object is kept as the JSON it was sent as, so a patch can be computed against exactly that.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails;
use kube::Resource;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The `apiVersion` of the reviews this module reads and writes.
pub const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";

/// An `AdmissionReview`: a request from kube-apiserver, or the webhook's response to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    /// `admission.k8s.io/v1`.
    pub api_version: String,
    /// `AdmissionReview`.
    pub kind: String,
    /// What is to be admitted (in a review sent to the webhook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<AdmissionRequest>,
    /// The decision (in the review the webhook answers with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<AdmissionResponse>,
}

impl AdmissionReview {
    /// A review carrying `request`, as kube-apiserver sends it.
    pub fn of_request(request: AdmissionRequest) -> Self {
        AdmissionReview {
            api_version: ADMISSION_API_VERSION.to_owned(),
            kind: "AdmissionReview".to_owned(),
            request: Some(request),
            response: None,
        }
    }

    /// A review carrying `response`, as a webhook answers.
    pub fn of_response(response: AdmissionResponse) -> Self {
        AdmissionReview {
            api_version: ADMISSION_API_VERSION.to_owned(),
            kind: "AdmissionReview".to_owned(),
            request: None,
            response: Some(response),
        }
    }
}

/// What an admission request does to the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Operation {
    /// A create: `object` is the new object.
    Create,
    /// An update: `object` is the new object, `oldObject` the stored one.
    Update,
    /// A delete: `oldObject` is the stored object; there is no `object`.
    Delete,
    /// A connect (exec, attach, port-forward, proxy): `object` is the options.
    Connect,
}

/// A group, version and kind, as an admission request names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AdmissionKind {
    /// The API group (`""` for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    pub version: String,
    /// The kind.
    pub kind: String,
}

impl AdmissionKind {
    /// `group/version Kind`, or `version Kind` in the core group.
    fn describe(&self) -> String {
        if self.group.is_empty() {
            format!("{} {}", self.version, self.kind)
        } else {
            format!("{}/{} {}", self.group, self.version, self.kind)
        }
    }
}

impl std::fmt::Display for AdmissionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A group, version and resource (plural), as an admission request names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AdmissionResource {
    /// The API group (`""` for the core group).
    #[serde(default)]
    pub group: String,
    /// The version.
    pub version: String,
    /// The resource, plural and lowercase.
    pub resource: String,
}

/// What kube-apiserver asks a webhook to admit.
///
/// `object` and `oldObject` are kept as the JSON that was sent: the webhook's patch is computed
/// against exactly that.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::admission::{AdmissionRequest, Operation};
///
/// let cm: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "settings", "namespace": "default"},
/// })).unwrap();
/// let request = AdmissionRequest::create(&cm).with_uid("u-1");
/// assert_eq!(request.operation, Operation::Create);
/// assert_eq!(request.resource.resource, "configmaps");
/// assert_eq!(request.namespace.as_deref(), Some("default"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Identifies this request; the response must carry the same.
    pub uid: String,
    /// The kind of `object` (after conversion to the version the webhook asked for).
    pub kind: AdmissionKind,
    /// The resource being admitted.
    pub resource: AdmissionResource,
    /// The subresource, if any (`status`, `scale`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// The kind of the original request, before conversion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<AdmissionKind>,
    /// The resource of the original request, before conversion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<AdmissionResource>,
    /// The subresource of the original request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    /// The object's name (empty on a create with `generateName`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What the request does.
    pub operation: Operation,
    /// Who asked.
    #[serde(default)]
    pub user_info: UserInfo,
    /// The new object (none on a delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    /// The stored object (on an update or a delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    /// The request will not be persisted: a webhook with side effects must not make them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

impl AdmissionRequest {
    /// A request of `operation` about objects of `R`'s kind, named as `object` is (`object`
    /// is the new object, or the stored one for a delete).
    fn about<R: Resource<DynamicType = ()> + Serialize>(operation: Operation, object: &R) -> Self {
        let meta = object.meta();
        AdmissionRequest {
            uid: "00000000-0000-0000-0000-000000000000".to_owned(),
            kind: AdmissionKind {
                group: R::group(&()).into_owned(),
                version: R::version(&()).into_owned(),
                kind: R::kind(&()).into_owned(),
            },
            resource: AdmissionResource {
                group: R::group(&()).into_owned(),
                version: R::version(&()).into_owned(),
                resource: R::plural(&()).into_owned(),
            },
            sub_resource: None,
            request_kind: None,
            request_resource: None,
            request_sub_resource: None,
            name: meta.name.clone().unwrap_or_default(),
            namespace: meta.namespace.clone(),
            operation,
            user_info: UserInfo::default(),
            object: None,
            old_object: None,
            dry_run: None,
            options: None,
        }
    }

    /// A request to create `object`. Its JSON gets `apiVersion` and `kind`, as objects sent
    /// to webhooks always have them.
    pub fn create<R: Resource<DynamicType = ()> + Serialize>(object: &R) -> Self {
        let mut request = Self::about(Operation::Create, object);
        request.object = Some(typed_json(object));
        request
    }

    /// A request to replace `old` with `new`.
    pub fn update<R: Resource<DynamicType = ()> + Serialize>(old: &R, new: &R) -> Self {
        let mut request = Self::about(Operation::Update, new);
        request.object = Some(typed_json(new));
        request.old_object = Some(typed_json(old));
        request
    }

    /// A request to delete `old`.
    pub fn delete<R: Resource<DynamicType = ()> + Serialize>(old: &R) -> Self {
        let mut request = Self::about(Operation::Delete, old);
        request.old_object = Some(typed_json(old));
        request
    }

    /// The same request with the uid `uid`.
    #[must_use]
    pub fn with_uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = uid.into();
        self
    }

    /// The same request as a dry run.
    #[must_use]
    pub fn dry_run(mut self) -> Self {
        self.dry_run = Some(true);
        self
    }

    /// The same request made by `username`.
    #[must_use]
    pub fn by_user(mut self, username: impl Into<String>) -> Self {
        self.user_info.username = Some(username.into());
        self
    }

    /// Whether the request will not be persisted.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run.unwrap_or(false)
    }

    /// The object the webhook judges: `oldObject` for a delete, else `object`.
    pub fn subject(&self) -> Option<&Value> {
        match self.operation {
            Operation::Delete => self.old_object.as_ref(),
            _ => self.object.as_ref(),
        }
    }
}

/// `object` as JSON with its `apiVersion` and `kind` (which typed structs may not write).
fn typed_json<R: Resource<DynamicType = ()> + Serialize>(object: &R) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.entry("apiVersion")
            .or_insert_with(|| R::api_version(&()).into_owned().into());
        map.entry("kind")
            .or_insert_with(|| R::kind(&()).into_owned().into());
    }
    value
}

/// Why a request was refused: what `kubectl` shows after `admission webhook "…" denied the
/// request:`. The `status` field of a response, a `metav1.Status` without its type fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionStatus {
    /// The HTTP status code the refusal reads as (403 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The message shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A machine-readable reason (`Forbidden`, `Invalid`, `BadRequest`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `Success` or `Failure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Details, such as the fields at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
}

/// A webhook's decision.
///
/// `patch` holds RFC 6902 operations; on the wire it is base64 with `patchType: JSONPatch`,
/// and both are left out when there is no patch (kube-apiserver refuses a `patchType` without
/// a `patch`).
///
/// ```
/// use recon_core::admission::AdmissionResponse;
///
/// let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
///     {"op": "add", "path": "/metadata/labels", "value": {"team": "a"}},
/// ])).unwrap();
/// let response = AdmissionResponse::allow("u-1").with_patch(patch);
/// let wire = serde_json::to_value(&response).unwrap();
/// assert_eq!(wire["patchType"], "JSONPatch");
/// assert_eq!(
///     wire["patch"],
///     "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscyIsInZhbHVlIjp7InRlYW0iOiJhIn19XQ=="
/// );
/// let back: AdmissionResponse = serde_json::from_value(wire).unwrap();
/// assert_eq!(back, response);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdmissionResponse {
    /// The uid of the request answered.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// Why not (or a message with an allowed request).
    pub status: Option<AdmissionStatus>,
    /// The changes a mutating webhook makes to the object.
    pub patch: Option<json_patch::Patch>,
    /// Annotations added to the audit event.
    pub audit_annotations: BTreeMap<String, String>,
    /// Warnings shown to the client.
    pub warnings: Vec<String>,
}

impl AdmissionResponse {
    /// Admits the request of uid `uid`, unchanged.
    pub fn allow(uid: impl Into<String>) -> Self {
        AdmissionResponse {
            uid: uid.into(),
            allowed: true,
            ..AdmissionResponse::default()
        }
    }

    /// Refuses the request of uid `uid` with `status`.
    pub fn deny(uid: impl Into<String>, status: AdmissionStatus) -> Self {
        AdmissionResponse {
            uid: uid.into(),
            allowed: false,
            status: Some(status),
            ..AdmissionResponse::default()
        }
    }

    /// The same response, changing the object with `patch`.
    #[must_use]
    pub fn with_patch(mut self, patch: json_patch::Patch) -> Self {
        self.patch = Some(patch);
        self
    }

    /// The same response with a warning for the client.
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// The response in a review, ready to send.
    pub fn into_review(self) -> AdmissionReview {
        AdmissionReview::of_response(self)
    }
}

/// `AdmissionResponse` as written on the wire.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    uid: String,
    allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<AdmissionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    patch_type: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    audit_annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

/// The only `patchType` of `admission.k8s.io/v1`.
const JSON_PATCH: &str = "JSONPatch";

impl Serialize for AdmissionResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let patch = match &self.patch {
            Some(patch) if !patch.0.is_empty() => {
                let json = serde_json::to_vec(patch).map_err(serde::ser::Error::custom)?;
                Some(BASE64.encode(json))
            }
            _ => None,
        };
        WireResponse {
            uid: self.uid.clone(),
            allowed: self.allowed,
            status: self.status.clone(),
            patch_type: patch.as_ref().map(|_| JSON_PATCH.to_owned()),
            patch,
            audit_annotations: self.audit_annotations.clone(),
            warnings: self.warnings.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AdmissionResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;

        let wire = WireResponse::deserialize(deserializer)?;
        let patch = match (wire.patch, wire.patch_type.as_deref()) {
            (None, None) => None,
            (Some(encoded), Some(JSON_PATCH)) => {
                let bytes = BASE64
                    .decode(encoded.as_bytes())
                    .map_err(|e| D::Error::custom(format!("patch: not base64: {e}")))?;
                let patch = serde_json::from_slice(&bytes).map_err(|e| {
                    D::Error::custom(format!("patch: not an RFC 6902 JSON Patch: {e}"))
                })?;
                Some(patch)
            }
            (Some(_), None) => return Err(D::Error::custom("patch without patchType")),
            (None, Some(_)) => return Err(D::Error::custom("patchType without patch")),
            (Some(_), Some(other)) => {
                return Err(D::Error::custom(format!(
                    "patchType {other:?}: only {JSON_PATCH:?} exists"
                )));
            }
        };
        Ok(AdmissionResponse {
            uid: wire.uid,
            allowed: wire.allowed,
            status: wire.status,
            patch,
            audit_annotations: wire.audit_annotations,
            warnings: wire.warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_response_without_a_patch_writes_neither_patch_nor_patch_type() {
        let wire = serde_json::to_value(AdmissionResponse::allow("u")).unwrap();
        assert_eq!(wire, json!({"uid": "u", "allowed": true}));
        let empty = AdmissionResponse::allow("u").with_patch(json_patch::Patch(vec![]));
        assert_eq!(serde_json::to_value(empty).unwrap(), wire);
    }

    #[test]
    fn the_patch_is_base64_of_the_operations_json() {
        let patch: json_patch::Patch =
            serde_json::from_value(json!([{"op": "remove", "path": "/spec/x"}])).unwrap();
        let wire = serde_json::to_value(AdmissionResponse::allow("u").with_patch(patch)).unwrap();
        let bytes = BASE64.decode(wire["patch"].as_str().unwrap()).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"[{"op":"remove","path":"/spec/x"}]"#
        );
    }

    #[test]
    fn a_patch_type_other_than_json_patch_is_refused() {
        let err = serde_json::from_value::<AdmissionResponse>(
            json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "MergePatch"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("only \"JSONPatch\""), "{err}");
    }

    #[test]
    fn a_request_as_kube_apiserver_sends_it_reads() {
        let review: AdmissionReview = serde_json::from_value(json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "c", "namespace": "default", "operation": "DELETE",
                "userInfo": {"username": "admin", "groups": ["system:masters"]},
                "object": null,
                "oldObject": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                "dryRun": false,
                "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
            }
        }))
        .unwrap();
        let request = review.request.unwrap();
        assert_eq!(request.operation, Operation::Delete);
        assert_eq!(request.object, None);
        assert_eq!(request.subject().unwrap()["metadata"]["name"], "c");
        assert_eq!(request.kind.to_string(), "v1 ConfigMap");
    }
}
