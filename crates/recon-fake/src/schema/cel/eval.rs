//! The interpreter: a checked tree evaluated against `self` (and `oldSelf`), with cel-go's
//! semantics for errors (`&&`, `||` and the `all`/`exists` macros absorb an error when the
//! other side decides the result; everything else propagates the first error) and cel-go's
//! runtime cost (an identifier or field one, a call what [`actual::call_cost`] says, a list
//! literal ten, a macro what its expansion's steps cost), charged against the per-call limit.

use std::rc::Rc;

use recon_apimachinery::json::Value as Json;

use super::cost::actual;
use super::cost::{LIST_CREATE, MAP_CREATE, SELECT_AND_IDENT};
use super::env::{COST_EXCEEDED, Env, Slot};
use super::operators;
use super::stdlib;
use super::syntax::{Expr, Kind, Lit, Macro, Op};
use super::tree::SNode;
use super::value::{self, EvalError, MapVal, Result, Value};

/// Evaluates `e`.
pub(super) fn eval<'a, 'e>(e: &'e Expr, env: &mut Env<'a, 'e>) -> Result<Value<'a>> {
    match &e.kind {
        Kind::Lit(lit) => Ok(literal(lit)),
        Kind::Ident(name) => {
            env.charge(SELECT_AND_IDENT)?;
            match env.lookup(name) {
                Some((_, Slot::Ready(v))) => v.clone(),
                Some((at, &Slot::Lazy(init))) => first_read(at, init, env),
                None => not_in_scope(name),
            }
        }
        Kind::Select {
            operand,
            field,
            test,
        } => {
            let target = eval(operand, env)?;
            // A presence test costs nothing of its own (Kubernetes turns that cost off).
            if !*test {
                env.charge(SELECT_AND_IDENT)?;
            }
            select(target, field, *test)
        }
        Kind::Call {
            func,
            op,
            target,
            args,
        } => call(func, *op, target.as_deref(), args, env),
        Kind::List(elems) => list(elems, env),
        Kind::Map(entries) => map(entries, env),
        Kind::Struct { name, .. } => Err(EvalError::new(format!("unknown type: {name}"))),
        Kind::Comprehension {
            kind,
            range,
            var,
            var2,
            args,
        } => comprehension(*kind, range, var, var2.as_deref(), args, env),
    }
}

/// A `cel.bind` variable's first read: its initializer, in the scope the bind saw, once.
/// Kept out of [`eval`], as are the other arms a rule's loops seldom take, so that its frame
/// stays small.
#[inline(never)]
fn first_read<'a, 'e>(at: usize, init: &'e Expr, env: &mut Env<'a, 'e>) -> Result<Value<'a>> {
    let hidden = env.hide_from(at);
    let v = eval(init, env);
    env.restore(hidden, v.clone());
    v
}

/// A name with no value in scope: a type name, or a declared variable with no value here
/// (`oldSelf` on create).
#[cold]
fn not_in_scope<'a>(name: &str) -> Result<Value<'a>> {
    if super::decls::type_ident(name).is_some() {
        return Ok(Value::Type(Rc::from(name)));
    }
    Err(EvalError::new(format!("no such attribute(s): {name}")))
}

/// A list literal.
#[inline(never)]
fn list<'a, 'e>(elems: &'e [(Expr, bool)], env: &mut Env<'a, 'e>) -> Result<Value<'a>> {
    if !constant(elems.iter().map(|(x, _)| x)) {
        env.charge(LIST_CREATE)?;
    }
    let mut out = Vec::with_capacity(elems.len());
    for (elem, optional) in elems {
        let v = eval(elem, env)?;
        match (optional, v) {
            (true, Value::Optional(None)) => {}
            (true, Value::Optional(Some(inner))) => out.push((*inner).clone()),
            (_, v) => out.push(v),
        }
    }
    Ok(Value::list(out))
}

/// A map literal.
#[inline(never)]
fn map<'a, 'e>(entries: &'e [(Expr, Expr, bool)], env: &mut Env<'a, 'e>) -> Result<Value<'a>> {
    if !constant(entries.iter().flat_map(|(k, v, _)| [k, v])) {
        env.charge(MAP_CREATE)?;
    }
    let mut out: Vec<(Value<'a>, Value<'a>)> = Vec::with_capacity(entries.len());
    for (k, v, optional) in entries {
        let key = eval(k, env)?;
        if !matches!(
            key,
            Value::Int(_) | Value::Uint(_) | Value::Bool(_) | Value::String(_)
        ) {
            return Err(EvalError::new(format!(
                "unsupported key type: {}",
                key.type_name()
            )));
        }
        let value = match (optional, eval(v, env)?) {
            (true, Value::Optional(None)) => continue,
            (true, Value::Optional(Some(inner))) => (*inner).clone(),
            (_, v) => v,
        };
        // A repeated key takes the later value (a Go map).
        let keys: Vec<Value<'a>> = out.iter().map(|(k, _)| k.clone()).collect();
        match value::position(&keys, &key)?.and_then(|i| out.get_mut(i)) {
            Some(entry) => entry.1 = value,
            None => out.push((key, value)),
        }
    }
    Ok(Value::Map(MapVal::Owned(Rc::new(out))))
}

/// Whether a literal list or map is made of literals only: cel-go's optimizer builds it once,
/// when the program is planned, so evaluating it costs nothing.
fn constant<'e>(mut items: impl Iterator<Item = &'e Expr>) -> bool {
    items.all(|x| matches!(x.kind, Kind::Lit(_)))
}

fn literal<'a>(lit: &Lit) -> Value<'a> {
    match lit {
        Lit::Null => Value::Null,
        Lit::Bool(b) => Value::Bool(*b),
        Lit::Int(i) => Value::Int(*i),
        Lit::Uint(u) => Value::Uint(*u),
        Lit::Double(d) => Value::Double(*d),
        Lit::String(s) => Value::string(s),
        Lit::Bytes(b) => Value::Bytes(Rc::from(b.as_slice())),
    }
}

/// Field selection, or a presence test (`has()`).
fn select<'a>(target: Value<'a>, field: &str, test: bool) -> Result<Value<'a>> {
    match target {
        Value::Map(m) => match m.find(&Value::string(field)) {
            Some(v) => {
                let v = v?;
                Ok(if test { Value::Bool(true) } else { v })
            }
            None if test => Ok(Value::Bool(false)),
            None => Err(EvalError::new(format!("no such key: {field}"))),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => {
            let v = select((*inner).clone(), field, test)?;
            Ok(Value::Optional(Some(Rc::new(v))))
        }
        _ => Err(EvalError::no_overload()),
    }
}

/// `a.?b`: the field as an optional.
fn opt_select<'a>(target: Value<'a>, field: &str) -> Result<Value<'a>> {
    let target = match target {
        Value::Optional(None) => return Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => (*inner).clone(),
        v => v,
    };
    match target {
        Value::Map(m) => match m.find(&Value::string(field)) {
            Some(v) => Ok(Value::Optional(Some(Rc::new(v?)))),
            None => Ok(Value::Optional(None)),
        },
        _ => Err(EvalError::no_overload()),
    }
}

fn call<'a, 'e>(
    func: &str,
    op: Op,
    target: Option<&'e Expr>,
    args: &'e [Expr],
    env: &mut Env<'a, 'e>,
) -> Result<Value<'a>> {
    match (op, args) {
        (Op::And, [a, b]) => return logic(a, b, false, env),
        (Op::Or, [a, b]) => return logic(a, b, true, env),
        (Op::Conditional, [c, t, f]) => {
            return match eval(c, env)? {
                Value::Bool(true) => eval(t, env),
                Value::Bool(false) => eval(f, env),
                _ => Err(EvalError::no_overload()),
            };
        }
        (Op::OptionalSelect, [operand, field]) => {
            let Kind::Lit(Lit::String(name)) = &field.kind else {
                return Err(EvalError::no_overload());
            };
            let target = eval(operand, env)?;
            env.charge(SELECT_AND_IDENT)?;
            return opt_select(target, name);
        }
        _ => {}
    }
    // The receiver first, then the arguments, in order; the operators' one or two on the
    // stack (a rule's loop calls them once per step).
    let member = target.is_some();
    match (target, args) {
        (None, [a]) | (Some(a), []) => {
            let all = [eval(a, env)?];
            apply(func, member, &all, env)
        }
        (None, [a, b]) | (Some(a), [b]) => {
            // What `actual::call_cost` charges for an operator on scalars is charged without
            // looking its name up. Two ints at hand (literals, or variables bound to ints) are
            // related without evaluating either: their reads cost what `eval` charges, in one.
            if let Some((x, read_x)) = int_at_hand(a, env)
                && let Some((y, read_y)) = int_at_hand(b, env)
                && let Some(truth) = operators::relate_ints(op, x, y)
            {
                env.charge(read_x + read_y)?;
                env.charge(SCALAR_OPERATOR)?;
                return Ok(Value::Bool(truth));
            }
            let all = [eval(a, env)?, eval(b, env)?];
            let [a, b] = &all;
            if let Some(answer) = operators::on_scalars(op, a, b) {
                env.charge(SCALAR_OPERATOR)?;
                return answer;
            }
            apply(func, member, &all, env)
        }
        _ => {
            let mut all = Vec::with_capacity(args.len() + usize::from(member));
            for a in target.into_iter().chain(args) {
                all.push(eval(a, env)?);
            }
            apply(func, member, &all, env)
        }
    }
}

/// An operand whose value is an int without evaluating anything, and what reading it costs:
/// an int literal (nothing), or a variable bound to an int ([`SELECT_AND_IDENT`], as [`eval`]
/// charges a name).
fn int_at_hand(e: &Expr, env: &Env<'_, '_>) -> Option<(i64, u64)> {
    match &e.kind {
        Kind::Lit(Lit::Int(i)) => Some((*i, 0)),
        Kind::Ident(name) => match env.lookup(name) {
            Some((_, Slot::Ready(Ok(Value::Int(i))))) => Some((*i, SELECT_AND_IDENT)),
            _ => None,
        },
        _ => None,
    }
}

/// The cost of a relation or an arithmetic operator on numbers, bools or null
/// ([`operators::on_scalars`]): one, as [`actual::call_cost`] has it.
const SCALAR_OPERATOR: u64 = 1;

/// Charges a call's cost, then makes it.
fn apply<'a>(
    func: &str,
    member: bool,
    all: &[Value<'a>],
    env: &mut Env<'a, '_>,
) -> Result<Value<'a>> {
    env.charge(actual::call_cost(func, member, all))?;
    stdlib::call(func, member, all)
}

/// `a && b` (`or`: `a || b`): the deciding value wins over an error on the other side.
fn logic<'a, 'e>(a: &'e Expr, b: &'e Expr, or: bool, env: &mut Env<'a, 'e>) -> Result<Value<'a>> {
    let decisive = or;
    let left = eval(a, env);
    if let Ok(Value::Bool(v)) = left
        && v == decisive
    {
        return Ok(Value::Bool(v));
    }
    // The cost limit is not an error the other side can absorb.
    if matches!(&left, Err(e) if e.message == COST_EXCEEDED) {
        return left;
    }
    let right = eval(b, env);
    combine(left, right, or)
}

/// The logical operator on two evaluated operands.
fn combine<'a>(left: Result<Value<'a>>, right: Result<Value<'a>>, or: bool) -> Result<Value<'a>> {
    let decisive = or;
    if let Ok(Value::Bool(v)) = right
        && v == decisive
    {
        return Ok(Value::Bool(v));
    }
    match (left, right) {
        (Ok(Value::Bool(_)), Ok(Value::Bool(_))) => Ok(Value::Bool(!decisive)),
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        _ => Err(EvalError::no_overload()),
    }
}

/// What a comprehension iterates over: its (first variable, second variable) pairs, read one
/// step at a time (a nested macro reads its range again on each step of the outer one; a list
/// read whole each time would cost the outer loop a list per step).
enum Steps<'a> {
    /// A list the expression built: its elements, the index the second variable.
    List {
        items: Rc<Vec<Value<'a>>>,
        next: usize,
        two: bool,
    },
    /// A JSON list's elements, read through its items' schema (a list whose schema has none
    /// has no elements to read), the index the second variable.
    Json {
        items: std::slice::Iter<'a, Json>,
        schema: Option<&'a SNode>,
        index: i64,
        two: bool,
    },
    /// A map's keys, the value the second variable.
    Map {
        map: MapVal<'a>,
        keys: std::vec::IntoIter<Value<'a>>,
        two: bool,
    },
}

impl<'a> Steps<'a> {
    fn of(range: Value<'a>, two: bool) -> Result<Steps<'a>> {
        match range {
            Value::List(value::List::Json(items, schema)) => Ok(Steps::Json {
                items: items.iter(),
                schema: schema.items.as_deref(),
                index: 0,
                two,
            }),
            Value::List(value::List::Owned(items)) => Ok(Steps::List {
                items,
                next: 0,
                two,
            }),
            Value::Map(map) => Ok(Steps::Map {
                keys: map.keys().into_iter(),
                map,
                two,
            }),
            _ => Err(EvalError::no_overload()),
        }
    }

    /// Whether a step is left.
    fn more(&self) -> bool {
        match self {
            Steps::List { items, next, .. } => *next < items.len(),
            Steps::Json { items, schema, .. } => schema.is_some() && items.len() > 0,
            Steps::Map { keys, .. } => keys.len() > 0,
        }
    }

    /// Binds the next step's variables in `env`, `var` to the first and `var2` (if any) to
    /// the second, as [`Iterator::next`] reads them; a JSON list's element with one variable
    /// is read straight into its slot.
    fn bind_next<'e>(&mut self, env: &mut Env<'a, 'e>, var: &'e str, var2: Option<&'e str>) {
        if let Steps::Json {
            items,
            schema: Some(schema),
            index,
            two: false,
        } = self
        {
            if let Some(item) = items.next() {
                *index = index.saturating_add(1);
                env.push(var, Value::of_json(item, schema));
            }
            return;
        }
        if let Some((first, second)) = self.next() {
            bind(env, var, var2, first, second);
        }
    }
}

/// Binds a step's variables in `env`: `var` to the first value, `var2` (if any) to the second.
fn bind<'a, 'e>(
    env: &mut Env<'a, 'e>,
    var: &'e str,
    var2: Option<&'e str>,
    first: Result<Value<'a>>,
    second: Option<Result<Value<'a>>>,
) {
    env.push(var, first);
    if let (Some(v2), Some(second)) = (var2, second) {
        env.push(v2, second);
    }
}

impl<'a> Iterator for Steps<'a> {
    /// The first variable's value, and the second's when there is one.
    type Item = (Result<Value<'a>>, Option<Result<Value<'a>>>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Steps::List { items, next, two } => {
                let v = Ok(items.get(*next)?.clone());
                let i = *next as i64;
                *next += 1;
                Some(if *two {
                    (Ok(Value::Int(i)), Some(v))
                } else {
                    (v, None)
                })
            }
            Steps::Json {
                items,
                schema,
                index,
                two,
            } => {
                let v = Value::of_json(items.next()?, (*schema)?);
                let i = *index;
                *index = index.saturating_add(1);
                Some(if *two {
                    (Ok(Value::Int(i)), Some(v))
                } else {
                    (v, None)
                })
            }
            Steps::Map { map, keys, two } => {
                let k = keys.next()?;
                let v = two.then(|| {
                    map.find(&k)
                        .unwrap_or_else(|| Err(EvalError::no_overload()))
                });
                Some((Ok(k), v))
            }
        }
    }
}

fn comprehension<'a, 'e>(
    kind: Macro,
    range: &'e Expr,
    var: &'e str,
    var2: Option<&'e str>,
    args: &'e [Expr],
    env: &mut Env<'a, 'e>,
) -> Result<Value<'a>> {
    if kind == Macro::Bind {
        // The expansion's range is an empty constant list (no cost) and its loop never runs:
        // only the result is evaluated, `var` initialized when first read.
        env.push_lazy(var, range);
        let r = match args.first() {
            Some(e) => eval(e, env),
            None => Err(EvalError::no_overload()),
        };
        env.pop(1);
        return r;
    }
    let range_value = eval(range, env)?;
    if matches!(kind, Macro::OptMap | Macro::OptFlatMap) {
        return opt_map(kind, range_value, var, args, env);
    }
    let steps = Steps::of(range_value, var2.is_some())?;
    let scope = if var2.is_some() { 2 } else { 1 };
    let body = |env: &mut Env<'a, 'e>, i: usize| -> Result<Value<'a>> {
        match args.get(i) {
            Some(e) => eval(e, env),
            None => Err(EvalError::no_overload()),
        }
    };
    match kind {
        Macro::All | Macro::Exists => {
            let or = kind == Macro::Exists;
            // The condition `@not_strictly_false(@result)` (`!@result` for exists), then
            // the step `@result && p` (`||`); the result `@result`.
            let condition = if or { 3 } else { 2 };
            let mut accu: Result<Value<'a>> = Ok(Value::Bool(!or));
            let mut steps = steps;
            while steps.more() {
                // The loop stops once the result is decided.
                env.charge(condition)?;
                if matches!(accu, Ok(Value::Bool(v)) if v == or) {
                    break;
                }
                env.charge(SELECT_AND_IDENT)?;
                steps.bind_next(env, var, var2);
                let r = body(env, 0);
                env.pop(scope);
                accu = match (&accu, r) {
                    // The result is not decided yet (the loop would have stopped): a bool step
                    // decides it or leaves it as it is, so it is that bool.
                    (Ok(Value::Bool(_)), Ok(Value::Bool(v))) => Ok(Value::Bool(v)),
                    (_, Err(e)) if e.message == COST_EXCEEDED => return Err(e),
                    (_, r) => combine(accu, r, or),
                };
            }
            env.charge(SELECT_AND_IDENT)?;
            accu
        }
        Macro::ExistsOne => {
            // The step `p ? @result + 1 : @result` (a conditional's branch that is only the
            // accumulator costs nothing); the result `@result == 1`.
            let mut count = 0;
            for (first, second) in steps {
                bind(env, var, var2, first, second);
                let r = body(env, 0);
                env.pop(scope);
                match r? {
                    Value::Bool(true) => {
                        env.charge(2)?;
                        count += 1;
                    }
                    Value::Bool(false) => {}
                    _ => return Err(EvalError::no_overload()),
                }
            }
            env.charge(2)?;
            Ok(Value::Bool(count == 1))
        }
        Macro::Map | Macro::Filter | Macro::TransformList => {
            // The accumulator starts as `[]`; the step `@result + [t]` (`[x]` for filter),
            // under `p ? ... : @result` when filtered (that branch costs nothing). Literals
            // (`[]`, `[t]` of a literal) are built once, when cel-go plans the program.
            let filtered = args.len() > 1;
            let element = match (kind, args.last()) {
                (Macro::Filter, _) => 1 + LIST_CREATE,
                (
                    _,
                    Some(Expr {
                        kind: Kind::Lit(_), ..
                    }),
                ) => 0,
                _ => LIST_CREATE,
            };
            let mut out = Vec::new();
            for (first, second) in steps {
                let kept = (kind == Macro::Filter).then(|| first.clone());
                bind(env, var, var2, first, second);
                let r = (|| {
                    if (filtered || kind == Macro::Filter) && !truth(body(env, 0)?)? {
                        return Ok(None);
                    }
                    env.charge(1 + element + 1)?;
                    if let Some(first) = kept {
                        return first.map(Some);
                    }
                    body(env, args.len() - 1).map(Some)
                })();
                env.pop(scope);
                if let Some(v) = r? {
                    out.push(v);
                }
            }
            env.charge(SELECT_AND_IDENT)?;
            Ok(Value::list(out))
        }
        Macro::TransformMap | Macro::TransformMapEntry => {
            // `{}` (a literal: free), then `cel.@mapInsert(@result, k, t)` (`(@result, t)` for
            // entries).
            let filtered = args.len() > 1;
            let insert = if kind == Macro::TransformMap { 3 } else { 2 };
            let mut out: Vec<(Value<'a>, Value<'a>)> = Vec::new();
            for (first, second) in steps {
                let key = (kind == Macro::TransformMap).then(|| first.clone());
                bind(env, var, var2, first, second);
                let r = (|| {
                    if filtered && !truth(body(env, 0)?)? {
                        return Ok(None);
                    }
                    env.charge(insert)?;
                    body(env, args.len() - 1).map(Some)
                })();
                env.pop(scope);
                let Some(v) = r? else { continue };
                if let Some(key) = key {
                    out.push((key?, v));
                    continue;
                }
                let Value::Map(entry) = v else {
                    return Err(EvalError::no_overload());
                };
                for k in entry.keys() {
                    let ev = entry
                        .find(&k)
                        .unwrap_or_else(|| Err(EvalError::no_overload()))?;
                    if out
                        .iter()
                        .any(|(x, _)| value::equal(x, &k).unwrap_or(false))
                    {
                        return Err(EvalError::new(format!(
                            "insert failed: key {} already exists",
                            value::display(&k)
                        )));
                    }
                    out.push((k, ev));
                }
            }
            env.charge(SELECT_AND_IDENT)?;
            Ok(Value::Map(MapVal::Owned(Rc::new(out))))
        }
        Macro::SortBy => {
            // `cel.bind(in, range, in.@sortByAssociatedKeys(in.map(x, key)))`, its `[]`s free.
            env.charge(1 + 1)?;
            let mut keyed = Vec::new();
            for (first, second) in steps {
                env.charge(1 + LIST_CREATE + 1)?;
                let element = first.clone();
                bind(env, var, var2, first, second);
                let key = body(env, 0);
                env.pop(scope);
                keyed.push((key?, element?));
            }
            let keys: Vec<Value<'a>> = keyed.iter().map(|(k, _)| k.clone()).collect();
            env.charge(actual::call_cost(
                "sort",
                true,
                &[Value::list(keys.clone())],
            ))?;
            let order = super::lists::sort_order(&keys)?;
            Ok(Value::list(
                order
                    .into_iter()
                    .filter_map(|i| keyed.get(i).map(|(_, v)| v.clone()))
                    .collect(),
            ))
        }
        Macro::OptMap | Macro::OptFlatMap | Macro::Bind => Err(EvalError::no_overload()),
    }
}

/// A boolean, or the "no such overload" of a non-boolean.
fn truth(v: Value<'_>) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(b),
        _ => Err(EvalError::no_overload()),
    }
}

fn opt_map<'a, 'e>(
    kind: Macro,
    target: Value<'a>,
    var: &'e str,
    args: &'e [Expr],
    env: &mut Env<'a, 'e>,
) -> Result<Value<'a>> {
    let Value::Optional(inner) = target else {
        return Err(EvalError::no_overload());
    };
    // `x.hasValue() ? optional.of(cel.bind(v, x.value(), t)) : optional.none()`.
    env.charge(1)?;
    let Some(inner) = inner else {
        env.charge(1)?;
        return Ok(Value::Optional(None));
    };
    env.charge(1 + 1 + LIST_CREATE + u64::from(kind == Macro::OptMap))?;
    env.push(var, Ok((*inner).clone()));
    let r = match args.first() {
        Some(e) => eval(e, env),
        None => Err(EvalError::no_overload()),
    };
    env.pop(1);
    let v = r?;
    if kind == Macro::OptMap {
        return Ok(Value::Optional(Some(Rc::new(v))));
    }
    match v {
        o @ Value::Optional(_) => Ok(o),
        _ => Err(EvalError::no_overload()),
    }
}
