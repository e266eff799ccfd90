//! CEL values. Data of the object stays JSON and is read through its schema on access, as
//! apiserver's `UnstructuredToVal` does: integers as `int`, numbers as `double`, `date-time` as
//! a timestamp, object fields by their escaped names, `set` and `map` lists compared as sets
//! and maps, data of `x-kubernetes-preserve-unknown-fields` comparable only.

use std::rc::Rc;

use base64::Engine as _;
use recon_apimachinery::go_json::{go_float, go_type};
use recon_apimachinery::json::{Map, Value as Json};

use super::time::{self, Duration, Timestamp};
use super::tree::{JsonType, ListType, SNode};
use super::types::{escape, unescape};

/// An evaluation error: its message (as cel-go words it) and whether it is a "no such
/// overload" (reported differently).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct EvalError {
    pub(super) message: String,
}

impl EvalError {
    pub(super) fn new(message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into(),
        }
    }

    pub(super) fn no_overload() -> EvalError {
        EvalError::new("no such overload")
    }
}

pub(super) type Result<T> = std::result::Result<T, EvalError>;

/// A "no such overload" error.
pub(super) fn no_overload<T>() -> Result<T> {
    Err(EvalError::no_overload())
}

/// An error with `message`.
pub(super) fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(EvalError::new(message))
}

/// A CEL value; `'a` is the lifetime of the object and schema it reads.
#[derive(Debug, Clone)]
pub(super) enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Rc<str>),
    Bytes(Rc<[u8]>),
    Duration(Duration),
    Timestamp(Timestamp),
    List(List<'a>),
    Map(MapVal<'a>),
    Optional(Option<Rc<Value<'a>>>),
    /// A type, by its name.
    Type(Rc<str>),
    /// Data not described by the schema (`x-kubernetes-preserve-unknown-fields`).
    Unknown(&'a Json),
    /// A value of a Kubernetes library type (quantity, IP, CIDR, URL, semver, format).
    Ext(kube_cel::cel::Value),
}

/// A list: JSON read through its schema, or built by the expression.
#[derive(Debug, Clone)]
pub(super) enum List<'a> {
    Json(&'a [Json], &'a SNode),
    Owned(Rc<Vec<Value<'a>>>),
}

/// What decides which keys of a JSON object a map value exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MapKind {
    /// An object with properties: keys are escaped property names; nulls are absent.
    Object,
    /// `additionalProperties`: every key, as is.
    Additional,
    /// Neither: no key is visible (though all count for `size`).
    Empty,
}

/// A map: a JSON object read through its schema, or built by the expression.
#[derive(Debug, Clone)]
pub(super) enum MapVal<'a> {
    Json(&'a Map, &'a SNode, MapKind),
    Owned(Rc<Vec<(Value<'a>, Value<'a>)>>),
}

impl<'a> Value<'a> {
    pub(super) fn string(s: &str) -> Value<'a> {
        Value::String(Rc::from(s))
    }

    pub(super) fn list(items: Vec<Value<'a>>) -> Value<'a> {
        Value::List(List::Owned(Rc::new(items)))
    }

    /// `UnstructuredToVal`: a JSON value of the object as CEL sees it under `schema`.
    pub(super) fn of_json(json: &'a Json, schema: &'a SNode) -> Result<Value<'a>> {
        if json.is_null() {
            return if schema.nullable {
                Ok(Value::Null)
            } else {
                Err(EvalError::new(
                    "invalid data, got null for schema with nullable=false",
                ))
            };
        }
        if schema.int_or_string {
            return match json {
                Json::String(s) => Ok(Value::string(s)),
                Json::Number(n) if n.is_i64() => Ok(Value::Int(n.as_i64().unwrap_or(0))),
                _ => Err(EvalError::new(
                    "invalid data, expected XIntOrString value to be either a string or integer",
                )),
            };
        }
        match schema.json_type {
            JsonType::Object => {
                let Json::Object(m) = json else {
                    return Err(EvalError::new(
                        "invalid data, expected a map for the provided schema with type=object",
                    ));
                };
                let schema = if schema.embedded {
                    schema.view()
                } else {
                    schema
                };
                let kind = if schema.embedded || !schema.properties.is_empty() {
                    MapKind::Object
                } else if schema.additional.is_some() {
                    MapKind::Additional
                } else {
                    MapKind::Empty
                };
                Ok(Value::Map(MapVal::Json(m, schema, kind)))
            }
            JsonType::Array => {
                let Json::Array(items) = json else {
                    return Err(EvalError::new(
                        "invalid data, expected an array for the provided schema with type=array",
                    ));
                };
                if schema.items.is_none() {
                    return Err(EvalError::new(
                        "invalid array type, expected Items with a non-empty Schema",
                    ));
                }
                if let ListType::Other(t) = &schema.list_type {
                    return Err(EvalError::new(format!(
                        "invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got {t}"
                    )));
                }
                Ok(Value::List(List::Json(items, schema)))
            }
            JsonType::String => {
                let Json::String(s) = json else {
                    return Err(EvalError::new(format!(
                        "invalid data, expected string, got {}",
                        go_type(json)
                    )));
                };
                match schema.format.as_str() {
                    "duration" => time::parse_schema_duration(s)
                        .map(Value::Duration)
                        .map_err(|e| EvalError::new(format!("Invalid duration {s}: {e}"))),
                    "date" => time::parse_date(s).map(Value::Timestamp).ok_or_else(|| {
                        EvalError::new(format!(
                            "Invalid date formatted string {s}: parsing time {:?} as \"2006-01-02\": cannot parse",
                            s
                        ))
                    }),
                    "date-time" => time::parse_date_time(s).map(Value::Timestamp).ok_or_else(|| {
                        EvalError::new(format!("Invalid date-time formatted string {s}"))
                    }),
                    "byte" => base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map(|b| Value::Bytes(Rc::from(b)))
                        .map_err(|e| EvalError::new(format!("Invalid byte formatted string {s}: {e}"))),
                    _ => Ok(Value::string(s)),
                }
            }
            JsonType::Number => match json {
                Json::Number(n) => Ok(Value::Double(
                    n.as_i64()
                        .map_or_else(|| n.as_f64().unwrap_or(0.0), |i| i as f64),
                )),
                _ => Err(EvalError::new(format!(
                    "invalid data, expected float, got {}",
                    go_type(json)
                ))),
            },
            JsonType::Integer => match json {
                Json::Number(n) if n.is_i64() => Ok(Value::Int(n.as_i64().unwrap_or(0))),
                _ => Err(EvalError::new(format!(
                    "invalid data, expected int, got {}",
                    go_type(json)
                ))),
            },
            JsonType::Boolean => match json {
                Json::Bool(b) => Ok(Value::Bool(*b)),
                _ => Err(EvalError::new(format!(
                    "invalid data, expected bool, got {}",
                    go_type(json)
                ))),
            },
            JsonType::Other if schema.preserve_unknown => Ok(Value::Unknown(json)),
            JsonType::Other => Err(EvalError::new(format!(
                "invalid type, expected object, array, number, integer, boolean or string, or no type with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true, got {}",
                schema.ty
            ))),
        }
    }

    /// cel-go's type name of the value (`type(x)`).
    pub(super) fn type_name(&self) -> Rc<str> {
        Rc::from(match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Optional(_) => "optional_type",
            Value::Type(_) => "type",
            Value::Unknown(_) => "unknown",
            Value::Ext(v) => return Rc::from(ext_type_name(v)),
        })
    }
}

/// `%v` of a value in an error message (`no such key: a`).
pub(super) fn display(v: &Value<'_>) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => go_float(*d),
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Duration(d) => d.seconds_text(),
        Value::Timestamp(t) => t.rfc3339(),
        Value::Type(t) => t.to_string(),
        other => other.type_name().to_string(),
    }
}

/// The CEL type name of a library value.
pub(super) fn ext_type_name(v: &kube_cel::cel::Value) -> String {
    match v {
        kube_cel::cel::Value::Opaque(o) => match o.runtime_type_name() {
            "kubernetes.Quantity"
            | "net.IP"
            | "net.CIDR"
            | "kubernetes.URL"
            | "kubernetes.Semver"
            | "kubernetes.NamedFormat" => o.runtime_type_name().to_owned(),
            other => other.to_owned(),
        },
        _ => "dyn".to_owned(),
    }
}

impl<'a> List<'a> {
    pub(super) fn len(&self) -> usize {
        match self {
            List::Json(items, _) => items.len(),
            List::Owned(items) => items.len(),
        }
    }

    pub(super) fn get(&self, i: usize) -> Option<Result<Value<'a>>> {
        match self {
            List::Json(items, schema) => {
                let item = items.get(i)?;
                let item_schema = schema.items.as_deref()?;
                Some(Value::of_json(item, item_schema))
            }
            List::Owned(items) => items.get(i).cloned().map(Ok),
        }
    }

    /// The elements, each read (an element that cannot be read is an error).
    pub(super) fn items(&self) -> Vec<Result<Value<'a>>> {
        (0..self.len()).filter_map(|i| self.get(i)).collect()
    }

    /// The list type the elements are concatenated by.
    pub(super) fn list_type(&self) -> Option<&'a ListType> {
        match self {
            List::Json(_, schema) => Some(&schema.list_type),
            List::Owned(_) => None,
        }
    }
}

impl<'a> MapVal<'a> {
    /// `Size()`: every key of a JSON object counts.
    pub(super) fn len(&self) -> usize {
        match self {
            MapVal::Json(m, ..) => m.len(),
            MapVal::Owned(entries) => entries.len(),
        }
    }

    /// `Find`: the value at `key`, `None` when absent.
    pub(super) fn find(&self, key: &Value<'a>) -> Option<Result<Value<'a>>> {
        match self {
            MapVal::Json(m, schema, kind) => {
                let Value::String(k) = key else {
                    return Some(Err(EvalError::no_overload()));
                };
                match kind {
                    MapKind::Object => {
                        let name = unescape(k)?;
                        let v = m.get(&name)?;
                        if v.is_null() {
                            return None;
                        }
                        let prop = schema.properties.get(&name)?;
                        Some(Value::of_json(v, prop))
                    }
                    MapKind::Additional => {
                        let v = m.get(k)?;
                        let prop = schema.additional.as_deref()?;
                        Some(Value::of_json(v, prop))
                    }
                    MapKind::Empty => None,
                }
            }
            MapVal::Owned(entries) => entries
                .iter()
                .find(|(k, _)| key_equal(k, key))
                .map(|(_, v)| Ok(v.clone())),
        }
    }

    /// The keys iteration visits (for an object, its known properties, escaped).
    pub(super) fn keys(&self) -> Vec<Value<'a>> {
        match self {
            MapVal::Json(m, schema, kind) => m
                .keys()
                .filter_map(|k| match kind {
                    MapKind::Object => schema
                        .properties
                        .contains_key(k)
                        .then(|| Value::string(&escape(k).unwrap_or_else(|| k.clone()))),
                    MapKind::Additional => Some(Value::string(k)),
                    MapKind::Empty => None,
                })
                .collect(),
            MapVal::Owned(entries) => entries.iter().map(|(k, _)| k.clone()).collect(),
        }
    }
}

/// Map keys compare by value, numbers across int and uint.
/// The items of a list, each read (the first that cannot be read is the error).
pub(super) fn items<'a>(l: &List<'a>) -> Result<Vec<Value<'a>>> {
    l.items().into_iter().collect()
}

/// The entries of a map value, for formatting.
pub(super) fn entries<'a>(m: &MapVal<'a>) -> Result<Vec<(Value<'a>, Value<'a>)>> {
    let mut out = Vec::new();
    for k in m.keys() {
        if let Some(v) = m.find(&k) {
            out.push((k, v?));
        }
    }
    Ok(out)
}

fn key_equal(a: &Value<'_>, b: &Value<'_>) -> bool {
    matches!(equal(a, b), Ok(true))
}

/// cel-go's `Equal` of `a` with `b` (the left operand's kind decides, as `a.Equal(b)`):
/// numbers compare across types, `set` and `map` lists ignore order, objects compare their
/// known fields and fall back to JSON equality for the rest.
///
/// Values read through a schema nest as deep as the object (as deep as Go reads): the lists
/// and maps being compared are a list of their own, each with how far it got, rather than
/// the call stack. A comparison stops at the first pair found unequal, or the first error, in
/// the order a recursion would take.
pub(super) fn equal(a: &Value<'_>, b: &Value<'_>) -> Result<bool> {
    let mut stack = match begin(a, b)? {
        Begun::Done(eq) => return Ok(eq),
        Begun::Frame(frame) => vec![frame],
    };
    // What the comparison the frame on top asked for found.
    let mut found = None;
    while let Some(top) = stack.last_mut() {
        match top.resume(found.take())? {
            Next::Compare(x, y) => match begin(&x, &y)? {
                Begun::Done(eq) => found = Some(eq),
                Begun::Frame(frame) => stack.push(frame),
            },
            Next::Done(eq) => {
                stack.pop();
                found = Some(eq);
            }
        }
    }
    Ok(found == Some(true))
}

/// A comparison begun: decided at once, or a list or map to compare member by member.
enum Begun<'v> {
    Done(bool),
    Frame(Frame<'v>),
}

/// What a list or map comparison asks for next.
enum Next<'v> {
    /// The comparison of two values below it (`equal(x, y)`).
    Compare(Value<'v>, Value<'v>),
    /// It is decided.
    Done(bool),
}

/// Two lists or maps of the same size being compared.
enum Frame<'v> {
    /// Lists compared item by item, the items read beforehand.
    Ordered(
        std::vec::IntoIter<Result<Value<'v>>>,
        std::vec::IntoIter<Result<Value<'v>>>,
    ),
    Set(SetFrame<'v>),
    MapList(MapListFrame<'v>),
    /// A JSON object (its fields left to compare, its schema and kind) with another map.
    Object(
        MapVal<'v>,
        recon_apimachinery::json::map::Iter<'v>,
        &'v SNode,
        MapKind,
        MapVal<'v>,
    ),
    /// A map the expression built (its entries, the next to compare) with another map.
    Entries(Rc<Vec<(Value<'v>, Value<'v>)>>, usize, MapVal<'v>),
}

/// A `set` list with another list: every element of the other is in it (`position`), and as
/// many distinct ones as it has.
struct SetFrame<'v> {
    xs: Vec<Value<'v>>,
    ys: std::vec::IntoIter<Result<Value<'v>>>,
    /// The element of the other list being looked for, and the candidate compared with it.
    y: Option<Value<'v>>,
    candidate: usize,
    seen: Vec<usize>,
    /// Counting the distinct elements: the element, the one before it compared with it, and
    /// how many were distinct so far.
    distinct: Option<(usize, usize, usize)>,
}

/// A `map` list with another: items matched by their key fields (looked up by their escaped
/// names, as the real server does), whatever their order.
struct MapListFrame<'v> {
    a_items: &'v [Json],
    item_schema: &'v SNode,
    b_items: std::slice::Iter<'v, Json>,
    b_item_schema: &'v SNode,
    escaped: Vec<String>,
    /// The index of the item being compared, and those matched.
    comparing: usize,
    matched: Vec<usize>,
}

/// The first step of `equal(a, b)`.
fn begin<'v>(a: &Value<'v>, b: &Value<'v>) -> Result<Begun<'v>> {
    use Value as V;
    let (mut a, mut b) = (a, b);
    loop {
        return Ok(Begun::Done(match (a, b) {
            (V::Null, V::Null) => true,
            (V::Null, _) | (_, V::Null) => false,
            (V::Bool(x), V::Bool(y)) => x == y,
            (V::String(x), V::String(y)) => x == y,
            (V::Bytes(x), V::Bytes(y)) => x == y,
            (V::Duration(x), V::Duration(y)) => x == y,
            (V::Timestamp(x), V::Timestamp(y)) => x == y,
            (V::Type(x), V::Type(y)) => x == y,
            (V::Int(_) | V::Uint(_) | V::Double(_), V::Int(_) | V::Uint(_) | V::Double(_)) => {
                numeric_cmp(a, b) == Some(std::cmp::Ordering::Equal)
            }
            (V::List(x), V::List(y)) => return begin_lists(x, y),
            (V::Map(x), V::Map(y)) => return Ok(begin_maps(x, y)),
            (V::Optional(x), V::Optional(y)) => match (x, y) {
                (None, None) => true,
                (Some(x), Some(y)) => {
                    (a, b) = (&**x, &**y);
                    continue;
                }
                _ => false,
            },
            (V::Unknown(x), other) => unknown_equal(x, other),
            (other, V::Unknown(y)) => unknown_equal(y, other),
            (V::Ext(x), V::Ext(y)) => x == y,
            _ => false,
        }));
    }
}

fn begin_lists<'v>(a: &List<'v>, b: &List<'v>) -> Result<Begun<'v>> {
    if a.len() != b.len() {
        return Ok(Begun::Done(false));
    }
    let ordered = || Begun::Frame(Frame::Ordered(a.items().into_iter(), b.items().into_iter()));
    let frame = match a {
        List::Json(_, schema) if matches!(schema.list_type, ListType::Set) => {
            let xs: Vec<Value<'_>> = a.items().into_iter().collect::<Result<_>>()?;
            Frame::Set(SetFrame {
                xs,
                ys: b.items().into_iter(),
                y: None,
                candidate: 0,
                seen: Vec::new(),
                distinct: None,
            })
        }
        List::Json(a_items, schema) => {
            let (ListType::Map(keys), Some(item_schema)) =
                (&schema.list_type, schema.items.as_deref())
            else {
                return Ok(ordered());
            };
            let List::Json(b_items, b_schema) = b else {
                return Ok(Begun::Done(a_items.is_empty()));
            };
            let Some(b_item_schema) = b_schema.items.as_deref() else {
                return Ok(Begun::Done(false));
            };
            Frame::MapList(MapListFrame {
                a_items,
                item_schema,
                b_items: b_items.iter(),
                b_item_schema,
                escaped: keys
                    .iter()
                    .map(|k| escape(k).unwrap_or_else(|| k.clone()))
                    .collect(),
                comparing: 0,
                matched: Vec::new(),
            })
        }
        List::Owned(_) => return Ok(ordered()),
    };
    Ok(Begun::Frame(frame))
}

fn begin_maps<'v>(a: &MapVal<'v>, b: &MapVal<'v>) -> Begun<'v> {
    if a.len() != b.len() {
        return Begun::Done(false);
    }
    Begun::Frame(match a {
        MapVal::Json(m, schema, kind) => {
            let m: &'v Map = m;
            Frame::Object(a.clone(), m.iter(), schema, *kind, b.clone())
        }
        MapVal::Owned(entries) => Frame::Entries(entries.clone(), 0, b.clone()),
    })
}

impl<'v> Frame<'v> {
    /// Goes on with `found`, what the comparison it asked for last found (`None` at first).
    fn resume(&mut self, found: Option<bool>) -> Result<Next<'v>> {
        match self {
            Frame::Set(set) => set.resume(found),
            Frame::MapList(list) => list.resume(found),
            // The others are decided by the first pair found unequal.
            _ if found == Some(false) => Ok(Next::Done(false)),
            Frame::Ordered(xs, ys) => match (xs.next(), ys.next()) {
                (Some(x), Some(y)) => Ok(Next::Compare(x?, y?)),
                _ => Ok(Next::Done(true)),
            },
            Frame::Object(a, fields, schema, kind, b) => {
                for (key, raw) in fields.by_ref() {
                    let known = match kind {
                        MapKind::Object => schema.properties.contains_key(key),
                        MapKind::Additional => schema.additional.is_some(),
                        MapKind::Empty => false,
                    };
                    if known {
                        let k = match kind {
                            MapKind::Object => {
                                Value::string(&escape(key).unwrap_or_else(|| key.clone()))
                            }
                            _ => Value::string(key),
                        };
                        match (a.find(&k), b.find(&k)) {
                            (None, None) => {}
                            (Some(x), Some(y)) => return Ok(Next::Compare(x?, y?)),
                            _ => return Ok(Next::Done(false)),
                        }
                    } else {
                        // A field the schema does not describe: compared as data.
                        let MapVal::Json(other, ..) = b else {
                            return Err(EvalError::no_overload());
                        };
                        if let Some(o) = other.get(key)
                            && o != raw
                        {
                            return Ok(Next::Done(false));
                        }
                    }
                }
                Ok(Next::Done(true))
            }
            Frame::Entries(entries, next, b) => {
                let Some((k, v)) = entries.get(*next) else {
                    return Ok(Next::Done(true));
                };
                *next += 1;
                match b.find(k) {
                    Some(other) => Ok(Next::Compare(v.clone(), other?)),
                    None => Ok(Next::Done(false)),
                }
            }
        }
    }
}

impl<'v> SetFrame<'v> {
    fn resume(&mut self, found: Option<bool>) -> Result<Next<'v>> {
        if let Some((i, j, distinct)) = &mut self.distinct {
            // Whether `xs[i]` is among `xs[..i]`.
            match found {
                Some(true) => (*i, *j) = (*i + 1, 0),
                Some(false) => *j += 1,
                None => {}
            }
            loop {
                let Some(x) = self.xs.get(*i) else {
                    return Ok(Next::Done(self.seen.len() == *distinct));
                };
                if let Some(earlier) = self.xs.get(*j).filter(|_| *j < *i) {
                    return Ok(Next::Compare(earlier.clone(), x.clone()));
                }
                (*i, *j, *distinct) = (*i + 1, 0, *distinct + 1);
            }
        }
        // Where `y` is in `xs`.
        match found {
            Some(true) => {
                if !self.seen.contains(&self.candidate) {
                    self.seen.push(self.candidate);
                }
                self.y = None;
            }
            Some(false) => self.candidate += 1,
            None => {}
        }
        if self.y.is_none() {
            match self.ys.next() {
                Some(y) => {
                    self.y = Some(y?);
                    self.candidate = 0;
                }
                None => {
                    self.distinct = Some((0, 0, 0));
                    return self.resume(None);
                }
            }
        }
        match (self.xs.get(self.candidate), &self.y) {
            (Some(x), Some(y)) => Ok(Next::Compare(x.clone(), y.clone())),
            _ => Ok(Next::Done(false)),
        }
    }
}

impl<'v> MapListFrame<'v> {
    fn resume(&mut self, found: Option<bool>) -> Result<Next<'v>> {
        match found {
            Some(false) => return Ok(Next::Done(false)),
            Some(true) if !self.matched.contains(&self.comparing) => {
                self.matched.push(self.comparing);
            }
            _ => {}
        }
        let escaped = &self.escaped;
        let key_of = |item: &Json| -> Vec<Option<Json>> {
            escaped.iter().map(|k| item.get(k).cloned()).collect()
        };
        if let Some(y) = self.b_items.next() {
            let wanted = key_of(y);
            let Some(i) = self.a_items.iter().position(|x| key_of(x) == wanted) else {
                return Ok(Next::Done(false));
            };
            self.comparing = i;
            let x = Value::of_json(&self.a_items[i], self.item_schema)?;
            return Ok(Next::Compare(x, Value::of_json(y, self.b_item_schema)?));
        }
        let mut keys: Vec<Vec<Option<Json>>> = Vec::new();
        for x in self.a_items {
            let k = key_of(x);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        Ok(Next::Done(self.matched.len() == keys.len()))
    }
}

/// Numbers of any of the three kinds, compared by value.
pub(super) fn numeric_cmp(a: &Value<'_>, b: &Value<'_>) -> Option<std::cmp::Ordering> {
    use Value as V;
    match (a, b) {
        (V::Int(x), V::Int(y)) => Some(x.cmp(y)),
        (V::Uint(x), V::Uint(y)) => Some(x.cmp(y)),
        (V::Int(x), V::Uint(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (V::Uint(x), V::Int(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (V::Double(x), V::Double(y)) => x.partial_cmp(y),
        (V::Int(x), V::Double(y)) => (*x as f64).partial_cmp(y),
        (V::Double(x), V::Int(y)) => x.partial_cmp(&(*y as f64)),
        (V::Uint(x), V::Double(y)) => (*x as f64).partial_cmp(y),
        (V::Double(x), V::Uint(y)) => x.partial_cmp(&(*y as f64)),
        _ => None,
    }
}

/// The index of the first element equal to `v`.
pub(super) fn position(items: &[Value<'_>], v: &Value<'_>) -> Result<Option<usize>> {
    for (i, x) in items.iter().enumerate() {
        if equal(x, v)? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `equality.Semantic.DeepEqual` of preserved data with another value's Go form.
fn unknown_equal(json: &Json, other: &Value<'_>) -> bool {
    json_equals_value(json, other)
}

/// Whether JSON data equals a value, as Go's `DeepEqual` of the data with the value's Go form.
fn json_equals_value(json: &Json, v: &Value<'_>) -> bool {
    match (json, v) {
        (j, Value::Unknown(o)) => j == *o,
        (Json::String(s), Value::String(t)) => s.as_str() == &**t,
        (Json::Bool(b), Value::Bool(c)) => b == c,
        (Json::Number(n), Value::Int(i)) => n.as_i64() == Some(*i),
        (Json::Number(n), Value::Double(d)) => !n.is_i64() && n.as_f64() == Some(*d),
        (Json::Null, Value::Null) => true,
        (Json::Array(items), Value::List(List::Json(other, _))) => items.as_slice() == *other,
        (Json::Object(m), Value::Map(MapVal::Json(other, ..))) => m == *other,
        _ => false,
    }
}
