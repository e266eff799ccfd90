//! Mutating admission: the hooks registered with
//! [`ReactorBuilder::mutate`](crate::ReactorBuilder::mutate) change the object a create or
//! update is about to store, as a mutating admission webhook would.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use super::decode::decode_into_type;
use crate::request::call::Call;
use crate::state::State;
use crate::wire::error::ApiError;
use crate::wire::object::Object;

impl State {
    /// Runs the request's mutating hooks on `obj`. A hook that panics, or leaves something
    /// other than an object, fails the request with a 500, as a broken webhook would; `obj`
    /// is then left as it was. A custom resource is pruned and defaulted again after the hooks,
    /// as the real server defaults an object a webhook patched (what it stores is pruned on
    /// every read, so pruning here answers the same).
    pub(crate) fn mutate(&self, call: &Call<'_>, obj: &mut Object) -> Result<(), ApiError> {
        if self.mutations.is_empty() {
            return Ok(());
        }
        let mut value = Value::Object(obj.clone());
        for hook in &self.mutations {
            if catch_unwind(AssertUnwindSafe(|| hook(&mut value))).is_err() {
                return Err(ApiError::internal("a reactor's mutate hook panicked"));
            }
        }
        match value {
            Value::Object(mut mutated) => {
                decode_into_type(call, &mut mutated).map_err(|why| {
                    ApiError::internal(&format!("a reactor's mutate hook broke the object: {why}"))
                })?;
                *obj = mutated;
                Ok(())
            }
            _ => Err(ApiError::internal(
                "a reactor's mutate hook replaced the object with a non-object",
            )),
        }
    }
}
