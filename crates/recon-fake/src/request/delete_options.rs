//! The `metav1.DeleteOptions` of a delete or delete-collection, checked as
//! `ValidateDeleteOptions` checks them.

use recon_apimachinery::json::Value;
use serde::Deserialize;

use recon_apimachinery::go_quote;

use super::call::Call;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::gotype;
use crate::wire::error::ApiError;
use crate::wire::go_yaml::yaml_to_json;
use crate::wire::group::GroupKind;
use crate::wire::media_type::{BODY_MEDIA_TYPES, body_media_type};
use crate::wire::object::{Object, sniff_json_object, sniff_value};

/// The recorded schema of `metav1.DeleteOptions`, whose Go types decode a body.
const DELETE_OPTIONS_SCHEMA: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";

/// `metav1.DeleteOptions` as `reflect` prints it.
const DELETE_OPTIONS_TYPE: &str = "v1.DeleteOptions";

/// The scheme delete options are decoded with (`metainternalversionscheme.Scheme`), as Go
/// names it in its errors.
const SCHEME: &str = "pkg/apis/meta/internalversion/scheme/register.go:27";

/// The kinds that scheme registers, by group/version, with their Go types (`reflect` names;
/// `metav1beta1`'s table and partial-object types are aliases of `metav1`'s, but for the
/// partial-object list). Registered by `internalversion.addToGroupVersion`,
/// `metav1.AddToGroupVersion`, `metav1.AddMetaToScheme` and `metav1beta1.AddMetaToScheme`.
const META_KINDS: &[(&str, &str, &str)] = &[
    (
        "meta.k8s.io/__internal",
        "ListOptions",
        "internalversion.ListOptions",
    ),
    ("meta.k8s.io/__internal", "GetOptions", "v1.GetOptions"),
    (
        "meta.k8s.io/__internal",
        "DeleteOptions",
        "v1.DeleteOptions",
    ),
    (
        "meta.k8s.io/__internal",
        "CreateOptions",
        "v1.CreateOptions",
    ),
    (
        "meta.k8s.io/__internal",
        "UpdateOptions",
        "v1.UpdateOptions",
    ),
    ("meta.k8s.io/__internal", "Table", "v1.Table"),
    ("meta.k8s.io/__internal", "TableOptions", "v1.TableOptions"),
    (
        "meta.k8s.io/__internal",
        "PartialObjectMetadata",
        "v1.PartialObjectMetadata",
    ),
    (
        "meta.k8s.io/__internal",
        "PartialObjectMetadataList",
        "v1beta1.PartialObjectMetadataList",
    ),
    ("meta.k8s.io/__internal", "WatchEvent", "v1.InternalEvent"),
    ("meta.k8s.io/v1", "ListOptions", "v1.ListOptions"),
    ("meta.k8s.io/v1", "GetOptions", "v1.GetOptions"),
    ("meta.k8s.io/v1", "DeleteOptions", "v1.DeleteOptions"),
    ("meta.k8s.io/v1", "CreateOptions", "v1.CreateOptions"),
    ("meta.k8s.io/v1", "UpdateOptions", "v1.UpdateOptions"),
    ("meta.k8s.io/v1", "PatchOptions", "v1.PatchOptions"),
    ("meta.k8s.io/v1", "WatchEvent", "v1.WatchEvent"),
    ("meta.k8s.io/v1", "Table", "v1.Table"),
    ("meta.k8s.io/v1", "TableOptions", "v1.TableOptions"),
    (
        "meta.k8s.io/v1",
        "PartialObjectMetadata",
        "v1.PartialObjectMetadata",
    ),
    (
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
        "v1.PartialObjectMetadataList",
    ),
    ("meta.k8s.io/v1beta1", "Table", "v1.Table"),
    ("meta.k8s.io/v1beta1", "TableOptions", "v1.TableOptions"),
    (
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadata",
        "v1.PartialObjectMetadata",
    ),
    (
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadataList",
        "v1beta1.PartialObjectMetadataList",
    ),
];

/// The kinds the scheme knows in every version (`AddUnversionedTypes`), with their Go types.
const UNVERSIONED_KINDS: &[(&str, &str)] = &[
    ("DeleteOptions", "v1.DeleteOptions"),
    ("CreateOptions", "v1.CreateOptions"),
    ("UpdateOptions", "v1.UpdateOptions"),
    ("Status", "v1.Status"),
    ("APIVersions", "v1.APIVersions"),
    ("APIGroupList", "v1.APIGroupList"),
    ("APIGroup", "v1.APIGroup"),
    ("APIResourceList", "v1.APIResourceList"),
];

/// The Go type the JSON serializer decodes a body into: its `apiVersion` and `kind`, defaulted
/// to `meta.k8s.io/v1` `DeleteOptions` (`gvkWithDefaults`), looked up in the scheme
/// (`UseOrCreateObject`, `Scheme.New`). `Err` is the serializer's message; `original` is the
/// body as sent, which a missing version quotes.
fn body_type(obj: &Object, original: &[u8]) -> Result<&'static str, String> {
    let text = |field: &str| obj.get(field).and_then(Value::as_str).unwrap_or("");
    let (mut group, mut version) = parse_group_version(text("apiVersion"))?;
    let kind = match text("kind") {
        "" => "DeleteOptions",
        kind => kind,
    };
    if version.is_empty() && (group.is_empty() || group == "meta.k8s.io") {
        (group, version) = ("meta.k8s.io", "v1");
    }
    if version.is_empty() {
        return Err(format!(
            "Object 'apiVersion' is missing in '{}'",
            String::from_utf8_lossy(original)
        ));
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let known = META_KINDS
        .iter()
        .find(|(gv, k, _)| *gv == group_version && *k == kind)
        .map(|(_, _, ty)| *ty)
        .or_else(|| {
            UNVERSIONED_KINDS
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, ty)| *ty)
        });
    known.ok_or_else(|| {
        if version == "__internal" {
            format!(
                "no kind {} is registered for the internal version of group {} in scheme {}",
                go_quote(kind),
                go_quote(group),
                go_quote(SCHEME)
            )
        } else {
            format!(
                "no kind {} is registered for version {} in scheme {}",
                go_quote(kind),
                go_quote(&group_version),
                go_quote(SCHEME)
            )
        }
    })
}

/// `schema.ParseGroupVersion`: `(group, version)`.
fn parse_group_version(api_version: &str) -> Result<(&str, &str), String> {
    if api_version.is_empty() || api_version == "/" {
        return Ok(("", ""));
    }
    match api_version.matches('/').count() {
        0 => Ok(("", api_version)),
        1 => Ok(api_version.split_once('/').unwrap_or(("", api_version))),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// `metav1.DeleteOptions`, from the body or, when the body is empty, the query.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeleteOptions {
    pub(crate) grace_period_seconds: Option<i64>,
    pub(crate) preconditions: Option<Preconditions>,
    pub(crate) orphan_dependents: Option<bool>,
    pub(crate) propagation_policy: Option<String>,
    #[serde(default)]
    pub(crate) dry_run: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Preconditions {
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
}

impl DeleteOptions {
    pub(crate) fn from_call(call: &Call<'_>) -> Result<Self, ApiError> {
        // `DeleteResource`: a body, however blank, is decoded and the query is then ignored.
        if !call.body.is_empty() {
            return Self::from_body(call);
        }
        let q = call.query;
        Ok(DeleteOptions {
            grace_period_seconds: q.get("gracePeriodSeconds").and_then(|v| v.parse().ok()),
            preconditions: None,
            orphan_dependents: q
                .get("orphanDependents")
                .map(|_| q.flag("orphanDependents")),
            propagation_policy: q.get("propagationPolicy").map(str::to_owned),
            dry_run: q.all("dryRun").map(str::to_owned).collect(),
        })
    }

    /// Options in a request body, negotiated as `NegotiateInputSerializer` does and decoded as
    /// the DELETE handler decodes them: every error a 400 with the decoder's own message.
    fn from_body(call: &Call<'_>) -> Result<Self, ApiError> {
        let obj = match body_media_type(call.content_type).as_deref() {
            Some("application/json") => {
                sniff_json_object(call.body).map_err(ApiError::bad_request)?
            }
            Some("application/yaml") => {
                let text = String::from_utf8_lossy(call.body);
                let value = yaml_to_json(&text).map_err(ApiError::bad_request)?;
                sniff_value(value).map_err(ApiError::bad_request)?
            }
            _ => return Err(ApiError::unsupported_media_type(&BODY_MEDIA_TYPES)),
        };
        let Some(mut obj) = obj else {
            // Go decodes `null` into the empty options.
            return Ok(DeleteOptions::default());
        };
        let go_type = body_type(&obj, call.body).map_err(ApiError::bad_request)?;
        if go_type != DELETE_OPTIONS_TYPE {
            // The codec converts what it decoded into the options: nothing converts to them.
            return Err(ApiError::bad_request(format!(
                "converting ({go_type}) to ({DELETE_OPTIONS_TYPE}): unknown conversion"
            )));
        }
        // `encoding/json` into `metav1.DeleteOptions`: a value of the wrong JSON type is Go's
        // `UnmarshalTypeError`; unknown fields are ignored, `null` leaves a field unset.
        gotype::decode(DELETE_OPTIONS_SCHEMA, &mut obj).map_err(ApiError::bad_request)?;
        obj.retain(|_, v| !v.is_null());
        // Go's decoding accepted every field, so this reads them; should it not, serde_json's
        // message is all there is to say.
        recon_apimachinery::json::from_value(Value::Object(obj)).map_err(|e| {
            ApiError::bad_request(format!(
                "the body of the request was in an unknown format: {e}"
            ))
        })
    }

    pub(crate) fn dry_run(&self) -> bool {
        self.dry_run.iter().any(|v| v == "All")
    }

    /// `ValidateDeleteOptions`.
    pub(crate) fn validate(&self) -> Result<(), ApiError> {
        let mut errors = Vec::new();
        if let (Some(_), Some(policy)) = (self.orphan_dependents, &self.propagation_policy) {
            errors.push(FieldError::invalid(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if let Some(policy) = &self.propagation_policy
            && !matches!(policy.as_str(), "Foreground" | "Background" | "Orphan")
        {
            errors.push(FieldError::not_supported(
                "propagationPolicy",
                policy,
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
        if self.dry_run.iter().any(|v| v != "All") {
            errors.push(FieldError::new(
                ErrorType::NotSupported,
                "dryRun",
                BadValue::Raw(Value::from(self.dry_run.clone()).to_string()),
                "supported values: \"All\"",
            ));
        }
        if errors.is_empty() {
            return Ok(());
        }
        Err(ApiError::invalid(
            &GroupKind::new("meta.k8s.io", "DeleteOptions"),
            "",
            &errors,
        ))
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn options(json: Value) -> DeleteOptions {
        recon_apimachinery::json::from_value(json).unwrap()
    }

    #[test]
    fn propagation_policy_and_orphan_dependents_cannot_both_be_set() {
        let err = options(json!({"propagationPolicy": "Orphan", "orphanDependents": true}))
            .validate()
            .unwrap_err();
        assert_eq!(
            err.message(),
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#
        );
    }

    #[test]
    fn an_unknown_propagation_policy_lists_the_supported_ones() {
        let err = options(json!({"propagationPolicy": "Bogus"}))
            .validate()
            .unwrap_err();
        assert_eq!(
            err.message(),
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil""#
        );
    }
}
