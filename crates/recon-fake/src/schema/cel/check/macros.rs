//! The types of the comprehension macros (`all`, `exists`, `map`, `filter`, the two-variable
//! forms, `sortBy`, `optMap`, `cel.bind`), as cel-go types their expansions.

use super::super::syntax::{Expr, Kind, Macro};
use super::super::types::{OPTIONAL, Type};
use super::super::unify::substitute;
use super::Checker;

impl Checker {
    pub(super) fn comprehension(&mut self, e: &mut Expr) -> Type {
        let pos = e.pos;
        let Kind::Comprehension {
            kind,
            range,
            var,
            var2,
            args,
        } = &mut e.kind
        else {
            return Type::Error;
        };
        let kind = *kind;
        if kind == Macro::Bind {
            // The expansion's range, the empty list checked first, takes a fresh type
            // variable (`checkCreateList`).
            self.new_var();
        }
        let range_type = self.check(range);
        let range_type = substitute(&self.mappings, &range_type, false);
        if matches!(kind, Macro::OptMap | Macro::OptFlatMap) {
            return self.opt_map(pos, kind, &range_type, var, args);
        }
        if kind == Macro::Bind {
            return self.bind(range_type, var, args);
        }
        let (var_type, var2_type) = match (&range_type, var2.is_some()) {
            (Type::List(elem), false) => ((**elem).clone(), None),
            (Type::List(elem), true) => (Type::Int, Some((**elem).clone())),
            (Type::Map(k, v), two) => ((**k).clone(), two.then(|| (**v).clone())),
            (t, two) if t.is_dyn_or_error() || matches!(t, Type::Param(_)) => {
                self.assignable(&Type::Dyn, t);
                (Type::Dyn, two.then_some(Type::Dyn))
            }
            (t, two) => {
                self.error(
                    range.pos,
                    format!(
                        "expression of type '{t}' cannot be range of a comprehension (must be list, map, or dynamic)"
                    ),
                );
                (Type::Error, two.then_some(Type::Error))
            }
        };
        let scope = self.vars.len();
        self.vars.push((var.clone(), var_type.clone()));
        if let (Some(v2), Some(t2)) = (var2.as_ref(), var2_type) {
            self.vars.push((v2.clone(), t2));
        }
        let types: Vec<Type> = args.iter_mut().map(|a| self.check(a)).collect();
        self.vars.truncate(scope);
        let positions: Vec<usize> = args.iter().map(|a| a.pos).collect();
        // The predicate is the condition of `&&`/`||` (all, exists) or of a `?:` whose
        // branches are the accumulator (the other macros).
        let predicate = |c: &mut Checker, accu: Option<&Type>| {
            let t = types.first().cloned().unwrap_or(Type::Dyn);
            if c.assignable(&t, &Type::Bool) {
                return;
            }
            let t = substitute(&c.mappings, &t, true);
            match accu {
                Some(a) => {
                    let a = substitute(&c.mappings, a, true);
                    c.error(
                        pos,
                        format!(
                            "found no matching overload for '_?_:_' applied to '({t}, {a}, {a})'"
                        ),
                    );
                }
                None => {
                    let at = positions.first().copied().unwrap_or(pos);
                    c.error(at, format!("expected type 'bool' but found '{t}'"));
                }
            }
        };
        let last = types.last().cloned().unwrap_or(Type::Dyn);
        let filtered = types.len() > 1;
        match kind {
            Macro::All | Macro::Exists => {
                predicate(self, None);
                Type::Bool
            }
            Macro::ExistsOne => {
                predicate(self, Some(&Type::Int));
                Type::Bool
            }
            Macro::Map | Macro::TransformList => {
                let result = Type::list(last);
                if filtered {
                    predicate(self, Some(&result));
                }
                result
            }
            Macro::Filter => {
                let result = Type::list(var_type);
                predicate(self, Some(&result));
                result
            }
            Macro::SortBy => Type::list(var_type),
            Macro::TransformMap => {
                let key = match &range_type {
                    Type::Map(k, _) => (**k).clone(),
                    Type::List(_) => Type::Int,
                    _ => Type::Dyn,
                };
                let result = Type::map(key, last);
                if filtered {
                    predicate(self, Some(&result));
                }
                result
            }
            Macro::TransformMapEntry => {
                let result = match substitute(&self.mappings, &last, false) {
                    t @ Type::Map(..) => t,
                    t if t.is_dyn_or_error() => Type::map(Type::Dyn, Type::Dyn),
                    t => {
                        let at = positions.last().copied().unwrap_or(pos);
                        self.error(at, format!("expected type 'map(dyn, dyn)' but found '{t}'"));
                        return Type::Error;
                    }
                };
                if filtered {
                    predicate(self, Some(&result));
                }
                result
            }
            Macro::OptMap | Macro::OptFlatMap | Macro::Bind => Type::Error,
        }
    }

    /// `cel.bind(var, init, t)`: cel-go's `checkComprehension` of the expansion declares the
    /// accumulator `var` with the type of `init` in the scope of the result `t` only (the
    /// empty range and the `false` condition add nothing), and the whole has the type of `t`.
    fn bind(&mut self, init: Type, var: &str, args: &mut [Expr]) -> Type {
        let scope = self.vars.len();
        self.vars.push((var.to_owned(), init));
        let t = args.first_mut().map_or(Type::Dyn, |a| self.check(a));
        self.vars.truncate(scope);
        substitute(&self.mappings, &t, false)
    }

    /// `opt.optMap(x, t)` and `opt.optFlatMap(x, t)`.
    fn opt_map(
        &mut self,
        pos: usize,
        kind: Macro,
        target: &Type,
        var: &str,
        args: &mut [Expr],
    ) -> Type {
        let inner = match target {
            Type::Opaque(OPTIONAL, p) => p.first().cloned().unwrap_or(Type::Dyn),
            t if t.is_dyn_or_error() => Type::Dyn,
            t => {
                let name = if kind == Macro::OptMap {
                    "optMap"
                } else {
                    "optFlatMap"
                };
                self.error(
                    pos,
                    format!("found no matching overload for '{name}' applied to '{t}.(dyn)'"),
                );
                return Type::Error;
            }
        };
        let scope = self.vars.len();
        self.vars.push((var.to_owned(), inner));
        let t = args.first_mut().map_or(Type::Dyn, |a| self.check(a));
        self.vars.truncate(scope);
        if kind == Macro::OptMap {
            return Type::optional(t);
        }
        match t {
            t @ Type::Opaque(OPTIONAL, _) => t,
            t if t.is_dyn_or_error() => Type::optional(Type::Dyn),
            t => {
                let at = args.first().map_or(pos, |a| a.pos);
                self.error(
                    at,
                    format!("expected type 'optional_type(dyn)' but found '{t}'"),
                );
                Type::Error
            }
        }
    }
}
