//! A tour of recon's in-memory API server: plain `kube::Api` calls against it, each followed by
//! what the server recorded (method, path, content type, body sent, status answered).
//!
//! Run with `cargo run -p fake-apiserver-tour`. No cluster or kubeconfig is needed.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{CustomResource, CustomResourceExt};
use recon_fake::{ApiServer, RecordedRequest, RequestOrigin, Verb};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A small custom resource with a status subresource.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "demo.recon.dev",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
struct WidgetSpec {
    size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
struct WidgetStatus {
    ready: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = ApiServer::new();
    let mut shown = 0;

    step("Install the Widget CRD by creating a CustomResourceDefinition through the API");
    server.install_crd(&Widget::crd()).await?;
    shown = show(&server, shown);

    step("Create a ConfigMap: uid, creationTimestamp and a global resourceVersion are set");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("settings".into());
    cm.data = Some([("mode".to_owned(), "fast".to_owned())].into());
    let cm = configmaps.create(&PostParams::default(), &cm).await?;
    println!(
        "   -> uid {}, resourceVersion {}",
        cm.metadata.uid.as_deref().unwrap_or("?"),
        cm.metadata.resource_version.as_deref().unwrap_or("?")
    );
    shown = show(&server, shown);

    step("A merge patch carrying a stale resourceVersion is an optimistic lock: 409");
    let stale = json!({"metadata": {"resourceVersion": "1"}, "data": {"mode": "slow"}});
    if let Err(kube::Error::Api(status)) = configmaps
        .patch("settings", &PatchParams::default(), &Patch::Merge(&stale))
        .await
    {
        println!(
            "   -> {} {}: {}",
            status.code, status.reason, status.message
        );
    }
    shown = show(&server, shown);

    step("A patch that changes nothing is not written: the resourceVersion stays");
    let same = json!({"data": {"mode": "fast"}});
    let unchanged = configmaps
        .patch("settings", &PatchParams::default(), &Patch::Merge(&same))
        .await?;
    println!(
        "   -> resourceVersion still {}",
        unchanged
            .metadata
            .resource_version
            .as_deref()
            .unwrap_or("?")
    );
    shown = show(&server, shown);

    step("Create a Widget, then write its status through the status subresource");
    let widgets: Api<Widget> = Api::default_namespaced(server.client());
    let mut widget = Widget::new("w1", WidgetSpec { size: 3 });
    widget.metadata.finalizers = Some(vec!["demo.recon.dev/cleanup".into()]);
    widgets.create(&PostParams::default(), &widget).await?;
    let status = json!({"status": {"ready": true}});
    let widget = widgets
        .patch_status("w1", &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    println!(
        "   -> generation {} (status writes never bump it), ready = {}",
        widget.metadata.generation.unwrap_or_default(),
        widget.status.as_ref().is_some_and(|s| s.ready)
    );
    shown = show(&server, shown);

    step(
        "Delete the Widget: its finalizer keeps it, terminating; removing the finalizer deletes it",
    );
    widgets.delete("w1", &DeleteParams::default()).await?;
    let no_finalizers = json!({"metadata": {"finalizers": null}});
    widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(&no_finalizers))
        .await?;
    println!(
        "   -> still there afterwards: {}",
        widgets.get_opt("w1").await?.is_some()
    );
    show(&server, shown);

    let log = server.requests();
    let writes = log
        .iter()
        .filter(|r| {
            matches!(
                r.verb,
                Verb::Create | Verb::Update | Verb::Patch | Verb::Delete
            )
        })
        .count();
    println!(
        "\nSummary: {} requests recorded ({} writes, {} from set-up helpers); final resourceVersion {}.",
        log.len(),
        writes,
        log.iter()
            .filter(|r| r.origin == RequestOrigin::Setup)
            .count(),
        server.resource_version()
    );
    Ok(())
}

fn step(title: &str) {
    println!("\n== {title}");
}

/// Prints the requests recorded since the first `from`; returns how many there are now.
fn show(server: &ApiServer, from: usize) -> usize {
    let log = server.requests();
    for request in &log[from..] {
        print_request(request);
    }
    log.len()
}

fn print_request(r: &RecordedRequest) {
    let content_type = r.content_type.as_deref().unwrap_or("-");
    println!(
        "   {} {} [{}] -> {}",
        r.method, r.path, content_type, r.status
    );
    if !r.body.is_empty() {
        println!("      sent: {}", String::from_utf8_lossy(&r.body));
    }
}
