//! Reactors (injected failures, concurrent writers), the request log, and deterministic
//! clock and identifiers.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use recon_fake::{ApiError, ApiServer, Failure, ManualClock, Reason, RequestOrigin, Verb};
use recon_test_fixtures::*;
use serde_json::json;

fn configmap(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm
}

fn configmaps(server: &ApiServer) -> Api<ConfigMap> {
    Api::namespaced(server.client(), "default")
}

#[tokio::test]
async fn an_injected_conflict_fires_once_with_the_real_message_and_stores_nothing() {
    let server = ApiServer::new();
    server
        .on(Verb::Create, "configmaps")
        .once()
        .fail(Failure::Conflict);
    let api = configmaps(&server);

    let err = status(api.create(&PostParams::default(), &configmap("a")).await);
    assert!(err.is_conflict());
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert!(
        api.get_opt("a").await.unwrap().is_none(),
        "the failed create stored nothing"
    );
    api.create(&PostParams::default(), &configmap("a"))
        .await
        .expect("the second create is served");
    assert_eq!(
        server
            .requests()
            .iter()
            .map(|r| r.status)
            .collect::<Vec<_>>(),
        [409, 404, 201]
    );
}

#[tokio::test]
async fn an_always_failure_keeps_firing_until_cleared() {
    let server = ApiServer::new();
    server
        .on(Verb::Get, "configmaps")
        .fail(Failure::Internal("etcdserver: request timed out".into()));
    let api = configmaps(&server);
    for _ in 0..3 {
        let err = status(api.get("a").await);
        assert_eq!((err.code, err.reason.as_str()), (500, "InternalError"));
        assert_eq!(
            err.message,
            "Internal error occurred: etcdserver: request timed out"
        );
    }
    server.clear_reactors();
    assert_eq!(status(api.get("a").await).code, 404);
}

#[tokio::test]
async fn a_reactor_matches_its_name_namespace_and_subresource_only() {
    let server = server().await;
    server
        .on(Verb::Patch, "widgets")
        .subresource("status")
        .name("a")
        .namespace("default")
        .fail(Failure::NotFound);
    let api = widgets(&server);
    for name in ["a", "b"] {
        api.create(&PostParams::default(), &widget(name, 1))
            .await
            .unwrap();
    }
    let patch = Patch::Merge(json!({"status": {"ready": true}}));
    let params = PatchParams::default();

    assert!(status(api.patch_status("a", &params, &patch).await).is_not_found());
    api.patch_status("b", &params, &patch)
        .await
        .expect("another name is served");
    api.patch("a", &params, &Patch::Merge(json!({"spec": {"size": 2}})))
        .await
        .expect("the main resource is served");
}

#[tokio::test]
async fn an_injected_api_error_is_answered_verbatim() {
    let server = ApiServer::new();
    let throttled = ApiError::new(429, Reason::TooManyRequests, "Too many requests: slow down");
    server
        .on(Verb::List, "configmaps")
        .times(2)
        .fail(Failure::Api(throttled));
    let api = configmaps(&server);
    for _ in 0..2 {
        let err = status(api.list(&Default::default()).await);
        assert_eq!(
            (err.code, err.reason.as_str(), err.message.as_str()),
            (429, "TooManyRequests", "Too many requests: slow down")
        );
    }
    api.list(&Default::default())
        .await
        .expect("the third list is served");
}

#[tokio::test]
async fn a_before_hook_lands_a_concurrent_write_first() {
    let server = ApiServer::new();
    let api = configmaps(&server);
    let read = api
        .create(&PostParams::default(), &configmap("a"))
        .await
        .unwrap();
    server
        .on(Verb::Update, "configmaps")
        .name("a")
        .once()
        .before(|client| async move {
            let api: Api<ConfigMap> = Api::namespaced(client, "default");
            let patch = Patch::Merge(json!({"data": {"other": "writer"}}));
            api.patch("a", &PatchParams::default(), &patch)
                .await
                .unwrap();
        });

    let mut mine = read.clone();
    mine.data = Some([("mine".to_owned(), "x".to_owned())].into());
    let err = status(api.replace("a", &PostParams::default(), &mine).await);
    assert!(
        err.is_conflict(),
        "the read is stale once the concurrent write landed"
    );

    let origins: Vec<_> = server
        .requests()
        .iter()
        .map(|r| (r.origin, r.verb))
        .collect();
    assert_eq!(
        origins,
        [
            (RequestOrigin::Client, Verb::Create),
            (RequestOrigin::Reactor, Verb::Patch),
            (RequestOrigin::Client, Verb::Update),
        ]
    );
    // The hook fired once: a fresh read-modify-write goes through.
    let mut fresh = api.get("a").await.unwrap();
    fresh
        .data
        .get_or_insert_default()
        .insert("mine".into(), "x".into());
    api.replace("a", &PostParams::default(), &fresh)
        .await
        .expect("served after the hook is spent");
}

#[tokio::test]
async fn a_panicking_before_hook_becomes_a_500() {
    let server = ApiServer::new();
    server
        .on(Verb::Get, "configmaps")
        .before(|_| async { panic!("hook bug") });
    let err = status(configmaps(&server).get("a").await);
    assert_eq!(err.code, 500);
    assert_eq!(
        err.message,
        "Internal error occurred: a reactor's before hook panicked"
    );
}

#[tokio::test]
async fn the_request_log_keeps_order_bytes_and_can_be_cleared() {
    let server = ApiServer::new();
    let api = configmaps(&server);
    api.create(&PostParams::default(), &configmap("a"))
        .await
        .unwrap();
    let patch = json!({"data": {"k": "v"}});
    api.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();

    let log = server.requests();
    let verbs: Vec<_> = log.iter().map(|r| r.verb).collect();
    assert_eq!(verbs, [Verb::Create, Verb::Patch, Verb::Delete]);
    let patch_request = &log[1];
    assert_eq!(
        patch_request.path,
        "/api/v1/namespaces/default/configmaps/a"
    );
    assert_eq!(
        patch_request.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(
        &patch_request.body[..],
        serde_json::to_vec(&patch).unwrap().as_slice()
    );
    assert_eq!(
        (
            patch_request.resource.as_str(),
            patch_request.name.as_deref()
        ),
        ("configmaps", Some("a"))
    );
    assert_eq!(patch_request.response_json().unwrap()["data"]["k"], "v");

    server.clear_requests();
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_server_built_without_recording_keeps_no_request_log() {
    let server = ApiServer::builder().record_requests(false).build();
    let api = configmaps(&server);
    api.create(&PostParams::default(), &configmap("a"))
        .await
        .unwrap();
    assert!(api.get("a").await.is_ok());
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_manual_clock_and_a_seed_make_objects_reproducible() {
    async fn run() -> (ConfigMap, ConfigMap) {
        let clock = ManualClock::new("2024-05-01T10:00:00.750Z".parse().unwrap());
        let server = ApiServer::builder().clock(clock.clone()).seed(7).build();
        let api = configmaps(&server);
        let first = api
            .create(&PostParams::default(), &configmap("a"))
            .await
            .unwrap();
        clock.advance(Duration::from_secs(90));
        let mut generated = configmap("");
        generated.metadata.name = None;
        generated.metadata.generate_name = Some("gen-".into());
        let second = api
            .create(&PostParams::default(), &generated)
            .await
            .unwrap();
        (first, second)
    }
    let (a1, b1) = run().await;
    let (a2, b2) = run().await;
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);
    assert_eq!(
        serde_json::to_value(&a1.metadata.creation_timestamp).unwrap(),
        "2024-05-01T10:00:00Z"
    );
    assert_eq!(
        serde_json::to_value(&b1.metadata.creation_timestamp).unwrap(),
        "2024-05-01T10:01:30Z"
    );
    assert_ne!(a1.metadata.uid, b1.metadata.uid);
}

/// Runs `body` on a thread of its own and fails if it has not finished within a minute: a
/// deadlock then fails this test instead of hanging the whole run.
fn within_a_minute(body: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("finished (a hang means the server deadlocked)");
}

/// Runs `request` on a runtime of its own, as code without one (a mutate hook) has to; a
/// client is made inside it, since its request buffer runs on the runtime that made it.
fn blocking<T>(request: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(request)
}

// Issue 22: hooks ran under the state lock, so a hook calling its own server hung forever.
#[test]
fn a_mutate_hook_may_call_its_own_server() {
    within_a_minute(|| {
        let server = ApiServer::new();
        blocking(async {
            configmaps(&server)
                .create(&PostParams::default(), &configmap("seen"))
                .await
        })
        .unwrap();
        let hooked = server.clone();
        server.on(Verb::Create, "configmaps").mutate(move |object| {
            let rv = hooked.resource_version();
            let logged = hooked.requests().len();
            // A request from another thread is served while the hook waits for it.
            let reader = hooked.clone();
            let seen = std::thread::spawn(move || {
                blocking(async { configmaps(&reader).get("seen").await })
            })
            .join()
            .expect("the reading thread")
            .expect("the read");
            object["data"] = json!({
                "rv": rv.to_string(),
                "logged": logged.to_string(),
                "seen": seen.metadata.name.unwrap_or_default(),
            });
        });
        let created = blocking(async {
            configmaps(&server)
                .create(&PostParams::default(), &configmap("c"))
                .await
        })
        .unwrap();
        let data = created.data.expect("data from the hook");
        assert_eq!(data["seen"], "seen");
        assert_eq!(data["logged"], "1", "only the first create was logged then");
        assert!(data["rv"].parse::<u64>().unwrap() > 0);
    });
}

// kube-apiserver runs admission again when `GuaranteedUpdate` retries on a changed object; so
// do the hooks here when a write lands while they run.
#[test]
fn mutate_hooks_run_again_on_an_object_changed_under_them() {
    within_a_minute(|| {
        let server = ApiServer::new();
        let mut cm = configmap("c");
        cm.data = Some([("k".to_owned(), "v".to_owned())].into());
        blocking(async {
            configmaps(&server)
                .create(&PostParams::default(), &cm)
                .await
        })
        .unwrap();
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (hooked, counted) = (server.clone(), runs.clone());
        server.on(Verb::Patch, "configmaps").mutate(move |object| {
            let run = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            object["data"]["admitted"] = json!(run.to_string());
            if run == 0 {
                // Another writer changes the object while the first patch is being admitted.
                let writer = hooked.clone();
                std::thread::spawn(move || {
                    let patch = Patch::Merge(json!({"data": {"other": "x"}}));
                    blocking(async {
                        configmaps(&writer)
                            .patch("c", &PatchParams::default(), &patch)
                            .await
                    })
                })
                .join()
                .expect("the writing thread")
                .expect("the other write");
            }
        });
        let patch = Patch::Merge(json!({"data": {"k": "w"}}));
        let patched = blocking(async {
            configmaps(&server)
                .patch("c", &PatchParams::default(), &patch)
                .await
        })
        .unwrap();
        let data = patched.data.expect("data");
        // Run 0 was the first patch's, run 1 the other writer's, run 2 the first patch's again.
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert_eq!(data["k"], "w");
        assert_eq!(data["other"], "x", "the other write is kept");
        assert_eq!(data["admitted"], "2");
    });
}
