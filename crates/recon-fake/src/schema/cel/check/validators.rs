//! cel-go's AST validators, run once an expression checks: constant durations, timestamps and
//! regular expressions must parse, list and map literals must be homogeneous (except within
//! `format` calls), and a constant format string must fit its list of arguments.

use super::super::syntax::{Expr, Kind, Lit};
use super::super::types::Type;
use super::super::unify::substitute;
use super::Checker;

/// The elements of a literal whose types must agree: a list's (the first disagreement is
/// reported) or a map's keys or values (every one is).
pub(super) struct Literal {
    pub(super) list: bool,
    /// Each element's position, and whether it is optional (`?x`: its type is unwrapped).
    pub(super) elements: Vec<(usize, bool)>,
}

/// A `format` call the string format validator checks.
pub(super) struct FormatCall {
    pos: usize,
    template: String,
    /// The positions of the list's elements.
    args: Vec<usize>,
}

impl Checker {
    /// The final type of the node at `pos`.
    fn final_type(&self, pos: usize) -> Type {
        self.types
            .get(&pos)
            .map_or(Type::Dyn, |t| substitute(&self.mappings, t, true))
    }

    /// cel-go's AST validators, run on an expression that checks: constant durations,
    /// timestamps and regular expressions must parse, literals must be homogeneous (except in
    /// `format` calls), and constant format strings must fit their arguments.
    pub(super) fn validate(&mut self) {
        for (kind, pos, value) in std::mem::take(&mut self.constant_args) {
            let ok = match kind {
                "duration" => super::super::time::parse_duration(&value).is_some(),
                "timestamp" => super::super::time::parse_timestamp(&value).is_some(),
                _ => crate::schema::go_regexp::compile(&value).is_ok(),
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
                let mut digits = 0;
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                    digits += 1;
                }
                if chars.peek().is_none() {
                    return Err(clause(
                        "error while parsing precision: could not find end of precision specifier"
                            .to_owned(),
                    ));
                }
                if digits == 0 {
                    return Err(clause(super::super::format::EMPTY_PRECISION.to_owned()));
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

    /// Notes what the validators check of a call: a constant argument that must parse, or a
    /// constant format string and its list of arguments.
    pub(super) fn record_constants(
        &mut self,
        pos: usize,
        func: &str,
        target: Option<&Expr>,
        args: &[Expr],
    ) {
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
