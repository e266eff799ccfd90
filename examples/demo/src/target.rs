//! Where the demo runs: the embedded in-memory API server, or a real cluster.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use recon_core::fake::ApiServer;

use crate::{DemoError, WAIT};

/// The API server the operators talk to.
pub enum Target {
    /// recon's in-memory API server: no cluster needed. The demo also plays the controllers a
    /// cluster would run (garbage collection, a Deployment becoming available).
    InMemory(ApiServer),
    /// A real cluster, through this client.
    Cluster(kube::Client),
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
            Target::Cluster(client) => client.clone(),
        }
    }

    /// The client the demo acts with, as the cluster's user: in memory, the server records its
    /// requests apart from the operators'.
    pub fn user_client(&self) -> kube::Client {
        match self {
            Target::InMemory(server) => server.setup_client(),
            Target::Cluster(client) => client.clone(),
        }
    }

    /// The in-memory server, if that is where the demo runs.
    pub(crate) fn server(&self) -> Option<&ApiServer> {
        match self {
            Target::InMemory(server) => Some(server),
            Target::Cluster(_) => None,
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
