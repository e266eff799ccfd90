//! The echo controller under kube's `Controller`, against the cluster of the current
//! kubeconfig. Its tests do not need this: they run `reconcile` in recon-testing tables.

use std::sync::Arc;

use echo_controller::{Data, Echo, error_policy, reconcile};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{Controller, watcher};
use kube::{Api, Client};

#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = Client::try_default().await?;
    Controller::new(Api::<Echo>::all(client.clone()), watcher::Config::default())
        .owns(
            Api::<ConfigMap>::all(client.clone()),
            watcher::Config::default(),
        )
        .run(reconcile, error_policy, Arc::new(Data::new(client)))
        .for_each(|result| async move {
            match result {
                Ok((object, action)) => println!("reconciled {object}: {action:?}"),
                Err(error) => eprintln!("reconcile failed: {error}"),
            }
        })
        .await;
    Ok(())
}
