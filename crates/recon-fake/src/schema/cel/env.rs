//! The environment of an evaluation: the variables in scope, and the cost left before the
//! per-call limit interrupts it.

use std::rc::Rc;

use super::value::{EvalError, Result, Value};

pub(super) use super::cost::PER_CALL_LIMIT as STEP_LIMIT;

/// What an interrupted evaluation reports (cel-go's message).
pub(super) const COST_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// Variables in scope and the cost left.
pub(super) struct Env<'a> {
    vars: Vec<(Rc<str>, Result<Value<'a>>)>,
    pub(super) steps: u64,
}

impl<'a> Env<'a> {
    pub(super) fn new(vars: Vec<(&str, Value<'a>)>) -> Env<'a> {
        Env {
            vars: vars
                .into_iter()
                .map(|(n, v)| (Rc::from(n), Ok(v)))
                .collect(),
            steps: STEP_LIMIT,
        }
    }

    /// Charges `n` units of cost.
    pub(super) fn charge(&mut self, n: u64) -> Result<()> {
        if self.steps < n {
            self.steps = 0;
            return Err(EvalError::new(COST_EXCEEDED));
        }
        self.steps -= n;
        Ok(())
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Result<Value<'a>>> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v.clone())
    }

    pub(super) fn push(&mut self, name: &str, v: Result<Value<'a>>) {
        self.vars.push((Rc::from(name), v));
    }

    pub(super) fn pop(&mut self, n: usize) {
        let keep = self.vars.len().saturating_sub(n);
        self.vars.truncate(keep);
    }
}
