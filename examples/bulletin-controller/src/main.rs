//! The bulletin controller under kube's `Controller`, against the cluster of the current
//! kubeconfig, its metrics printed in the Prometheus text format when it stops. Its tests do
//! not need this.

use std::sync::Arc;

use bulletin_controller::{Bulletin, Context, error_policy, reconcile};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{Controller, watcher};
use kube::{Api, Client};
use prometheus_client::registry::Registry;

#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = Client::try_default().await?;
    let namespace = client.default_namespace().to_owned();
    let mut registry = Registry::default();
    let context = Context::new(client.clone(), &namespace, &mut registry).await?;
    Controller::new(
        Api::<Bulletin>::all(client.clone()),
        watcher::Config::default(),
    )
    .owns(Api::<ConfigMap>::all(client), watcher::Config::default())
    .shutdown_on_signal()
    .run(reconcile, error_policy, Arc::new(context))
    .for_each(|result| async move {
        match result {
            Ok((object, action)) => println!("reconciled {object}: {action:?}"),
            Err(error) => eprintln!("reconcile failed: {error}"),
        }
    })
    .await;
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, &registry).is_ok() {
        print!("{text}");
    }
    Ok(())
}
