//! The `cel.bind(name, init, expr)` macro of cel-go's bindings extension
//! (`github.com/google/cel-go/ext/bindings.go`, `ext.Bindings(ext.BindingsVersion(0))`).
//!
//! Kubernetes 1.36 offers it in one environment only: dynamic resource allocation's device
//! selectors (`staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`, from 1.31). The
//! base environment (`staging/src/k8s.io/apiserver/pkg/cel/environment/base.go`) that CRD rules
//! and admission policies build on has no `ext.Bindings`, so there `cel.bind(...)` stays a call
//! of an undeclared `bind` on an undeclared `cel`.
//!
//! cel-go expands the macro while parsing into a comprehension over an empty list whose
//! accumulator is the bound name (initialized with `init`) and whose result is `expr`; recon's
//! parser is shared by every environment, so the expansion is a pass over the parsed tree that
//! only the environments with the macro run. The comprehension is kept as
//! [`Macro::Bind`]: `range` holds `init`, `var` the name and `args` the one `expr`.

use super::syntax::{Expr, Issue, Kind, Macro};

/// `celBind`'s error when the first argument is not an identifier.
const NOT_AN_IDENTIFIER: &str = "cel.bind() variable names must be simple identifiers";

/// Expands every `cel.bind(name, init, expr)` of `e`, innermost first as cel-go's parser
/// does; the errors of the binds whose first argument is not an identifier, if any.
///
/// Recursion follows the tree, so callers run this where they check it (on
/// [`super::stack::on_large_stack`]).
pub(super) fn expand(e: &mut Expr, errors: &mut Vec<Issue>) {
    match &mut e.kind {
        Kind::Lit(_) | Kind::Ident(_) => {}
        Kind::Select { operand, .. } => expand(operand, errors),
        Kind::Call { target, args, .. } => {
            if let Some(t) = target {
                expand(t, errors);
            }
            args.iter_mut().for_each(|a| expand(a, errors));
        }
        Kind::List(elems) => elems.iter_mut().for_each(|(x, _)| expand(x, errors)),
        Kind::Map(entries) => entries.iter_mut().for_each(|(k, v, _)| {
            expand(k, errors);
            expand(v, errors);
        }),
        Kind::Struct { fields, .. } => fields.iter_mut().for_each(|f| expand(&mut f.value, errors)),
        Kind::Comprehension { range, args, .. } => {
            expand(range, errors);
            args.iter_mut().for_each(|a| expand(a, errors));
        }
    }
    let Kind::Call {
        func, target, args, ..
    } = &mut e.kind
    else {
        return;
    };
    // A receiver macro: `bind` with three arguments on the identifier `cel`
    // (`macroTargetMatchesNamespace`); anything else stays a call.
    let on_cel = matches!(target.as_deref(), Some(Expr { kind: Kind::Ident(n), .. }) if n == "cel");
    if func != "bind" || args.len() != 3 || !on_cel {
        return;
    }
    let name = match &args[0].kind {
        // cel-go takes any identifier, a leading-dot one included.
        Kind::Ident(n) => n.clone(),
        _ => {
            errors.push(Issue {
                pos: args[0].pos,
                message: NOT_AN_IDENTIFIER.to_owned(),
            });
            return;
        }
    };
    let result = args.pop();
    let init = args.pop();
    let (Some(init), Some(result)) = (init, result) else {
        return;
    };
    e.kind = Kind::Comprehension {
        kind: Macro::Bind,
        range: Box::new(init),
        var: name,
        var2: None,
        args: vec![result],
    };
}

#[cfg(test)]
mod tests {
    use super::super::env::{Env, STEP_LIMIT};
    use super::super::syntax::{self, Kind, Macro, render_issues};
    use super::super::types::Type;
    use super::super::value::Value;
    use super::super::{check, eval};
    use super::expand;

    fn expanded(source: &str) -> Result<syntax::Expr, String> {
        let mut e = syntax::parse(source)?;
        let mut errors = Vec::new();
        expand(&mut e, &mut errors);
        if errors.is_empty() {
            Ok(e)
        } else {
            Err(render_issues(source, &errors))
        }
    }

    #[test]
    fn a_bind_becomes_a_comprehension_and_nests() {
        let e = expanded("cel.bind(a, 1, cel.bind(b, a, a + b))").unwrap();
        let Kind::Comprehension {
            kind, var, args, ..
        } = &e.kind
        else {
            panic!("{e:?}")
        };
        assert_eq!((*kind, var.as_str()), (Macro::Bind, "a"));
        assert!(matches!(
            &args[0].kind,
            Kind::Comprehension { kind: Macro::Bind, var, .. } if var == "b"
        ));
    }

    #[test]
    fn other_shapes_stay_calls() {
        for source in [
            "x.bind(a, 1, a)",
            "cel.bind(a, 1)",
            "cel.x.bind(a, 1, a)",
            "bind(a, 1, a)",
        ] {
            let e = expanded(source).unwrap();
            assert!(matches!(e.kind, Kind::Call { .. }), "{source}");
        }
    }

    /// Evaluates a bind-using expression with `n: int` bound to 3; its value and the cost left.
    fn run(source: &str) -> (Result<String, String>, u64) {
        let mut e = expanded(source).unwrap();
        let checked = check::check_in(
            &mut e,
            vec![("n".to_owned(), Type::Int)],
            check::Features::default(),
        );
        assert!(checked.issues.is_empty(), "{source}: {:?}", checked.issues);
        let mut env = Env::new(vec![("n", Value::Int(3))]);
        let v = eval::eval(&e, &mut env)
            .map(|v| format!("{v:?}"))
            .map_err(|e| e.message);
        (v, env.steps)
    }

    #[test]
    fn a_bound_name_reads_its_initializer_once_and_only_when_read() {
        let (v, left) = run("cel.bind(x, n + 1, x * x + x)");
        assert_eq!(v, Ok("Int(20)".to_owned()));
        // `n + 1` once (an identifier and a call), then three reads of `x` and two calls.
        assert_eq!(STEP_LIMIT - left, 2 + 3 + 2);
        // Never read: its error never happens, its cost is never charged.
        let (v, left) = run("cel.bind(x, 1 / (n - 3), n > 0 || x > 0)");
        assert_eq!(v, Ok("Bool(true)".to_owned()));
        assert_eq!(STEP_LIMIT - left, 2);
        let (v, _) = run("cel.bind(x, 1 / (n - 3), n < 0 || x > 0)");
        assert_eq!(v, Err("division by zero".to_owned()));
    }

    #[test]
    fn an_initializer_sees_the_scope_of_its_bind_and_binds_nest() {
        // The inner `n` shadows the outer one in the result, not in the initializer of `x`.
        assert_eq!(
            run("cel.bind(x, n, cel.bind(n, 10, [1].all(n, x == 3)))").0,
            Ok("Bool(true)".to_owned())
        );
        assert_eq!(
            run("cel.bind(a, n, cel.bind(b, a * 2, cel.bind(a, b + 1, a)))").0,
            Ok("Int(7)".to_owned())
        );
    }

    #[test]
    fn a_name_that_is_not_an_identifier_is_refused_where_it_is() {
        assert_eq!(
            expanded("cel.bind(a.b, 1, 2) && cel.bind('x', 1, 2)").unwrap_err(),
            "ERROR: <input>:1:11: cel.bind() variable names must be simple identifiers\n | cel.bind(a.b, 1, 2) && cel.bind('x', 1, 2)\n | ..........^\n\
             ERROR: <input>:1:33: cel.bind() variable names must be simple identifiers\n | cel.bind(a.b, 1, 2) && cel.bind('x', 1, 2)\n | ................................^"
        );
    }
}
