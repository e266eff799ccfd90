//! The type checker, as cel-go's: it types every node against the declarations (the rule's
//! `self` and `oldSelf`, the library functions), resolves overloads with type-parameter
//! unification, and reports what cel-go reports (undeclared references, undefined fields, no
//! matching overload, ...). It rewrites the tree where cel-go does: a namespaced function
//! (`sets.contains(a, b)`) becomes a global call and a qualified type name an identifier.

use std::collections::HashMap;
use std::rc::Rc;

use super::decls::{self, Overload, Sig};
use super::syntax::{Expr, Issue, Kind, Lit, Macro};
use super::types::{OPTIONAL, Type};

/// The outcome of checking one expression.
pub(super) struct Checked {
    /// Its type, with unbound type parameters as `dyn`.
    pub(super) ty: Type,
    pub(super) issues: Vec<Issue>,
    /// Whether it refers to `oldSelf`.
    pub(super) uses_old_self: bool,
}

/// Checks `e` (rewriting it) with `self: self_type` and, when given, `oldSelf: old_self_type`.
pub(super) fn check(e: &mut Expr, self_type: &Type, old_self_type: Option<&Type>) -> Checked {
    let mut c = Checker {
        vars: vec![("self".to_owned(), self_type.clone())],
        mappings: HashMap::new(),
        fresh: 0,
        issues: Vec::new(),
        uses_old_self: false,
        in_format: 0,
        literals: Vec::new(),
        types: HashMap::new(),
        constant_args: Vec::new(),
        formats: Vec::new(),
    };
    if let Some(t) = old_self_type {
        c.vars.push(("oldSelf".to_owned(), t.clone()));
    }
    let t = c.check(e);
    let ty = substitute(&c.mappings, &t, true);
    if c.issues.is_empty() {
        c.validate();
    }
    Checked {
        ty,
        issues: c.issues,
        uses_old_self: c.uses_old_self,
    }
}

type Mapping = HashMap<Rc<str>, Type>;

struct Checker {
    /// Declared variables, innermost last (comprehension variables shadow).
    vars: Vec<(String, Type)>,
    mappings: Mapping,
    fresh: usize,
    issues: Vec<Issue>,
    uses_old_self: bool,
    /// How many `format` calls the current node is within.
    in_format: usize,
    /// For the validators run once the expression checks: the element types of each list
    /// literal, and the key and value types of each map literal (outside `format` calls).
    literals: Vec<Literal>,
    /// The type of each node, by position.
    types: HashMap<usize, Type>,
    /// Constant arguments of `duration`, `timestamp` and `matches`.
    constant_args: Vec<(&'static str, usize, String)>,
    /// `'...'.format([...])` with a constant string and a list literal.
    formats: Vec<FormatCall>,
}

/// The elements of a literal whose types must agree: a list's (the first disagreement is
/// reported) or a map's keys or values (every one is).
struct Literal {
    list: bool,
    /// Each element's position, and whether it is optional (`?x`: its type is unwrapped).
    elements: Vec<(usize, bool)>,
}

/// A `format` call the string format validator checks.
struct FormatCall {
    pos: usize,
    template: String,
    /// The positions of the list's elements.
    args: Vec<usize>,
}

impl Checker {
    fn error(&mut self, pos: usize, message: String) {
        self.issues.push(Issue { pos, message });
    }

    fn new_var(&mut self) -> Type {
        let t = Type::Param(decls::param_name(self.fresh));
        self.fresh += 1;
        t
    }

    fn lookup_var(&self, name: &str) -> Option<Type> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    fn undeclared(&mut self, pos: usize, name: &str) {
        self.error(
            pos,
            format!("undeclared reference to '{name}' (in container '')"),
        );
    }

    fn check(&mut self, e: &mut Expr) -> Type {
        let pos = e.pos;
        let t = self.check_kind(e);
        self.types.insert(pos, t.clone());
        t
    }

    fn check_kind(&mut self, e: &mut Expr) -> Type {
        let pos = e.pos;
        match &mut e.kind {
            Kind::Lit(lit) => match lit {
                Lit::Null => Type::Null,
                Lit::Bool(_) => Type::Bool,
                Lit::Int(_) => Type::Int,
                Lit::Uint(_) => Type::Uint,
                Lit::Double(_) => Type::Double,
                Lit::String(_) => Type::String,
                Lit::Bytes(_) => Type::Bytes,
            },
            Kind::Ident(name) => {
                let name = name.clone();
                self.ident(pos, &name)
            }
            Kind::Select { .. } => self.select(e),
            Kind::Call { .. } => self.call(e),
            Kind::List(elems) => {
                let mut elem_type: Option<Type> = None;
                let mut seen = Vec::new();
                for (elem, optional) in elems.iter_mut() {
                    let mut t = self.check(elem);
                    if *optional {
                        match t.unwrap_optional() {
                            Some(inner) => t = inner.clone(),
                            None if !matches!(t, Type::Dyn) => {
                                let wanted = Type::optional(t.clone());
                                self.error(
                                    elem.pos,
                                    format!("expected type '{wanted}' but found '{t}'"),
                                );
                            }
                            None => {}
                        }
                    }
                    seen.push((elem.pos, *optional));
                    elem_type = Some(self.join(elem_type, t));
                }
                if self.in_format == 0 {
                    self.literals.push(Literal {
                        list: true,
                        elements: seen,
                    });
                }
                let elem = elem_type.unwrap_or_else(|| self.new_var());
                Type::list(elem)
            }
            Kind::Map(entries) => {
                let (mut key_type, mut value_type): (Option<Type>, Option<Type>) = (None, None);
                let (mut keys, mut values) = (Vec::new(), Vec::new());
                for (key, value, optional) in entries.iter_mut() {
                    let kt = self.check(key);
                    keys.push((key.pos, false));
                    key_type = Some(self.join(key_type, kt));
                    let mut vt = self.check(value);
                    if *optional {
                        match vt.unwrap_optional() {
                            Some(inner) => vt = inner.clone(),
                            None if !matches!(vt, Type::Dyn) => {
                                let wanted = Type::optional(vt.clone());
                                self.error(
                                    value.pos,
                                    format!("expected type '{wanted}' but found '{vt}'"),
                                );
                            }
                            None => {}
                        }
                    }
                    values.push((value.pos, *optional));
                    value_type = Some(self.join(value_type, vt));
                }
                if self.in_format == 0 {
                    for elements in [keys, values] {
                        self.literals.push(Literal {
                            list: false,
                            elements,
                        });
                    }
                }
                match (key_type, value_type) {
                    (Some(k), Some(v)) => Type::map(k, v),
                    _ => {
                        let (k, v) = (self.new_var(), self.new_var());
                        Type::map(k, v)
                    }
                }
            }
            Kind::Struct(name) => {
                let name = name.clone();
                self.undeclared(pos, &name);
                Type::Error
            }
            Kind::Comprehension { .. } => self.comprehension(e),
        }
    }

    /// The final type of the node at `pos`.
    fn final_type(&self, pos: usize) -> Type {
        self.types
            .get(&pos)
            .map_or(Type::Dyn, |t| substitute(&self.mappings, t, true))
    }

    /// cel-go's AST validators, run on an expression that checks: constant durations,
    /// timestamps and regular expressions must parse, literals must be homogeneous (except in
    /// `format` calls), and constant format strings must fit their arguments.
    fn validate(&mut self) {
        for (kind, pos, value) in std::mem::take(&mut self.constant_args) {
            let ok = match kind {
                "duration" => super::time::parse_duration(&value).is_some(),
                "timestamp" => super::time::parse_timestamp(&value).is_some(),
                _ => super::stdlib::compile_regex(&value).is_ok(),
            };
            if !ok {
                self.error(pos, format!("invalid {kind} argument"));
            }
        }
        for literal in std::mem::take(&mut self.literals) {
            let mut first: Option<Type> = None;
            for (pos, optional) in literal.elements {
                let mut t = self.final_type(pos);
                if optional && let Some(inner) = t.unwrap_optional() {
                    t = inner.clone();
                }
                match &first {
                    None => first = Some(t),
                    Some(f) if *f != t => {
                        self.error(pos, format!("expected type '{f}' but found '{t}'"));
                        if literal.list {
                            break;
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        for call in std::mem::take(&mut self.formats) {
            if let Err((pos, message)) = self.check_format(&call) {
                self.error(pos, message);
            }
        }
    }

    /// The string format validator: each clause against the type of its argument.
    fn check_format(&self, call: &FormatCall) -> Result<(), (usize, String)> {
        let clause = |m: String| (call.pos, format!("could not parse formatting clause: {m}"));
        let mut chars = call.template.chars().peekable();
        let mut used = 0;
        while let Some(c) = chars.next() {
            if c != '%' {
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                continue;
            }
            if chars.peek().is_none() {
                return Err((call.pos, "unexpected end of string".to_owned()));
            }
            let Some(&arg) = call.args.get(used) else {
                return Err((call.pos, format!("index {used} out of range")));
            };
            if chars.peek() == Some(&'.') {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                if chars.peek().is_none() {
                    return Err(clause(
                        "error while parsing precision: could not find end of precision specifier"
                            .to_owned(),
                    ));
                }
            }
            let Some(verb) = chars.next() else {
                return Err((call.pos, "unexpected end of string".to_owned()));
            };
            let t = self.final_type(arg);
            let fits =
                |allowed: &[&str]| matches!(t, Type::Dyn) || allowed.contains(&kind_name(&t));
            let wrong = match verb {
                's' => (!fits(&[
                    "list", "map", "int", "uint", "double", "bool", "string", "timestamp", "bytes",
                    "duration", "type", "null_type",
                ]))
                .then_some("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"),
                'd' => (!fits(&["int", "uint"])).then_some("decimal clause can only be used on integers"),
                'f' => (!fits(&["double", "string"])).then_some("fixed-point clause can only be used on doubles"),
                'e' => (!fits(&["double", "string"])).then_some("scientific clause can only be used on doubles"),
                'b' => (!fits(&["int", "uint", "bool"])).then_some("only integers and bools can be formatted as binary"),
                'x' | 'X' => (!fits(&["int", "uint", "string", "bytes"]))
                    .then_some("only integers, byte buffers, and strings can be formatted as hex"),
                'o' => (!fits(&["int", "uint"])).then_some("octal clause can only be used on integers"),
                other => return Err(clause(format!("unrecognized formatting clause \"{other}\""))),
            };
            if let Some(message) = wrong {
                return Err((
                    arg,
                    format!(
                        "error during formatting: {message}, was given {}",
                        type_name(&t)
                    ),
                ));
            }
            used += 1;
        }
        if call.args.len() > used {
            return Err((
                call.pos,
                format!(
                    "too many arguments supplied to string.format (expected {used}, got {})",
                    call.args.len()
                ),
            ));
        }
        Ok(())
    }

    fn ident(&mut self, pos: usize, name: &str) -> Type {
        if let Some(t) = self.lookup_var(name) {
            if name == "oldSelf" && !self.vars.iter().skip(2).any(|(n, _)| n == "oldSelf") {
                self.uses_old_self = true;
            }
            return t;
        }
        if let Some(t) = decls::type_ident(name) {
            return t;
        }
        self.undeclared(pos, name);
        Type::Error
    }

    /// The dotted name `e` spells (`a.b.c`), if it is one.
    fn qualified(e: &Expr) -> Option<String> {
        match &e.kind {
            Kind::Ident(n) => Some(n.clone()),
            Kind::Select {
                operand,
                field,
                test: false,
            } => Some(format!("{}.{field}", Self::qualified(operand)?)),
            _ => None,
        }
    }

    fn select(&mut self, e: &mut Expr) -> Type {
        let pos = e.pos;
        // A qualified identifier (`google.protobuf.Timestamp`) that is not a variable.
        if let Some(name) = Self::qualified(e) {
            let root = name.split('.').next().unwrap_or("");
            if self.lookup_var(root).is_none()
                && let Some(t) = decls::type_ident(&name)
            {
                e.kind = Kind::Ident(name);
                return t;
            }
        }
        let Kind::Select {
            operand,
            field,
            test,
        } = &mut e.kind
        else {
            return Type::Error;
        };
        let (field, test) = (field.clone(), *test);
        let t = self.select_field(pos, operand, &field, false);
        if test { Type::Bool } else { t }
    }

    fn select_field(
        &mut self,
        pos: usize,
        operand: &mut Expr,
        field: &str,
        optional: bool,
    ) -> Type {
        let operand_type = self.check(operand);
        let operand_type = substitute(&self.mappings, &operand_type, false);
        let (target, was_optional) = match operand_type.unwrap_optional() {
            Some(inner) => (inner.clone(), true),
            None => (operand_type.clone(), false),
        };
        let result = match &target {
            Type::Map(_, v) => (**v).clone(),
            Type::Object(o) => match o.fields.get(field) {
                Some(t) => t.clone(),
                None => {
                    self.error(pos, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Param(_) => {
                self.assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            t if t.is_dyn_or_error() => Type::Dyn,
            Type::Opaque(..) => {
                self.error(pos, format!("undefined field '{field}'"));
                Type::Error
            }
            t => {
                self.error(pos, format!("type '{t}' does not support field selection"));
                Type::Dyn
            }
        };
        if was_optional || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn call(&mut self, e: &mut Expr) -> Type {
        let pos = e.pos;
        let Kind::Call { func, target, args } = &mut e.kind else {
            return Type::Error;
        };
        if func == "_?._" {
            return self.opt_select(pos, args);
        }
        // A namespaced function (`sets.contains(a, b)`), unless its prefix is a variable.
        if let Some(t) = target.as_deref()
            && let Some(prefix) = Self::qualified(t)
        {
            let root = prefix.split('.').next().unwrap_or("");
            let name = format!("{prefix}.{func}");
            if self.lookup_var(root).is_none()
                && let Some(overloads) = decls::function(&name)
            {
                *func = name;
                *target = None;
                let func = func.clone();
                let arg_types: Vec<Type> = args.iter_mut().map(|a| self.check(a)).collect();
                return self.resolve(pos, &func, overloads, None, arg_types);
            }
        }
        let func = func.clone();
        let formatting = func == "format";
        self.in_format += usize::from(formatting);
        let arg_types: Vec<Type> = args.iter_mut().map(|a| self.check(a)).collect();
        let arg_pos: Vec<usize> = args.iter().map(|a| a.pos).collect();
        let target_type = target.as_deref_mut().map(|t| self.check(t));
        self.in_format -= usize::from(formatting);
        if matches!(func.as_str(), "_&&_" | "_||_") {
            let mut failed = false;
            for (t, p) in arg_types.iter().zip(&arg_pos) {
                if !self.assignable(t, &Type::Bool) {
                    self.error(*p, format!("expected type 'bool' but found '{t}'"));
                    failed = true;
                }
            }
            return if failed { Type::Error } else { Type::Bool };
        }
        let Some(overloads) = decls::function(&func) else {
            self.undeclared(pos, &func);
            return Type::Error;
        };
        self.record_constants(pos, &func, target.as_deref(), args);
        self.resolve(pos, &func, overloads, target_type, arg_types)
    }

    /// Notes what the validators check of a call: a constant argument that must parse, or a
    /// constant format string and its list of arguments.
    fn record_constants(&mut self, pos: usize, func: &str, target: Option<&Expr>, args: &[Expr]) {
        let constant = |e: Option<&Expr>| match e.map(|e| (&e.kind, e.pos)) {
            Some((Kind::Lit(Lit::String(s)), p)) => Some((s.clone(), p)),
            _ => None,
        };
        let (kind, arg) = match (func, target) {
            ("duration", None) => ("duration", args.first()),
            ("timestamp", None) => ("timestamp", args.first()),
            ("matches", None) => ("matches", args.get(1)),
            ("matches", Some(_)) => ("matches", args.first()),
            ("format", Some(t)) => {
                if let (Some((template, _)), [list]) = (constant(Some(t)), args)
                    && let Kind::List(elems) = &list.kind
                {
                    self.formats.push(FormatCall {
                        pos,
                        template,
                        args: elems.iter().map(|(e, _)| e.pos).collect(),
                    });
                }
                return;
            }
            _ => return,
        };
        if let Some((value, at)) = constant(arg) {
            self.constant_args.push((kind, at, value));
        }
    }

    fn opt_select(&mut self, pos: usize, args: &mut [Expr]) -> Type {
        let [operand, field] = args else {
            return Type::Error;
        };
        let Kind::Lit(Lit::String(name)) = &field.kind else {
            return Type::Error;
        };
        let name = name.clone();
        self.select_field(pos, operand, &name, true)
    }

    fn resolve(
        &mut self,
        pos: usize,
        func: &str,
        overloads: &[Overload],
        target: Option<Type>,
        args: Vec<Type>,
    ) -> Type {
        let member = target.is_some();
        let mut all: Vec<Type> = target.into_iter().collect();
        all.extend(args);
        let mut result: Option<Type> = None;
        for overload in overloads {
            if overload.member != member || overload.args.len() != all.len() {
                continue;
            }
            let mut params = Vec::new();
            overload.args.iter().for_each(|s| s.params(&mut params));
            overload.result.params(&mut params);
            let fresh: Vec<(&'static str, Type)> =
                params.iter().map(|p| (*p, self.new_var())).collect();
            let rename = |p: &'static str| {
                fresh
                    .iter()
                    .find(|(n, _)| *n == p)
                    .map_or(Type::Dyn, |(_, t)| t.clone())
            };
            let wanted: Vec<Type> = overload
                .args
                .iter()
                .map(|s: &Sig| s.to_type(&rename))
                .collect();
            let mut m = self.mappings.clone();
            if all
                .iter()
                .zip(&wanted)
                .all(|(a, w)| is_assignable(&mut m, a, w))
            {
                self.mappings = m;
                let r = substitute(&self.mappings, &overload.result.to_type(&rename), false);
                result = Some(match result {
                    None => r,
                    Some(prev) if matches!(prev, Type::Dyn) || prev == r => prev,
                    Some(_) => Type::Dyn,
                });
            }
        }
        match result {
            Some(t) => t,
            None => {
                let shown: Vec<String> = all
                    .iter()
                    .map(|t| substitute(&self.mappings, t, true).to_string())
                    .collect();
                let signature = if member {
                    format!("{}.({})", shown[0], shown[1..].join(", "))
                } else {
                    format!("({})", shown.join(", "))
                };
                self.error(
                    pos,
                    format!("found no matching overload for '{func}' applied to '{signature}'"),
                );
                Type::Error
            }
        }
    }

    /// `joinTypes`: the element type of a literal so far and the next element's (`dyn` when
    /// they differ: homogeneity is the validators' to check).
    fn join(&mut self, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else {
            return current;
        };
        if self.assignable(&previous, &current) {
            most_general(&previous, &current)
        } else {
            Type::Dyn
        }
    }

    fn assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        let mut m = self.mappings.clone();
        if is_assignable(&mut m, t1, t2) {
            self.mappings = m;
            true
        } else {
            false
        }
    }

    fn comprehension(&mut self, e: &mut Expr) -> Type {
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
        let range_type = self.check(range);
        let range_type = substitute(&self.mappings, &range_type, false);
        if matches!(kind, Macro::OptMap | Macro::OptFlatMap) {
            return self.opt_map(pos, kind, &range_type, var, args);
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
            Macro::OptMap | Macro::OptFlatMap => Type::Error,
        }
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

/// The kind of a type, as the format validator compares them.
fn kind_name(t: &Type) -> &'static str {
    match t {
        Type::List(_) => "list",
        Type::Map(..) => "map",
        Type::Int => "int",
        Type::Uint => "uint",
        Type::Double => "double",
        Type::Bool => "bool",
        Type::String => "string",
        Type::Timestamp => "timestamp",
        Type::Bytes => "bytes",
        Type::Duration => "duration",
        Type::Meta(_) => "type",
        Type::Null => "null_type",
        _ => "other",
    }
}

/// `TypeName()`: the name without parameters.
fn type_name(t: &Type) -> String {
    let full = t.to_string();
    match full.split_once('(') {
        Some((name, _)) => name.to_owned(),
        None => full,
    }
}

/// `isEqualOrLessSpecific`.
fn less_specific(t1: &Type, t2: &Type) -> bool {
    if matches!(t1, Type::Dyn | Type::Param(_)) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::Param(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Opaque(a, pa), Type::Opaque(b, pb)) => {
            a == b && pa.len() == pb.len() && pa.iter().zip(pb).all(|(x, y)| less_specific(x, y))
        }
        (Type::List(a), Type::List(b)) => less_specific(a, b),
        (Type::Map(ka, va), Type::Map(kb, vb)) => less_specific(ka, kb) && less_specific(va, vb),
        (Type::Meta(_), Type::Meta(_)) => true,
        (a, b) => a == b,
    }
}

fn most_general(t1: &Type, t2: &Type) -> Type {
    if less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

/// `internalIsAssignable`: whether `t1` can be used where `t2` is wanted, binding type
/// parameters in `m`.
fn is_assignable(m: &mut Mapping, t1: &Type, t2: &Type) -> bool {
    if let Type::Param(_) = t2 {
        let (valid, has_sub) = valid_substitution(m, t1, t2);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
    }
    if let Type::Param(_) = t1 {
        return valid_substitution(m, t2, t1).0;
    }
    if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
        return true;
    }
    if matches!(t1, Type::Null) {
        return nullable(t2);
    }
    if matches!(t2, Type::Null) {
        return nullable(t1);
    }
    match (t1, t2) {
        (Type::Meta(_), b) => matches!(b, Type::Meta(_)),
        (Type::List(a), Type::List(b)) => is_assignable(m, a, b),
        (Type::Map(ka, va), Type::Map(kb, vb)) => {
            is_assignable(m, ka, kb) && is_assignable(m, va, vb)
        }
        (Type::Opaque(a, pa), Type::Opaque(b, pb)) => {
            a == b && pa.len() == pb.len() && pa.iter().zip(pb).all(|(x, y)| is_assignable(m, x, y))
        }
        (Type::Object(a), Type::Object(b)) => a.name == b.name,
        (a, b) => a == b,
    }
}

/// Whether null is assignable to `t` (the legacy checker's nullable kinds).
fn nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Opaque(..) | Type::Object(_) | Type::Duration | Type::Timestamp | Type::Null
    )
}

/// `isValidTypeSubstitution`: whether the parameter `t2` can stand for `t1`, and whether it was
/// already bound.
fn valid_substitution(m: &mut Mapping, t1: &Type, t2: &Type) -> (bool, bool) {
    if t1 == t2 {
        return (true, true);
    }
    let Type::Param(name) = t2 else {
        return (false, false);
    };
    if let Some(sub) = m.get(name).cloned() {
        if *t1 == sub {
            return (true, true);
        }
        if is_assignable(m, t1, &sub) {
            let general = most_general(t1, &sub);
            if not_referenced_in(m, t2, &general) {
                m.insert(name.clone(), general);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        m.insert(name.clone(), t1.clone());
        return (true, false);
    }
    (false, false)
}

/// The occurs check.
fn not_referenced_in(m: &Mapping, t: &Type, within: &Type) -> bool {
    if t == within {
        return false;
    }
    match within {
        Type::Param(name) => m.get(name).is_none_or(|sub| not_referenced_in(m, t, sub)),
        Type::List(_) | Type::Map(..) | Type::Opaque(..) | Type::Meta(_) => {
            within.params().iter().all(|p| not_referenced_in(m, t, p))
        }
        _ => true,
    }
}

/// `substitute`: `t` with its bound parameters replaced (unbound ones by `dyn` if `to_dyn`).
pub(super) fn substitute(m: &Mapping, t: &Type, to_dyn: bool) -> Type {
    substitute_depth(m, t, to_dyn, 0)
}

fn substitute_depth(m: &Mapping, t: &Type, to_dyn: bool, depth: usize) -> Type {
    if depth > 64 {
        return Type::Dyn;
    }
    let sub = |x: &Type| substitute_depth(m, x, to_dyn, depth + 1);
    match t {
        Type::Param(name) => match m.get(name) {
            Some(bound) => sub(bound),
            None if to_dyn => Type::Dyn,
            None => t.clone(),
        },
        Type::List(e) => Type::list(sub(e)),
        Type::Map(k, v) => Type::map(sub(k), sub(v)),
        Type::Opaque(name, p) => Type::Opaque(name, p.iter().map(sub).collect()),
        Type::Meta(Some(inner)) => Type::type_of(sub(inner)),
        other => other.clone(),
    }
}
