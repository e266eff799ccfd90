//! Type unification as cel-go's checker does it (`isAssignable`, type substitutions, the most
//! general of two types).

use std::collections::HashMap;
use std::rc::Rc;

use super::types::Type;

/// The bindings of type parameters.
pub(super) type Mapping = HashMap<Rc<str>, Type>;

/// `isEqualOrLessSpecific`.
pub(super) fn less_specific(t1: &Type, t2: &Type) -> bool {
    if t1.is_dyn() || matches!(t1, Type::Param(_)) {
        return true;
    }
    if t2.is_dyn() || matches!(t2, Type::Param(_)) {
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

pub(super) fn most_general(t1: &Type, t2: &Type) -> Type {
    if less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

/// `internalIsAssignable`: whether `t1` can be used where `t2` is wanted, binding type
/// parameters in `m`.
pub(super) fn is_assignable(m: &mut Mapping, t1: &Type, t2: &Type) -> bool {
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
