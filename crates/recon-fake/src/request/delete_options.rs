//! The `metav1.DeleteOptions` of a delete or delete-collection, checked as
//! `ValidateDeleteOptions` checks them.

use serde::Deserialize;
use serde_json::Value;

use super::call::Call;
use crate::wire::error::ApiError;
use crate::wire::field_error::{BadValue, ErrorType, FieldError};
use crate::wire::group::GroupKind;
use crate::wire::media_type::{BODY_MEDIA_TYPES, body_media_type};
use crate::wire::object::{json_type, not_an_object, sniff_json_object};

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

    /// Options in a request body, negotiated as `NegotiateInputSerializer` does.
    fn from_body(call: &Call<'_>) -> Result<Self, ApiError> {
        let obj = match body_media_type(call.content_type).as_deref() {
            Some("application/json") => {
                sniff_json_object(call.body).map_err(ApiError::bad_request)?
            }
            Some("application/yaml") => {
                let text = String::from_utf8_lossy(call.body);
                match serde_saphyr::from_str(&text)
                    .map_err(|e| ApiError::bad_request(format!("yaml: {e}")))?
                {
                    Value::Object(obj) => Some(obj),
                    Value::Null => None,
                    other => return Err(ApiError::bad_request(not_an_object(json_type(&other)))),
                }
            }
            _ => return Err(ApiError::unsupported_media_type(&BODY_MEDIA_TYPES)),
        };
        let Some(obj) = obj else {
            // Go decodes `null` into the empty options.
            return Ok(DeleteOptions::default());
        };
        serde_json::from_value(Value::Object(obj)).map_err(|e| {
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
    use serde_json::json;

    use super::*;

    fn options(json: Value) -> DeleteOptions {
        serde_json::from_value(json).unwrap()
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
