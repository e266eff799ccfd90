//! The Kubernetes library types (quantity, IP, CIDR, URL, semver, named formats), evaluated
//! by the `kube-cel` crate's ports of them: the call is handed to a small `cel` program
//! (`__t.name(__a0, ...)`) with its evaluated arguments bound as variables.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::Arc;

use kube_cel::KubeCelExt as _;
use kube_cel::cel::objects::{Key, Map, OptionalValue};
use kube_cel::cel::{Context, ExecutionError, Program, Value as CelValue};
use recon_apimachinery::go_quote;

use super::value::{EvalError, List, MapVal, Result, Value, display};

thread_local! {
    /// The functions, registered once per thread.
    static CONTEXT: Context<'static> = Context::default().with_all();
    /// The calling programs, by their text.
    static PROGRAMS: RefCell<HashMap<String, Rc<Program>>> = RefCell::new(HashMap::new());
}

/// Calls a Kubernetes library function on evaluated arguments (the receiver first when
/// `member`).
pub(super) fn call<'a>(func: &str, member: bool, all: &[Value<'a>]) -> Result<Value<'a>> {
    // `format.named` is optional in Kubernetes (none for an unknown name).
    if let ("format.named", [Value::String(name)]) = (func, all) {
        if !super::decls::FORMATS.contains(&&**name) {
            return Ok(Value::Optional(None));
        }
        let format = call(&format!("format.{name}"), false, &[])?;
        return Ok(Value::Optional(Some(Rc::new(format))));
    }
    invoke(func, member, all).map_err(|e| EvalError::new(kubernetes_error(func, all, e.message)))
}

/// The error Kubernetes' library gives where `kube-cel` words it otherwise.
fn kubernetes_error(func: &str, all: &[Value<'_>], message: String) -> String {
    let Some(Value::String(arg)) = all.first() else {
        return message;
    };
    let quoted = go_quote(arg);
    match func {
        "quantity" => {
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
                .to_owned()
        }
        "url" => format!(
            "URL parse error during conversion from string: parse {quoted}: invalid URI for request"
        ),
        "ip" => format!(
            "IP Address {quoted} parse error during conversion from string: ParseAddr({quoted}): {message}"
        ),
        "cidr" => {
            let detail = if arg.contains('/') { message } else { "no '/'".to_owned() };
            format!(
                "network address parse error during conversion from string: network address parse \
                 error during conversion from string: netip.ParsePrefix({quoted}): {detail}"
            )
        }
        "semver" if arg.trim_start_matches('v').split('.').count() != 3 => {
            "No Major.Minor.Patch elements found".to_owned()
        }
        _ => message,
    }
}

fn invoke<'a>(func: &str, member: bool, all: &[Value<'a>]) -> Result<Value<'a>> {
    let mut vars = Vec::with_capacity(all.len());
    for (i, v) in all.iter().enumerate() {
        let name = if member && i == 0 {
            "__t".to_owned()
        } else {
            format!("__a{}", if member { i - 1 } else { i })
        };
        vars.push((name, to_cel(v)?));
    }
    let args: Vec<&str> = vars
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| *n != "__t")
        .collect();
    let text = if member {
        format!("__t.{func}({})", args.join(", "))
    } else {
        format!("{func}({})", args.join(", "))
    };
    let program = PROGRAMS.with(|cache| -> Result<Rc<Program>> {
        if let Some(p) = cache.borrow().get(&text) {
            return Ok(p.clone());
        }
        let p = Program::compile(&text)
            .map(Rc::new)
            .map_err(|_| EvalError::no_overload())?;
        cache.borrow_mut().insert(text.clone(), p.clone());
        Ok(p)
    })?;
    let outcome = CONTEXT.with(|base| {
        // Third-party code on user data: a panic is an evaluation error.
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let mut scope = base.new_inner_scope();
            for (name, v) in vars {
                scope.add_variable_from_value(name, v);
            }
            program.execute(&scope)
        }))
    });
    match outcome {
        Ok(Ok(v)) => from_cel(&v),
        Ok(Err(e)) => Err(EvalError::new(message(&e))),
        Err(_) => Err(EvalError::new(format!("{func}: internal error"))),
    }
}

fn message(e: &ExecutionError) -> String {
    match e {
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::NoSuchOverload
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::InvalidArgumentCount { .. }
        | ExecutionError::UndeclaredReference(_) => "no such overload".to_owned(),
        other => other.to_string(),
    }
}

fn to_cel(v: &Value<'_>) -> Result<CelValue> {
    Ok(match v {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Int(i) => CelValue::Int(*i),
        Value::Uint(u) => CelValue::UInt(*u),
        Value::Double(d) => CelValue::Float(*d),
        Value::String(s) => CelValue::String(Arc::new(s.to_string())),
        Value::Bytes(b) => CelValue::Bytes(Arc::new(b.to_vec())),
        Value::List(l) => {
            let items: Vec<CelValue> = l
                .items()
                .into_iter()
                .map(|i| i.and_then(|v| to_cel(&v)))
                .collect::<Result<_>>()?;
            CelValue::List(Arc::new(items))
        }
        Value::Ext(e) => e.clone(),
        Value::Optional(o) => CelValue::Opaque(Arc::new(match o {
            Some(v) => OptionalValue::of(to_cel(v)?),
            None => OptionalValue::none(),
        })),
        _ => return Err(EvalError::no_overload()),
    })
}

fn from_cel<'a>(v: &CelValue) -> Result<Value<'a>> {
    Ok(match v {
        CelValue::Null => Value::Null,
        CelValue::Bool(b) => Value::Bool(*b),
        CelValue::Int(i) => Value::Int(*i),
        CelValue::UInt(u) => Value::Uint(*u),
        CelValue::Float(f) => Value::Double(*f),
        CelValue::String(s) => Value::string(s),
        CelValue::Bytes(b) => Value::Bytes(Rc::from(b.as_slice())),
        CelValue::List(items) => Value::List(List::Owned(Rc::new(
            items.iter().map(from_cel).collect::<Result<_>>()?,
        ))),
        CelValue::Map(Map { map }) => {
            let mut entries = Vec::with_capacity(map.len());
            for (k, v) in map.iter() {
                let key = match k {
                    Key::Int(i) => Value::Int(*i),
                    Key::Uint(u) => Value::Uint(*u),
                    Key::Bool(b) => Value::Bool(*b),
                    Key::String(s) => Value::string(s),
                };
                entries.push((key, from_cel(v)?));
            }
            entries.sort_by_key(|a| display(&a.0));
            Value::Map(MapVal::Owned(Rc::new(entries)))
        }
        CelValue::Opaque(o) => match o.downcast_ref::<OptionalValue>() {
            Some(opt) => Value::Optional(match opt.value() {
                Some(inner) => Some(Rc::new(from_cel(inner)?)),
                None => None,
            }),
            None => Value::Ext(v.clone()),
        },
        _ => return Err(EvalError::no_overload()),
    })
}
