//! Reading a request body into an object, with the checks the real handlers make before any
//! storage logic: JSON, `apiVersion` / `kind`, `ObjectMeta` decoding, and the URL's namespace.

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;

use super::field_validation::{self, FieldValidation};
use crate::field::FieldError;
use crate::gotype;
use crate::registry::{conversion, defaults};
use crate::request::call::Call;
use crate::wire::duplicate_fields::duplicate_fields;
use crate::wire::error::ApiError;
use crate::wire::go_yaml::go_yaml_error;
use crate::wire::group::GroupKind;
use crate::wire::media_type::{BODY_MEDIA_TYPES, body_media_type};
use crate::wire::object::{
    Object, meta_str, normalize_metadata_of, not_an_object, set_meta, sniff_json_body, sniff_value,
};

/// The object in the body of a create or update, and the `Warning`s decoding it produced.
pub(crate) fn decode_request(call: &Call<'_>) -> Result<(Object, Vec<String>), ApiError> {
    let ctx = call.decode_context();
    match body_media_type(call.content_type).as_deref() {
        Some("application/json") => {}
        Some("application/yaml") => return decode_yaml_request(call),
        _ => {
            return Err(ApiError::unsupported_media_type(&BODY_MEDIA_TYPES));
        }
    }
    let (obj, repeats) =
        sniff_json_body(call.body).map_err(|why| ctx.unrecognized(&why, call.body))?;
    let Some(mut obj) = obj else {
        return Err(ctx.unrecognized(&not_an_object("null"), call.body));
    };
    check_type_meta(call, &mut obj)?;
    let duplicates = if repeats {
        duplicate_fields(call.body)
    } else {
        Vec::new()
    };
    let warnings = coerce(call, &mut obj, &duplicates).map_err(|why| ctx.cannot_handle(&why))?;
    Ok((obj, warnings))
}

/// A YAML body (kubectl's `--content-type`): decoded to JSON, then read as a JSON body is.
fn decode_yaml_request(call: &Call<'_>) -> Result<(Object, Vec<String>), ApiError> {
    let ctx = call.decode_context();
    let text = String::from_utf8_lossy(call.body);
    // The YAML serializer converts to JSON first (its error is go-yaml's), then reads the JSON
    // as a JSON body is read.
    let value: Value = serde_saphyr::from_str(&text)
        .map_err(|e| ctx.unrecognized(&go_yaml_error(&text, &e), call.body))?;
    let Some(mut obj) = sniff_value(value).map_err(|why| ctx.unrecognized(&why, call.body))? else {
        return Err(ctx.unrecognized(&not_an_object("null"), call.body));
    };
    check_type_meta(call, &mut obj)?;
    let warnings = coerce(call, &mut obj, &[]).map_err(|why| ctx.cannot_handle(&why))?;
    Ok((obj, warnings))
}

/// What decoding into the type does after the JSON is read: `ObjectMeta` normalised, and a custom
/// resource pruned and defaulted; the keys the body repeated (`duplicates`) and the unknown
/// fields dropped are then warned about or refused as the request's `fieldValidation` says.
/// Returns the `Warning`s; `Err` is the decoding error.
fn coerce(call: &Call<'_>, obj: &mut Object, duplicates: &[String]) -> Result<Vec<String>, String> {
    let go_struct = (!call.rt.custom).then_some(call.rt.kind.as_str());
    let mut unknown = normalize_metadata_of(obj, go_struct)?;
    unknown.extend(decode_into_type(call, obj)?);
    FieldValidation::of(call).fields(duplicates, &unknown)
}

/// The codec's part of decoding into the resource's type. A built-in kind is decoded into its
/// Go type (wrong JSON types refused, unknown fields dropped) and gets the API defaults of its
/// scheme. A custom resource (`schemaCoercingDecoder`): the request version's
/// schema prunes and defaults an object of the resource's own group and kind (another kind is
/// left for validation to refuse). Returns the paths of the unknown fields dropped.
pub(crate) fn decode_into_type(call: &Call<'_>, obj: &mut Object) -> Result<Vec<String>, String> {
    if !call.rt.custom {
        let version = &call.path.version;
        let unknown = match gotype::kind_struct(&call.rt.group, version, &call.rt.kind) {
            Some(go_struct) => gotype::decode(go_struct, obj)?,
            None => Vec::new(),
        };
        // The typed object read back as unstructured (what field management compares) has
        // no empty `omitempty` lists, as it will not once stored.
        if conversion::converts(&call.rt, version) {
            defaults::as_decoded_at(&call.rt.group, version, &call.rt.kind, obj);
        } else {
            defaults::as_decoded(&call.rt.group, &call.rt.kind, obj);
        }
        return Ok(unknown);
    }
    if string_field(obj, "kind") != call.rt.kind {
        return Ok(Vec::new());
    }
    let api_version = string_field(obj, "apiVersion");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    if group != call.rt.group {
        return Ok(Vec::new());
    }
    let Some(schema) = call.rt.validation(version) else {
        return Ok(Vec::new());
    };
    schema.decode(obj).map_err(|e| e.to_string())
}

fn string_field<'a>(obj: &'a Object, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The decoder's `apiVersion` / `kind` rules. Built-in types default both from the URL; custom
/// resources are decoded as unstructured objects, which need `kind`, and then the version must
/// match. A custom resource of the wrong kind passes here and fails validation (422).
fn check_type_meta(call: &Call<'_>, obj: &mut Object) -> Result<(), ApiError> {
    let expected = call.api_version();
    let (api_version, kind) = (
        string_field(obj, "apiVersion").to_owned(),
        string_field(obj, "kind").to_owned(),
    );
    if call.rt.custom {
        if kind.is_empty() {
            let body = String::from_utf8_lossy(call.body);
            return Err(call
                .decode_context()
                .unrecognized(&format!("Object 'Kind' is missing in '{body}'"), call.body));
        }
        if api_version != expected {
            return Err(version_mismatch(&api_version, &expected));
        }
        return Ok(());
    }
    if !api_version.is_empty() && api_version != expected {
        return Err(version_mismatch(&api_version, &expected));
    }
    if !kind.is_empty() && kind != call.rt.kind {
        return Err(call.decode_context().cannot_handle(&format!(
            "no kind {} is registered for version {} as a {}",
            go_quote(&kind),
            go_quote(&expected),
            call.rt.kind
        )));
    }
    obj.insert("apiVersion".into(), Value::String(expected));
    obj.insert("kind".into(), Value::String(call.rt.kind.clone()));
    Ok(())
}

fn version_mismatch(got: &str, expected: &str) -> ApiError {
    ApiError::bad_request(format!(
        "the API version in the data ({got}) does not match the expected API version ({expected})"
    ))
}

/// A custom resource whose `kind` or `apiVersion` is not the URL's (after a patch, or a body of
/// another kind): the validator's 422, reported against the object's own kind.
pub(crate) fn custom_type_meta_error(call: &Call<'_>, obj: &Object) -> Option<ApiError> {
    let (api_version, kind) = (string_field(obj, "apiVersion"), string_field(obj, "kind"));
    let expected = call.api_version();
    let mut errors = Vec::new();
    if kind != call.rt.kind {
        errors.push(FieldError::invalid(
            "kind",
            kind,
            format!("must be {}", call.rt.kind),
        ));
    }
    if api_version != expected {
        errors.push(FieldError::invalid(
            "apiVersion",
            api_version,
            format!("must be {expected}"),
        ));
    }
    if errors.is_empty() {
        return None;
    }
    let group = api_version.split_once('/').map(|(g, _)| g).unwrap_or("");
    Some(ApiError::invalid(
        &GroupKind::new(group, kind),
        meta_str(obj, "name"),
        &errors,
    ))
}

/// `EnsureObjectNamespaceMatchesRequestNamespace`: an empty namespace takes the URL's, a
/// cluster-scoped object loses its namespace, any other difference is a 400.
pub(crate) fn ensure_namespace(call: &Call<'_>, obj: &mut Object) -> Result<(), ApiError> {
    let request = call.namespace().unwrap_or("");
    let current = meta_str(obj, "namespace");
    if current == request {
        return Ok(());
    }
    if current.is_empty() || request.is_empty() {
        let value = if request.is_empty() {
            Value::Null
        } else {
            Value::String(request.to_owned())
        };
        set_meta(obj, "namespace", value);
        return Ok(());
    }
    Err(ApiError::bad_request(
        "the namespace of the provided object does not match the namespace sent on the request",
    ))
}

/// The update handler's `checkName`: the body's name must be the URL's.
pub(crate) fn check_name(call: &Call<'_>, obj: &Object) -> Result<(), ApiError> {
    let name = meta_str(obj, "name");
    if name.is_empty() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({} based on URL) was undeterminable: name must be provided",
            call.name()
        )));
    }
    if name != call.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            call.name()
        )));
    }
    Ok(())
}

/// The options every write verb validates before reading its body: `dryRun` must be `All` when
/// present (`ValidateDryRun`), `fieldValidation` one of its values (`ValidateFieldValidation`).
pub(crate) fn check_write_options(call: &Call<'_>, options_kind: &str) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    let values: Vec<&str> = call.query.all("dryRun").collect();
    if !values.iter().all(|v| *v == "All") {
        errors.push(FieldError::new(
            crate::field::ErrorType::NotSupported,
            "dryRun",
            crate::field::BadValue::Raw(Value::from(values).to_string()),
            "supported values: \"All\"",
        ));
    }
    errors.extend(field_validation::option_error(call));
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &GroupKind::new("meta.k8s.io", options_kind),
        "",
        &errors,
    ))
}
