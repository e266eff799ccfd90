//! Objects as the server handles them: JSON maps, with the `metadata` rules of the typed
//! `metav1.ObjectMeta` the real server decodes into (unknown fields dropped with a warning, empty
//! `omitempty` fields dropped, wrong JSON types rejected with Go's decoding message).

use bytes::Bytes;
use recon_apimachinery::go_json::write_go_string;
use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};

use super::duplicate_fields::parse_noting_repeats;
use super::error::ApiError;
use super::go_json_syntax;
use super::nesting;

/// A decoded object.
pub(crate) type Object = Map;

/// The object's `metadata`, if it is a map.
pub(crate) fn meta(obj: &Object) -> Option<&Object> {
    obj.get("metadata").and_then(Value::as_object)
}

/// The object's `metadata`, created if missing or not a map.
pub(crate) fn meta_mut(obj: &mut Object) -> &mut Object {
    let slot = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("metadata was just made a map"),
    }
}

/// The items of a JSON list; none when the value is absent, null or not a list.
pub(crate) fn list_items(list: Option<&Value>) -> &[Value] {
    list.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A string field of `metadata` (`""` when absent).
pub(crate) fn meta_str<'a>(obj: &'a Object, key: &str) -> &'a str {
    meta(obj)
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Sets a `metadata` field; `Value::Null` removes it.
pub(crate) fn set_meta(obj: &mut Object, key: &str, value: Value) {
    let m = meta_mut(obj);
    if value.is_null() {
        m.remove(key);
    } else {
        m.insert(key.to_owned(), value);
    }
}

pub(crate) fn meta_value<'a>(obj: &'a Object, key: &str) -> Option<&'a Value> {
    meta(obj).and_then(|m| m.get(key))
}

/// `metadata.finalizers`.
pub(crate) fn finalizers(obj: &Object) -> Vec<String> {
    strings(meta_value(obj, "finalizers"))
}

/// The strings of a JSON list (none when absent or not a list).
pub(crate) fn strings(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.generation` (0 when absent).
pub(crate) fn generation(obj: &Object) -> i64 {
    meta_value(obj, "generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `metadata.deletionGracePeriodSeconds`.
pub(crate) fn deletion_grace(obj: &Object) -> Option<i64> {
    meta_value(obj, "deletionGracePeriodSeconds").and_then(Value::as_i64)
}

/// Whether `metadata.deletionTimestamp` is set.
pub(crate) fn is_terminating(obj: &Object) -> bool {
    meta_value(obj, "deletionTimestamp").is_some_and(|v| !v.is_null())
}

/// Serialises an object for storage, `apiVersion` and `kind` left out (they are added per
/// response, and omitted for items of built-in lists as the real server does). A built-in
/// object is written as Go's encoder writes its type: fields in declaration order, map keys
/// sorted, `<`, `>` and `&` escaped ([`gotype::encode_struct`]); anything else (a custom
/// resource, Go's `map[string]interface{}`) with every key sorted, so equal objects give equal
/// bytes whatever order a client sent.
pub(crate) fn encode_body(obj: &Object) -> Bytes {
    encode_body_as(obj, None)
}

/// [`encode_body`] of an object that may lack its `apiVersion` and `kind` (one read back from
/// storage): without them, it is written as the Go struct `stored_as` when given.
pub(crate) fn encode_body_as(obj: &Object, stored_as: Option<&str>) -> Bytes {
    const SKIP: &[&str] = &["apiVersion", "kind"];
    let go_struct = crate::gotype::builtin_struct(obj).or(stored_as);
    // Written into a buffer kept for the next body, then copied once at its exact size: a
    // fresh buffer would double as it goes, and stored bodies live long, so keep no slack.
    SCRATCH.with_borrow_mut(|scratch| {
        scratch.clear();
        match go_struct {
            Some(name) => {
                // The emptied buffer is valid UTF-8: lent to the Go writer as a `String`.
                let mut text = String::from_utf8(std::mem::take(scratch)).unwrap_or_default();
                crate::gotype::write_struct(name, obj, SKIP, &mut text);
                *scratch = text.into_bytes();
            }
            None => {
                let body = Sorted {
                    map: obj,
                    skip: SKIP,
                    depth: 1,
                };
                if serde_json::to_writer(&mut *scratch, &body).is_err() {
                    // Deeper than serde_json's recursion is let go: written again, without it.
                    scratch.clear();
                    nesting::write_sorted(scratch, obj, SKIP);
                }
            }
        }
        let bytes = Bytes::copy_from_slice(scratch);
        // An occasional huge body is not kept for good.
        if scratch.capacity() > SCRATCH_KEPT {
            *scratch = Vec::new();
        }
        bytes
    })
}

/// An object the server answers without storing it (a review, a token request): its
/// `apiVersion` and `kind` first, then the rest as [`encode_body`] writes it.
pub(crate) fn encode_answer(obj: &Object) -> Vec<u8> {
    let text = |key: &str| obj.get(key).and_then(Value::as_str).unwrap_or("");
    with_type_meta(text("apiVersion"), text("kind"), &encode_body(obj))
}

/// `{"metadata": <metadata>}`, the body of a `PartialObjectMetadata` (its type added by the
/// caller); written one container at a time, as a deep object's `managedFields` are as deep as
/// the object.
pub(crate) fn metadata_document(metadata: &Object) -> Vec<u8> {
    format!(r#"{{"metadata":{metadata}}}"#).into_bytes()
}

/// The largest buffer [`encode_body`] keeps between bodies.
const SCRATCH_KEPT: usize = 1 << 20;

thread_local! {
    /// [`encode_body`]'s buffer.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A map serialised with its keys in order (a [`Map`](recon_apimachinery::json::Map) keeps
/// them so), leaving out the fields named in `skip`. Past [`nesting::SHALLOW`] levels (`depth` is the map's own) it fails, for
/// [`nesting::write_sorted`] to write the object without recursion.
struct Sorted<'a> {
    map: &'a Object,
    skip: &'a [&'a str],
    depth: usize,
}

impl serde::Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        if self.depth > nesting::SHALLOW {
            return Err(S::Error::custom(
                "nested too deep to be written by recursion",
            ));
        }
        let depth = self.depth + 1;
        let kept = |(k, _): &(&String, &Value)| !self.skip.contains(&k.as_str());
        let len = self.map.iter().filter(kept).count();
        let mut map = serializer.serialize_map(Some(len))?;
        for (key, value) in self.map.iter().filter(kept) {
            map.serialize_entry(key, &SortedValue(value, depth))?;
        }
        map.end()
    }
}

/// A value inside a [`Sorted`] map, at `depth` if it is a container.
struct SortedValue<'a>(&'a Value, usize);

impl serde::Serialize for SortedValue<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let depth = self.1;
        match self.0 {
            Value::Object(map) => Sorted {
                map,
                skip: &[],
                depth,
            }
            .serialize(serializer),
            Value::Array(_) if depth > nesting::SHALLOW => Err(serde::ser::Error::custom(
                "nested too deep to be written by recursion",
            )),
            Value::Array(items) => {
                serializer.collect_seq(items.iter().map(|item| SortedValue(item, depth + 1)))
            }
            other => other.serialize(serializer),
        }
    }
}

/// A stored body with `apiVersion` and `kind` put back in front.
pub(crate) fn with_type_meta(api_version: &str, kind: &str, body: &[u8]) -> Vec<u8> {
    let (mut out, tail) = type_meta_head(api_version, kind, body);
    out.extend_from_slice(&body[tail..]);
    out
}

/// What [`with_type_meta`] writes before `body`, and where in `body` the rest it copies starts.
pub(crate) fn type_meta_head(api_version: &str, kind: &str, body: &[u8]) -> (Vec<u8>, usize) {
    // A Go type's `TypeMeta` writes `kind` first; an unstructured object's keys are sorted.
    let (first, second) = if crate::gotype::is_go_type(api_version, kind) {
        (("kind", kind), ("apiVersion", api_version))
    } else {
        (("apiVersion", api_version), ("kind", kind))
    };
    let mut out = String::with_capacity(api_version.len() + kind.len() + 32);
    out.push('{');
    for (i, (key, value)) in [first, second].into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_go_string(&mut out, key);
        out.push(':');
        write_go_string(&mut out, value);
    }
    let rest = match body {
        [b'{', b'}'] | [] => {
            out.push('}');
            body.len()
        }
        [b'{', ..] => {
            out.push(',');
            1
        }
        _ => {
            out.push('}');
            body.len()
        }
    };
    (out.into_bytes(), rest)
}

/// A stored body that does not decode.
///
/// Nothing the server writes is one but an object nested deeper than Go's decoder reads, which
/// the real server writes and then cannot read either ([`super::nesting`]). Should another be
/// stored all the same, it is reported, never read as an empty object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the object stored under {key:?} does not decode: {reason}")]
pub(crate) struct DecodeError {
    /// The storage key: `<namespace>/<name>`, or `<name>`.
    pub(crate) key: String,
    /// serde_json's message.
    pub(crate) reason: String,
    /// What Go's decoder says of the same bytes, where it is known (its syntax errors, a
    /// document that is not an object); else serde_json's message.
    pub(crate) go_message: String,
}

impl DecodeError {
    /// How a request reading the object is answered. etcd3's store returns the decoder's error
    /// as it is (`Get`, `GetList`, `GuaranteedUpdate`, `conditionalDelete`:
    /// `s.decoder.Decode(...)`; it becomes `storage.NewCorruptObjError`, and then
    /// `apierrors.NewInternalError`, only under the `AllowUnsafeMalformedObjectDeletion`
    /// gate, off by default in 1.36); `storeerr.Interpret*Error` pass a plain error on, and
    /// `ErrorToAPIStatus` answers it 500 with no reason and the error's text.
    pub(crate) fn to_api_error(&self) -> ApiError {
        ApiError::internal_unknown(self.go_message.clone())
    }

    /// The ERROR event a watch ends with: etcd3's watcher sends a decoding error through
    /// `transformErrorToEvent`, which wraps what is not an API status in `NewInternalError`.
    pub(crate) fn to_watch_error(&self) -> ApiError {
        ApiError::internal(&self.go_message)
    }
}

/// Decodes the body stored under `key`.
pub(crate) fn decode_body(key: &str, body: &[u8]) -> Result<Object, DecodeError> {
    let error = |reason: String, go_message: String| DecodeError {
        key: key.to_owned(),
        reason,
        go_message,
    };
    match read_json(body) {
        Ok(Value::Object(obj)) => Ok(obj),
        // What the unstructured decoder says of a document that is not an object.
        Ok(other) => Err(error(
            format!("a JSON {} is not an object", json_type(&other)),
            format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_type(&other)
            ),
        )),
        Err(e) => Err(error(e.to_string(), go_json_syntax::worded(body, &e))),
    }
}

/// A JSON document as serde_json reads it, at any depth Go's decoder reads too: most by
/// [`json::read`](recon_apimachinery::json::read) in one pass; the rest by serde_json, and
/// deeper than its recursion by [`nesting::parse`]; deeper than Go's limit, serde_json's error
/// (which [`go_json_syntax::worded`] words as Go does).
pub(crate) fn read_json(body: &[u8]) -> serde_json::Result<Value> {
    if let Some(value) = recon_apimachinery::json::read(body) {
        return Ok(value);
    }
    match serde_json::from_slice::<Value>(body) {
        Err(e)
            if nesting::is_recursion_limit(&e) && go_json_syntax::syntax_error(body).is_none() =>
        {
            nesting::parse(body).map(|(value, _)| value)
        }
        read => read,
    }
}

/// The first step of decoding a JSON body, reading its `apiVersion` and `kind`: the object, or
/// `None` for `null` (which Go decodes into nothing, without error); `Err` is the serializer's
/// message, `couldn't get version/kind; json parse error: ...`.
pub(crate) fn sniff_json_object(body: &[u8]) -> Result<Option<Object>, String> {
    sniff_json_body(body).map(|(obj, _)| obj)
}

/// [`sniff_json_object`], and whether any object in the body repeats a key (read in the same
/// pass).
pub(crate) fn sniff_json_body(body: &[u8]) -> Result<(Option<Object>, bool), String> {
    let (value, repeats) = parse_noting_repeats(body).map_err(|e| {
        // Go's scanner reads the whole document first: its syntax error is the one reported.
        let why = go_json_syntax::worded(body, &e);
        format!("couldn't get version/kind; json parse error: {why}")
    })?;
    Ok((sniff_value(value)?, repeats))
}

/// The sniffing of a body already read as JSON (a YAML body is converted first): the object,
/// `None` for `null`, or the serializer's message.
pub(crate) fn sniff_value(value: Value) -> Result<Option<Object>, String> {
    match value {
        Value::Object(obj) => {
            // The struct it is read into has string `apiVersion` and `kind` (`null` leaves one
            // empty); the struct is anonymous, so Go names the field `.kind`.
            for field in ["apiVersion", "kind"] {
                if let Some(bad) = obj.get(field).filter(|v| !v.is_string() && !v.is_null()) {
                    return Err(format!(
                        "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go struct field .{field} of type string",
                        json_type(bad)
                    ));
                }
            }
            Ok(Some(obj))
        }
        Value::Null => Ok(None),
        other => Err(not_an_object(json_type(&other))),
    }
}

/// The sniffing error for a body whose JSON is a `json_type` other than an object.
pub(crate) fn not_an_object(json_type: &str) -> String {
    format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {json_type} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
    )
}

/// What went wrong when decoding a request body, before the type is known to be right.
pub(crate) struct DecodeContext<'a> {
    /// The kind the URL expects.
    pub(crate) kind: &'a str,
    /// The version the URL names.
    pub(crate) version: &'a str,
}

impl DecodeContext<'_> {
    /// `the object provided is unrecognized (must be of type Widget): <why> (<summary>)`.
    pub(crate) fn unrecognized(&self, why: &str, body: &[u8]) -> ApiError {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): {why} ({})",
            self.kind,
            summarize(body)
        ))
    }

    /// `Widget in version "v1" cannot be handled as a Widget: <why>`.
    pub(crate) fn cannot_handle(&self, why: &str) -> ApiError {
        ApiError::bad_request(format!(
            "{} in version {} cannot be handled as a {}: {why}",
            self.kind,
            go_quote(self.version),
            self.kind
        ))
    }
}

/// The apiserver's `summarizeData`: JSON shown up to 30 bytes, anything else in hex.
fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    let (shown, more) = if body.len() > MAX {
        (&body[..MAX], " ...")
    } else {
        (body, "")
    };
    match body.first() {
        None => "<empty>".to_owned(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(shown)),
        Some(_) => {
            let hex: String = shown.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// The JSON type name Go's decoder uses in "cannot unmarshal X into ...".
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// How one `ObjectMeta` field decodes.
#[derive(Clone, Copy)]
enum MetaField {
    Str,
    Int,
    Time,
    StringMap,
    StringList,
    OwnerRefs,
    ManagedFields,
}

fn meta_field(key: &str) -> Option<MetaField> {
    Some(match key {
        "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion" => {
            MetaField::Str
        }
        "generation" | "deletionGracePeriodSeconds" => MetaField::Int,
        "creationTimestamp" | "deletionTimestamp" => MetaField::Time,
        "labels" | "annotations" => MetaField::StringMap,
        "finalizers" => MetaField::StringList,
        "ownerReferences" => MetaField::OwnerRefs,
        "managedFields" => MetaField::ManagedFields,
        _ => return None,
    })
}

/// `metav1.OwnerReference`'s fields in Go order, and whether each is optional (`omitempty`).
pub(crate) const OWNER_REF_FIELDS: &[(&str, bool)] = &[
    ("apiVersion", false),
    ("kind", false),
    ("name", false),
    ("uid", false),
    ("controller", true),
    ("blockOwnerDeletion", true),
];

const MANAGED_FIELDS_ENTRY: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

/// Normalises `metadata` as decoding into `metav1.ObjectMeta` and encoding again would: drops
/// unknown fields (returning their paths, `metadata.clusterName`, for `fieldValidation`), nulls and empty
/// `omitempty` values, writes a null label, annotation or finalizer as `""` (Go's zero value for
/// an element), and rejects wrong JSON types with Go's decoding message (the `Err`).
pub(crate) fn normalize_metadata(obj: &mut Object) -> Result<Vec<String>, String> {
    normalize_metadata_of(obj, None)
}

/// [`normalize_metadata`] of an object decoded into the Go struct `go_struct` (a built-in
/// kind), whose decoding errors name each field by its path from the object's root
/// (`ObjectMeta.metadata.labels`, `ConfigMap.metadata`); a custom resource's metadata is
/// decoded on its own (`ObjectMeta.labels`), as with `None`.
pub(crate) fn normalize_metadata_of(
    obj: &mut Object,
    go_struct: Option<&str>,
) -> Result<Vec<String>, String> {
    let within = if go_struct.is_some() { "metadata." } else { "" };
    let mut unknown = Vec::new();
    let Some(raw) = obj.get_mut("metadata") else {
        return Ok(unknown);
    };
    let meta = match raw {
        Value::Null => {
            obj.remove("metadata");
            return Ok(unknown);
        }
        Value::Object(m) => m,
        other => {
            return Err(match go_struct {
                Some(go_struct) => format!(
                    "json: cannot unmarshal {} into Go struct field {go_struct}.metadata of type v1.ObjectMeta",
                    json_type(other)
                ),
                None => format!(
                    "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                    json_type(other)
                ),
            });
        }
    };
    let mut keep = Map::new();
    for (key, value) in std::mem::take(meta) {
        let Some(field) = meta_field(&key) else {
            unknown.push(format!("metadata.{key}"));
            continue;
        };
        let type_error = |what: &Value, go_type: &str| {
            format!(
                "json: cannot unmarshal {} into Go struct field ObjectMeta.{within}{key} of type {go_type}",
                json_type(what)
            )
        };
        if value.is_null() {
            continue;
        }
        let keep_it = match field {
            MetaField::Str => match &value {
                Value::String(s) => !s.is_empty(),
                other => return Err(type_error(other, "string")),
            },
            MetaField::Int => match &value {
                Value::Number(n) if n.is_i64() => {
                    key == "deletionGracePeriodSeconds" || n.as_i64() != Some(0)
                }
                Value::Number(n) => {
                    return Err(format!(
                        "json: cannot unmarshal number {n} into Go struct field ObjectMeta.{within}{key} of type int64"
                    ));
                }
                other => return Err(type_error(other, "int64")),
            },
            MetaField::Time => match &value {
                Value::String(s) => {
                    recon_apimachinery::gotime::parse(recon_apimachinery::gotime::Layout::Time, s)?;
                    true
                }
                other => return Err(type_error(other, "v1.Time")),
            },
            MetaField::StringMap => match &value {
                Value::Object(m) => {
                    if let Some(bad) = m.values().find(|v| !v.is_string() && !v.is_null()) {
                        return Err(type_error(bad, "string"));
                    }
                    !m.is_empty()
                }
                other => return Err(type_error(other, "map[string]string")),
            },
            MetaField::StringList => match &value {
                Value::Array(items) => {
                    if let Some(bad) = items.iter().find(|v| !v.is_string() && !v.is_null()) {
                        return Err(type_error(bad, "string"));
                    }
                    !items.is_empty()
                }
                other => return Err(type_error(other, "[]string")),
            },
            MetaField::OwnerRefs | MetaField::ManagedFields => match &value {
                Value::Array(items) => {
                    if let Some(bad) = items.iter().find(|v| !v.is_object()) {
                        let go = if matches!(field, MetaField::OwnerRefs) {
                            "v1.OwnerReference"
                        } else {
                            "v1.ManagedFieldsEntry"
                        };
                        return Err(type_error(bad, go));
                    }
                    !items.is_empty()
                }
                other => {
                    let go = if matches!(field, MetaField::OwnerRefs) {
                        "[]v1.OwnerReference"
                    } else {
                        "[]v1.ManagedFieldsEntry"
                    };
                    return Err(type_error(other, go));
                }
            },
        };
        if !keep_it {
            continue;
        }
        let value = match (field, value) {
            // Go's decoder stores a null element as the type's zero value: `""`.
            (MetaField::StringMap, Value::Object(m)) => Value::Object(
                m.into_iter()
                    .map(|(k, v)| (k, if v.is_null() { Value::from("") } else { v }))
                    .collect(),
            ),
            (MetaField::StringList, Value::Array(items)) => Value::Array(
                items
                    .into_iter()
                    .map(|v| if v.is_null() { Value::from("") } else { v })
                    .collect(),
            ),
            (MetaField::OwnerRefs, Value::Array(refs)) => {
                Value::Array(normalize_owner_refs(refs.into_vec(), within, &mut unknown)?.into())
            }
            (MetaField::ManagedFields, Value::Array(entries)) => Value::Array(
                entries
                    .into_iter()
                    .enumerate()
                    .map(|(i, entry)| {
                        let Value::Object(entry) = entry else {
                            return Value::Null;
                        };
                        Value::Object(
                            entry
                                .into_iter()
                                .filter(|(k, v)| {
                                    let known = MANAGED_FIELDS_ENTRY.contains(&k.as_str());
                                    if !known {
                                        unknown.push(format!("metadata.managedFields[{i}].{k}"));
                                    }
                                    known && !v.is_null() && v.as_str() != Some("")
                                })
                                .collect(),
                        )
                    })
                    .collect(),
            ),
            (_, v) => v,
        };
        keep.insert(key, value);
    }
    *meta = keep;
    if meta.is_empty() {
        obj.remove("metadata");
    }
    Ok(unknown)
}

fn normalize_owner_refs(
    refs: Vec<Value>,
    within: &str,
    unknown: &mut Vec<String>,
) -> Result<Vec<Value>, String> {
    let mut out = Vec::with_capacity(refs.len());
    for (i, r) in refs.into_iter().enumerate() {
        let Value::Object(r) = r else { continue };
        let mut keep = Map::new();
        for (k, v) in r {
            match OWNER_REF_FIELDS.iter().find(|(name, _)| *name == k) {
                None => unknown.push(format!("metadata.ownerReferences[{i}].{k}")),
                Some(_) if v.is_null() => {}
                Some((_, true)) => match v {
                    Value::Bool(_) => {
                        keep.insert(k, v);
                    }
                    other => {
                        return Err(format!(
                            "json: cannot unmarshal {} into Go struct field OwnerReference.{within}ownerReferences.{k} of type bool",
                            json_type(&other)
                        ));
                    }
                },
                Some((_, false)) => match v {
                    Value::String(s) => {
                        keep.insert(k, Value::String(s));
                    }
                    other => {
                        return Err(format!(
                            "json: cannot unmarshal {} into Go struct field OwnerReference.{within}ownerReferences.{k} of type string",
                            json_type(&other)
                        ));
                    }
                },
            }
        }
        // Go always writes these four (no omitempty), so an empty one reads back as "".
        for (name, optional) in OWNER_REF_FIELDS {
            if !optional && !keep.contains_key(name) {
                keep.insert((*name).to_owned(), Value::String(String::new()));
            }
        }
        out.push(Value::Object(keep));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use crate::wire::status::Reason;

    fn obj(v: Value) -> Object {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn a_body_that_does_not_decode_is_an_error_naming_its_key_never_an_empty_object() {
        const GO_DEEPEST: usize = crate::wire::nesting::GO_MAX_DEPTH;
        let error = |body: &[u8]| decode_body("ns/a", body).unwrap_err();
        let truncated = error(br#"{"metadata":{"name":"a""#);
        assert_eq!(truncated.key, "ns/a");
        assert!(
            truncated.reason.starts_with("EOF while parsing"),
            "{truncated:?}"
        );
        // What kube-apiserver 1.36 answered for the same corruption of an etcd value.
        assert_eq!(truncated.go_message, "unexpected end of JSON input");
        assert_eq!(
            error(b"garbage").go_message,
            "invalid character 'g' looking for beginning of value"
        );
        assert_eq!(
            error(b"[1]").go_message,
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        // Deeper than serde_json reads by recursion, as deep as Go's decoder reads: decoded.
        let nested = |depth: usize| format!("{{\"a\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
        let decoded = decode_body("ns/a", nested(200).as_bytes()).expect("decoded");
        assert_eq!(crate::wire::nesting::object_depth(&decoded), 201);
        // Deeper than Go reads: Go's words.
        assert_eq!(
            error(nested(GO_DEEPEST).as_bytes()).go_message,
            "invalid character '[' exceeded max depth"
        );
        decode_body("ns/a", nested(GO_DEEPEST - 1).as_bytes()).expect("decoded");

        let api = truncated.to_api_error();
        assert_eq!(
            (api.code(), api.reason(), api.message()),
            (500, Reason::Unknown, "unexpected end of JSON input")
        );
        let watch = truncated.to_watch_error();
        assert_eq!(
            (watch.code(), watch.reason(), watch.message()),
            (
                500,
                Reason::InternalError,
                "Internal error occurred: unexpected end of JSON input"
            )
        );
        assert_eq!(decode_body("ns/a", br#"{"a":1}"#), Ok(obj(json!({"a": 1}))));
    }

    #[test]
    fn empty_omitempty_metadata_fields_are_dropped() {
        let mut o = obj(
            json!({"metadata": {"name": "a", "labels": {}, "finalizers": [], "generation": 0, "uid": ""}}),
        );
        normalize_metadata(&mut o).unwrap();
        assert_eq!(Value::Object(o), json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn unknown_metadata_fields_are_dropped_and_reported() {
        let mut o = obj(json!({"metadata": {"name": "a", "clusterName": "x"}}));
        let unknown = normalize_metadata(&mut o).unwrap();
        assert_eq!(unknown, vec!["metadata.clusterName".to_owned()]);
        assert_eq!(Value::Object(o), json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn a_label_value_that_is_not_a_string_is_a_decoding_error() {
        let mut o = obj(json!({"metadata": {"labels": {"a": 1}}}));
        let err = normalize_metadata(&mut o).unwrap_err();
        assert_eq!(
            err,
            "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"
        );
    }

    #[test]
    fn a_built_in_kind_s_metadata_errors_name_the_path_from_its_root() {
        // Recorded from kube-apiserver 1.36.2 (Go 1.27's decoder): a ConfigMap's
        // `metadata.labels.a: 1` and `metadata: "x"`; a custom resource's metadata is decoded
        // on its own (`ObjectMeta.labels`).
        let mut o = obj(json!({"metadata": {"labels": {"a": 1}}}));
        assert_eq!(
            normalize_metadata_of(&mut o, Some("ConfigMap")).unwrap_err(),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
        );
        let mut o = obj(json!({"metadata": "x"}));
        assert_eq!(
            normalize_metadata_of(&mut o, Some("ConfigMap")).unwrap_err(),
            "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"
        );
        let mut o = obj(json!({"metadata": {"ownerReferences": [{"controller": "x"}]}}));
        assert_eq!(
            normalize_metadata_of(&mut o, Some("ConfigMap")).unwrap_err(),
            "json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool"
        );
    }

    #[test]
    fn deletion_grace_period_zero_is_kept() {
        let mut o = obj(json!({"metadata": {"deletionGracePeriodSeconds": 0}}));
        normalize_metadata(&mut o).unwrap();
        assert_eq!(
            Value::Object(o),
            json!({"metadata": {"deletionGracePeriodSeconds": 0}})
        );
    }

    #[test]
    fn owner_references_get_their_always_written_fields() {
        let mut o =
            obj(json!({"metadata": {"ownerReferences": [{"kind": "X", "controller": true}]}}));
        normalize_metadata(&mut o).unwrap();
        assert_eq!(
            o["metadata"]["ownerReferences"],
            json!([{"apiVersion": "", "kind": "X", "name": "", "uid": "", "controller": true}])
        );
    }

    #[test]
    fn type_meta_is_spliced_in_front_of_a_stored_body() {
        let body = encode_body(&obj(json!({"kind": "X", "metadata": {"name": "a"}})));
        // A built-in kind is a Go type: `kind` first, as `TypeMeta` declares it.
        assert_eq!(
            String::from_utf8(with_type_meta("v1", "ConfigMap", &body)).unwrap(),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}"#
        );
        // Any other is unstructured: keys sorted.
        assert_eq!(
            String::from_utf8(with_type_meta("example.com/v1", "Widget", &body)).unwrap(),
            r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}"#
        );
        assert_eq!(
            with_type_meta("v1", "X", b"{}"),
            br#"{"apiVersion":"v1","kind":"X"}"#
        );
    }

    #[test]
    fn short_json_bodies_are_summarised_whole_and_long_ones_cut_at_30_bytes() {
        assert_eq!(summarize(br#"{"a":1}"#), r#"{"a":1}"#);
        assert_eq!(
            summarize(br#"{"apiVersion":"example.com/v1","kind":"W"}"#),
            r#"{"apiVersion":"example.com/v1" ..."#
        );
        assert_eq!(summarize(b"not json"), "6e6f74206a736f6e");
    }
}
