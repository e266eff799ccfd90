//! The pod and service account subresources through `kube::Api`: eviction against a
//! PodDisruptionBudget, binding, ephemeral containers, and a TokenRequest reviewed by a
//! TokenReview (the recorded answers are in `fixtures/conformance/subresources/`).

use base64::Engine as _;
use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, EvictParams, Patch, PatchParams, PostParams};
use kube::core::ObjectMeta;
use recon_fake::{ApiServer, ManualClock};
use serde_json::{Value, json};

fn pp() -> PostParams {
    PostParams::default()
}

fn pod(name: &str, account: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"serviceAccountName": account, "containers": [{"name": "app", "image": "nginx"}]},
    }))
    .unwrap()
}

/// A server with a pod `p1` labelled `app: web`, running and ready, and a budget selecting it
/// that allows `allowed` disruptions.
async fn running_pod_with_budget(allowed: i32) -> (ApiServer, Api<Pod>, Api<PodDisruptionBudget>) {
    let server = ApiServer::new();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(server.client(), "default");
    pods.create(&pp(), &pod("p1", "default")).await.unwrap();
    pods.patch_status(
        "p1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})),
    )
    .await
    .unwrap();
    let budget: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"name": "pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    budgets.create(&pp(), &budget).await.unwrap();
    set_allowed(&budgets, allowed).await;
    (server, pods, budgets)
}

async fn set_allowed(budgets: &Api<PodDisruptionBudget>, allowed: i32) {
    budgets
        .patch_status(
            "pdb",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "observedGeneration": 1,
                "disruptionsAllowed": allowed,
                "currentHealthy": 1,
                "desiredHealthy": 1,
                "expectedPods": 1,
            }})),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn eviction_is_refused_while_the_budget_allows_none_and_accepted_once_it_allows_one() {
    let (_server, pods, budgets) = running_pod_with_budget(0).await;
    let refused = pods.evict("p1", &EvictParams::default()).await.unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("not an API error: {refused:?}");
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (429, "TooManyRequests")
    );
    assert_eq!(
        status.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let causes = status.details.expect("details").causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].reason, "DisruptionBudget");
    assert_eq!(
        causes[0].message,
        "The disruption budget pdb needs 1 healthy pods and has 1 currently"
    );
    assert!(pods.get_opt("p1").await.unwrap().is_some());

    set_allowed(&budgets, 1).await;
    let done = pods.evict("p1", &EvictParams::default()).await.unwrap();
    assert_eq!(
        done.status,
        Some(kube::core::response::StatusSummary::Success)
    );
    assert!(
        pods.get_opt("p1").await.unwrap().is_none(),
        "the pod is gone"
    );
    let budget = budgets.get("pdb").await.unwrap();
    let status = budget.status.expect("status");
    assert_eq!(status.disruptions_allowed, Some(0));
    assert!(
        status
            .disrupted_pods
            .expect("disrupted pods")
            .contains_key("p1")
    );
    let condition = &status.conditions.expect("conditions")[0];
    assert_eq!(
        (
            condition.type_.as_str(),
            condition.status.as_str(),
            condition.reason.as_str()
        ),
        ("DisruptionAllowed", "False", "InsufficientPods")
    );
}

#[tokio::test]
async fn a_scheduled_pod_is_marked_as_a_disruption_target_and_deleted_gracefully() {
    let server = ApiServer::new();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    pods.create(&pp(), &pod("p1", "default")).await.unwrap();
    bind(&pods, "p1", "n1").await;
    pods.patch_status(
        "p1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    pods.evict("p1", &EvictParams::default()).await.unwrap();
    let evicted = pods.get("p1").await.unwrap();
    assert!(evicted.metadata.deletion_timestamp.is_some());
    assert_eq!(evicted.metadata.deletion_grace_period_seconds, Some(30));
    let conditions = evicted.status.unwrap().conditions.unwrap();
    let target = conditions
        .iter()
        .find(|c| c.type_ == "DisruptionTarget")
        .expect("a DisruptionTarget condition");
    assert_eq!(
        (target.status.as_str(), target.reason.as_deref()),
        ("True", Some("EvictionByEvictionAPI"))
    );
}

#[tokio::test]
async fn eviction_of_a_missing_pod_or_under_another_name_is_refused() {
    let server = ApiServer::new();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let missing = pods
        .evict("nope", &EvictParams::default())
        .await
        .unwrap_err();
    assert!(matches!(missing, kube::Error::Api(s) if s.code == 404));
    pods.create(&pp(), &pod("p1", "default")).await.unwrap();
    let request = http::Request::post("/api/v1/namespaces/default/pods/p1/eviction")
        .header("content-type", "application/json")
        .body(
            serde_json::to_vec(&json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}}))
                .unwrap(),
        )
        .unwrap();
    let refused = server
        .client()
        .request::<kube::core::Status>(request)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("not an API error");
    };
    assert_eq!(status.code, 400);
    assert_eq!(
        status.message,
        "name in URL does not match name in Eviction object"
    );
    // Garbage is the decoder's 400, not a panic.
    let request = http::Request::post("/api/v1/namespaces/default/pods/p1/eviction")
        .header("content-type", "application/json")
        .body(b"{not json".to_vec())
        .unwrap();
    let garbage = server
        .client()
        .request::<kube::core::Status>(request)
        .await
        .unwrap_err();
    assert!(matches!(garbage, kube::Error::Api(s) if s.code == 400));
}

async fn bind(pods: &Api<Pod>, name: &str, node: &str) {
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            kind: Some("Node".to_owned()),
            name: Some(node.to_owned()),
            ..ObjectReference::default()
        },
    };
    let _: kube::core::Status = pods
        .create_subresource("binding", name, &pp(), &binding)
        .await
        .unwrap();
}

#[tokio::test]
async fn binding_assigns_the_pod_once() {
    let server = ApiServer::new();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    pods.create(&pp(), &pod("p1", "default")).await.unwrap();
    bind(&pods, "p1", "n1").await;
    let bound = pods.get("p1").await.unwrap();
    assert_eq!(bound.spec.unwrap().node_name.as_deref(), Some("n1"));
    let scheduled = bound
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "PodScheduled")
        .expect("PodScheduled");
    assert_eq!(scheduled.status, "True");

    let again = json!({"metadata": {"name": "p1"}, "target": {"name": "n2"}});
    let refused = pods
        .create_subresource::<Value, kube::core::Status>("binding", "p1", &pp(), &again)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("not an API error");
    };
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is already assigned to node \"n1\""
    );
}

#[tokio::test]
async fn an_ephemeral_container_is_added_but_not_removed() {
    let server = ApiServer::new();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    pods.create(&pp(), &pod("p1", "default")).await.unwrap();
    let added = pods
        .patch_ephemeral_containers(
            "p1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox", "targetContainerName": "app"}]}})),
        )
        .await
        .unwrap();
    let ephemeral = added.spec.unwrap().ephemeral_containers.unwrap();
    assert_eq!(ephemeral[0].name, "debug");
    assert_eq!(ephemeral[0].image_pull_policy.as_deref(), Some("Always"));
    assert_eq!(added.metadata.generation, Some(2));
    let removed = pods
        .patch_ephemeral_containers(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"ephemeralContainers": []}})),
        )
        .await
        .unwrap_err();
    assert!(matches!(removed, kube::Error::Api(s) if s.code == 422));
}

/// The claims of a JWT, undecoded from its middle segment.
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// A TokenReview of `token` for `audiences` (the server's own when empty): its status.
async fn review(server: &ApiServer, token: &str, audiences: &[&str]) -> Value {
    let mut spec = json!({"token": token});
    if !audiences.is_empty() {
        spec["audiences"] = json!(audiences);
    }
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec});
    let request = http::Request::post("/apis/authentication.k8s.io/v1/tokenreviews")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&body).unwrap())
        .unwrap();
    let answer: Value = server.client().request(request).await.unwrap();
    answer["status"].clone()
}

async fn mint(accounts: &Api<ServiceAccount>, spec: Value) -> Value {
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec});
    accounts
        .create_subresource("token", "robot", &pp(), &body)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_minted_token_carries_the_claims_and_passes_review_until_its_pod_is_gone() {
    let clock = ManualClock::new("2024-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder().clock(clock.clone()).build();
    let accounts: Api<ServiceAccount> = Api::namespaced(server.client(), "default");
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "robot"}})).unwrap();
    let account = accounts.create(&pp(), &account).await.unwrap();
    let p1 = pods.create(&pp(), &pod("p1", "robot")).await.unwrap();

    let minted = mint(
        &accounts,
        json!({
            "audiences": ["vault"],
            "expirationSeconds": 7200,
            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p1"},
        }),
    )
    .await;
    assert_eq!(
        minted["status"]["expirationTimestamp"],
        "2024-01-01T02:00:00Z"
    );
    assert_eq!(
        minted["metadata"]["uid"].as_str(),
        account.metadata.uid.as_deref()
    );
    let token = minted["status"]["token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let claims = claims(&token);
    assert_eq!(claims["sub"], "system:serviceaccount:default:robot");
    assert_eq!(
        claims["iss"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(claims["aud"], json!(["vault"]));
    assert_eq!(claims["iat"], 1_704_067_200);
    assert_eq!(claims["nbf"], 1_704_067_200);
    assert_eq!(claims["exp"], 1_704_067_200 + 7200);
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() == 36));
    let k8s = &claims["kubernetes.io"];
    assert_eq!(k8s["namespace"], "default");
    assert_eq!(k8s["serviceaccount"]["name"], "robot");
    assert_eq!(
        k8s["serviceaccount"]["uid"].as_str(),
        account.metadata.uid.as_deref()
    );
    assert_eq!(k8s["pod"]["name"], "p1");
    assert_eq!(k8s["pod"]["uid"].as_str(), p1.metadata.uid.as_deref());

    let reviewed = review(&server, &token, &["vault"]).await;
    assert_eq!(reviewed["authenticated"], true);
    assert_eq!(reviewed["audiences"], json!(["vault"]));
    let user = &reviewed["user"];
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert_eq!(user["uid"].as_str(), account.metadata.uid.as_deref());
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    assert_eq!(
        user["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["p1"])
    );
    assert_eq!(
        user["extra"]["authentication.kubernetes.io/credential-id"],
        json!([format!("JTI={}", claims["jti"].as_str().unwrap())])
    );

    let elsewhere = review(&server, &token, &["other"]).await;
    assert_eq!(elsewhere.get("authenticated"), None);
    assert_eq!(
        elsewhere["error"],
        "[invalid bearer token, token audiences [\"vault\"] is invalid for the target audiences [\"other\"]]"
    );

    pods.delete("p1", &kube::api::DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    let gone = review(&server, &token, &["vault"]).await;
    assert_eq!(
        gone["error"],
        "[invalid bearer token, service account token has been invalidated]"
    );

    // Expired once past the hour and the leeway.
    let plain = mint(&accounts, json!({})).await;
    let plain = plain["status"]["token"].as_str().unwrap().to_owned();
    assert_eq!(review(&server, &plain, &[]).await["authenticated"], true);
    clock.advance(std::time::Duration::from_secs(3600 + 61));
    assert_eq!(
        review(&server, &plain, &[]).await["error"],
        "[invalid bearer token, service account token has expired]"
    );
    assert_eq!(
        review(&server, "not-a-token", &[]).await["error"],
        "invalid bearer token"
    );
}

#[tokio::test]
async fn a_token_request_for_a_missing_account_or_too_short_is_refused() {
    let server = ApiServer::new();
    let accounts: Api<ServiceAccount> = Api::namespaced(server.client(), "default");
    let body = json!({"spec": {}});
    let missing = accounts
        .create_subresource::<Value, Value>("token", "nope", &pp(), &body)
        .await
        .unwrap_err();
    assert!(matches!(missing, kube::Error::Api(s) if s.code == 404));
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "robot"}})).unwrap();
    accounts.create(&pp(), &account).await.unwrap();
    let short = json!({"spec": {"expirationSeconds": 100}});
    let refused = accounts
        .create_subresource::<Value, Value>("token", "robot", &pp(), &short)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("not an API error");
    };
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes"
    );
}
