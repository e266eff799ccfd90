//! The admin-access check of resource.k8s.io's claim strategies
//! (`AuthorizedForAdmin` and `AuthorizedForAdminStatus` of pkg/registry/resource/utils.go): a
//! ResourceClaim or ResourceClaimTemplate that asks for admin access to devices on create, or a
//! claim's status that newly grants it, must be in a namespace labelled
//! `resource.kubernetes.io/admin-access: "true"`. Its error comes before the strategy's others.

use recon_apimachinery::json::Value;

use crate::field::{FieldError, Path};
use crate::request::call::Call;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::object::Object;

/// `DRAAdminNamespaceLabelKey`.
const ADMIN_LABEL: &str = "resource.kubernetes.io/admin-access";

/// The path of the first of `items` whose `adminAccess` (under `inner`, if given) is true,
/// under `at`.
fn first_admin(items: Option<&Value>, inner: Option<&str>, at: &Path) -> Option<Path> {
    let items = items.and_then(Value::as_array)?;
    items.iter().enumerate().find_map(|(i, item)| {
        let holder = match inner {
            Some(key) => item.get(key)?,
            None => item,
        };
        (holder.get("adminAccess").and_then(Value::as_bool) == Some(true))
            .then(|| at.index(i).child("adminAccess"))
    })
}

/// The requests of a claim's spec.
fn requests(spec: Option<&Value>) -> Option<&Value> {
    spec?.get("devices")?.get("requests")
}

/// The results of a claim's allocation.
fn results(obj: &Object) -> Option<&Value> {
    obj.get("status")?
        .get("allocation")?
        .get("devices")?
        .get("results")
}

impl State {
    /// `AuthorizedForAdmin` of a new claim or template `obj`. (A template's path is the
    /// claim's, as upstream words it.)
    pub(crate) fn admin_access_on_create(&self, call: &Call<'_>, obj: &Object) -> Vec<FieldError> {
        let spec = match call.rt.kind.as_str() {
            "ResourceClaim" => obj.get("spec"),
            "ResourceClaimTemplate" => obj.get("spec").and_then(|s| s.get("spec")),
            _ => return Vec::new(),
        };
        if call.rt.group != "resource.k8s.io" || call.rt.custom {
            return Vec::new();
        }
        let at = Path::new("spec").child("devices").child("requests");
        match first_admin(requests(spec), Some("exactly"), &at) {
            Some(path) => self.admin_namespace_errors(call, path),
            None => Vec::new(),
        }
    }

    /// `AuthorizedForAdminStatus` of a claim's status written from `old` to `new`: only when
    /// the new allocation grants admin access the old one did not.
    pub(crate) fn admin_access_on_status(
        &self,
        call: &Call<'_>,
        new: &Object,
        old: &Object,
    ) -> Vec<FieldError> {
        if call.rt.custom
            || (call.rt.group.as_str(), call.rt.kind.as_str())
                != ("resource.k8s.io", "ResourceClaim")
        {
            return Vec::new();
        }
        let at = Path::new("status")
            .child("allocation")
            .child("devices")
            .child("results");
        if first_admin(results(old), None, &at).is_some() {
            return Vec::new();
        }
        match first_admin(results(new), None, &at) {
            Some(path) => self.admin_namespace_errors(call, path),
            None => Vec::new(),
        }
    }

    /// The `Forbidden` at `path` unless the request's namespace carries the admin label.
    fn admin_namespace_errors(&self, call: &Call<'_>, path: Path) -> Vec<FieldError> {
        let labelled = self
            .registry
            .get("", "namespaces")
            .and_then(|rt| {
                self.load(&rt, &object_key(None, call.namespace().unwrap_or("")))
                    .ok()
                    .flatten()
            })
            .is_some_and(|(ns, _)| {
                ns.get("metadata")
                    .and_then(|m| m.get("labels"))
                    .and_then(|l| l.get(ADMIN_LABEL))
                    .and_then(Value::as_str)
                    == Some("true")
            });
        if labelled {
            return Vec::new();
        }
        vec![FieldError::forbidden(
            path,
            format!(
                "admin access to devices requires the `{ADMIN_LABEL}: true` label on the containing namespace"
            ),
        )]
    }
}
