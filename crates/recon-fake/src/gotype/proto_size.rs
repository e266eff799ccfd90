//! The size of a built-in object as etcd holds it: kube-apiserver stores built-in kinds as
//! protobuf (`k8s\0` and a `runtime.Unknown` wrapping the object's gogo-protobuf encoding), and
//! a write too large for etcd's gRPC client quotes the size of the transaction holding it.
//!
//! The fields of each struct, their numbers and shapes are read from the Go sources
//! (`data/go-proto-fields.json`, written by `xtask/record-go-proto-fields.py`). The generated
//! `Size` methods write every field that is not a pointer, a slice, a map or a `[]byte`, even
//! at its zero value, so a field the JSON leaves out still counts; the types with a protobuf
//! form of their own (`Time`, `MicroTime`, `Duration`, `Quantity`, `IntOrString`,
//! `RawExtension` / `FieldsV1`) are sized as their `Size` methods size them.

use std::collections::HashMap;
use std::sync::LazyLock;

use recon_apimachinery::json::{Map, Value};

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::gotime::{self, Layout};

const FIELDS: &str = include_str!("../../data/go-proto-fields.json");

/// How a field is written.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    String,
    Int,
    Bool,
    Double,
    /// `[]byte`: base64 in JSON, written when not nil.
    Bytes,
    /// A struct, by schema name: always written.
    Message(String),
    Time,
    MicroTime,
    Duration,
    Quantity,
    IntOrString,
    /// `runtime.RawExtension`, `metav1.FieldsV1`: the JSON bytes.
    Raw,
    /// A pointer: written when set.
    Ptr(Box<Shape>),
    List(Box<Shape>),
    /// String keys.
    Map(Box<Shape>),
}

/// One field: its JSON name (`None` for a struct inlined in JSON), number and shape.
type Field = (Option<String>, u64, Shape);

static STRUCTS: LazyLock<HashMap<String, Vec<Field>>> = LazyLock::new(|| {
    let data: Value = serde_json::from_str(FIELDS).unwrap_or(Value::Null);
    let mut structs = HashMap::new();
    for (name, fields) in data["structs"].as_object().into_iter().flatten() {
        let fields = fields
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let json = f.get(0)?.as_str()?;
                let number = f.get(1)?.as_u64()?;
                let shape = shape(f.get(2)?)?;
                Some(((!json.is_empty()).then(|| json.to_owned()), number, shape))
            })
            .collect();
        structs.insert(name.clone(), fields);
    }
    structs
});

fn shape(v: &Value) -> Option<Shape> {
    Some(match v {
        Value::String(s) => match s.as_str() {
            "string" => Shape::String,
            "int" => Shape::Int,
            "bool" => Shape::Bool,
            "double" => Shape::Double,
            "bytes" => Shape::Bytes,
            "Time" => Shape::Time,
            "MicroTime" => Shape::MicroTime,
            "Duration" => Shape::Duration,
            "Quantity" => Shape::Quantity,
            "IntOrString" => Shape::IntOrString,
            "Raw" => Shape::Raw,
            name => Shape::Message(name.to_owned()),
        },
        Value::Object(m) => {
            let (kind, inner) = m.iter().next()?;
            let inner = Box::new(shape(inner)?);
            match kind.as_str() {
                "ptr" => Shape::Ptr(inner),
                "list" => Shape::List(inner),
                "map" => Shape::Map(inner),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The bytes etcd holds for `obj`, of Go struct `schema` and type `api_version`/`kind`, as
/// stored (`resourceVersion` cleared): `None` for a type without recorded fields.
pub(crate) fn stored_len(schema: &str, api_version: &str, kind: &str, obj: &Map) -> Option<usize> {
    let raw = message_len(STRUCTS.get(schema)?, Some(obj));
    // runtime.Unknown{TypeMeta{apiVersion, kind}, Raw, ContentEncoding, ContentType}.
    let type_meta = delimited(1, api_version.len()) + delimited(2, kind.len());
    let unknown = delimited(1, type_meta) + delimited(2, raw) + delimited(3, 0) + delimited(4, 0);
    Some(4 + unknown)
}

/// How many bytes protobuf's varint encoding of `n` takes.
pub(crate) fn varint_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

fn tag_len(number: u64) -> usize {
    varint_len(number << 3)
}

/// A length-delimited field of `len` bytes.
fn delimited(number: u64, len: usize) -> usize {
    tag_len(number) + varint_len(len as u64) + len
}

/// A struct's encoding; `obj` `None` is its zero value.
///
/// A message's length prefix needs its size first, and messages nest as deep as the object (a
/// CRD's `JSONSchemaProps` holds its own type): sizes add up on a list of open messages rather
/// than on the call stack.
fn message_len(fields: &[Field], obj: Option<&Map>) -> usize {
    let mut open = vec![0];
    let mut work = Vec::new();
    push_fields(&mut work, fields, obj);
    while let Some(next) = work.pop() {
        let len = match next {
            Work::Open(len) => {
                open.push(len);
                continue;
            }
            Work::Close(number) => delimited(number, open.pop().unwrap_or_default()),
            Work::Field {
                number,
                shape,
                value,
            } => field_len(number, shape, value, &mut work),
        };
        if let Some(sum) = open.last_mut() {
            *sum += len;
        }
    }
    open.pop().unwrap_or_default()
}

/// What sizing a message still has to do.
enum Work<'a> {
    /// Field `number` of `shape` holding `value` (`None`: unset), added to the innermost open
    /// message.
    Field {
        number: u64,
        shape: &'a Shape,
        value: Option<&'a dyn AsValue>,
    },
    /// A message (or map entry) starts, with this many bytes already.
    Open(usize),
    /// The innermost open message ends: it is field `number` of the one around it.
    Close(u64),
}

/// Queues the fields of a struct whose members are in `obj` (`None`: its zero value).
fn push_fields<'a>(work: &mut Vec<Work<'a>>, fields: &'a [Field], obj: Option<&'a Map>) {
    work.extend(fields.iter().map(|(json, number, shape)| {
        let value = match json {
            // Inlined in JSON: the struct's members are the parent's.
            None => obj.map(|o| o as &dyn AsValue),
            Some(name) => obj
                .and_then(|o| o.get(name))
                .filter(|v| !v.is_null())
                .map(|v| v as &dyn AsValue),
        };
        Work::Field {
            number: *number,
            shape,
            value,
        }
    }));
}

/// A field's value: a JSON value, or the parent object of an inlined struct.
trait AsValue {
    fn object(&self) -> Option<&Map>;
    fn value(&self) -> Option<&Value>;
}

impl AsValue for Value {
    fn object(&self) -> Option<&Map> {
        self.as_object()
    }
    fn value(&self) -> Option<&Value> {
        Some(self)
    }
}

impl AsValue for Map {
    fn object(&self) -> Option<&Map> {
        Some(self)
    }
    fn value(&self) -> Option<&Value> {
        None
    }
}

/// The bytes of field `number` of `shape` holding `value` (`None`: unset) that are known now;
/// what it holds of lists, maps and messages is queued on `work`.
fn field_len<'a>(
    number: u64,
    shape: &'a Shape,
    value: Option<&'a dyn AsValue>,
    work: &mut Vec<Work<'a>>,
) -> usize {
    let item = |item: &'a Value| (!item.is_null()).then_some(item as &dyn AsValue);
    match shape {
        Shape::Ptr(inner) => {
            if value.is_some() {
                work.push(Work::Field {
                    number,
                    shape: inner,
                    value,
                });
            }
            0
        }
        Shape::List(inner) => {
            let items = value.and_then(|v| v.value()).and_then(Value::as_array);
            work.extend(items.into_iter().flatten().map(|i| Work::Field {
                number,
                shape: inner,
                value: item(i),
            }));
            0
        }
        Shape::Map(inner) => {
            for (key, value) in value.and_then(|v| v.object()).into_iter().flatten() {
                // An entry is a message of the key (1) and the value (2).
                work.push(Work::Close(number));
                work.push(Work::Field {
                    number: 2,
                    shape: inner,
                    value: item(value),
                });
                work.push(Work::Open(delimited(1, key.len())));
            }
            0
        }
        Shape::Message(schema) => {
            let fields = STRUCTS.get(schema).map(Vec::as_slice).unwrap_or_default();
            work.push(Work::Close(number));
            push_fields(work, fields, value.and_then(|v| v.object()));
            work.push(Work::Open(0));
            0
        }
        Shape::Bytes => value
            .and_then(|v| v.value())
            .and_then(Value::as_str)
            .map_or(0, |b64| delimited(number, base64_len(b64))),
        Shape::String => {
            let text = value.and_then(|v| v.value()).and_then(Value::as_str);
            delimited(number, text.map_or(0, str::len))
        }
        Shape::Int => {
            let n = value.and_then(|v| v.value()).map_or(0, int_of);
            tag_len(number) + varint_len(n as u64)
        }
        Shape::Bool => tag_len(number) + 1,
        Shape::Double => tag_len(number) + 8,
        Shape::Time | Shape::MicroTime => {
            let layout = if *shape == Shape::Time {
                Layout::Time
            } else {
                Layout::MicroTime
            };
            let at = value
                .and_then(|v| v.value())
                .and_then(Value::as_str)
                .and_then(|s| gotime::parse(layout, s).ok());
            // A zero time writes nothing; Timestamp{seconds, nanos} otherwise.
            let len = at.map_or(0, |t| {
                let nanos = if layout == Layout::Time {
                    0
                } else {
                    t.subsec_nanosecond()
                };
                1 + varint_len(t.as_second() as u64) + 1 + varint_len(nanos as u64)
            });
            delimited(number, len)
        }
        Shape::Duration => {
            let nanos = value
                .and_then(|v| v.value())
                .and_then(Value::as_str)
                .and_then(gotime::parse_duration)
                .unwrap_or(0);
            delimited(number, 1 + varint_len(nanos as u64))
        }
        Shape::Quantity => {
            let text = match value.and_then(|v| v.value()) {
                Some(Value::String(s)) => s.len(),
                Some(other) => go_json(other).len(),
                None => 1, // "0"
            };
            delimited(number, delimited(1, text))
        }
        Shape::IntOrString => {
            let (kind, int, text) = match value.and_then(|v| v.value()) {
                Some(Value::String(s)) => (1u64, 0i64, s.len()),
                Some(other) => (0, int_of(other), 0),
                None => (0, 0, 0),
            };
            let len = 1 + varint_len(kind) + 1 + varint_len(int as u64) + delimited(3, text);
            delimited(number, len)
        }
        Shape::Raw => {
            let len = value
                .and_then(|v| v.value())
                .map_or(0, |v| delimited(1, go_json(v).len()));
            delimited(number, len)
        }
    }
}

fn int_of(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_f64().map(|f| f as i64))
        .unwrap_or(0)
}

/// The bytes a canonical (padded) base64 text decodes to.
fn base64_len(text: &str) -> usize {
    let chars = text.bytes().filter(|b| !matches!(b, b'\r' | b'\n')).count();
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    (chars / 4 * 3).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn every_struct_of_a_deployment_is_recorded() {
        for name in [
            "io.k8s.api.apps.v1.Deployment",
            "io.k8s.api.core.v1.PodSpec",
            "io.k8s.api.core.v1.Container",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        ] {
            assert!(STRUCTS.contains_key(name), "{name}");
        }
    }

    #[test]
    fn a_config_map_is_sized_as_gogo_protobuf_writes_it() {
        // ObjectMeta{name: "c"} = 7 always-written fields at zero + name + creationTimestamp;
        // by hand: name 3, generateName 2, namespace 2, selfLink 2, uid 2, resourceVersion 2,
        // generation 2, creationTimestamp 2 = 17; ConfigMap: metadata 2 + 17, data {"k":"v"}
        // entry 1 + 1 + (3 + 3) = 8, immutable unset (a pointer) = 27.
        let obj = json!({"metadata": {"name": "c"}, "data": {"k": "v"}});
        let raw = message_len(&STRUCTS["io.k8s.api.core.v1.ConfigMap"], obj.as_object());
        assert_eq!(raw, 27);
    }

    // A CRD schema nests `JSONSchemaProps` in itself as deep as Go reads (10,000 JSON
    // levels): sized on a test thread's stack, to what each level adds to the one inside it.
    #[test]
    fn a_schema_nested_as_deep_as_go_reads_is_sized_level_by_level() {
        const PROPS: &str =
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
        const LEVELS: usize = 4_999;
        use crate::wire::nesting::deep_text::{nested_schema, read};
        let deep = read(&nested_schema(LEVELS, r#"{"type":"string"}"#));
        let fields = &STRUCTS[PROPS];
        let leaf = json!({"type": "string"});
        let object = json!({"type": "object"});
        let mut expected = message_len(fields, leaf.as_object());
        for _ in 0..LEVELS {
            // `properties` (29) holds one entry: the key "a" (1) and the schema inside (2).
            let entry = delimited(1, 1) + delimited(2, expected);
            expected = message_len(fields, object.as_object()) + delimited(29, entry);
        }
        assert_eq!(message_len(fields, deep.as_object()), expected);
    }

    /// Objects as kube-apiserver 1.36.2 returned them on create, and the bytes etcd held for
    /// each (read from etcd's gRPC gateway).
    const SAMPLES: &str = include_str!("proto_size_samples.json");

    #[test]
    fn objects_a_real_server_stored_are_sized_to_the_byte() {
        let samples: Vec<Value> = serde_json::from_str(SAMPLES).unwrap_or_default();
        assert_eq!(samples.len(), 4);
        for sample in samples {
            let mut obj = sample["object"].as_object().cloned().unwrap_or_default();
            if let Some(Value::Object(metadata)) = obj.get_mut("metadata") {
                metadata.remove("resourceVersion");
            }
            let text = |k: &str| obj[k].as_str().unwrap_or_default().to_owned();
            let schema = sample["schema"].as_str().unwrap_or_default();
            assert_eq!(
                stored_len(schema, &text("apiVersion"), &text("kind"), &obj),
                sample["etcdBytes"].as_u64().map(|n| n as usize),
                "{schema}"
            );
        }
    }
}
