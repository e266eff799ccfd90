//! The type checker, as cel-go's: it types every node against the declarations (the rule's
//! `self` and `oldSelf`, the library functions), resolves overloads with type-parameter
//! unification, and reports what cel-go reports (undeclared references, undefined fields, no
//! matching overload, ...). It rewrites the tree where cel-go does: a namespaced function
//! (`sets.contains(a, b)`) becomes a global call and a qualified type name an identifier.

mod macros;
mod validators;

use std::collections::HashMap;
use std::rc::Rc;

use validators::{FormatCall, Literal};

use super::decls::{self, Overload, Sig};
use super::syntax::{Expr, Issue, Kind, Lit, Op};
use super::types::{ObjType, Type};
use super::unify::{Mapping, is_assignable, most_general, substitute};

/// The name of the patch type of a JSON Patch operation.
pub(super) const JSON_PATCH: &str = "JSONPatch";

/// The patch type `name` resolves to (`mutation.DynamicTypeResolver`): `JSONPatch` with its
/// four fields, or a dynamic `Object` / `Object.<path>` whose fields are all `dyn`.
pub(super) fn patch_type(name: &str) -> Option<Rc<ObjType>> {
    if name == JSON_PATCH {
        let fields = [
            ("op", Type::String),
            ("path", Type::String),
            ("from", Type::String),
            ("value", Type::Dyn),
        ];
        return Some(Rc::new(ObjType {
            name: JSON_PATCH.to_owned(),
            fields: fields.into_iter().map(|(n, t)| (n.to_owned(), t)).collect(),
        }));
    }
    (name == "Object" || name.starts_with("Object.")).then(|| {
        Rc::new(ObjType {
            name: name.to_owned(),
            fields: Default::default(),
        })
    })
}

/// The outcome of checking one expression.
pub(super) struct Checked {
    /// Its type, with unbound type parameters as `dyn`.
    pub(super) ty: Type,
    pub(super) issues: Vec<Issue>,
    /// Whether it refers to `oldSelf`.
    pub(super) uses_old_self: bool,
    /// The type of every node, by its address in the checked tree (valid while the tree is
    /// not moved), for cost estimation.
    pub(super) node_types: NodeTypes,
}

/// Types of nodes by address: see [`node_key`].
pub(super) type NodeTypes = HashMap<usize, Type>;

/// The key of a node in [`NodeTypes`].
pub(super) fn node_key(e: &Expr) -> usize {
    std::ptr::from_ref(e) as usize
}

/// What an environment declares beyond the CRD rules' functions: admission policies' patch
/// types (`Object{...}` and `JSONPatch{...}` messages, `jsonpatch.escapeKey`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Features {
    pub(super) patch_types: bool,
}

/// Checks `e` (rewriting it) with `self: self_type` and, when given, `oldSelf: old_self_type`.
pub(super) fn check(e: &mut Expr, self_type: &Type, old_self_type: Option<&Type>) -> Checked {
    let mut vars = vec![("self".to_owned(), self_type.clone())];
    if let Some(t) = old_self_type {
        vars.push(("oldSelf".to_owned(), t.clone()));
    }
    check_in(e, vars, Features::default())
}

/// Checks `e` (rewriting it) with the variables `vars` (a name may be dotted, as
/// `authorizer.requestResource` is) and the `features` of its environment.
pub(super) fn check_in(e: &mut Expr, vars: Vec<(String, Type)>, features: Features) -> Checked {
    let mut c = Checker {
        vars,
        features,
        mappings: HashMap::new(),
        fresh: 0,
        issues: Vec::new(),
        uses_old_self: false,
        in_format: 0,
        literals: Vec::new(),
        types: HashMap::new(),
        node_types: HashMap::new(),
        constant_args: Vec::new(),
        formats: Vec::new(),
    };
    let t = c.check(e);
    let ty = substitute(&c.mappings, &t, true);
    if c.issues.is_empty() {
        c.validate();
    }
    let node_types = c
        .node_types
        .iter()
        .map(|(k, t)| (*k, substitute(&c.mappings, t, true)))
        .collect();
    Checked {
        ty,
        issues: c.issues,
        uses_old_self: c.uses_old_self,
        node_types,
    }
}

struct Checker {
    /// Declared variables, innermost last (comprehension variables shadow).
    vars: Vec<(String, Type)>,
    features: Features,
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
    /// The type of each node, by address.
    node_types: NodeTypes,
    /// Constant arguments of `duration`, `timestamp` and `matches`.
    constant_args: Vec<(&'static str, usize, String)>,
    /// `'...'.format([...])` with a constant string and a list literal.
    formats: Vec<FormatCall>,
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
        self.node_types.insert(node_key(e), t.clone());
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
            Kind::Struct { .. } => self.message(e),
            Kind::Comprehension { .. } => self.comprehension(e),
        }
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
            // A dotted variable (`authorizer.requestResource`).
            if let Some(t) = self.lookup_var(&name) {
                e.kind = Kind::Ident(name);
                return t;
            }
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
            // A patch type's dynamic object has every field, of type `dyn`.
            Type::Object(o) if o.name == "Object" || o.name.starts_with("Object.") => Type::Dyn,
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
        let Kind::Call {
            func,
            op,
            target,
            args,
        } = &mut e.kind
        else {
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
                && let Some(overloads) = decls::function_with(&name, self.features.patch_types)
            {
                *op = Op::of(&name);
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
        let Some(overloads) = decls::function_with(&func, self.features.patch_types) else {
            self.undeclared(pos, &func);
            return Type::Error;
        };
        self.record_constants(pos, &func, target.as_deref(), args);
        self.resolve(pos, &func, overloads, target_type, arg_types)
    }

    /// `checkCreateMessage`: a message of a type the environment resolves (the patch types'
    /// `Object`, `Object.<path>` and `JSONPatch`), each field's value assignable to the
    /// field's type; any other name is an undeclared reference.
    fn message(&mut self, e: &mut Expr) -> Type {
        let pos = e.pos;
        let Kind::Struct { name, fields } = &mut e.kind else {
            return Type::Error;
        };
        let Some(message) = self.message_type(name) else {
            let name = name.clone();
            self.undeclared(pos, &name);
            return Type::Error;
        };
        for field in fields.iter_mut() {
            let mut value_type = self.check(&mut field.value);
            // A dynamic object's fields are all `dyn`; a JSONPatch has its four.
            let field_type = if message.name == JSON_PATCH {
                match message.fields.get(&field.name) {
                    Some(t) => t.clone(),
                    None => {
                        // The resolver knows the field, of no type: nothing is assignable.
                        let shown = substitute(&self.mappings, &value_type, true);
                        self.error(
                            field.pos,
                            format!(
                                "expected type of field '{}' is '' but provided type is '{shown}'",
                                field.name
                            ),
                        );
                        continue;
                    }
                }
            } else {
                Type::Dyn
            };
            if field.optional {
                match value_type.unwrap_optional() {
                    Some(inner) => value_type = inner.clone(),
                    None if !value_type.is_dyn_or_error() => {
                        let wanted = Type::optional(field_type.clone());
                        self.error(
                            field.value.pos,
                            format!("expected type '{wanted}' but found '{value_type}'"),
                        );
                    }
                    None => {}
                }
            }
            if !self.assignable(&field_type, &value_type) {
                let shown = substitute(&self.mappings, &value_type, true);
                self.error(
                    field.pos,
                    format!(
                        "expected type of field '{}' is '{field_type}' but provided type is '{shown}'",
                        field.name
                    ),
                );
            }
        }
        Type::Object(message)
    }

    /// The message type `name` resolves to in this environment, if any.
    fn message_type(&self, name: &str) -> Option<Rc<ObjType>> {
        if !self.features.patch_types {
            return None;
        }
        patch_type(name)
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
}
