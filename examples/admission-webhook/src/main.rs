//! A mutating and a validating admission webhook for `Widget`s, over HTTPS.
//!
//! - `cargo run -p admission-webhook` (or `-- demo`): a self-contained demo. It generates a
//!   self-signed certificate for 127.0.0.1, starts the server on a free port, posts
//!   `AdmissionReview`s to both webhooks over TLS as kube-apiserver would, prints the
//!   decisions and the patches, and shuts the server down.
//! - `cargo run -p admission-webhook -- serve [--addr 0.0.0.0:8443] [--cert-dir /tls]`: serves
//!   with the `tls.crt` and `tls.key` in the directory (a mounted `kubernetes.io/tls` Secret)
//!   until SIGINT or SIGTERM, with a client for the cluster from the kubeconfig or the pod's
//!   service account.

use std::net::SocketAddr;
use std::path::PathBuf;

use admission_webhook::{
    ClientError, MUTATE_PATH, VALIDATE_PATH, WebhookClient, webhook_server, widget_review,
};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use recon_core::admission::{
    HEALTH_PATH, SelfSignedCertificate, TLS_CERT_FILE, TLS_KEY_FILE, TlsConfig,
};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), ClientError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("demo") => demo().await,
        Some("serve") => serve(&args[1..]).await,
        Some(other) => Err(format!(
            "unknown command {other:?}: use `demo` (the default) or \
             `serve [--addr ADDR] [--cert-dir DIR]`"
        )
        .into()),
    }
}

/// Starts the server, sends it a few reviews, and stops it.
async fn demo() -> Result<(), ClientError> {
    let certificate = SelfSignedCertificate::generate(&["127.0.0.1"])?;
    println!("Generated a self-signed certificate for 127.0.0.1");

    // The trees do not read the cluster; the in-memory API server stands in for one.
    let api = recon_fake::ApiServer::new();
    let server = webhook_server(certificate.tls_config()?, api.client())
        .start("127.0.0.1:0".parse()?)
        .await?;
    let addr = server.local_addr();
    println!("Serving {MUTATE_PATH} and {VALIDATE_PATH} on https://{addr}\n");
    let client = WebhookClient::trusting(addr, certificate.cert_pem())?;

    let health = client.get(HEALTH_PATH).await?;
    println!(
        "GET {HEALTH_PATH} -> {} {}\n",
        health.status(),
        String::from_utf8_lossy(health.body())
    );

    let blue = widget("blue-widget", json!({"team": "blue"}), None);
    post(
        &client,
        "create a widget of team blue",
        MUTATE_PATH,
        "CREATE",
        Some(blue),
        None,
    )
    .await?;

    let labelled = widget(
        "green-widget",
        json!({"size": 3, "team": "green"}),
        Some(json!({"app": "shop"})),
    );
    post(
        &client,
        "create a labelled widget of size 3",
        MUTATE_PATH,
        "CREATE",
        Some(labelled),
        None,
    )
    .await?;

    let huge = widget("huge-widget", json!({"size": 50}), None);
    post(
        &client,
        "validate a widget of size 50",
        VALIDATE_PATH,
        "CREATE",
        Some(huge.clone()),
        None,
    )
    .await?;

    let small = widget("small-widget", json!({"size": 5}), None);
    post(
        &client,
        "validate a widget of size 5",
        VALIDATE_PATH,
        "CREATE",
        Some(small),
        None,
    )
    .await?;

    post(
        &client,
        "validate deleting the widget of size 50",
        VALIDATE_PATH,
        "DELETE",
        None,
        Some(huge),
    )
    .await?;

    server.shutdown().await;
    println!("The server stopped.");
    Ok(())
}

/// A widget as a client would send it.
fn widget(name: &str, spec: Value, labels: Option<Value>) -> Value {
    let mut metadata = json!({"name": name, "namespace": "default"});
    if let Some(labels) = labels {
        metadata["labels"] = labels;
    }
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata, "spec": spec})
}

/// Posts a review to `path` and prints the decision.
async fn post(
    client: &WebhookClient,
    what: &str,
    path: &str,
    operation: &str,
    object: Option<Value>,
    old_object: Option<Value>,
) -> Result<(), ClientError> {
    println!("== {what}: {operation} to {path}");
    let sent = object.clone().or(old_object.clone()).unwrap_or(Value::Null);
    println!("   object: {sent}");
    let review = widget_review("demo-uid", operation, object, old_object);
    let answer = client.post_json(path, review.to_string()).await?;
    let body: Value = serde_json::from_slice(answer.body())?;
    let response = &body["response"];
    if response["allowed"] == true {
        println!("   {} allowed", answer.status());
    } else {
        println!(
            "   {} refused: {} {} ({})",
            answer.status(),
            response["status"]["code"],
            response["status"]["reason"].as_str().unwrap_or("?"),
            response["status"]["message"].as_str().unwrap_or("?"),
        );
    }
    if let Some(encoded) = response["patch"].as_str() {
        let decoded = BASE64.decode(encoded)?;
        println!(
            "   patchType {}, patch {}",
            response["patchType"],
            String::from_utf8_lossy(&decoded)
        );
        let ops: json_patch::Patch = serde_json::from_slice(&decoded)?;
        let mut patched = sent;
        json_patch::patch(&mut patched, &ops)?;
        println!("   patched object: {patched}");
    }
    println!();
    Ok(())
}

/// Serves until SIGINT or SIGTERM.
async fn serve(args: &[String]) -> Result<(), ClientError> {
    let mut addr: SocketAddr = "0.0.0.0:8443".parse()?;
    let mut cert_dir = PathBuf::from("/tls");
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--addr" => addr = value.parse()?,
            "--cert-dir" => cert_dir = PathBuf::from(value),
            other => return Err(format!("unknown option {other:?}").into()),
        }
    }
    let tls = TlsConfig::from_pem_files(cert_dir.join(TLS_CERT_FILE), cert_dir.join(TLS_KEY_FILE))?;
    let client = kube::Client::try_default().await?;
    println!("Serving {MUTATE_PATH} and {VALIDATE_PATH} on https://{addr}");
    webhook_server(tls, client)
        .serve_with_shutdown(addr, shutdown_signal())
        .await?;
    println!("Stopped.");
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM (what the kubelet sends a pod).
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            eprintln!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(e) => {
                eprintln!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
