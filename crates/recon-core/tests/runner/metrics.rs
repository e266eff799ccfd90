//! What `/metrics`, `/healthz` and `/readyz` serve over HTTP after a replica reconciled a
//! widget: reconciles, one that failed, child writes, a status write that conflicted and
//! its retry.

use std::net::SocketAddr;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use kube::runtime::watcher;
use recon_core::runner::Runner;
use recon_fake::{Failure, Verb};
use recon_test_fixtures::eventually_within;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::*;

/// One HTTP/1.1 GET: the status code and the body.
pub async fn get(addr: SocketAddr, path: &str, accept: &str) -> (u16, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: recon\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    (code, body.to_owned())
}

#[tokio::test]
async fn the_endpoints_serve_reconcile_write_and_leadership_metrics_and_probes() {
    let server = server_with_a_widget().await;
    // The first status write meets a concurrent writer; the reconciler reads again and retries.
    for verb in [Verb::Update, Verb::Patch] {
        server
            .on(verb, "widgets")
            .subresource("status")
            .once()
            .fail(Failure::Conflict);
    }
    // The first reconcile cannot read its widget: it fails, and is retried.
    server
        .on(Verb::Get, "widgets")
        .once()
        .fail(Failure::Forbidden("not yet".to_owned()));
    let running = serving_endpoints(&server).await;
    let addr = running.endpoints_addr().unwrap();
    let children: Api<ConfigMap> = Api::default_namespaced(server.setup_client());
    eventually_within(RUNNER_WAIT, "the child exists", || async {
        children.get_opt("w-child").await.unwrap().is_some()
    })
    .await;
    eventually_within(RUNNER_WAIT, "the controller's cache synced", || async {
        get(addr, "/readyz", "*/*").await == (200, "ok".to_owned())
    })
    .await;

    // A status write ends its reconcile with no requeue (reconciler.io's rule); the reconcile it
    // brings writes nothing and asks for the resync.
    eventually_within(RUNNER_WAIT, "a reconcile asked for a resync", || async {
        get(addr, "/metrics", "text/plain")
            .await
            .1
            .contains("result=\"requeue_after\"")
    })
    .await;
    // A resize updates the child.
    resize(&server, 2).await;
    eventually_within(RUNNER_WAIT, "the child follows the resize", || async {
        let child = children.get("w-child").await.unwrap();
        child
            .data
            .unwrap_or_default()
            .get("size")
            .map(String::as_str)
            == Some("2")
    })
    .await;
    let (code, text) = get(addr, "/metrics", "text/plain").await;
    assert_eq!(code, 200);
    let count = |line_start: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(line_start)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {line_start} in\n{text}"))
    };
    assert!(
        count(&format!(
            "controller_runtime_reconcile_total{{controller=\"{CONTROLLER}\",result=\"requeue_after\"}}"
        )) >= 1.0
    );
    for verb in ["create", "update"] {
        assert_eq!(
            count(&format!(
                "recon_child_writes_total{{controller=\"{CONTROLLER}\",resource=\"configmaps\",verb=\"{verb}\"}}"
            )),
            1.0,
            "{verb}"
        );
    }
    assert_eq!(
        count(&format!(
            "recon_status_writes_total{{controller=\"{CONTROLLER}\",result=\"conflict\"}}"
        )),
        1.0
    );
    let metric =
        |name: &str, labels: &str| format!("{name}{{controller=\"{CONTROLLER}\"{labels}}}");
    assert!(count(&metric("recon_status_writes_total", ",result=\"success\"")) >= 1.0);
    assert!(
        count(&metric(
            "controller_runtime_reconcile_time_seconds_count",
            ""
        )) >= 2.0
    );
    assert_eq!(
        count(&metric(
            "controller_runtime_reconcile_total",
            ",result=\"error\""
        )),
        1.0
    );
    assert_eq!(
        count(&metric("controller_runtime_reconcile_errors_total", "")),
        1.0
    );
    assert_eq!(
        count(&metric(
            "recon_reconcile_errors_by_kind_total",
            ",kind=\"Forbidden\""
        )),
        1.0
    );
    assert_eq!(
        count(&metric(
            "controller_runtime_terminal_reconcile_errors_total",
            ""
        )),
        0.0,
        "a 403 is retried"
    );
    assert!(
        !text.contains("leader_election_master_status"),
        "no election, no gauge:\n{text}"
    );

    // A scraper asking for OpenMetrics gets it.
    let (code, text) = get(
        addr,
        "/metrics",
        "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
    )
    .await;
    assert_eq!(code, 200);
    assert!(text.ends_with("# EOF\n"), "{text}");

    assert_eq!(get(addr, "/healthz", "*/*").await, (200, "ok".to_owned()));
    let (code, verbose) = get(addr, "/readyz?verbose", "*/*").await;
    assert_eq!(
        (code, verbose.as_str()),
        (
            200,
            "[+]shutdown ok\n[+]informer-sync ok\nreadyz check passed\n"
        )
    );
    assert_eq!(get(addr, "/nothing", "*/*").await.0, 404);

    running.shutdown().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the endpoints still listen"
    );
}

#[tokio::test]
async fn a_runner_refuses_what_cannot_run() {
    let server = server_with_a_widget().await;
    let client = server.client();
    let err = Runner::new(client.clone()).start().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the runner has no controllers and no webhooks to run"
    );
    let err = Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), Duration::ZERO),
            Api::all(client.clone()),
            watcher::Config::default(),
        )
        .controller(
            reconciler(client.clone(), Duration::ZERO),
            Api::all(client.clone()),
            watcher::Config::default(),
        )
        .start()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("two controllers are named \"widgets\""),
        "{err}"
    );
    let err = Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), Duration::ZERO),
            Api::all(client),
            watcher::Config::default(),
        )
        .leader_election(
            recon_core::runner::LeaderElection::new(LEASE, "default", "a")
                .renew_deadline(Duration::from_secs(20)),
        )
        .start()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("leaseDuration must be greater than renewDeadline"),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_client_that_never_finishes_its_headers_is_let_go() {
    let server = server_with_a_widget().await;
    let running = serving_endpoints(&server).await;
    let mut tcp = tokio::net::TcpStream::connect(running.endpoints_addr().unwrap())
        .await
        .unwrap();
    tcp.write_all(b"GET /metrics HTTP/1.1\r\nHost: rec")
        .await
        .unwrap();
    let began = tokio::time::Instant::now();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), tcp.read_to_end(&mut answer))
        .await
        .expect("the endpoints kept the connection open")
        .unwrap();
    // Ten seconds, not hyper's default of thirty.
    let held = began.elapsed();
    assert!(
        held >= Duration::from_secs(10) && held <= Duration::from_secs(11),
        "closed after {held:?}"
    );
    running.shutdown().await;
}

#[tokio::test]
async fn metrics_given_after_the_controllers_are_the_ones_counted() {
    let server = server_with_a_widget().await;
    let client = server.client();
    let metrics = recon_core::runner::Metrics::new();
    let running = Runner::new(client.clone())
        .controller(
            reconciler(client.clone(), Duration::ZERO),
            Api::all(client),
            watcher::Config::default(),
        )
        .metrics(metrics.clone())
        .start()
        .await
        .unwrap();
    eventually_within(
        RUNNER_WAIT,
        "a reconcile is counted in the metrics given",
        || async {
            metrics
                .encode_prometheus()
                .contains("controller_runtime_reconcile_total{controller=\"widgets\"")
        },
    )
    .await;
    running.shutdown().await;
}
