//! Strict namespaces: kube-apiserver's `NamespaceLifecycle` admission plugin (C11), on when the
//! server is built with [`ApiServerBuilder::strict_namespaces`](crate::ApiServerBuilder::strict_namespaces).
//!
//! As the plugin's `Admit` (k8s.io/apiserver `pkg/admission/plugin/namespace/lifecycle`):
//! - Namespaces themselves, cluster-scoped objects and deletes of namespaced objects pass.
//! - A create (POST, server-side apply that creates, PUT that creates) in a namespace that does
//!   not exist is the namespace's own `NotFound` (the plugin returns the error of its live GET).
//! - A create in a namespace whose phase is `Terminating` is 403 with a `NamespaceTerminating`
//!   cause.
//! - An update or patch of an object whose namespace does not exist is that `NotFound` too: the
//!   plugin handles `Update` and checks existence for it (only the terminating check is
//!   create-only). Reads are never admitted.
//! - The immortal namespaces `default`, `kube-system` and `kube-public` cannot be deleted.
//!
//! Dry-run requests are admitted like the others: the plugin does not look at `dryRun`.

use recon_apimachinery::json::Value;

use crate::registry::resource::{DeleteBehavior, ResourceType};
use crate::request::call::Call;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::object::{Object, meta_str};
use crate::wire::status::StatusCause;

/// The plugin's `immortalNamespaces`: `metav1.NamespaceDefault`, `NamespaceSystem`,
/// `NamespacePublic`. The server creates them (with `kube-node-lease`) when it is built.
pub(crate) const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// `v1.NamespaceTerminatingCause`.
const NAMESPACE_TERMINATING_CAUSE: &str = "NamespaceTerminating";

/// What the plugin knows of a namespace.
enum Lifecycle {
    Missing,
    Active,
    Terminating,
    /// Stored, but its body does not decode: the plugin's error.
    Unreadable(ApiError),
}

impl State {
    /// Admission of a create in `call`'s namespace; `obj` is the object being created (its name,
    /// else its `generateName`, names it in a 403, as `admission.NewForbidden` does).
    pub(crate) fn admit_create(&self, call: &Call<'_>, obj: &Object) -> Result<(), ApiError> {
        let Some(namespace) = self.checked_namespace(&call.rt, call.namespace()) else {
            return Ok(());
        };
        match self.namespace_lifecycle(namespace) {
            Lifecycle::Missing => Err(namespace_not_found(namespace)),
            Lifecycle::Terminating => Err(terminating(
                &call.rt.group_resource(),
                &admission_name(call, obj),
                namespace,
            )),
            Lifecycle::Active => Ok(()),
            Lifecycle::Unreadable(err) => Err(err),
        }
    }

    /// Admission of an update (PUT, any patch, `/status` included) of an existing object: its
    /// namespace must exist; terminating is fine.
    pub(crate) fn admit_update(&self, call: &Call<'_>) -> Result<(), ApiError> {
        let Some(namespace) = self.checked_namespace(&call.rt, call.namespace()) else {
            return Ok(());
        };
        match self.namespace_lifecycle(namespace) {
            Lifecycle::Missing => Err(namespace_not_found(namespace)),
            Lifecycle::Unreadable(err) => Err(err),
            Lifecycle::Active | Lifecycle::Terminating => Ok(()),
        }
    }

    /// Admission of a delete: only the immortal namespaces are refused. DeleteCollection admits
    /// with an empty name, so it is not checked here (as upstream).
    pub(crate) fn admit_delete(&self, call: &Call<'_>) -> Result<(), ApiError> {
        let is_namespace = call.rt.delete == DeleteBehavior::Namespace;
        if self.strict_namespaces && is_namespace && IMMORTAL_NAMESPACES.contains(&call.name()) {
            return Err(ApiError::forbidden(
                &call.rt.group_resource(),
                call.name(),
                "this namespace may not be deleted",
            ));
        }
        Ok(())
    }

    /// Whether a seeded object may be stored: in strict mode its namespace must exist (a real
    /// server could not have admitted it otherwise); `Err` names the missing namespace.
    pub(crate) fn admit_seed(&self, rt: &ResourceType, obj: &Object) -> Result<(), String> {
        let namespace = meta_str(obj, "namespace");
        match self.checked_namespace(rt, Some(namespace).filter(|n| !n.is_empty())) {
            Some(ns) if matches!(self.namespace_lifecycle(ns), Lifecycle::Missing) => {
                Err(ns.to_owned())
            }
            _ => Ok(()),
        }
    }

    /// The namespace the plugin checks for an object of `rt` in `namespace`: none when strict
    /// namespaces are off and for cluster-scoped types (Namespaces themselves included).
    fn checked_namespace<'a>(
        &self,
        rt: &ResourceType,
        namespace: Option<&'a str>,
    ) -> Option<&'a str> {
        let namespace = namespace.filter(|ns| !ns.is_empty())?;
        (self.strict_namespaces && rt.namespaced).then_some(namespace)
    }

    /// The stored Namespace `name`, by its phase: `Terminating` is what the plugin tests.
    fn namespace_lifecycle(&self, name: &str) -> Lifecycle {
        let Some(rt) = self.registry.get("", "namespaces") else {
            return Lifecycle::Missing;
        };
        let (ns, _) = match self.load(&rt, &object_key(None, name)) {
            Ok(Some(ns)) => ns,
            Ok(None) => return Lifecycle::Missing,
            // The plugin's live GET fails: `return errors.NewInternalError(err)`.
            Err(e) => return Lifecycle::Unreadable(ApiError::internal(&e.go_message)),
        };
        let phase = ns.get("status").and_then(|s| s.get("phase"));
        if phase.and_then(Value::as_str) == Some("Terminating") {
            Lifecycle::Terminating
        } else {
            Lifecycle::Active
        }
    }
}

/// The `NotFound` of the plugin's live GET of the namespace: `namespaces "x" not found`.
fn namespace_not_found(namespace: &str) -> ApiError {
    ApiError::not_found(&GroupResource::new("", "namespaces"), namespace)
}

/// `admission.NewForbidden` with the plugin's reason and its `NamespaceTerminating` cause.
fn terminating(resource: &GroupResource, name: &str, namespace: &str) -> ApiError {
    let err = ApiError::forbidden(
        resource,
        name,
        &format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ),
    );
    let mut details = err.details().cloned().unwrap_or_default();
    details.causes.push(StatusCause {
        reason: NAMESPACE_TERMINATING_CAUSE.to_owned(),
        message: format!("namespace {namespace} is being terminated"),
        field: "metadata.namespace".to_owned(),
    });
    err.with_details(details)
}

/// `extractResourceName`: the URL's name, else the object's name, else its `generateName` (names
/// are generated after admission), else `Unknown`.
fn admission_name(call: &Call<'_>, obj: &Object) -> String {
    [
        call.name(),
        meta_str(obj, "name"),
        meta_str(obj, "generateName"),
    ]
    .into_iter()
    .find(|n| !n.is_empty())
    .unwrap_or("Unknown")
    .to_owned()
}
