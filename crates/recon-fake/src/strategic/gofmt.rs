//! How the Go code sees JSON values: their dynamic types, `==` on
//! `interface{}` values, use as map keys, and `fmt` printing (`%v`, `%s`),
//! which several upstream error messages embed.
//!
//! The apiserver decodes the patch with `sigs.k8s.io/json`
//! `UnmarshalCaseSensitivePreserveInts`: a number without `.` that fits an
//! `int64` becomes `int64`, every other number `float64`
//! (`internal/golang/encoding/json/decode.go` `convertNumber`). The stored
//! object comes from `ToUnstructured`, where integer fields are `int64` too.

use recon_apimachinery::go_json::go_float;
use recon_apimachinery::json::{Event, Map, Root, Value, walk};

use super::error::Fault;

/// The dynamic Go type of a decoded JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GoType {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Map,
    Slice,
}

/// The Go type the decoder gives `value`.
pub(super) fn go_type(value: &Value) -> GoType {
    match value {
        Value::Null => GoType::Nil,
        Value::Bool(_) => GoType::Bool,
        Value::Number(n) if n.is_i64() => GoType::Int,
        Value::Number(_) => GoType::Float,
        Value::String(_) => GoType::String,
        Value::Array(_) => GoType::Slice,
        Value::Object(_) => GoType::Map,
    }
}

/// `reflect.TypeOf(v)` printed with `%s`, as `mergepatch.ErrBadArgType` does.
pub(super) fn type_name(value: &Value) -> &'static str {
    match go_type(value) {
        GoType::Nil => "%!s(<nil>)",
        GoType::Bool => "bool",
        GoType::Int => "int64",
        GoType::Float => "float64",
        GoType::String => "string",
        GoType::Map => "map[string]interface {}",
        GoType::Slice => "[]interface {}",
    }
}

fn uncomparable(kind: GoType) -> &'static str {
    if kind == GoType::Map {
        "map[string]interface {}"
    } else {
        "[]interface {}"
    }
}

/// Go's `a == b` on two `interface{}` values: false for different dynamic
/// types, a runtime panic for two maps or two slices.
pub(super) fn go_eq(a: &Value, b: &Value) -> Result<bool, Fault> {
    let kind = go_type(a);
    if kind != go_type(b) {
        return Ok(false);
    }
    match kind {
        GoType::Nil => Ok(true),
        GoType::Int => Ok(a.as_i64() == b.as_i64()),
        GoType::Float => Ok(a.as_f64() == b.as_f64()),
        GoType::Bool | GoType::String => Ok(a == b),
        GoType::Map | GoType::Slice => Err(Fault::Panic(format!(
            "runtime error: comparing uncomparable type {}",
            uncomparable(kind)
        ))),
    }
}

/// Using `value` as a key of a Go `map[interface{}]…` panics for maps and slices.
pub(super) fn go_hashable(value: &Value) -> Result<(), Fault> {
    let kind = go_type(value);
    match kind {
        GoType::Map | GoType::Slice => Err(Fault::Panic(format!(
            "runtime error: hash of unhashable type {}",
            uncomparable(kind)
        ))),
        _ => Ok(()),
    }
}

/// A Go `map[interface{}]…` used as a set of JSON values: building it panics
/// like Go when an element is a map or a slice, and so does looking up such a
/// value.
pub(super) struct GoSet<'a> {
    items: &'a [Value],
}

impl<'a> GoSet<'a> {
    /// Builds the set (`m[v] = …` for every element).
    pub(super) fn build(items: &'a [Value]) -> Result<Self, Fault> {
        for item in items {
            go_hashable(item)?;
        }
        Ok(Self { items })
    }

    /// `_, found := m[value]`.
    pub(super) fn contains(&self, value: &Value) -> Result<bool, Fault> {
        go_hashable(value)?;
        for item in self.items {
            if go_eq(item, value)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `fmt.Sprintf("%v", value)` for an `interface{}` argument, as the error texts of
/// structured-merge-diff embed values too.
pub(crate) fn fmt_v(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, Root::Value(value), 'v');
    out
}

/// `fmt.Sprintf("%v", m)` for a `map[string]interface{}` argument.
pub(super) fn fmt_map_v(map: &Map) -> String {
    let mut out = String::new();
    write(&mut out, Root::Fields(map), 'v');
    out
}

/// `fmt.Sprintf("%v", l)` for a `[]interface{}` argument.
pub(super) fn fmt_slice_v(items: &[Value]) -> String {
    let mut out = String::new();
    write(&mut out, Root::Items(items), 'v');
    out
}

/// `fmt.Sprintf("%s", value)` for a top-level `interface{}` argument: strings
/// print as they are, other scalars as `%!s(type=value)`.
pub(super) fn fmt_s(value: &Value) -> String {
    let mut out = String::new();
    if value.is_null() {
        out.push_str("%!s(<nil>)");
    } else {
        write(&mut out, Root::Value(value), 's');
    }
    out
}

/// Prints `root` as `%v` or `%s` print it (a value may nest as deep as Go reads: the walk is
/// one container at a time). Maps print with their keys sorted (`internal/fmtsort`), as a
/// [`Map`] keeps them; nested nils print as `<nil>` whatever the verb (`printValue`,
/// `reflect.Interface` case).
fn write(out: &mut String, root: Root<'_>, verb: char) {
    // Writing to a `String` cannot fail.
    let _ = walk(root, &mut |event| {
        match event {
            Event::Open(array, _) => out.push_str(if array { "[" } else { "map[" }),
            Event::Item(key, first) => {
                if !first {
                    out.push(' ');
                }
                if let Some(key) = key {
                    out.push_str(key);
                    out.push(':');
                }
            }
            Event::Scalar(scalar) => write_scalar(out, scalar, verb),
            Event::Close(..) => out.push(']'),
        }
        Ok(())
    });
}

fn write_scalar(out: &mut String, value: &Value, verb: char) {
    let (type_name, text) = match value {
        Value::Null => return out.push_str("<nil>"),
        Value::String(s) => return out.push_str(s),
        Value::Bool(b) => ("bool", b.to_string()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => ("int64", i.to_string()),
            None => ("float64", go_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::Array(_) | Value::Object(_) => return,
    };
    if verb == 'v' {
        out.push_str(&text);
    } else {
        // `badVerb`: %!s(int64=5)
        out.push_str("%!");
        out.push(verb);
        out.push('(');
        out.push_str(type_name);
        out.push('=');
        out.push_str(&text);
        out.push(')');
    }
}
