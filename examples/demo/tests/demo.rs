//! The demo, end to end on the in-memory API server: it finishes, what it prints reads as the
//! issue asks (a line per event as published, "no writes", requests under their reconcile), and
//! its output (without what varies from run to run) and summary are the approved snapshot. Also
//! how a cluster run is compared, and the log format and filter.

use std::io::Write;
use std::sync::{Arc, Mutex};

use recon_demo::{Line, StepReport, Summary};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_end_to_end_on_the_in_memory_server() {
    let target = recon_demo::Target::in_memory();
    let summary = recon_demo::run(&target)
        .await
        .unwrap_or_else(|e| panic!("the demo failed: {e}"));
    // The operators ran as their service accounts: their manifests granted all they did.
    assert_eq!(
        recon_demo::forbidden_requests(&target),
        Vec::<String>::new()
    );
    assert_eq!(summary.steps.len(), 9);
    assert!(
        summary.steps.iter().any(|s| !s.writes.is_empty()),
        "the operators wrote something"
    );

    let reconciles: Vec<(&str, bool, &str)> = summary
        .transcript
        .iter()
        .filter_map(|line| match line {
            Line::Reconcile {
                object,
                wrote,
                text,
            } => Some((object.as_str(), *wrote, text.as_str())),
            _ => None,
        })
        .collect();
    for (object, wrote, text) in &reconciles {
        let sent: Vec<&str> = text.lines().skip(1).collect();
        if *wrote {
            assert!(
                sent.iter().all(|l| l.starts_with("  ")),
                "what {object}'s reconcile sent is listed under it: {text}"
            );
            assert!(!sent.is_empty(), "{text}");
        } else {
            assert_eq!(text, &format!("reconcile {object}: no writes"));
        }
    }
    assert!(
        reconciles.iter().any(|(_, wrote, _)| !wrote),
        "a reconcile that sent nothing says so"
    );

    // The Function's four children each have their own Created event: one new, then three repeats
    // kube's Recorder folds into its series, each printed with its own note and count.
    let text = summary.stable_transcript();
    let created: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("event Normal Created on Function hello"))
        .collect();
    assert_eq!(
        created,
        [
            "  event Normal Created on Function hello: Created ConfigMap \"hello-env\"",
            "  event Normal Created on Function hello: Created ConfigMap \"hello-config-routes\" (series repeat: count 2)",
            "  event Normal Created on Function hello: Created Deployment \"hello\" (series repeat: count 3)",
            "  event Normal Created on Function hello: Created Service \"hello\" (series repeat: count 4)",
        ]
    );
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("PATCH events")),
        "an event repeat is printed as the event it is"
    );

    insta::assert_snapshot!(format!("{text}\n\n{summary}"));
}

#[test]
fn the_stable_transcript_keeps_one_reconcile_without_writes_after_each_that_wrote() {
    let reconcile = |object: &str, wrote: bool| Line::Reconcile {
        object: object.to_owned(),
        wrote,
        text: if wrote {
            format!("reconcile {object}:\n  POST things → 201")
        } else {
            format!("reconcile {object}: no writes")
        },
    };
    let summary = Summary {
        transcript: vec![
            Line::Step("create".into()),
            // Before anything was written: whether it happens at all depends on timing.
            reconcile("Gateway edge", false),
            reconcile("Gateway edge", true),
            reconcile("Gateway edge", false),
            reconcile("Gateway edge", false),
            Line::Note("rollout".into()),
            reconcile("Function hello", true),
            reconcile("Gateway edge", false),
            reconcile("Function hello", false),
        ],
        ..Summary::default()
    };
    assert_eq!(
        summary.stable_transcript(),
        "== create\n\
         reconcile Gateway edge:\n  POST things → 201\n\
         reconcile Gateway edge: no writes\n\
         rollout\n\
         reconcile Function hello:\n  POST things → 201\n\
         reconcile Function hello: no writes"
    );
}

#[test]
fn a_cluster_run_is_compared_by_steps_state_webhooks_and_the_embedded_events() {
    let embedded = Summary {
        target: "the in-memory API server".into(),
        steps: vec![StepReport {
            name: "create".into(),
            writes: [("POST deployments".to_owned(), 1)].into(),
        }],
        state: vec!["Function hello: Ready=True".into()],
        webhooks: vec!["/validate: refused".into()],
        events: ["Normal Created".to_owned()].into(),
        transcript: vec![Line::Step("create".into())],
    };
    let mut cluster = Summary {
        target: "a cluster".into(),
        steps: vec![StepReport {
            name: "create".into(),
            // A cluster's Deployment controller makes the operators reconcile more often.
            writes: [
                ("POST deployments".to_owned(), 1),
                ("PATCH functions/status".to_owned(), 3),
            ]
            .into(),
        }],
        events: [
            "Normal Created".to_owned(),
            "Normal StatusPatched".to_owned(),
        ]
        .into(),
        transcript: Vec::new(),
        ..embedded.clone()
    };
    assert!(
        cluster.differences_from(&embedded).is_empty(),
        "more writes and events are fine"
    );
    cluster.state = vec!["Function hello: Ready=False".into()];
    cluster.events = ["Normal StatusPatched".to_owned()].into();
    assert_eq!(
        cluster.differences_from(&embedded),
        [
            "final state: missing `Function hello: Ready=True`",
            "final state: unexpected `Function hello: Ready=False`",
            "events: `Normal Created` was not published",
        ]
    );
}

#[test]
fn the_summary_names_event_series_repeats_for_what_they_are() {
    let summary = Summary {
        target: "the in-memory API server".into(),
        steps: vec![
            StepReport {
                name: "create".into(),
                writes: [
                    ("POST configmaps".to_owned(), 2),
                    ("POST events".to_owned(), 1),
                    ("PATCH events".to_owned(), 3),
                ]
                .into(),
            },
            StepReport {
                name: "wait".into(),
                writes: Default::default(),
            },
        ],
        ..Summary::default()
    };
    let text = summary.to_string();
    assert!(
        text.contains(
            "  1. create\n       POST configmaps ×2, new events ×1, event series repeats ×3\n"
        ),
        "{text}"
    );
    assert!(text.contains("  2. wait\n       no writes\n"), "{text}");
    assert!(
        text.contains("kube's Recorder publishes as a PATCH of the earlier one's series count"),
        "{text}"
    );
}

/// What the demo's subscriber prints, for `rust_log`, of a few lines from the demo and from
/// the crates under it.
fn printed_with(rust_log: Option<&str>) -> String {
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);
    impl Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = recon_demo::logging::subscriber(rust_log, move || writer.clone());
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!(target: "recon_demo::scenario", "== create a Function");
        tracing::debug!(target: "recon_demo::scenario", "  GET functions hello → 200");
        tracing::info!(target: "recon_core::children", object = "Deployment \"hello\"", "creating");
        tracing::warn!(target: "recon_core::root", "reconcile failed");
        tracing::debug!(target: "tower::buffer::worker", "processing request");
        tracing::debug!(target: "hyper_util::client", "connecting");
        tracing::debug!(target: "rustls::client::hs", "Resuming session");
        tracing::debug!(target: "kube_client::client", "Unsuccessful: 404");
    });
    let bytes = capture.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    String::from_utf8(bytes).unwrap_or_else(|e| panic!("not UTF-8: {e}"))
}

#[test]
fn the_log_is_compact_and_rust_log_debug_is_not_drowned_by_dependencies() {
    assert_eq!(
        printed_with(None),
        "== create a Function\nwarn recon_core: reconcile failed\n",
        "by default: the demo's lines bare (no time, no level, no span), others' warnings"
    );
    assert_eq!(
        printed_with(Some("debug")),
        "== create a Function\n\
         debug   GET functions hello → 200\n\
         recon_core: creating object=\"Deployment \\\"hello\\\"\"\n\
         warn recon_core: reconcile failed\n",
        "debug: the demo's and recon-core's debug lines, not tower's, hyper's, rustls' or kube_client's"
    );
    let named = printed_with(Some("debug,tower=debug,kube_client=debug"));
    assert!(
        named.contains("debug tower: processing request\n"),
        "{named}"
    );
    assert!(
        named.contains("debug kube_client: Unsuccessful: 404\n"),
        "{named}"
    );
    assert!(!named.contains("rustls"), "{named}");
    assert_eq!(
        printed_with(Some("warn")),
        "warn recon_core: reconcile failed\n"
    );
}
