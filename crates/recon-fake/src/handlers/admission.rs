//! Mutating admission: the hooks registered with
//! [`ReactorBuilder::mutate`](crate::ReactorBuilder::mutate) change the object a create or
//! update is about to store, as a mutating admission webhook would.
//!
//! A hook is the user's code, and it may call its own server (read the resourceVersion, the
//! request log, even send requests from another thread), so it never runs under the state
//! lock. A request with hooks is served in rounds instead: the handler runs up to the point of
//! admission, parks the object there ([`Admission::Wanted`]) and gives up; the hooks run,
//! unlocked, on the parked object; then the handler runs again from the start with their answer
//! ([`Admission::Answered`]), which it takes if it arrives at the same object. If something
//! changed it in between (another request wrote the object a patch applies to), the hooks run
//! again on the new one, as kube-apiserver runs admission again when its optimistic
//! `GuaranteedUpdate` retries.

use std::panic::{AssertUnwindSafe, catch_unwind};

use recon_apimachinery::json::Value;

use super::decode::decode_into_type;
use crate::reactor::MutateHook;
use crate::request::call::Call;
use crate::state::State;
use crate::wire::error::ApiError;
use crate::wire::object::Object;

/// Where the request being served stands with its mutating hooks.
#[derive(Default)]
pub(crate) enum Admission {
    /// It has none (or is not a client's request).
    #[default]
    NoHooks,
    /// It has some, not yet run: the handler stops at admission.
    Pending,
    /// The handler stopped at admission with this object, for the hooks to run on.
    Wanted(Object),
    /// The hooks ran on `input` and answered `output`.
    Answered {
        input: Object,
        output: Result<Object, ApiError>,
    },
}

impl Admission {
    /// The object a round parked for the hooks, leaving nothing parked.
    pub(crate) fn take_wanted(&mut self) -> Option<Object> {
        match std::mem::take(self) {
            Admission::Wanted(obj) => Some(obj),
            _ => None,
        }
    }
}

/// Runs `hooks` on `input`, outside any lock. A hook that panics, or leaves something other
/// than an object, fails the request with a 500, as a broken webhook would.
pub(crate) fn run_mutate_hooks(hooks: &[MutateHook], input: &Object) -> Result<Object, ApiError> {
    // The hooks are the test's code: they see the object as serde_json's value.
    let mut value = serde_json::Value::from(Value::Object(input.clone()));
    for hook in hooks {
        if catch_unwind(AssertUnwindSafe(|| hook(&mut value))).is_err() {
            // serde_json's value recurses to drop; a `Value` does not.
            drop(Value::from(value));
            return Err(ApiError::internal("a reactor's mutate hook panicked"));
        }
    }
    match Value::from(value) {
        Value::Object(mutated) => Ok(mutated),
        _ => Err(ApiError::internal(
            "a reactor's mutate hook replaced the object with a non-object",
        )),
    }
}

impl State {
    /// Admits `obj`: with the hooks' answer for it when they have run on this very object;
    /// otherwise parks it for them and fails this round (the caller discards its reply). A
    /// failed hook leaves `obj` as it was. A custom resource is pruned and defaulted again after
    /// the hooks, as the real server defaults an object a webhook patched (what it stores is
    /// pruned on every read, so pruning here answers the same).
    pub(crate) fn mutate(&mut self, call: &Call<'_>, obj: &mut Object) -> Result<(), ApiError> {
        match &self.admission {
            Admission::NoHooks => Ok(()),
            Admission::Answered { input, output } if input == &*obj => {
                let mut mutated = output.clone()?;
                decode_into_type(call, &mut mutated).map_err(|why| {
                    ApiError::internal(&format!("a reactor's mutate hook broke the object: {why}"))
                })?;
                *obj = mutated;
                Ok(())
            }
            _ => {
                self.admission = Admission::Wanted(obj.clone());
                Err(ApiError::internal("mutating admission is under way"))
            }
        }
    }
}
