//! On a control plane without nodes (kube-apiserver and kube-controller-manager, no scheduler
//! or kubelet, as the project's test control plane), nothing ever runs a Pod, so no Deployment
//! becomes available. The demo then plays the kubelet: every Pod of its namespace is reported
//! running and ready, and the cluster's own ReplicaSet and Deployment controllers do the rest.

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;
use tokio::sync::watch;

use crate::output::Output;

/// Whether the cluster has no Node to run Pods on.
pub(crate) async fn has_no_nodes(client: &kube::Client) -> bool {
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .list(&ListParams::default().limit(1))
        .await
        .is_ok_and(|list| list.items.is_empty())
}

/// Reports every Pod of `namespace` running and ready as it appears, until `stopping` turns
/// true.
pub(crate) fn spawn(
    client: kube::Client,
    namespace: &str,
    output: Output,
    mut stopping: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    tokio::spawn(async move {
        let stream = watcher(pods.clone(), watcher::Config::default()).applied_objects();
        futures::pin_mut!(stream);
        let stop = async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        };
        futures::pin_mut!(stop);
        loop {
            let next = tokio::select! {
                () = &mut stop => break,
                next = stream.next() => next,
            };
            match next {
                Some(Ok(pod)) if !is_ready(&pod) => report_ready(&pods, &pod, &output).await,
                Some(_) => {}
                None => break,
            }
        }
    })
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

async fn report_ready(pods: &Api<Pod>, pod: &Pod, output: &Output) {
    let Some(name) = pod.metadata.name.as_deref() else {
        return;
    };
    let ready = |type_: &str| json!({"type": type_, "status": "True"});
    let status = json!({"status": {
        "phase": "Running",
        "conditions": [ready("PodScheduled"), ready("Initialized"), ready("ContainersReady"),
                       ready("Ready")],
    }});
    match pods
        .patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await
    {
        Ok(_) => output.note(format!(
            "(playing the kubelet) Pod {name}: running and ready"
        )),
        // Deleted meanwhile, or changed under us: the next event brings it again.
        Err(err) => tracing::debug!("(playing the kubelet) Pod {name}: {err}"),
    }
}
