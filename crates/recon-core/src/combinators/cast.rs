//! `CastResource`: runs a sub-reconciler written for one shape of a resource (a duck type: a
//! struct with only the fields it needs, or another typed view) on a resource of another type.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::error::Error;
use crate::json::carry_changes;
use crate::outcome::Outcome;
use crate::tree::{BoxSubReconciler, Setup, SubReconciler};

/// Runs a `SubReconciler<C>` on a resource `R` through JSON: `R` is serialised and read as a
/// `C`; the nested reconciler runs on that `C`; then, if the `C` changed, the change (an
/// RFC 6902 JSON Patch from the `C` before to the `C` after) is applied onto `R`'s JSON, which
/// is read back as the `R`. Fields of `R` that `C` does not know are kept as they were, and
/// fields of `C` nobody changed are not written into `R` (a default `C` gives a field `R`
/// lacks stays out of `R`).
///
/// - A resource that does not read as a `C` is an error naming both types, before the nested
///   reconciler runs. `R`'s `apiVersion` and `kind` are not asked of the `C`: where the `C`
///   refuses them (a k8s-openapi type accepts only its own), it reads the resource without.
/// - The changes the nested reconciler made are patched back whether it succeeds or fails (as
///   reconciler.io's `CastResource` does): a tree keeps the status a failing step recorded,
///   and the root writes it. Its error (and the outcome it carries) is returned afterwards.
/// - A change that cannot be patched back (the patched JSON is no longer an `R`) is an error,
///   and `R` is left unchanged.
/// - An `add` or `replace` into a part of `R` that does not exist yet (a duck's default, say)
///   creates the objects on its way.
///
/// [`setup`](SubReconciler::setup) declares the nested reconciler's watches.
///
/// `C` needs only serde; the nested reconciler may ask for more: a [`SyncReconciler`]
/// needs a `kube::Resource`, which `kube::core::Object<Spec, NotUsed>` gives a duck for free.
///
/// [`SyncReconciler`]: crate::SyncReconciler
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube::core::{NotUsed, Object};
/// use recon_core::{CastResource, SubReconciler, SyncReconciler};
/// use serde::{Deserialize, Serialize};
///
/// /// What a scaler needs of any workload.
/// #[derive(Clone, Debug, Default, Deserialize, Serialize)]
/// struct ScalableSpec {
///     #[serde(default, skip_serializing_if = "Option::is_none")]
///     replicas: Option<i32>,
/// }
/// type Scalable = Object<ScalableSpec, NotUsed>;
///
/// let at_least_two = SyncReconciler::<Scalable>::new("AtLeastTwo").sync(async |_ctx, s| {
///     s.spec.replicas = Some(s.spec.replicas.unwrap_or(1).max(2));
///     Ok(())
/// });
/// let cast = CastResource::<Deployment, Scalable>::new(at_least_two).named("Scale");
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # use recon_core::{Config, Context, Request};
/// # let server = recon_fake::ApiServer::new();
/// # let ctx = Context::new(Config::new(server.client(), "demo"), Request::namespaced("default", "web"));
/// let mut deployment: Deployment = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web"},
///     "spec": {"selector": {"matchLabels": {"app": "web"}},
///              "template": {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}},
/// })).unwrap();
/// cast.reconcile(&ctx, &mut deployment).await.unwrap();
/// let after = serde_json::to_value(&deployment).unwrap();
/// assert_eq!(after["spec"]["replicas"], 2);
/// assert_eq!(after["spec"]["template"]["spec"]["containers"][0]["image"], "nginx", "kept");
/// # });
/// ```
pub struct CastResource<R, C> {
    name: String,
    reconciler: BoxSubReconciler<C>,
    types: PhantomData<fn(R) -> R>,
}

impl<R, C> CastResource<R, C>
where
    R: Serialize + DeserializeOwned + Send + Sync,
    C: Serialize + DeserializeOwned + Send + Sync + 'static,
{
    /// Runs `reconciler` on each resource, seen as a `C`. Named `<C>CastResource`.
    pub fn new(reconciler: impl SubReconciler<C> + 'static) -> Self {
        CastResource {
            name: format!("{}CastResource", short_type_name::<C>()),
            reconciler: BoxSubReconciler::new(reconciler),
            types: PhantomData,
        }
    }

    /// The same reconciler under another name (for logs).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Patches the changes from `before` to `after` (both `C`s as JSON) onto `resource`.
    fn patch_back(&self, resource: &mut R, before: &Value, after: &Value) -> Result<(), Error> {
        let (from, to) = (std::any::type_name::<C>(), std::any::type_name::<R>());
        let cannot = |why: String| {
            Error::msg(format!(
                "cannot patch the changes made to the {from} back onto the {to}: {why}"
            ))
        };
        let mut doc = serde_json::to_value(&*resource).map_err(|e| cannot(e.to_string()))?;
        carry_changes(&mut doc, before, after).map_err(&cannot)?;
        *resource = serde_json::from_value(doc).map_err(|e| cannot(e.to_string()))?;
        Ok(())
    }
}

impl<R, C> SubReconciler<R> for CastResource<R, C>
where
    R: Serialize + DeserializeOwned + Send + Sync,
    C: Serialize + DeserializeOwned + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn setup(&self, setup: &mut Setup) {
        self.reconciler.setup(setup);
    }

    async fn reconcile(&self, ctx: &Context, resource: &mut R) -> Result<Outcome, Error> {
        let (from, to) = (std::any::type_name::<R>(), std::any::type_name::<C>());
        let original = serde_json::to_value(&*resource)
            .map_err(|e| Error::msg(format!("cannot serialise the {from}: {e}")))?;
        let mut cast: C = read_as(original)
            .map_err(|e| Error::msg(format!("cannot cast the {from} to a {to}: {e}")))?;
        let before = serde_json::to_value(&cast)
            .map_err(|e| Error::msg(format!("cannot serialise the {to}: {e}")))?;
        let result = self.reconciler.reconcile(ctx, &mut cast).await;
        let patched = match serde_json::to_value(&cast) {
            Ok(after) if after == before => Ok(()),
            Ok(after) => self.patch_back(resource, &before, &after),
            Err(e) => Err(Error::msg(format!("cannot serialise the {to}: {e}"))),
        };
        match (result, patched) {
            (Ok(outcome), Ok(())) => Ok(outcome),
            (Ok(outcome), Err(err)) => Err(err.with_outcome(outcome)),
            (Err(err), Ok(())) => Err(err),
            // A join carries the outcome its parts gathered.
            (Err(err), Err(patch)) => Err(Error::join([err, patch])),
        }
    }
}

/// `resource` (an `R` as JSON) read as a `C`. A `C` that insists on its own `apiVersion` and
/// `kind` (a k8s-openapi type refuses any other) reads the resource without them: the cast is a
/// view of its fields, as reconciler.io's `CastResource` reads one type's JSON into another.
/// The error is that of the reading without them, the one about the fields.
fn read_as<C: DeserializeOwned>(mut resource: Value) -> Result<C, serde_json::Error> {
    let with_type = match serde::Deserialize::deserialize(&resource) {
        Ok(cast) => return Ok(cast),
        Err(err) => err,
    };
    let Value::Object(fields) = &mut resource else {
        return Err(with_type);
    };
    let api_version = fields.remove("apiVersion");
    let kind = fields.remove("kind");
    if api_version.is_none() && kind.is_none() {
        return Err(with_type);
    }
    serde_json::from_value(resource)
}

/// `C`'s name without its path or generic arguments: `Scalable` for `my_crate::Scalable<T>`.
fn short_type_name<C>() -> &'static str {
    let full = std::any::type_name::<C>();
    let plain = full.split('<').next().unwrap_or(full);
    plain.rsplit("::").next().unwrap_or(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_paths_and_generics() {
        assert_eq!(short_type_name::<Vec<u8>>(), "Vec");
        assert_eq!(
            short_type_name::<kube::api::DynamicObject>(),
            "DynamicObject"
        );
    }
}
