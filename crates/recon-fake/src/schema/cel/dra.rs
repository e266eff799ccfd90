//! The environment of dynamic resource allocation's device selectors
//! (`staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`, Kubernetes 1.36): the
//! rule environment's functions with one variable, `device`, of the object type
//! `kubernetes.DRADevice` (`allowMultipleAllocations`, `driver`, `attributes` by domain then
//! id, `capacity` by domain then id as quantities). An expression must have the type `bool`
//! or the unknown type.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::types::{ANY, ObjType, Type};
use super::{check, stack, syntax};

/// The parser's error for an empty expression.
const EMPTY_SOURCE: &str = "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// The `device` variable's type, with `DRAConsumableCapacity` (on by default in 1.36).
fn device_type() -> Type {
    let by_domain_and_id = |value: Type| Type::map(Type::String, Type::map(Type::String, value));
    let fields = BTreeMap::from([
        ("allowMultipleAllocations".to_owned(), Type::Bool),
        ("driver".to_owned(), Type::String),
        // Attribute values are `any`: `google.protobuf.Any`, which the checker takes as `dyn`.
        (
            "attributes".to_owned(),
            by_domain_and_id(Type::Opaque(ANY, Vec::new())),
        ),
        (
            "capacity".to_owned(),
            by_domain_and_id(Type::Opaque("kubernetes.Quantity", Vec::new())),
        ),
    ]);
    Type::Object(Rc::new(ObjType {
        name: "kubernetes.DRADevice".to_owned(),
        fields,
    }))
}

/// `CompileCELExpression` of a device selector's `expression`: `None` when it compiles, else
/// the detail of the `Invalid` error the real server reports (`compilation failed: ERROR:
/// <input>:1:1: ...`, or the wrong result type).
pub(crate) fn device_selector_error(expression: &str) -> Option<String> {
    stack::on_large_stack(|| compile(expression)).unwrap_or_else(|| {
        Some("compilation failed: the expression is nested too deeply".to_owned())
    })
}

fn compile(expression: &str) -> Option<String> {
    if expression.is_empty() {
        // cel-go places the end of an empty source at column -1 (printed as 0) and has no
        // line to quote.
        return Some(format!(
            "compilation failed: ERROR: <input>:1:0: {EMPTY_SOURCE}"
        ));
    }
    let mut expr = match syntax::parse(expression) {
        Ok(expr) => expr,
        Err(issues) => return Some(format!("compilation failed: {issues}")),
    };
    let checked = check::check_in(
        &mut expr,
        vec![("device".to_owned(), device_type())],
        check::Features::default(),
    );
    if !checked.issues.is_empty() {
        return Some(format!(
            "compilation failed: {}",
            syntax::render_issues(expression, &checked.issues)
        ));
    }
    // `ast.OutputType()` must be `bool` or `google.protobuf.Any` (an attribute's value; `dyn`
    // only with the alpha `DRAListTypeAttributes`).
    match checked.ty {
        Type::Bool => None,
        Type::Opaque(ANY, ref params) if params.is_empty() => None,
        ty => Some(format!(
            "must evaluate to bool or the unknown type, not {ty}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::device_selector_error;

    #[test]
    fn selectors_that_read_the_device_compile() {
        for ok in [
            r#"device.driver == "dra.example.com""#,
            r#"device.attributes["dra.example.com"].model == "a""#,
            r#"device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) >= 0"#,
            "device.allowMultipleAllocations",
            r#"device.attributes["dra.example.com"]["model"]"#,
            r#"device.attributes["dra.example.com"].model.startsWith("a")"#,
        ] {
            assert_eq!(device_selector_error(ok), None, "{ok}");
        }
    }

    #[test]
    fn undeclared_references_and_wrong_types_are_reported() {
        assert_eq!(
            device_selector_error("self.x").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'self' (in container '')\n | self.x\n | ^"
            )
        );
        assert_eq!(
            device_selector_error("device.nope").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n | device.nope\n | ......^"
            )
        );
        assert_eq!(
            device_selector_error("1").as_deref(),
            Some("must evaluate to bool or the unknown type, not int")
        );
        assert_eq!(
            device_selector_error(r#"device.attributes["a"]"#).as_deref(),
            Some("must evaluate to bool or the unknown type, not map(string, google.protobuf.Any)")
        );
        assert_eq!(
            device_selector_error("dyn(1)").as_deref(),
            Some("must evaluate to bool or the unknown type, not dyn")
        );
        assert!(
            device_selector_error("device.driver ==")
                .is_some_and(|e| e.starts_with("compilation failed: ERROR: <input>:1:"))
        );
    }
}
