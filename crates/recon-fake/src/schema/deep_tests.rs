//! Schemas as deep as Go reads, on a test thread's own stack: a CRD's spec schema may nest
//! about 5,000 objects (`{"type":"object","properties":{"a": ...}}`, two JSON levels each),
//! and every walk over a schema, or over a value with its schema, keeps its own stack. Each
//! case runs at two levels too, where its expected text is what the walks gave when they
//! recursed.

use recon_apimachinery::json::Value;

use super::CustomResourceSchema;
use super::model::Node;
use super::structural;
use crate::field::aggregate;
use crate::wire::nesting::deep_text::{nested, nested_schema, read};
use crate::wire::object::Object;

/// How many objects the deep schemas nest below `spec`.
const DEEP: usize = 5_000;

const ROOT: &str = "spec.validation.openAPIV3Schema";

/// A resource schema whose `spec` is `spec`.
fn root(spec: &str) -> Value {
    read(&format!(
        r#"{{"type":"object","properties":{{"spec":{spec}}}}}"#
    ))
}

/// A resource whose `spec` is `spec`.
fn resource(spec: &str) -> Object {
    let text =
        format!(r#"{{"apiVersion":"a/v1","kind":"K","metadata":{{"name":"n"}},"spec":{spec}}}"#);
    read(&text).as_object().cloned().expect("an object")
}

/// `spec` and `levels` steps `step` below it.
fn path(levels: usize, step: &str) -> String {
    format!("spec{}", step.repeat(levels))
}

fn structural_errors(schema: &Value) -> String {
    aggregate(&structural::validate(schema, ROOT))
}

/// The model and CEL's trees (a rule at the bottom) read, searched, shared and dropped.
#[test]
fn a_deep_schema_is_read_copied_and_dropped() {
    for levels in [2, DEEP] {
        let schema = root(&nested_schema(
            levels,
            r#"{"type":"string","default":"d","x-kubernetes-validations":[{"rule":"self != ''"}]}"#,
        ));
        let node = Node::parse(&schema);
        assert!(node.any(&|n| n.default.is_some()));
        assert!(!node.any(&|n| n.embedded_resource));
        let mut bottom = &node;
        while let Some(next) = bottom.child("spec").or(bottom.child("a")) {
            bottom = next;
        }
        assert_eq!(bottom.default.as_ref().and_then(Value::as_str), Some("d"));
        drop(node);

        let compiled = CustomResourceSchema::from_openapi_v3(&schema);
        assert!(compiled.defaults && !compiled.embedded && compiled.rules.is_some());
        let copy = compiled.clone();
        assert!(copy == compiled);
        assert!(format!("{copy:?}").len() > levels);
        drop(compiled);
        drop(copy);
    }
}

/// Each of the CRD-time walks finds what is wrong at the bottom.
#[test]
fn a_deep_structural_schema_is_checked_to_the_bottom() {
    for levels in [2, DEEP] {
        let properties = ".properties[a]".repeat(levels);
        let spec = format!("{ROOT}.properties[spec]");
        assert_eq!(
            structural_errors(&root(&nested_schema(levels, r#"{"type":"string"}"#))),
            ""
        );
        assert_eq!(
            structural_errors(&root(&nested_schema(levels, "{}"))),
            format!(
                "{spec}{properties}.type: Required value: must not be empty for specified object \
                 fields"
            )
        );
        assert_eq!(
            structural_errors(&root(&nested_schema(levels, r#"{"type":"int"}"#))),
            format!(
                "{spec}{properties}.type: Unsupported value: \"int\": supported values: \
                 \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            )
        );
        // Unreadable (`NewStructural` refuses it), and nothing else wrong.
        assert_eq!(
            structural_errors(&root(&nested_schema(
                levels,
                r#"{"type":"string","$schema":"y"}"#
            ))),
            format!("{ROOT}: Invalid value: \"\": OpenAPIV3Schema 'schema' is not supported")
        );
        // A root clause as deep, naming a property the structure lacks at the bottom.
        let clause = format!(
            r#"{{"properties":{{"spec":{}{}{}}}}}"#,
            r#"{"properties":{"a":"#.repeat(levels - 1),
            r#"{"properties":{"b":{"maxLength":1,"type":"string"}}}"#,
            "}}".repeat(levels - 1)
        );
        let mut schema = root(&nested_schema(levels, r#"{"type":"string"}"#));
        schema["allOf"] = Value::Array(vec![read(&clause)].into());
        let below = ".properties[a]".repeat(levels - 1);
        assert_eq!(
            structural_errors(&schema),
            format!(
                "[{ROOT}.allOf[0].properties[spec]{below}.properties[b].type: Forbidden: must be \
                 empty to be structural, \
                 {spec}{below}.properties[b]: Required value: because it is defined in \
                 {ROOT}.allOf[0].properties[spec]{below}.properties[b]]"
            )
        );
    }
}

/// Decoding prunes and defaults at the bottom; the value validator refuses, and ratchets, a
/// type error there.
#[test]
fn a_deep_object_is_pruned_defaulted_and_validated_to_the_bottom() {
    for levels in [2, DEEP] {
        let s = CustomResourceSchema::from_openapi_v3(&root(&nested_schema(
            levels,
            r#"{"type":"string","default":"d"}"#,
        )));
        let mut obj = resource(&nested(levels - 1, r#"{"z":1}"#));
        let unknown = s.decode(&mut obj).expect("decodes");
        assert_eq!(unknown, [format!("{}.z", path(levels - 1, ".a"))]);
        assert!(obj == resource(&nested(levels, r#""d""#)));
        assert_eq!(aggregate(&s.validate_create(&obj).errors), "");

        let wrong = resource(&nested(levels, "1"));
        let at = path(levels, ".a");
        let refused = format!(
            "{at}: Invalid value: \"integer\": {at} in body must be of type string: \"integer\""
        );
        assert_eq!(aggregate(&s.validate_create(&wrong).errors), refused);
        assert_eq!(aggregate(&s.validate_update(&wrong, &obj).errors), refused);
        // Kept as stored: ratcheted.
        assert_eq!(aggregate(&s.validate_update(&wrong, &wrong).errors), "");
    }
}

/// Lists in lists, each a `set`, around an embedded resource: its metadata coerced and checked,
/// every list's invariants, the items' paths.
#[test]
fn a_deep_list_of_lists_is_validated_to_the_bottom() {
    for levels in [2, DEEP] {
        let spec = format!(
            "{}{}{}",
            r#"{"type":"array","x-kubernetes-list-type":"set","items":"#.repeat(levels),
            r#"{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"string"}}}"#,
            "}".repeat(levels)
        );
        let s = CustomResourceSchema::from_openapi_v3(&root(&spec));
        let items = |leaf: &str| format!("{}{leaf}{}", "[".repeat(levels), "]".repeat(levels));
        let mut fits = resource(&items(r#"{"apiVersion":"v1","kind":"Pod","spec":"x"}"#));
        assert!(s.decode(&mut fits).expect("decodes").is_empty());
        assert_eq!(aggregate(&s.validate_create(&fits).errors), "");
        let at = path(levels, "[0]");
        let mut wrong = resource(&items(r#"{"kind":"Pod","spec":1}"#));
        assert!(s.decode(&mut wrong).is_ok());
        assert_eq!(
            aggregate(&s.validate_create(&wrong).errors),
            format!(
                "[{at}.spec: Invalid value: \"integer\": {at}.spec in body must be of type \
                 string: \"integer\", {at}.apiVersion: Required value]"
            )
        );
    }
}

/// A transition rule comparing the whole deep value, one ratcheted over it, and a rule at the
/// bottom.
#[test]
fn rules_above_and_at_the_bottom_of_a_deep_schema_are_evaluated() {
    for levels in [2, DEEP] {
        let spec = format!(
            r#"{{"type":"object","x-kubernetes-validations":[{{"rule":"self == oldSelf","message":"immutable"}},{{"rule":"!has(self.a)","message":"no a"}}],"properties":{{"a":{}}}}}"#,
            nested_schema(
                levels - 1,
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"self != 'y'"}]}"#
            )
        );
        let s = CustomResourceSchema::from_openapi_v3(&root(&spec));
        let old = resource(&nested(levels, r#""x""#));
        // Unchanged: the transition rule holds, the other is ratcheted to a warning.
        let verdict = s.validate_update(&old, &old);
        assert_eq!(aggregate(&verdict.errors), "");
        assert_eq!(verdict.warnings, ["spec: Invalid value: no a"]);
        let new = resource(&nested(levels, r#""y""#));
        assert_eq!(
            aggregate(&s.validate_update(&new, &old).errors),
            format!(
                "[spec: Invalid value: immutable, spec: Invalid value: no a, \
                 {}: Invalid value: \"y\": failed rule: self != 'y'",
                path(levels, ".a")
            ) + "]"
        );
        assert_eq!(
            aggregate(&s.validate_create(&new).errors),
            format!(
                "[spec: Invalid value: no a, {}: Invalid value: \"y\": failed rule: self != 'y']",
                path(levels, ".a")
            )
        );
    }
}

/// What functions do with a deep value: `%s`, `flatten`, the cost and equality of `indexOf`,
/// `in`, and `sets` (list equality).
#[test]
fn what_rules_do_with_a_deep_list_is_done_to_the_bottom() {
    for levels in [2, DEEP] {
        // `self` is `levels` lists, one in the other, around a string.
        let text_len = 2 * levels + 3;
        let rules = [
            format!("'%s'.format([self]).size() == {text_len}"),
            "self.flatten(100000) == ['y']".to_owned(),
            "[self].indexOf(self) == 0".to_owned(),
            "self in [oldSelf]".to_owned(),
            "sets.contains([self, self], [oldSelf])".to_owned(),
        ];
        let rules: Vec<String> = rules
            .iter()
            .map(|r| format!(r#"{{"rule":"{r}"}}"#))
            .collect();
        let spec = format!(
            r#"{{"type":"array","maxItems":1,"x-kubernetes-validations":[{}],"items":{}{}{}}}"#,
            rules.join(","),
            r#"{"type":"array","maxItems":1,"items":"#.repeat(levels - 1),
            r#"{"type":"string","maxLength":3}"#,
            "}".repeat(levels - 1)
        );
        let compiled = super::CelRules::compile(&root(&spec));
        assert_eq!(
            compiled.map(|r| r.is_some()).map_err(|e| aggregate(&e)),
            Ok(true)
        );
        let s = CustomResourceSchema::from_openapi_v3(&root(&spec));
        let list = |leaf: &str| format!("{}{leaf}{}", "[".repeat(levels), "]".repeat(levels));
        let (old, new) = (resource(&list(r#""x""#)), resource(&list(r#""y""#)));
        assert_eq!(aggregate(&s.validate_create(&new).errors), "");
        assert_eq!(aggregate(&s.validate_update(&new, &new).errors), "");
        assert_eq!(
            aggregate(&s.validate_update(&new, &old).errors),
            "[spec: Invalid value: failed rule: self in [oldSelf], \
             spec: Invalid value: failed rule: sets.contains([self, self], [oldSelf])]"
        );
    }
}
