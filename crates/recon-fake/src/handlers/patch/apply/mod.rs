//! PATCH with `application/apply-patch+yaml`: server-side apply through the patch handler
//! (`applyPatcher`). The body is YAML (JSON is YAML); a missing object is created (201); an
//! existing one goes through the ordinary update path with the merged result, so its
//! resourceVersion, if the body has one, is an optimistic lock.

#[cfg(test)]
mod proptests;

use recon_apimachinery::json::Value;

use crate::handlers::decode::{check_name, decode_into_type, ensure_namespace};
use crate::handlers::field_manager::FieldManager;
use crate::handlers::field_validation::FieldValidation;
use crate::handlers::update::UpdateRequest;
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::wire::duplicate_fields::parse_noting_repeats;
use crate::wire::error::ApiError;
use crate::wire::go_yaml::go_yaml_error;
use crate::wire::object::{Object, json_type, meta_str, normalize_metadata, set_meta};

impl State {
    pub(crate) fn server_side_apply(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let applied = decode_apply_body(call.body)?;
        let force = call.query.flag("force");
        let fields = FieldManager::new(call, self.clock.now());
        let Some((mut current, stored)) = self.load_typed(call)? else {
            // Only the main resource creates: a subresource needs its object (404).
            if call.path.subresource.is_some() {
                return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
            }
            let mut object = fields.apply(None, &applied, force)?;
            let mut warnings = prepare(call, &mut object)?;
            // `applyAdmission`: an apply that creates is admitted as a create.
            self.mutate(call, &mut object)?;
            self.admit_create(call, &object)?;
            self.confirm_no_escalation(call, &object, None)?;
            // A resourceVersion in the body means nothing to a create.
            set_meta(&mut object, "resourceVersion", Value::Null);
            return self
                .create_once(call, object, false, &mut warnings)
                .map(|reply| reply.with_warnings(warnings));
        };
        let mut object = fields.apply(Some(&mut current), &applied, force)?;
        let warnings = prepare(call, &mut object)?;
        self.update(
            call,
            UpdateRequest {
                object,
                uid_precondition: false,
                warnings,
                current: Some((current, stored)),
                fields_managed: true,
            },
        )
    }
}

/// What the patch handler does with every applied object: metadata decoding, a custom
/// resource's defaults (the typed merge already refused fields the schema does not declare),
/// the URL's name and namespace.
fn prepare(call: &Call<'_>, object: &mut Object) -> Result<Vec<String>, ApiError> {
    let warnings = normalize_metadata(object)
        .and_then(|mut unknown| {
            unknown.extend(decode_into_type(call, object)?);
            FieldValidation::of(call).unknown_fields(&unknown)
        })
        .map_err(|why| call.decode_context().cannot_handle(&why))?;
    if meta_str(object, "name").is_empty() {
        set_meta(object, "name", Value::String(call.name().to_owned()));
    }
    check_name(call, object)?;
    ensure_namespace(call, object)?;
    Ok(warnings)
}

/// The applied configuration: a YAML (or JSON) mapping.
pub(crate) fn decode_apply_body(body: &[u8]) -> Result<Value, ApiError> {
    match plain_json_mapping(body) {
        Some(value) => Ok(value),
        None => read_yaml_mapping(body),
    }
}

/// The YAML reader's reading of an apply body (`yaml.YAMLToJSON`, then a JSON mapping).
fn read_yaml_mapping(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?;
    let value: Value = serde_saphyr::from_str(text).map_err(|e| {
        ApiError::bad_request(format!(
            "error decoding YAML: error converting YAML to JSON: {}",
            go_yaml_error(text, &e)
        ))
    })?;
    match value {
        Value::Object(_) => Ok(value),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(&other)
        ))),
    }
}

/// A body that the YAML reader would read exactly as a JSON reader does, read as JSON (what
/// kube-rs and kubectl send: many times faster than the YAML reader). Anything that might read
/// differently is left to the YAML reader (`None`): bytes other than printable ASCII and line
/// ends (tabs, controls, non-ASCII, a byte-order mark), escapes, numbers that are not integers
/// within 64 bits, repeated keys, keys too long to be YAML simple keys, and documents that are
/// not a mapping. Nesting is no reason: go-yaml reads flow collections 10000 deep
/// (`max_flow_level`), as deep as the JSON reader reads.
fn plain_json_mapping(body: &[u8]) -> Option<Value> {
    let plain = |b: &u8| matches!(b, b' '..=b'~' | b'\n' | b'\r') && *b != b'\\';
    if !body.iter().all(plain) {
        return None;
    }
    let (value, repeats) = parse_noting_repeats(body).ok()?;
    (!repeats && value.is_object() && reads_alike(&value)).then_some(value)
}

/// YAML's limit on a simple key (1024 characters), with a margin.
const PLAIN_JSON_KEY: usize = 1000;

/// Whether `value` holds nothing the YAML reader reads otherwise (walked without recursion).
fn reads_alike(value: &Value) -> bool {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(n) if !(n.is_i64() || n.is_u64()) => return false,
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                if map.keys().any(|k| k.len() > PLAIN_JSON_KEY) {
                    return false;
                }
                pending.extend(map.values());
            }
            _ => {}
        }
    }
    true
}
