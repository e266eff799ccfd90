//! The environment of dynamic resource allocation's device selectors
//! (`staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`, Kubernetes 1.36): the
//! rule environment's functions with one variable, `device`, of the object type
//! `kubernetes.DRADevice` (`allowMultipleAllocations`, `driver`, `attributes` by domain then
//! id, `capacity` by domain then id as quantities), and the `cel.bind` macro
//! ([`super::bindings`]). An expression must have the type `bool` or the unknown type, and its
//! estimated cost (with the sizes the device's fields may have) must not exceed
//! `CELSelectorExpressionMaxCost` (`pkg/apis/resource/validation/validation.go`,
//! `validateCELSelector`).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::cost::Range;
use super::cost::estimate::{Sizes, max_cost_with};
use super::types::{ANY, ObjType, Type};
use super::{bindings, check, stack, syntax};

/// `resource.CELSelectorExpressionMaxCost`.
const MAX_COST: u64 = 1_000_000;

/// Why a device selector is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SelectorError {
    /// It does not compile: the detail of the `Invalid` error (`compilation failed: ERROR:
    /// <input>:1:1: ...`, or the wrong result type).
    Invalid(String),
    /// Its estimated cost exceeds the limit: `Forbidden`, with this detail.
    TooComplex,
}

impl SelectorError {
    /// The `Forbidden` error's detail.
    pub(crate) const TOO_COMPLEX: &str = "too complex, exceeds cost limit";
}

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

/// `validateCELSelector` of a device selector's `expression` (its length checked before):
/// `None` when it compiles within the cost limit.
pub(crate) fn device_selector_error(expression: &str) -> Option<SelectorError> {
    stack::on_large_stack(|| compile(expression)).unwrap_or_else(|| {
        Some(SelectorError::Invalid(
            "compilation failed: the expression is nested too deeply".to_owned(),
        ))
    })
}

fn compile(expression: &str) -> Option<SelectorError> {
    let invalid = |detail: String| Some(SelectorError::Invalid(detail));
    if expression.is_empty() {
        // cel-go places the end of an empty source at column -1 (printed as 0) and has no
        // line to quote.
        return invalid(format!(
            "compilation failed: ERROR: <input>:1:0: {EMPTY_SOURCE}"
        ));
    }
    let mut expr = match syntax::parse(expression) {
        Ok(expr) => expr,
        Err(issues) => return invalid(format!("compilation failed: {issues}")),
    };
    // `ext.Bindings(ext.BindingsVersion(0))`: the macro is expanded while parsing.
    let mut macro_errors = Vec::new();
    bindings::expand(&mut expr, &mut macro_errors);
    if !macro_errors.is_empty() {
        return invalid(format!(
            "compilation failed: {}",
            syntax::render_issues(expression, &macro_errors)
        ));
    }
    let checked = check::check_in(
        &mut expr,
        vec![("device".to_owned(), device_type())],
        check::Features::default(),
    );
    if !checked.issues.is_empty() {
        return invalid(format!(
            "compilation failed: {}",
            syntax::render_issues(expression, &checked.issues)
        ));
    }
    // `ast.OutputType()` must be `bool` or `google.protobuf.Any` (an attribute's value; `dyn`
    // only with the alpha `DRAListTypeAttributes`).
    match checked.ty {
        Type::Bool => {}
        Type::Opaque(ANY, ref params) if params.is_empty() => {}
        ty => {
            return invalid(format!(
                "must evaluate to bool or the unknown type, not {ty}"
            ));
        }
    }
    // `env.EstimateCost` with the DRA cost estimator: the Kubernetes library's costs, the
    // device's sizes from `device_size_at`.
    (max_cost_with(&expr, &checked.node_types, Sizes::Device) > MAX_COST)
        .then_some(SelectorError::TooComplex)
}

/// The largest sizes of the device's fields, as the `sizeEstimator` of DRA's `compile.go`
/// tells them from its declared types: `driver` at most `DriverNameMaxLength` (63) characters,
/// `allowMultipleAllocations` one, `attributes` and `capacity` at most
/// `ResourceSliceMaxAttributesAndCapacitiesPerDevice` (32) domains (keys of at most
/// `DeviceMaxDomainLength`, 63) of at most 32 ids (keys of at most `DeviceMaxIDLength`, 32);
/// an attribute's value at most `DeviceAttributeMaxValueLength` (64), whatever the name it is
/// read by; a quantity and the device itself zero. `None` where the estimator has no size (a
/// path not from `device`, an unknown field, a capacity read as a field).
pub(super) fn device_size_at(path: &[String]) -> Option<Range> {
    /// The declared types the estimator walks.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Decl {
        Device,
        Driver,
        MultiAlloc,
        OuterAttributes,
        InnerAttributes,
        Attribute,
        OuterCapacity,
        InnerCapacity,
        Quantity,
        Domain,
        Id,
    }
    let max = |d: Decl| match d {
        Decl::Device | Decl::Quantity => 0,
        Decl::Driver | Decl::Domain => 63,
        Decl::MultiAlloc => 1,
        Decl::OuterAttributes
        | Decl::InnerAttributes
        | Decl::OuterCapacity
        | Decl::InnerCapacity
        | Decl::Id => 32,
        Decl::Attribute => 64,
    };
    let elem = |d: Decl| match d {
        Decl::OuterAttributes => Some(Decl::InnerAttributes),
        Decl::InnerAttributes => Some(Decl::Attribute),
        Decl::OuterCapacity => Some(Decl::InnerCapacity),
        Decl::InnerCapacity => Some(Decl::Quantity),
        _ => None,
    };
    let key = |d: Decl| match d {
        Decl::OuterAttributes | Decl::OuterCapacity => Some(Decl::Domain),
        Decl::InnerAttributes | Decl::InnerCapacity => Some(Decl::Id),
        _ => None,
    };
    let (first, rest) = path.split_first()?;
    if first != "device" {
        return None;
    }
    let mut current = Decl::Device;
    for name in rest {
        current = match name.as_str() {
            "@items" | "@values" => elem(current)?,
            "@keys" => key(current)?,
            field => match (current, field) {
                (Decl::Device, "driver") => Decl::Driver,
                (Decl::Device, "allowMultipleAllocations") => Decl::MultiAlloc,
                (Decl::Device, "attributes") => Decl::OuterAttributes,
                (Decl::Device, "capacity") => Decl::OuterCapacity,
                // An attribute map's entries all have the attribute type's size.
                (Decl::InnerAttributes, _) => Decl::Attribute,
                _ => return None,
            },
        };
    }
    Some(Range {
        min: 0,
        max: max(current),
    })
}

#[cfg(test)]
mod tests {
    use super::{SelectorError, device_selector_error};

    /// The estimated cost of a selector that compiles.
    fn estimate(expression: &str) -> u64 {
        let mut expr = super::syntax::parse(expression).unwrap();
        let mut errors = Vec::new();
        super::bindings::expand(&mut expr, &mut errors);
        let checked = super::check::check_in(
            &mut expr,
            vec![("device".to_owned(), super::device_type())],
            super::check::Features::default(),
        );
        assert!(
            checked.issues.is_empty() && errors.is_empty(),
            "{expression}"
        );
        super::max_cost_with(&expr, &checked.node_types, super::Sizes::Device)
    }

    /// `n3 && n2 x 15 && n1 x 18 && d x drivers`, the selectors of the recorded scenario
    /// `validation-cluster/device-selector-cel-bind-and-cost`.
    fn ladder(drivers: usize) -> String {
        let n3 = r#"device.attributes["a"].all(x, device.attributes["b"].all(y, device.attributes["c"].all(z, x + y + z == "a")))"#;
        let n2 = r#"device.attributes["d"].all(x, device.attributes["e"].all(y, x + y == "a"))"#;
        let n1 = r#"device.attributes["f"].all(x, x == "a")"#;
        let d = r#"device.driver == "x""#;
        let mut terms = vec![n3];
        terms.extend([n2; 15]);
        terms.extend([n1; 18]);
        terms.extend(std::iter::repeat_n(d, drivers));
        terms.join(" && ")
    }

    #[test]
    fn the_cost_limit_is_inclusive() {
        // Recorded: the real server takes the first, refuses the second as too complex.
        assert_eq!(estimate(&ladder(40)), 1_000_000);
        assert_eq!(device_selector_error(&ladder(40)), None);
        assert_eq!(estimate(&ladder(41)), 1_000_003);
        assert_eq!(
            device_selector_error(&ladder(41)),
            Some(SelectorError::TooComplex)
        );
        // Attribute values are at most 64 long, ids 32, and there are at most 32 of each.
        assert_eq!(
            estimate(
                r#"device.attributes["a"].all(x, device.attributes["b"].all(y, device.attributes["c"].all(z, x + y + z == "a")))"#
            ),
            793_828
        );
        // A bind costs its empty range's list (10) besides its parts, and the bound name
        // keeps the sizes of what it stands for.
        assert_eq!(
            estimate(r#"cel.bind(a, device.attributes["a"], a.x == "b")"#),
            16
        );
        assert_eq!(estimate(r#"device.attributes["a"].x == "b""#), 5);
    }

    fn invalid(expression: &str) -> Option<String> {
        match device_selector_error(expression) {
            Some(SelectorError::Invalid(detail)) => Some(detail),
            Some(SelectorError::TooComplex) => Some("too complex".to_owned()),
            None => None,
        }
    }

    #[test]
    fn selectors_that_read_the_device_compile() {
        for ok in [
            r#"device.driver == "dra.example.com""#,
            r#"device.attributes["dra.example.com"].model == "a""#,
            r#"device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) >= 0"#,
            "device.allowMultipleAllocations",
            r#"device.attributes["dra.example.com"]["model"]"#,
            r#"device.attributes["dra.example.com"].model.startsWith("a")"#,
            r#"cel.bind(dra, device.attributes["dra.example.com"], dra.a && dra.b)"#,
            r#"cel.bind(d, device.driver, cel.bind(n, d.size(), n > 3 && d != ""))"#,
        ] {
            assert_eq!(invalid(ok), None, "{ok}");
        }
    }

    #[test]
    fn deeply_nested_binds_are_compiled_or_refused_without_overflowing() {
        // Every expansion, check and estimate runs on the large stack, from a small thread.
        let outcome = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let nested = |depth: usize| {
                    let mut e = String::new();
                    for i in 0..depth {
                        e.push_str(&format!("cel.bind(a{i}, {i}, "));
                    }
                    e.push_str(&"!".repeat(1000));
                    e.push_str("true");
                    e.push_str(&")".repeat(depth));
                    e
                };
                (
                    device_selector_error(&nested(200)),
                    device_selector_error(&nested(300)),
                )
            })
            .expect("a 2 MiB thread")
            .join()
            .expect("no panic");
        assert_eq!(outcome.0, None);
        assert!(
            matches!(&outcome.1, Some(SelectorError::Invalid(e)) if e.contains("recursion limit exceeded")),
            "{:?}",
            outcome.1
        );
    }

    #[test]
    fn a_bound_name_is_in_scope_in_the_result_only() {
        assert_eq!(
            invalid("cel.bind(x, x, true)").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:13: undeclared reference to 'x' (in container '')\n | cel.bind(x, x, true)\n | ............^"
            )
        );
        assert_eq!(
            invalid("cel.bind(x, 1, x)").as_deref(),
            Some("must evaluate to bool or the unknown type, not int")
        );
        assert_eq!(
            invalid("cel.bind(1, 1, true)").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:10: cel.bind() variable names must be simple identifiers\n | cel.bind(1, 1, true)\n | .........^"
            )
        );
    }

    #[test]
    fn undeclared_references_and_wrong_types_are_reported() {
        assert_eq!(
            invalid("self.x").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'self' (in container '')\n | self.x\n | ^"
            )
        );
        assert_eq!(
            invalid("device.nope").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n | device.nope\n | ......^"
            )
        );
        assert_eq!(
            invalid("1").as_deref(),
            Some("must evaluate to bool or the unknown type, not int")
        );
        assert_eq!(
            invalid(r#"device.attributes["a"]"#).as_deref(),
            Some("must evaluate to bool or the unknown type, not map(string, google.protobuf.Any)")
        );
        assert_eq!(
            invalid("dyn(1)").as_deref(),
            Some("must evaluate to bool or the unknown type, not dyn")
        );
        assert!(
            invalid("device.driver ==")
                .is_some_and(|e| e.starts_with("compilation failed: ERROR: <input>:1:"))
        );
    }
}
