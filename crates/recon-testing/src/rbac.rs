//! Running a table as the operator's service account, under its own RBAC manifest.
//!
//! A table given an [`OperatorRbac`] ([`ReconcilerTests::run_as`](crate::ReconcilerTests::run_as))
//! stores the manifest's Roles, ClusterRoles and bindings in every case's cluster and hands the
//! reconciler clients that act as the account: each request is authorized as kube-apiserver's
//! RBAC authorizer would authorize it, and the first one refused fails the case with the rule
//! that would have allowed it. Every table's [`Report`](crate::Report) also says what its cases
//! needed ([`Report::needed`](crate::Report::needed)): the smallest ClusterRole covering every
//! request the code under test sent, which [`OperatorRbac::check_grants`] compares with the
//! manifest.

use std::path::Path;

use recon_fake::rbac::{NeededRules, PolicyRule};
use recon_fake::{AccessTarget, Identity, RecordedRequest, RequestOrigin};
use serde::Serialize;
use serde_json::Value;

use crate::compare::Mismatch;

/// The kinds an RBAC manifest may hold: what grants rights, and the account itself.
const MANIFEST_KINDS: [&str; 5] = [
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ServiceAccount",
];

/// An operator's service account and the RBAC manifest that grants it its rights.
///
/// ```
/// use recon_testing::OperatorRbac;
///
/// let rbac = OperatorRbac::service_account("operators", "widget-operator")
///     .manifest_yaml(
///         r#"
/// apiVersion: rbac.authorization.k8s.io/v1
/// kind: ClusterRole
/// metadata: {name: widget-operator}
/// rules:
/// - apiGroups: [example.com]
///   resources: [widgets, widgets/status]
///   verbs: [get, list, watch, patch]
/// ---
/// apiVersion: rbac.authorization.k8s.io/v1
/// kind: ClusterRoleBinding
/// metadata: {name: widget-operator}
/// roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: widget-operator}
/// subjects:
/// - {kind: ServiceAccount, name: widget-operator, namespace: operators}
/// "#,
///         "rbac.yaml",
///     )
///     .unwrap();
/// assert_eq!(rbac.granted_rules().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorRbac {
    namespace: String,
    name: String,
    objects: Vec<Value>,
}

impl OperatorRbac {
    /// The service account `namespace/name`, with no rights yet.
    pub fn service_account(namespace: &str, name: &str) -> OperatorRbac {
        OperatorRbac {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            objects: Vec::new(),
        }
    }

    /// Adds an object of the manifest (a `k8s-openapi` Role, ClusterRole, RoleBinding,
    /// ClusterRoleBinding or ServiceAccount).
    ///
    /// # Panics
    /// When `object` does not serialize to JSON or is not one of those kinds: a mistake in the
    /// test's own code.
    #[must_use]
    pub fn manifest(mut self, object: &impl Serialize) -> OperatorRbac {
        let value = serde_json::to_value(object)
            .unwrap_or_else(|e| panic!("the RBAC object does not serialize: {e}"));
        if let Err(e) = check_kind(&value) {
            panic!("{e}");
        }
        self.objects.push(value);
        self
    }

    /// Adds the objects of a YAML manifest (documents separated by `---`); `origin` names it
    /// in errors.
    pub fn manifest_yaml(mut self, yaml: &str, origin: &str) -> Result<OperatorRbac, String> {
        let documents: Vec<Value> =
            serde_saphyr::from_multiple(yaml).map_err(|e| format!("{origin}: {e}"))?;
        for (i, value) in documents.into_iter().enumerate() {
            if value.is_null() {
                continue;
            }
            check_kind(&value).map_err(|e| format!("{origin}: document {}: {e}", i + 1))?;
            self.objects.push(value);
        }
        Ok(self)
    }

    /// Adds the objects of a YAML manifest file.
    pub fn manifest_yaml_file(self, path: impl AsRef<Path>) -> Result<OperatorRbac, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        self.manifest_yaml(&text, &path.display().to_string())
    }

    /// The identity the operator's clients act as.
    pub fn identity(&self) -> Identity {
        Identity::service_account(&self.namespace, &self.name)
    }

    /// The manifest's objects, as stored in every case's cluster.
    pub fn objects(&self) -> &[Value] {
        &self.objects
    }

    /// The rules of the manifest's roles that its bindings grant the account (a binding to a
    /// role the manifest does not hold, such as a bootstrap one, grants nothing here).
    pub fn granted_rules(&self) -> Vec<PolicyRule> {
        let mut rules = Vec::new();
        for binding in self.objects.iter().filter(|o| {
            matches!(
                o["kind"].as_str(),
                Some("RoleBinding" | "ClusterRoleBinding")
            )
        }) {
            let binding_namespace = binding["metadata"]["namespace"].as_str().unwrap_or("");
            let binds_account = binding["subjects"].as_array().is_some_and(|subjects| {
                subjects.iter().any(|s| {
                    s["kind"] == "ServiceAccount"
                        && s["name"] == self.name.as_str()
                        && s["namespace"].as_str().unwrap_or(binding_namespace) == self.namespace
                })
            });
            if !binds_account {
                continue;
            }
            let role_ref = &binding["roleRef"];
            let role = self.objects.iter().find(|o| {
                o["kind"] == role_ref["kind"]
                    && o["metadata"]["name"] == role_ref["name"]
                    && (role_ref["kind"] == "ClusterRole"
                        || o["metadata"]["namespace"].as_str() == Some(binding_namespace))
            });
            if let Some(role) = role {
                rules.extend(PolicyRule::of_role(role));
            }
        }
        rules
    }

    /// `Ok` when the manifest grants the account every rule `needed` lists (see
    /// [`NeededRules::missing_from`]); otherwise the missing rules, one per line. With
    /// `exactly`, rules granted beyond what was needed are an error too.
    pub fn check_grants(&self, needed: &NeededRules, exactly: bool) -> Result<(), String> {
        let granted = self.granted_rules();
        let missing = needed.missing_from(&granted);
        let excess = if exactly {
            needed.excess_in(&granted)
        } else {
            Vec::new()
        };
        if missing.is_empty() && excess.is_empty() {
            return Ok(());
        }
        let mut message = format!(
            "the RBAC manifest of service account {}/{} ",
            self.namespace, self.name
        );
        if !missing.is_empty() {
            message.push_str("lacks rules the tests needed:\n");
            message.extend(missing.iter().map(|r| format!("  {r}\n")));
        }
        if !excess.is_empty() {
            if !missing.is_empty() {
                message.push_str("and ");
            }
            message.push_str("grants rules no test needed:\n");
            message.extend(excess.iter().map(|r| format!("  {r}\n")));
        }
        message.push_str("what the tests needed:\n");
        message.push_str(&needed.to_cluster_role_yaml(&self.name));
        Err(message)
    }

    /// For a run outside a table (a real `Controller` on the in-memory server, with a client
    /// from [`OperatorRbac::identity`]): `Ok` when no request of the code under test was
    /// refused and the manifest grants what they needed; otherwise the first refusal, with the
    /// rule that would allow it, or the missing rules.
    pub fn check_requests(&self, requests: &[RecordedRequest]) -> Result<(), String> {
        if let Some(refused) = first_forbidden(requests) {
            return Err(refused.detail);
        }
        self.check_grants(&NeededRules::from_requests(requests), false)
    }
}

fn check_kind(object: &Value) -> Result<(), String> {
    let kind = object["kind"].as_str().unwrap_or("");
    if MANIFEST_KINDS.contains(&kind) {
        Ok(())
    } else {
        Err(format!(
            "an RBAC manifest holds {}, not {kind:?}",
            MANIFEST_KINDS.join(", ")
        ))
    }
}

/// The case's mismatch for the first request of the code under test the authorizer refused:
/// what it asked, and the rule that would allow it.
pub(crate) fn first_forbidden(requests: &[RecordedRequest]) -> Option<Mismatch> {
    let refused: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| {
            r.origin == RequestOrigin::Client && r.access.as_ref().is_some_and(|a| !a.allowed)
        })
        .collect();
    let first = refused.first()?;
    let access = first.access.as_ref()?;
    let mut needed = NeededRules::default();
    needed.add(&access.verb, &access.target);
    let rule = needed.rules().into_iter().next()?;
    let place = match &access.target {
        AccessTarget::Resource { namespace, .. } if !namespace.is_empty() => {
            format!(" in namespace {namespace:?}")
        }
        AccessTarget::Resource { .. } => " cluster-wide".to_owned(),
        AccessTarget::NonResource { .. } => String::new(),
    };
    let others = match refused.len() - 1 {
        0 => String::new(),
        n => format!(" ({n} more refused after it)"),
    };
    let path = if first.query.is_empty() {
        first.path.clone()
    } else {
        format!("{}?{}", first.path, first.query)
    };
    Some(Mismatch::new(
        "rbac",
        format!(
            "{} {path} was forbidden to {}{place}{others}: the manifest needs the rule {rule}",
            first.method, access.user
        ),
    ))
}
