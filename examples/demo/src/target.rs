//! Where the demo runs: the embedded in-memory API server, or a real cluster.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use recon_fake::{ApiServer, Identity};
use serde_json::Value;

use crate::{DemoError, WAIT};

/// The API server the operators talk to.
pub enum Target {
    /// recon's in-memory API server: no cluster needed. The demo also plays the controllers a
    /// cluster would run (garbage collection, a Deployment becoming available).
    InMemory(ApiServer),
    /// A real cluster, through this client, made from this configuration.
    Cluster(kube::Client, Box<kube::Config>),
}

impl Target {
    /// A fresh in-memory API server.
    pub fn in_memory() -> Self {
        Target::InMemory(ApiServer::new())
    }

    /// The client the operators use.
    pub fn client(&self) -> kube::Client {
        match self {
            Target::InMemory(server) => server.client(),
            Target::Cluster(client, _) => client.clone(),
        }
    }

    /// A client acting as the service account of an operator's RBAC `manifest` (YAML
    /// documents: the ServiceAccount, its roles and bindings), once the manifest is in place:
    /// applied as the demo's user (on a cluster, that user must be allowed to impersonate it).
    /// The operator then gets exactly the rights its manifest grants, there as in its tests.
    pub(crate) async fn operator_client(&self, manifest: &str) -> Result<kube::Client, DemoError> {
        let step = "installing an operator's RBAC manifest";
        let objects: Vec<Value> =
            serde_saphyr::from_multiple(manifest).map_err(|e| DemoError::Wait {
                what: step.to_owned(),
                message: e.to_string(),
            })?;
        let account = objects
            .iter()
            .find(|o| o["kind"] == "ServiceAccount")
            .and_then(|o| {
                let meta = &o["metadata"];
                Some((meta["namespace"].as_str()?, meta["name"].as_str()?))
            })
            .ok_or_else(|| DemoError::Wait {
                what: step.to_owned(),
                message: "the manifest has no ServiceAccount with a namespace".to_owned(),
            })?;
        let params = PatchParams::apply("recon-demo").force();
        let user = self.user_client();
        for object in &objects {
            let api = manifest_api(&user, object).ok_or_else(|| DemoError::Wait {
                what: step.to_owned(),
                message: format!("cannot apply a {} from it", object["kind"]),
            })?;
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            api.patch(name, &params, &Patch::Apply(object))
                .await
                .map_err(|source| DemoError::kube(step, source))?;
        }
        match self {
            Target::InMemory(server) => {
                Ok(server.client_as(Identity::service_account(account.0, account.1)))
            }
            Target::Cluster(_, config) => {
                let mut config = (**config).clone();
                config.auth_info.impersonate =
                    Some(format!("system:serviceaccount:{}:{}", account.0, account.1));
                kube::Client::try_from(config).map_err(|e| DemoError::Wait {
                    what: "a client acting as the operator's service account".to_owned(),
                    message: e.to_string(),
                })
            }
        }
    }

    /// The client the demo acts with, as the cluster's user: in memory, the server records its
    /// requests apart from the operators'.
    pub fn user_client(&self) -> kube::Client {
        match self {
            Target::InMemory(server) => server.setup_client(),
            Target::Cluster(client, _) => client.clone(),
        }
    }

    /// The in-memory server, if that is where the demo runs.
    pub fn server(&self) -> Option<&ApiServer> {
        match self {
            Target::InMemory(server) => Some(server),
            Target::Cluster(..) => None,
        }
    }

    /// Whether this is the in-memory server.
    pub fn is_in_memory(&self) -> bool {
        matches!(self, Target::InMemory(_))
    }

    /// Installs `crd` and waits until it is established.
    pub(crate) async fn install_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<(), DemoError> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let step = format!("installing the CRD {name}");
        let crds: Api<CustomResourceDefinition> = Api::all(self.user_client());
        let params = PatchParams::apply("recon-demo").force();
        crds.patch(&name, &params, &Patch::Apply(crd))
            .await
            .map_err(|source| DemoError::kube(&step, source))?;
        let established = await_condition(crds, &name, conditions::is_crd_established());
        tokio::time::timeout(WAIT, established)
            .await
            .map_err(|_| DemoError::Timeout {
                what: format!("the CRD {name} to be established"),
            })?
            .map_err(|e| DemoError::Wait {
                what: step,
                message: e.to_string(),
            })?;
        Ok(())
    }
}

/// The requests the in-memory server refused for want of a right (who may not do what): none
/// when every operator's manifest grants what it did; empty on a cluster.
pub fn forbidden_requests(target: &Target) -> Vec<String> {
    let Some(server) = target.server() else {
        return Vec::new();
    };
    server
        .requests()
        .iter()
        .filter_map(|r| {
            let access = r.access.as_ref().filter(|a| !a.allowed)?;
            Some(format!(
                "{} may not {} ({} {})",
                access.user, access.verb, r.method, r.path
            ))
        })
        .collect()
}

/// The API of an object of an RBAC manifest: a ServiceAccount, or an RBAC kind.
fn manifest_api(client: &kube::Client, object: &Value) -> Option<Api<DynamicObject>> {
    let (group, version, plural) = match object["kind"].as_str()? {
        "ServiceAccount" => ("", "v1", "serviceaccounts"),
        "Role" => ("rbac.authorization.k8s.io", "v1", "roles"),
        "ClusterRole" => ("rbac.authorization.k8s.io", "v1", "clusterroles"),
        "RoleBinding" => ("rbac.authorization.k8s.io", "v1", "rolebindings"),
        "ClusterRoleBinding" => ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
        _ => return None,
    };
    let kind = object["kind"].as_str()?;
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Some(match object["metadata"]["namespace"].as_str() {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    })
}
