//! Whether a CRD's `openAPIV3Schema` is structural, checked when the CRD is written: a v1 CRD
//! prunes unknown fields, and pruning, defaulting and server-side apply all need a schema that
//! says the type of every field outside `allOf`/`anyOf`/`oneOf`/`not`. A schema that is not
//! structural is refused with 422, as apiextensions-apiserver's
//! `validateCustomResourceDefinitionValidation` refuses it:
//!
//! 1. `nullable: true` at the root;
//! 2. `schema.ValidateStructural` (`validateStructuralInvariants`, the metadata and value
//!    validation invariants, `validateStructuralCompleteness`), errors sorted by their text as
//!    Go sorts them; skipped when `NewStructural` cannot read the schema;
//! 3. the parts of `ValidateCustomResourceDefinitionOpenAPISchema` about structure, in its walk
//!    order (unsupported keywords and types, `uniqueItems: true` (quadratic to check),
//!    `additionalProperties` beside `properties`, `x-kubernetes-preserve-unknown-fields: false`,
//!    defaults in `metadata`, the list and map types and the keys of map lists);
//! 4. only when nothing else is wrong, why `NewStructural` could not read the schema.
//!
//! Not modelled: the restrictions on the root when the status subresource is on, the defaults' own validation
//! (`structuraldefaulting.ValidateDefaults`) and the checks of `x-kubernetes-validations` rules.

use recon_apimachinery::go_json::go_json_string;
use recon_apimachinery::json::{Map, Value};

use super::steps::Step;
use crate::field::{BadValue, ErrorType, FieldError};

type Schema = Map;

/// Where the errors of each version's schema are reported: the internal API version of the
/// CRD, which hoists a schema shared by every version to `spec.validation`.
pub(crate) fn schema_path(versions: &[Option<&Value>], index: usize) -> String {
    if versions.windows(2).all(|w| w[0] == w[1]) {
        "spec.validation.openAPIV3Schema".to_owned()
    } else {
        format!("spec.versions[{index}].schema.openAPIV3Schema")
    }
}

/// The errors of one version's `openAPIV3Schema`, reported under `path` (see [`schema_path`]),
/// in the real server's order.
pub(crate) fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    // Anything else is a decoding error, refused before validation.
    let Some(root) = schema.as_object() else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if flag(root, "nullable") {
        errors.push(FieldError::forbidden(
            format!("{path}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let unreadable = unreadable(root);
    if unreadable.is_none() {
        let mut structural = invariants(root, path);
        structural.extend(value_completeness(root, path));
        structural.sort_by_cached_key(ToString::to_string);
        errors.extend(structural);
    }
    let mut walk = Walk::default();
    walk.run(root, path);
    errors.extend(walk.errors);
    if let Some(why) = unreadable
        && errors.is_empty()
        && !walk.unique_items
    {
        errors.push(FieldError::invalid(path, "", why));
    }
    errors
}

// --- Reading a schema as Go decodes it: `null` is absent, a zero value is unset. ---

/// A key's value unless absent or `null`.
fn get<'a>(s: &'a Schema, key: &str) -> Option<&'a Value> {
    s.get(key).filter(|v| !v.is_null())
}

/// A string keyword, `""` when unset.
fn text<'a>(s: &'a Schema, key: &str) -> &'a str {
    s.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn flag(s: &Schema, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

fn object<'a>(s: &'a Schema, key: &str) -> Option<&'a Schema> {
    s.get(key).and_then(Value::as_object)
}

/// A list of schemas (`allOf`, `anyOf`, `oneOf`), with each one's index.
fn schemas<'a>(s: &'a Schema, key: &str) -> impl DoubleEndedIterator<Item = (usize, &'a Schema)> {
    let list = s.get(key).and_then(Value::as_array).map(Vec::as_slice);
    list.unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((i, v.as_object()?)))
}

/// A map of schemas (`properties`, `definitions`), sorted by key. (Go walks its maps in a
/// random order: errors found in two sibling properties come in either order there.)
fn named<'a>(s: &'a Schema, key: &str) -> Vec<(&'a str, &'a Schema)> {
    let mut out: Vec<(&str, &Schema)> = object(s, key)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_object()?)))
        .collect();
    out.sort_by_key(|(k, _)| *k);
    out
}

fn has_property(s: &Schema, name: &str) -> bool {
    object(s, "properties").is_some_and(|p| p.get(name).is_some_and(Value::is_object))
}

/// `items` when it is one schema (`items: []` is no schema; a list of schemas is refused).
fn items(s: &Schema) -> Option<&Schema> {
    object(s, "items")
}

fn string_list<'a>(s: &'a Schema, key: &str) -> Vec<&'a str> {
    let list = s.get(key).and_then(Value::as_array).map(Vec::as_slice);
    list.unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// `additionalProperties` as the structural schema holds it.
enum Additional<'a> {
    Unset,
    /// `true` or `false`.
    Bool(bool),
    Schema(&'a Schema),
}

fn additional(s: &Schema) -> Additional<'_> {
    match get(s, "additionalProperties") {
        Some(Value::Object(m)) => Additional::Schema(m),
        Some(Value::Bool(b)) => Additional::Bool(*b),
        _ => Additional::Unset,
    }
}

/// Go's `json.Marshal` of a string list, the way a field error prints one.
fn go_json_strings(list: &[&str]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| go_json_string(s)).collect();
    format!("[{}]", quoted.join(","))
}

/// Whether `key: value` leaves its field of Go's `Structural` (or, with `nested`, of a
/// `NestedValueValidation`) at its zero value. Keys the structural schema does not keep
/// (`example`, `externalDocs`) are zero.
fn is_zero(key: &str, value: &Value, nested: bool) -> bool {
    match (key, value) {
        (_, Value::Null) | ("example" | "externalDocs", _) => true,
        // Pointers: set even when empty.
        ("x-kubernetes-list-type" | "x-kubernetes-map-type" | "$ref", _) => false,
        (_, Value::String(s)) => s.is_empty(),
        // `additionalProperties: false` is kept by the structure, dropped from a clause.
        ("additionalProperties", Value::Bool(false)) => nested,
        (_, Value::Bool(b)) => !b,
        // Rebuilt one clause at a time, an empty list stays nil; other lists are kept as is.
        ("enum" | "allOf" | "anyOf" | "oneOf" | "items", Value::Array(a)) => a.is_empty(),
        ("properties", Value::Object(m)) => m.is_empty() && !nested,
        _ => false,
    }
}

// --- `NewStructural` ---

/// Why `NewStructural` cannot read the schema (the first failure in its order), if it cannot.
///
/// Its order, one node at a time (a schema may nest as deep as Go reads): a node's keywords,
/// its value validations (`not`, then each clause, each with everything below it), its
/// extensions and `items`, then the schemas of its structure.
fn unreadable(root: &Schema) -> Option<&'static str> {
    enum Check<'a> {
        Node(&'a Schema),
        /// What a node says of itself after its value validations.
        AfterClauses(&'a Schema),
    }
    // What is left to check, the next last.
    let mut pending = vec![Check::Node(root)];
    while let Some(check) = pending.pop() {
        let s = match check {
            Check::Node(s) => s,
            Check::AfterClauses(s) => {
                if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
                    return Some(
                        "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or \
                         undefined",
                    );
                }
                if s.get("items")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty())
                {
                    return Some("OpenAPIV3Schema 'items' must be a schema, but is an array");
                }
                continue;
            }
        };
        if let Some(why) = unsupported(s) {
            return Some(why);
        }
        pending.extend(object(s, "additionalProperties").map(Check::Node));
        let properties = named(s, "properties").into_iter().rev();
        pending.extend(properties.map(|(_, p)| Check::Node(p)));
        pending.extend(items(s).map(Check::Node));
        pending.push(Check::AfterClauses(s));
        for key in ["oneOf", "anyOf", "allOf"] {
            pending.extend(schemas(s, key).rev().map(|(_, c)| Check::Node(c)));
        }
        pending.extend(get(s, "not").and_then(Value::as_object).map(Check::Node));
    }
    None
}

/// The keywords `NewStructural` refuses in a node, the first in its order.
fn unsupported(s: &Schema) -> Option<&'static str> {
    if !text(s, "id").is_empty() {
        return Some("OpenAPIV3Schema 'id' is not supported");
    }
    if !text(s, "$schema").is_empty() {
        return Some("OpenAPIV3Schema 'schema' is not supported");
    }
    if !text(s, "$ref").is_empty() {
        return Some("OpenAPIV3Schema '$ref' is not supported");
    }
    if object(s, "patternProperties").is_some_and(|m| !m.is_empty()) {
        return Some("OpenAPIV3Schema 'patternProperties' is not supported");
    }
    if object(s, "dependencies").is_some_and(|m| !m.is_empty()) {
        return Some("OpenAPIV3Schema 'dependencies' is not supported");
    }
    if get(s, "additionalItems").is_some() {
        return Some("OpenAPIV3Schema 'additionalItems' is not supported");
    }
    if object(s, "definitions").is_some_and(|m| !m.is_empty()) {
        return Some("OpenAPIV3Schema 'definitions' is not supported");
    }
    None
}

// --- `ValidateStructural` ---

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// What is left to do of `validateStructuralInvariants` and of the
/// `validateNestedValueValidation` it calls, the next last. A node's path is the buffer's first
/// `parent` bytes and `step`; what a node does after the nodes below it finds its path in the
/// buffer's first `at` bytes.
enum Invariant<'a> {
    /// `validateStructuralInvariants` of a node: `items` required, then its `items` and
    /// properties, ...
    Node(&'a Schema, Level, usize, Step<'a>),
    /// ... `additionalProperties` at the root, then that schema, ...
    AfterProperties(&'a Schema, Level, usize),
    /// ... the extensions, then the clauses (`validateValueValidation`), ...
    AfterAdditional(&'a Schema, Level, usize),
    /// ... then `pattern`, and what it says of its type, of embedded resources and metadata.
    AfterClauses(&'a Schema, Level, usize),
    /// `validateNestedValueValidation` of a clause (whether to skip its `anyOf`): its own
    /// clauses, ...
    Nested(&'a Schema, bool, usize, Step<'a>),
    /// ... its `pattern`, its `items` and properties, ...
    NestedPattern(&'a Schema, usize),
    /// ... then what it may not say.
    NestedRest(&'a Schema, usize),
}

/// `validateStructuralInvariants` of the root at `root_path`, in its order.
fn invariants(root: &Schema, root_path: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut path = root_path.to_owned();
    let mut pending = vec![Invariant::Node(root, Level::Root, path.len(), Step::Here)];
    while let Some(next) = pending.pop() {
        match next {
            Invariant::Node(s, level, parent, step) => {
                step.below(&mut path, parent);
                let at = path.len();
                if text(s, "type") == "array" && items(s).is_none() {
                    out.push(FieldError::required(
                        format!("{path}.items"),
                        "must be specified",
                    ));
                }
                pending.push(Invariant::AfterProperties(s, level, at));
                let properties = named(s, "properties").into_iter().rev();
                pending.extend(properties.map(|(k, v)| {
                    Invariant::Node(v, Level::Field, at, Step::Named("properties", k))
                }));
                if let Some(item) = items(s) {
                    pending.push(Invariant::Node(
                        item,
                        Level::Item,
                        at,
                        Step::Member("items"),
                    ));
                }
            }
            Invariant::AfterProperties(s, level, at) => {
                path.truncate(at);
                let additional = additional(s);
                if !matches!(additional, Additional::Unset) && level == Level::Root {
                    out.push(FieldError::forbidden(
                        format!("{path}.additionalProperties"),
                        "must not be used at the root",
                    ));
                }
                pending.push(Invariant::AfterAdditional(s, level, at));
                if let Additional::Schema(a) = additional {
                    let step = Step::Member("additionalProperties");
                    pending.push(Invariant::Node(a, Level::Field, at, step));
                }
            }
            Invariant::AfterAdditional(s, level, at) => {
                path.truncate(at);
                extensions(s, &path, &mut out);
                pending.push(Invariant::AfterClauses(s, level, at));
                let skip_first_all_of_any_of = schemas(s, "allOf")
                    .next()
                    .is_some_and(|(i, first)| i == 0 && is_int_or_string_any_of(first));
                let skip_any_of = is_int_or_string_any_of(s);
                clauses(s, skip_any_of, skip_first_all_of_any_of, at, &mut pending);
            }
            Invariant::AfterClauses(s, level, at) => {
                path.truncate(at);
                pattern(s, &path, &mut out);
                type_and_metadata(s, level, &path, &mut out);
            }
            Invariant::Nested(v, skip_any_of, parent, step) => {
                step.below(&mut path, parent);
                let at = path.len();
                pending.push(Invariant::NestedRest(v, at));
                let properties = named(v, "properties").into_iter().rev();
                pending.extend(
                    properties.map(|(k, p)| {
                        Invariant::Nested(p, false, at, Step::Named("properties", k))
                    }),
                );
                if let Some(item) = items(v) {
                    pending.push(Invariant::Nested(item, false, at, Step::Member("items")));
                }
                pending.push(Invariant::NestedPattern(v, at));
                clauses(v, skip_any_of, false, at, &mut pending);
            }
            Invariant::NestedPattern(v, at) => {
                path.truncate(at);
                pattern(v, &path, &mut out);
            }
            Invariant::NestedRest(v, at) => {
                path.truncate(at);
                nested_rest(v, &path, &mut out);
            }
        }
    }
    out
}

/// `validateExtensions`.
fn extensions(s: &Schema, path: &str, out: &mut Vec<FieldError>) {
    if !flag(s, "x-kubernetes-int-or-string") {
        return;
    }
    if flag(s, "x-kubernetes-preserve-unknown-fields") {
        out.push(raw_invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if flag(s, "x-kubernetes-embedded-resource") {
        out.push(raw_invalid(
            format!("{path}.x-kubernetes-embedded-resource"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
}

/// `validateValueValidation`'s clauses of the node at `at`, each a nested value validation, to
/// be done next in their order: `anyOf` (unless skipped), `allOf`, `oneOf`, `not`.
fn clauses<'a>(
    s: &'a Schema,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    at: usize,
    pending: &mut Vec<Invariant<'a>>,
) {
    if let Some(not) = object(s, "not") {
        pending.push(Invariant::Nested(not, false, at, Step::Member("not")));
    }
    let one_of = schemas(s, "oneOf").rev();
    pending.extend(one_of.map(|(i, c)| Invariant::Nested(c, false, at, Step::Nth("oneOf", i))));
    pending.extend(schemas(s, "allOf").rev().map(|(i, c)| {
        let skip = skip_first_all_of_any_of && i == 0;
        Invariant::Nested(c, skip, at, Step::Nth("allOf", i))
    }));
    if !skip_any_of {
        let any_of = schemas(s, "anyOf").rev();
        pending.extend(any_of.map(|(i, c)| Invariant::Nested(c, false, at, Step::Nth("anyOf", i))));
    }
}

/// The end of `validateValueValidation`: the node's `pattern` must compile.
fn pattern(s: &Schema, path: &str, out: &mut Vec<FieldError>) {
    let pattern = text(s, "pattern");
    if let Err(e) = super::go_regexp::check(pattern) {
        out.push(FieldError::invalid(
            format!("{path}.pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
}

/// The end of `validateStructuralInvariants`: the node's type, `additionalProperties` of an
/// embedded resource, the type and object meta of a resource, the properties of an embedded
/// one.
fn type_and_metadata(s: &Schema, level: Level, path: &str, out: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    let (embedded, preserve, int_or_string) = (
        flag(s, "x-kubernetes-embedded-resource"),
        flag(s, "x-kubernetes-preserve-unknown-fields"),
        flag(s, "x-kubernetes-int-or-string"),
    );
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        out.push(required_or_invalid(format!("{path}.type"), ty, detail));
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(FieldError::required(format!("{path}.type"), detail));
    }
    if embedded && !matches!(additional(s), Additional::Unset) {
        out.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        out.push(FieldError::invalid(
            format!("{path}.type"),
            ty,
            "must be object at the root",
        ));
    }

    let check_metadata = level == Level::Root || embedded;
    let properties = object(s, "properties");
    let property = |name: &str| {
        properties
            .and_then(|p| p.get(name))
            .and_then(Value::as_object)
    };
    for name in ["kind", "apiVersion"] {
        if let Some(p) = property(name)
            && check_metadata
        {
            let ty = text(p, "type");
            if ty != "string" {
                out.push(FieldError::invalid(
                    format!("{path}.properties[{name}].type"),
                    ty,
                    "must be string",
                ));
            }
        }
    }
    if let Some(metadata) = property("metadata") {
        let path = format!("{path}.properties[metadata]");
        if check_metadata && text(metadata, "type") != "object" {
            out.push(FieldError::invalid(
                format!("{path}.type"),
                text(metadata, "type"),
                "must be object",
            ));
        }
        if level == Level::Root && !only_names(metadata) {
            out.push(FieldError::forbidden(
                path,
                "must not specify anything other than name and generateName, but metadata is \
                 implicitly specified",
            ));
        }
    }

    if embedded && !preserve && properties.is_none_or(Map::is_empty) {
        out.push(FieldError::required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without \
             x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Whether the root's `metadata` schema says nothing but its type, a default (refused
/// elsewhere) and the schemas of `name` and `generateName` (`validateStructuralMetadataInvariants`).
fn only_names(metadata: &Schema) -> bool {
    metadata.iter().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => match v.as_object() {
            Some(p) => p.keys().all(|k| k == "name" || k == "generateName"),
            None => is_zero(k, v, false),
        },
        _ => is_zero(k, v, false),
    })
}

/// The int-or-string shape Go lets through: `anyOf: [{type: integer}, {type: string}]`,
/// exactly.
fn is_int_or_string_any_of(s: &Schema) -> bool {
    let Some(Value::Array(any_of)) = get(s, "anyOf") else {
        return false;
    };
    let only_type = |c: &Value, ty: &str| {
        c.as_object().is_some_and(|c| {
            c.get("type").and_then(Value::as_str) == Some(ty)
                && c.iter().all(|(k, v)| k == "type" || is_zero(k, v, true))
        })
    };
    matches!(any_of.as_slice(), [a, b] if only_type(a, "integer") && only_type(b, "string"))
}

/// The end of `validateNestedValueValidation`: a schema under `allOf`, `anyOf`, `oneOf` or
/// `not` may only validate values, not say what they are.
fn nested_rest(v: &Schema, path: &str, out: &mut Vec<FieldError>) {
    let forbid = |out: &mut Vec<FieldError>, key: &str, detail: &str| {
        out.push(FieldError::forbidden(format!("{path}.{key}"), detail));
    };
    if !text(v, "type").is_empty() {
        forbid(out, "type", "must be empty to be structural");
    }
    if matches!(
        additional(v),
        Additional::Schema(_) | Additional::Bool(true)
    ) {
        forbid(
            out,
            "additionalProperties",
            "must be undefined to be structural",
        );
    }
    if get(v, "default").is_some() {
        forbid(out, "default", "must be undefined to be structural");
    }
    for key in ["title", "description"] {
        if !text(v, key).is_empty() {
            forbid(out, key, "must be empty to be structural");
        }
    }
    for key in [
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(v, key) {
            forbid(out, key, "must be false to be structural");
        }
    }
    if !string_list(v, "x-kubernetes-list-map-keys").is_empty() {
        forbid(
            out,
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        );
    }
    for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if get(v, key).is_some() {
            forbid(out, key, "must be undefined to be structural");
        }
    }
    if v.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        forbid(
            out,
            "x-kubernetes-validations",
            "must be empty to be structural",
        );
    }
    if has_property(v, "metadata") {
        forbid(
            out,
            "properties[metadata]",
            "must not be specified in a nested context",
        );
    }
}

/// What is left to do of `validateValueValidationCompleteness`, the next last: a clause `v`
/// against the structure `s` at the same place (`None`: the structure has nothing there),
/// the path of each being the first `parent` bytes of its buffer and a step.
struct Completeness<'a> {
    v: &'a Schema,
    s: Option<&'a Schema>,
    s_parent: usize,
    s_step: Step<'a>,
    v_parent: usize,
    v_step: Step<'a>,
}

/// `validateValueValidationCompleteness` (called for the root only): every property or items a
/// clause constrains must be in the structure too.
fn value_completeness(root: &Schema, root_path: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    let (mut s_path, mut v_path) = (root_path.to_owned(), root_path.to_owned());
    let mut pending = Vec::new();
    completeness_clauses(root, root, s_path.len(), v_path.len(), &mut pending);
    while let Some(next) = pending.pop() {
        next.s_step.below(&mut s_path, next.s_parent);
        next.v_step.below(&mut v_path, next.v_parent);
        let Some(s) = next.s else {
            out.push(not_in_structure(&s_path, &v_path));
            continue;
        };
        let (s_at, v_at) = (s_path.len(), v_path.len());
        let structure = object(s, "properties");
        for (k, p) in named(next.v, "properties").into_iter().rev() {
            let step = Step::Named("properties", k);
            pending.push(Completeness {
                v: p,
                s: structure.and_then(|m| m.get(k)).and_then(Value::as_object),
                s_parent: s_at,
                s_step: step,
                v_parent: v_at,
                v_step: step,
            });
        }
        if let Some(item) = items(next.v) {
            pending.push(Completeness {
                v: item,
                s: items(s),
                s_parent: s_at,
                s_step: Step::Member("items"),
                v_parent: v_at,
                v_step: Step::Member("items"),
            });
        }
        completeness_clauses(next.v, s, s_at, v_at, &mut pending);
    }
    out
}

/// The clauses of `v` (`not`, then `allOf`, `anyOf` and `oneOf`), each against the structure
/// `s`, to be checked next in that order.
fn completeness_clauses<'a>(
    v: &'a Schema,
    s: &'a Schema,
    s_at: usize,
    v_at: usize,
    pending: &mut Vec<Completeness<'a>>,
) {
    let clause = |c, v_step| Completeness {
        v: c,
        s: Some(s),
        s_parent: s_at,
        s_step: Step::Here,
        v_parent: v_at,
        v_step,
    };
    for key in ["oneOf", "anyOf", "allOf"] {
        pending.extend(
            schemas(v, key)
                .rev()
                .map(|(i, c)| clause(c, Step::Nth(key, i))),
        );
    }
    if let Some(not) = object(v, "not") {
        pending.push(clause(not, Step::Member("not")));
    }
}

fn not_in_structure(s_path: &str, v_path: &str) -> FieldError {
    FieldError::required(s_path, format!("because it is defined in {v_path}"))
}

fn raw_invalid(field: String, value: &str, detail: &str) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        field,
        BadValue::Raw(value.to_owned()),
        detail,
    )
}

/// `Required` when `value` is empty, else `Invalid` with it.
fn required_or_invalid(field: String, value: &str, detail: &str) -> FieldError {
    if value.is_empty() {
        FieldError::required(field, detail)
    } else {
        FieldError::invalid(field, value, detail)
    }
}

// --- `ValidateCustomResourceDefinitionOpenAPISchema` ---

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// What a node of the walk inherits from where it is.
#[derive(Clone, Copy)]
struct Context {
    root: bool,
    /// Under the `metadata`, `kind` or `apiVersion` of the root or of an embedded resource.
    inside_meta: bool,
    /// Why `default` is refused here, if it is.
    no_defaults: Option<&'static str>,
}

impl Context {
    fn root() -> Self {
        Context {
            root: true,
            inside_meta: false,
            no_defaults: None,
        }
    }

    fn child(self) -> Self {
        Context {
            root: false,
            ..self
        }
    }
}

#[derive(Default)]
struct Walk {
    errors: Vec<FieldError>,
    /// Whether any node has `uniqueItems: true`.
    unique_items: bool,
}

/// What is left of the walk, the next last.
enum Visit<'a> {
    /// A node, at the buffer's first `parent` bytes and `step`: its keywords, then the nodes
    /// below it, ...
    Node(&'a Schema, usize, Step<'a>, Context),
    /// ... then its extensions, at the buffer's first `at` bytes.
    Extensions(&'a Schema, usize),
}

impl Walk {
    /// Walks the schema `root` at `root_path`, one node at a time, in the real server's order.
    fn run(&mut self, root: &Schema, root_path: &str) {
        let mut path = root_path.to_owned();
        let mut pending = vec![Visit::Node(root, path.len(), Step::Here, Context::root())];
        while let Some(next) = pending.pop() {
            match next {
                Visit::Node(s, parent, step, cx) => {
                    step.below(&mut path, parent);
                    self.node(s, &path, cx, &mut pending);
                }
                Visit::Extensions(s, at) => {
                    path.truncate(at);
                    self.extensions(s, &path);
                }
            }
        }
    }

    /// A node's own checks; what is below it, then its extensions, are to be done next.
    fn node<'a>(&mut self, s: &'a Schema, path: &str, cx: Context, pending: &mut Vec<Visit<'a>>) {
        self.keywords(s, path, cx);
        if flag(s, "uniqueItems") {
            self.unique_items = true;
            self.forbidden(
                path,
                "uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            );
        }
        let at = path.len();
        pending.push(Visit::Extensions(s, at));
        let below = |s, step| Visit::Node(s, at, step, cx.child());
        // In the reverse of the order they are visited in.
        let dependencies = named(s, "dependencies").into_iter().rev();
        pending.extend(dependencies.map(|(k, d)| below(d, Step::Named("dependencies", k))));
        match s.get("items") {
            Some(Value::Object(item)) => pending.push(below(item, Step::Member("items"))),
            Some(Value::Array(list)) => {
                let list = list.iter().enumerate().rev();
                pending.extend(
                    list.filter_map(|(i, item)| {
                        Some(below(item.as_object()?, Step::Nth("items", i)))
                    }),
                );
            }
            _ => {}
        }
        let definitions = named(s, "definitions").into_iter().rev();
        pending.extend(definitions.map(|(k, d)| below(d, Step::Named("definitions", k))));
        for key in ["anyOf", "oneOf", "allOf"] {
            pending.extend(
                schemas(s, key)
                    .rev()
                    .map(|(i, c)| below(c, Step::Nth(key, i))),
            );
        }
        if let Some(not) = object(s, "not") {
            pending.push(below(not, Step::Member("not")));
        }
        let embedded = flag(s, "x-kubernetes-embedded-resource");
        for (k, p) in named(s, "properties").into_iter().rev() {
            let mut sub = cx.child();
            if (cx.root || embedded) && matches!(k, "metadata" | "kind" | "apiVersion") {
                sub.inside_meta = true;
                if cx.root {
                    sub.no_defaults = Some(match k {
                        "metadata" => "in top-level metadata",
                        "kind" => "in top-level kind",
                        _ => "in top-level apiVersion",
                    });
                }
            }
            pending.push(Visit::Node(p, at, Step::Named("properties", k), sub));
        }
        let has_properties = object(s, "properties").is_some_and(|p| !p.is_empty());
        match additional(s) {
            Additional::Unset => {}
            a => {
                if has_properties && matches!(a, Additional::Schema(_) | Additional::Bool(false)) {
                    self.forbidden(
                        path,
                        "additionalProperties",
                        "additionalProperties and properties are mutual exclusive",
                    );
                }
                if let Additional::Schema(a) = a {
                    let mut sub = cx.child();
                    if cx.inside_meta {
                        sub.no_defaults =
                            Some("inside additionalProperties applying to object metadata");
                    }
                    let step = Step::Member("additionalProperties");
                    pending.push(Visit::Node(a, at, step, sub));
                }
            }
        }
    }

    /// `specStandardValidatorV3.validate`.
    fn keywords(&mut self, s: &Schema, path: &str, cx: Context) {
        let ty = text(s, "type");
        if !ty.is_empty() && !TYPES.contains(&ty) {
            self.errors.push(FieldError::not_supported(
                format!("{path}.type"),
                ty,
                &TYPES,
            ));
        }
        if let (Some(_), Some(why)) = (get(s, "default"), cx.no_defaults) {
            self.forbidden(path, "default", &format!("must not be set {why}"));
        }
        if !text(s, "id").is_empty() {
            self.forbidden(path, "id", "id is not supported");
        }
        if get(s, "additionalItems").is_some() {
            self.forbidden(path, "additionalItems", "additionalItems is not supported");
        }
        if object(s, "patternProperties").is_some_and(|m| !m.is_empty()) {
            self.forbidden(
                path,
                "patternProperties",
                "patternProperties is not supported",
            );
        }
        if object(s, "definitions").is_some_and(|m| !m.is_empty()) {
            self.forbidden(path, "definitions", "definitions is not supported");
        }
        if get(s, "dependencies").is_some() {
            self.forbidden(path, "dependencies", "dependencies is not supported");
        }
        if get(s, "$ref").is_some() {
            self.forbidden(path, "$ref", "$ref is not supported");
        }
        if ty == "null" {
            self.forbidden(
                path,
                "type",
                "type cannot be set to null, use nullable as an alternative",
            );
        }
        if s.get("items")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            self.forbidden(
                path,
                "items",
                "items must be a schema object and not an array",
            );
        }
        if cx.inside_meta && flag(s, "x-kubernetes-embedded-resource") {
            self.forbidden(
                path,
                "x-kubernetes-embedded-resource",
                "must not be used inside of resource meta",
            );
        }
    }

    /// The walk's checks of `x-kubernetes-*` after the node's children, then
    /// `validateMapListKeysMapSet`.
    fn extensions(&mut self, s: &Schema, path: &str) {
        let ty = text(s, "type");
        if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
            self.errors.push(raw_invalid(
                format!("{path}.x-kubernetes-preserve-unknown-fields"),
                "false",
                "must be true or undefined",
            ));
        }
        let map_type = get(s, "x-kubernetes-map-type").map(|v| v.as_str().unwrap_or_default());
        if let Some(map_type) = map_type {
            if ty != "object" {
                self.errors.push(required_or_invalid(
                    format!("{path}.type"),
                    ty,
                    "must be object if x-kubernetes-map-type is specified",
                ));
            }
            if !matches!(map_type, "atomic" | "granular") {
                self.errors.push(FieldError::not_supported(
                    format!("{path}.x-kubernetes-map-type"),
                    map_type,
                    &["atomic", "granular"],
                ));
            }
        }
        let list_type = get(s, "x-kubernetes-list-type").map(|v| v.as_str().unwrap_or_default());
        if list_type.is_some() && ty != "array" {
            self.errors.push(required_or_invalid(
                format!("{path}.type"),
                ty,
                "must be array if x-kubernetes-list-type is specified",
            ));
        } else if let (Some("set"), Some(item)) = (list_type, items(s)) {
            // The message quotes the items' list type, whichever is wrong.
            let item_list_type = get(item, "x-kubernetes-list-type").and_then(Value::as_str);
            let quoted = item_list_type.map_or_else(|| "null".to_owned(), go_json_string);
            let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
            match text(item, "type") {
                "array" if item_list_type.is_some_and(|t| t != "atomic") => {
                    self.errors.push(raw_invalid(
                        format!("{path}.items.x-kubernetes-list-type"),
                        &quoted,
                        detail,
                    ));
                }
                "object" if text(item, "x-kubernetes-map-type") != "atomic" => {
                    self.errors.push(raw_invalid(
                        format!("{path}.items.x-kubernetes-map-type"),
                        &quoted,
                        detail,
                    ));
                }
                _ => {}
            }
        }
        if let Some(list_type) = list_type.filter(|t| !matches!(*t, "atomic" | "set" | "map")) {
            self.errors.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-list-type"),
                list_type,
                &["atomic", "set", "map"],
            ));
        }
        let keys = string_list(s, "x-kubernetes-list-map-keys");
        if !keys.is_empty() {
            let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
            match list_type {
                None => self.errors.push(FieldError::required(
                    format!("{path}.x-kubernetes-list-type"),
                    detail,
                )),
                Some(t) if t != "map" => self.errors.push(FieldError::invalid(
                    format!("{path}.x-kubernetes-list-type"),
                    t,
                    detail,
                )),
                Some(_) => {}
            }
        }
        if list_type == Some("map") {
            self.map_list(s, path, &keys);
        }
        // validateMapListKeysMapSet
        if let (Some(t @ ("set" | "map")), Some(item)) = (list_type, items(s)) {
            if flag(item, "nullable") {
                self.forbidden(
                    &format!("{path}.items"),
                    "nullable",
                    &format!("cannot be nullable when x-kubernetes-list-type is {t}"),
                );
            }
            if t == "map" {
                let required = string_list(item, "required");
                let properties = object(item, "properties");
                for k in &keys {
                    let Some(p) = properties.and_then(|m| m.get(k)).and_then(Value::as_object)
                    else {
                        continue;
                    };
                    let at = format!("{path}.items.properties[{k}]");
                    if !required.contains(k) && get(p, "default").is_none() {
                        self.errors.push(FieldError::required(
                            format!("{at}.default"),
                            "this property is in x-kubernetes-list-map-keys, so it must have a \
                             default or be a required property",
                        ));
                    }
                    if flag(p, "nullable") {
                        self.forbidden(
                            &at,
                            "nullable",
                            "this property is in x-kubernetes-list-map-keys, so it cannot be \
                             nullable",
                        );
                    }
                }
            }
        }
    }

    /// The checks of an `x-kubernetes-list-type: map` list.
    fn map_list(&mut self, s: &Schema, path: &str, keys: &[&str]) {
        if keys.is_empty() {
            self.errors.push(FieldError::required(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        if get(s, "items").is_none() {
            self.errors.push(FieldError::required(
                format!("{path}.items"),
                "must have a schema if x-kubernetes-list-type is map",
            ));
        }
        let Some(item) = items(s) else {
            return;
        };
        let item_type = text(item, "type");
        if item_type != "object" {
            self.errors.push(FieldError::invalid(
                format!("{path}.items.type"),
                item_type,
                "must be object if parent array's x-kubernetes-list-type is map",
            ));
            return;
        }
        let quoted = go_json_strings(keys);
        let mut seen: Vec<&str> = Vec::new();
        for k in keys {
            match object(item, "properties")
                .and_then(|m| m.get(k))
                .and_then(Value::as_object)
            {
                Some(p) if matches!(text(p, "type"), "array" | "object") => {
                    self.errors.push(FieldError::invalid(
                        format!("{path}.items.properties[{k}].type"),
                        item_type,
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    ));
                }
                Some(_) => {}
                None => self.errors.push(raw_invalid(
                    format!("{path}.x-kubernetes-list-map-keys"),
                    &quoted,
                    "entries must all be names of item properties",
                )),
            }
            if seen.contains(k) {
                self.errors.push(raw_invalid(
                    format!("{path}.x-kubernetes-list-map-keys"),
                    &quoted,
                    "must not contain duplicate entries",
                ));
            }
            seen.push(k);
        }
    }

    fn forbidden(&mut self, path: &str, key: &str, detail: &str) {
        self.errors
            .push(FieldError::forbidden(format!("{path}.{key}"), detail));
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;
    use crate::field::aggregate;

    const ROOT: &str = "spec.validation.openAPIV3Schema";

    /// The errors as the 422's message quotes them; `""` for none.
    fn errors(schema: Value) -> String {
        let found = validate(&schema, ROOT);
        if found.is_empty() {
            String::new()
        } else {
            aggregate(&found)
        }
    }

    /// A root whose `spec` has the given schema.
    fn spec(schema: Value) -> Value {
        json!({"type": "object", "properties": {"spec": schema}})
    }

    /// A root whose `spec` has one property `x` of the given schema.
    fn field(schema: Value) -> Value {
        spec(json!({"type": "object", "properties": {"x": schema}}))
    }

    const X: &str = "spec.validation.openAPIV3Schema.properties[spec].properties[x]";

    // The expected texts below are the real server's (kube-apiserver 1.36), for the same
    // schema in a dry-run CRD create.

    #[test]
    fn a_type_is_required_at_the_root_and_for_fields_items_and_additional_properties() {
        assert_eq!(
            errors(
                json!({"properties": {"spec": {"type": "object", "properties": {
                "x": {}, "tags": {"type": "array", "items": {}},
                "m": {"type": "object", "additionalProperties": {}}}}}})
            ),
            format!(
                "[{ROOT}.properties[spec].properties[m].additionalProperties.type: Required value: \
                 must not be empty for specified object fields, \
                 {ROOT}.properties[spec].properties[tags].items.type: Required value: must not be \
                 empty for specified array items, \
                 {ROOT}.properties[spec].properties[x].type: Required value: must not be empty for \
                 specified object fields, \
                 {ROOT}.type: Required value: must not be empty at the root]"
            )
        );
    }

    #[test]
    fn int_or_string_and_preserved_unknown_fields_need_no_type() {
        let schema = spec(json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "any": {"x-kubernetes-preserve-unknown-fields": true},
            // Accepted with a type too: nothing checks the two agree.
            "typed": {"type": "string", "x-kubernetes-int-or-string": true},
            "ios": {"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "all": {"x-kubernetes-int-or-string": true, "allOf": [
                {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"maxLength": 3}]}}}));
        assert_eq!(errors(schema), "");
    }

    #[test]
    fn types_under_any_of_are_forbidden_unless_exactly_integer_then_string() {
        assert_eq!(
            errors(field(json!({"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]}))),
            format!(
                "[{X}.anyOf[0].type: Forbidden: must be empty to be structural, \
                 {X}.anyOf[1].type: Forbidden: must be empty to be structural]"
            )
        );
    }

    #[test]
    fn an_array_needs_items_with_a_type() {
        assert_eq!(
            errors(field(json!({"type": "array"}))),
            format!("{X}.items: Required value: must be specified")
        );
        // What kube-rs derives for a `Vec<recon_apimachinery::json::Value>`.
        assert_eq!(
            errors(field(json!({"type": "array", "items": {}}))),
            format!("{X}.items.type: Required value: must not be empty for specified array items")
        );
    }

    #[test]
    fn additional_properties_are_refused_beside_properties_and_at_the_root() {
        assert_eq!(
            errors(field(
                json!({"type": "object", "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "string"}})
            )),
            format!(
                "{X}.additionalProperties: Forbidden: additionalProperties and properties are \
                 mutual exclusive"
            )
        );
        assert_eq!(
            errors(field(
                json!({"type": "object", "properties": {"a": {"type": "string"}},
                "additionalProperties": true})
            )),
            ""
        );
        assert_eq!(
            errors(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            format!("{ROOT}.additionalProperties: Forbidden: must not be used at the root")
        );
    }

    #[test]
    fn preserve_unknown_fields_false_is_the_only_error_as_the_structure_is_not_read() {
        assert_eq!(
            errors(field(
                json!({"x-kubernetes-preserve-unknown-fields": false})
            )),
            format!(
                "{X}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or \
                 undefined"
            )
        );
    }

    #[test]
    fn an_embedded_resource_is_an_object_with_properties_or_unknown_fields() {
        assert_eq!(
            errors(field(json!({"x-kubernetes-embedded-resource": true}))),
            format!(
                "[{X}.properties: Required value: must not be empty if \
                 x-kubernetes-embedded-resource is true without \
                 x-kubernetes-preserve-unknown-fields, \
                 {X}.type: Required value: must be object if x-kubernetes-embedded-resource is true]"
            )
        );
        assert_eq!(
            errors(field(
                json!({"type": "string", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true})
            )),
            format!(
                "{X}.type: Invalid value: \"string\": must be object if \
                 x-kubernetes-embedded-resource is true"
            )
        );
    }

    #[test]
    fn int_or_string_excludes_the_other_extensions() {
        assert_eq!(
            errors(field(json!({"x-kubernetes-int-or-string": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-embedded-resource": true}))),
            format!(
                "[{X}.type: Required value: must be object if x-kubernetes-embedded-resource is \
                 true, \
                 {X}.x-kubernetes-embedded-resource: Invalid value: true: must be false if \
                 x-kubernetes-int-or-string is true, \
                 {X}.x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if \
                 x-kubernetes-int-or-string is true]"
            )
        );
    }

    #[test]
    fn clauses_may_only_validate_values() {
        let schema = spec(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "allOf": [{"type": "object", "default": {}, "nullable": true,
                "properties": {"a": {"type": "string"}}}],
            "not": {"properties": {"metadata": {}}}}),
        );
        let spec = format!("{ROOT}.properties[spec]");
        assert_eq!(
            errors(schema),
            format!(
                "[{spec}.allOf[0].default: Forbidden: must be undefined to be structural, \
                 {spec}.allOf[0].nullable: Forbidden: must be false to be structural, \
                 {spec}.allOf[0].properties[a].type: Forbidden: must be empty to be structural, \
                 {spec}.allOf[0].type: Forbidden: must be empty to be structural, \
                 {spec}.not.properties[metadata]: Forbidden: must not be specified in a nested \
                 context]"
            )
        );
    }

    #[test]
    fn what_a_root_clause_constrains_must_be_in_the_structure() {
        assert_eq!(
            errors(json!({"type": "object",
                "anyOf": [{"properties": {"foo": {"minLength": 1}}}, {"items": {}}]})),
            format!(
                "[{ROOT}.items: Required value: because it is defined in {ROOT}.anyOf[1].items, \
                 {ROOT}.properties[foo]: Required value: because it is defined in \
                 {ROOT}.anyOf[0].properties[foo]]"
            )
        );
    }

    #[test]
    fn the_root_metadata_may_only_constrain_name_and_generate_name() {
        let name = json!({"type": "string", "maxLength": 10});
        assert_eq!(
            errors(
                json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"name": name, "generateName": name}}}})
            ),
            ""
        );
        assert_eq!(
            errors(
                json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"labels": {"type": "object"}}}}})
            ),
            format!(
                "{ROOT}.properties[metadata]: Forbidden: must not specify anything other than \
                 name and generateName, but metadata is implicitly specified"
            )
        );
        assert_eq!(
            errors(
                json!({"type": "object", "properties": {"metadata": {"type": "string",
                "default": {}}}})
            ),
            format!(
                "[{ROOT}.properties[metadata].type: Invalid value: \"string\": must be object, \
                 {ROOT}.properties[metadata].default: Forbidden: must not be set in top-level \
                 metadata]"
            )
        );
        assert_eq!(
            errors(json!({"type": "object", "properties": {"kind": {"type": "integer"}}})),
            format!("{ROOT}.properties[kind].type: Invalid value: \"integer\": must be string")
        );
    }

    #[test]
    fn list_map_keys_need_a_map_list_of_objects_keyed_by_required_scalars() {
        assert_eq!(
            errors(field(
                json!({"type": "array", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}})
            )),
            format!(
                "{X}.x-kubernetes-list-type: Required value: must be map if \
                 x-kubernetes-list-map-keys is non-empty"
            )
        );
        assert_eq!(
            errors(field(
                json!({"type": "array", "x-kubernetes-list-type": "map",
                "items": {"type": "string"}})
            )),
            format!(
                "[{X}.x-kubernetes-list-map-keys: Required value: must not be empty if \
                 x-kubernetes-list-type is map, \
                 {X}.items.type: Invalid value: \"string\": must be object if parent array's \
                 x-kubernetes-list-type is map]"
            )
        );
        assert_eq!(
            errors(field(
                json!({"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "port", "name", "missing", "obj"],
                "items": {"type": "object", "required": ["port"], "properties": {
                    "name": {"type": "string", "nullable": true}, "port": {"type": "integer"},
                    "obj": {"type": "object", "default": {}}}}})
            )),
            format!(
                "[{X}.x-kubernetes-list-map-keys: Invalid value: \
                 [\"name\",\"port\",\"name\",\"missing\",\"obj\"]: must not contain duplicate \
                 entries, \
                 {X}.x-kubernetes-list-map-keys: Invalid value: \
                 [\"name\",\"port\",\"name\",\"missing\",\"obj\"]: entries must all be names of \
                 item properties, \
                 {X}.items.properties[obj].type: Invalid value: \"object\": must be a scalar type \
                 if parent array's x-kubernetes-list-type is map, \
                 {X}.items.properties[name].default: Required value: this property is in \
                 x-kubernetes-list-map-keys, so it must have a default or be a required property, \
                 {X}.items.properties[name].nullable: Forbidden: this property is in \
                 x-kubernetes-list-map-keys, so it cannot be nullable]"
            )
        );
    }

    #[test]
    fn set_items_are_atomic_and_not_nullable() {
        assert_eq!(
            errors(field(
                json!({"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "object", "nullable": true}})
            )),
            format!(
                "[{X}.items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of \
                 a list with x-kubernetes-list-type=set, \
                 {X}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is \
                 set]"
            )
        );
    }

    #[test]
    fn unknown_types_and_keywords_are_refused() {
        assert_eq!(
            errors(field(json!({"type": "int"}))),
            format!(
                "{X}.type: Unsupported value: \"int\": supported values: \"array\", \"boolean\", \
                 \"integer\", \"number\", \"object\", \"string\""
            )
        );
        assert_eq!(
            errors(field(
                json!({"$ref": "#/x", "type": "array", "items": [{}]})
            )),
            format!(
                "[{X}.$ref: Forbidden: $ref is not supported, \
                 {X}.items: Forbidden: items must be a schema object and not an array]"
            )
        );
    }

    #[test]
    fn an_unreadable_schema_says_why_only_when_nothing_else_is_wrong() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "$schema": "y"}, "x": {}}});
        assert_eq!(
            errors(schema.clone()),
            format!("{ROOT}: Invalid value: \"\": OpenAPIV3Schema 'schema' is not supported")
        );
        // uniqueItems is reported in its stead.
        let mut unique = schema;
        unique["uniqueItems"] = json!(true);
        assert_eq!(
            errors(unique),
            format!(
                "{ROOT}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the \
                 runtime complexity becomes quadratic"
            )
        );
    }

    #[test]
    fn unique_items_is_refused_wherever_it_is() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"tags": {"type": "array", "uniqueItems": true,
                "items": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}}}});
        let quadratic = "Forbidden: uniqueItems cannot be set to true since the runtime \
                         complexity becomes quadratic";
        assert_eq!(
            errors(schema),
            format!(
                "[{ROOT}.properties[spec].properties[tags].uniqueItems: {quadratic}, \
                 {ROOT}.properties[spec].properties[tags].items.uniqueItems: {quadratic}]"
            )
        );
    }

    #[test]
    fn a_schema_every_version_shares_is_reported_at_spec_validation() {
        let (a, b) = (json!({"type": "object"}), json!({"type": "string"}));
        assert_eq!(
            schema_path(&[Some(&a), Some(&a)], 1),
            "spec.validation.openAPIV3Schema"
        );
        assert_eq!(
            schema_path(&[Some(&a), Some(&b)], 1),
            "spec.versions[1].schema.openAPIV3Schema"
        );
    }

    #[test]
    fn nullable_is_refused_at_the_root_first() {
        assert_eq!(
            errors(json!({"type": "object", "nullable": true, "properties": {"x": {}}})),
            format!(
                "[{ROOT}.nullable: Forbidden: nullable cannot be true at the root, \
                 {ROOT}.properties[x].type: Required value: must not be empty for specified \
                 object fields]"
            )
        );
    }

    #[test]
    fn patterns_are_go_regular_expressions() {
        let refused = |pattern: &str| {
            let e = errors(field(json!({"type": "string", "pattern": pattern})));
            let prefix = format!("{X}.pattern: Invalid value: ");
            e.strip_prefix(&prefix).map(str::to_owned).unwrap_or(e)
        };
        assert_eq!(
            refused("[a-z"),
            "\"[a-z\": must be a valid regular expression, but isn't: error parsing regexp: \
             missing closing ]: `[a-z`"
        );
        for (pattern, error) in [
            ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
            ("a**", "invalid nested repetition operator: `**`"),
            ("*a", "missing argument to repetition operator: `*`"),
            ("a)", "unexpected ): `a)`"),
            ("(a", "missing closing ): `(a`"),
            ("\\1", "invalid escape sequence: `\\1`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            ("a{2,1}", "invalid repeat count: `{2,1}`"),
            ("\\p{Foo}", "invalid character class range: `\\p{Foo}`"),
        ] {
            assert!(
                refused(pattern).ends_with(&format!("error parsing regexp: {error}")),
                "{pattern}: {}",
                refused(pattern)
            );
        }
        for pattern in [
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            "^(\\d+(\\.\\d+)?)(Ki|Mi|Gi)?$",
            "(?P<n>a)|(?<m>b)",
            "[[:alpha:]\\pL_-]{1,63}",
            "a{,3}",
            "\\Q*\\E",
        ] {
            assert_eq!(refused(pattern), "", "{pattern}");
        }
    }

    #[test]
    fn the_schemas_of_the_fixtures_are_structural() {
        let files = [
            include_str!("../../../../fixtures/conformance/crds/schemeds.yaml"),
            include_str!("../../../../fixtures/conformance/crds/gadgets.yaml"),
            include_str!("../../../../fixtures/conformance/crds/gizmos.yaml"),
            include_str!("../../../../fixtures/conformance/crds/widgets.yaml"),
            include_str!("../../../../fixtures/crds/functions.example.com.yaml"),
            include_str!("../../../../fixtures/crds/functions.operators.example.com.yaml"),
            include_str!("../../../../fixtures/crds/gateways.operators.example.com.yaml"),
            include_str!("../../../../fixtures/crds/gizmos.example.com.yaml"),
            include_str!("../../../../fixtures/crds/tasks.example.com.yaml"),
            include_str!("../../../../fixtures/crds/widgets.example.com.yaml"),
        ];
        for text in files {
            let crd: Value = serde_saphyr::from_str(text).expect("a CRD");
            let versions = crd["spec"]["versions"].as_array().expect("versions");
            assert!(!versions.is_empty());
            for (i, v) in versions.iter().enumerate() {
                let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
                let found = validate(&v["schema"]["openAPIV3Schema"], &path);
                assert!(
                    found.is_empty(),
                    "{}: {}",
                    crd["metadata"]["name"],
                    aggregate(&found)
                );
            }
        }
    }

    #[test]
    fn anything_that_is_not_a_schema_has_no_structural_errors() {
        for v in [
            json!(null),
            json!(1),
            json!([{}]),
            json!({"properties": 1, "items": "x"}),
        ] {
            let _ = validate(&v, ROOT);
        }
        assert!(validate(&json!("x"), ROOT).is_empty());
    }
}
