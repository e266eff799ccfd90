//! The environment of an evaluation: the variables in scope, and the cost left before the
//! per-call limit interrupts it.

use super::syntax::Expr;
use super::value::{EvalError, Result, Value};

pub(super) use super::cost::PER_CALL_LIMIT as STEP_LIMIT;

/// What an interrupted evaluation reports (cel-go's message).
pub(super) const COST_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// A variable's value, or the expression a `cel.bind` initializes it with, evaluated when it
/// is first read (cel-go's `folder` initializes the accumulator lazily).
#[derive(Clone)]
pub(super) enum Slot<'a, 'e> {
    Ready(Result<Value<'a>>),
    Lazy(&'e Expr),
}

/// Variables in scope and the cost left; `'e` is the lifetime of the expression evaluated,
/// which names them (a comprehension's variable is bound once per step: borrowed, not copied).
pub(super) struct Env<'a, 'e> {
    vars: Vec<(&'e str, Slot<'a, 'e>)>,
    pub(super) steps: u64,
}

impl<'a, 'e> Env<'a, 'e> {
    pub(super) fn new(vars: Vec<(&'e str, Value<'a>)>) -> Env<'a, 'e> {
        Env {
            vars: vars
                .into_iter()
                .map(|(n, v)| (n, Slot::Ready(Ok(v))))
                .collect(),
            steps: STEP_LIMIT,
        }
    }

    /// Charges `n` units of cost.
    #[inline]
    pub(super) fn charge(&mut self, n: u64) -> Result<()> {
        if self.steps < n {
            self.steps = 0;
            return Err(EvalError::new(COST_EXCEEDED));
        }
        self.steps -= n;
        Ok(())
    }

    /// The innermost variable `name`: where it is in scope, and its slot.
    #[inline]
    pub(super) fn lookup(&self, name: &str) -> Option<(usize, &Slot<'a, 'e>)> {
        self.vars
            .iter()
            .enumerate()
            .rev()
            .find(|(_, (n, _))| same_name(n, name))
            .map(|(i, (_, v))| (i, v))
    }

    #[inline]
    pub(super) fn push(&mut self, name: &'e str, v: Result<Value<'a>>) {
        self.vars.push((name, Slot::Ready(v)));
    }

    /// Binds `name` to `init`, evaluated when first read.
    pub(super) fn push_lazy(&mut self, name: &'e str, init: &'e Expr) {
        self.vars.push((name, Slot::Lazy(init)));
    }

    /// Takes the variables from `at` on out of scope (to evaluate a binding's initializer in
    /// the scope it was bound in); [`Env::restore`] puts them back.
    pub(super) fn hide_from(&mut self, at: usize) -> Vec<(&'e str, Slot<'a, 'e>)> {
        self.vars.split_off(at.min(self.vars.len()))
    }

    /// Puts back what [`Env::hide_from`] took, the variable at its start now `value`.
    pub(super) fn restore(
        &mut self,
        mut hidden: Vec<(&'e str, Slot<'a, 'e>)>,
        value: Result<Value<'a>>,
    ) {
        if let Some(first) = hidden.first_mut() {
            first.1 = Slot::Ready(value);
        }
        self.vars.append(&mut hidden);
    }

    pub(super) fn pop(&mut self, n: usize) {
        for _ in 0..n {
            self.vars.pop();
        }
    }
}

/// Whether two variable names are the same: compared in place, since they are a few bytes
/// long and a rule's loop looks them up on every step.
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}
