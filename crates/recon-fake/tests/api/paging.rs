//! Lists in pages and at past revisions (L4): `limit` / `continue` from one consistent snapshot,
//! `remainingItemCount`, `resourceVersionMatch=Exact`, and the errors of each, with the messages
//! of a real apiextensions-apiserver 1.36.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, VersionMatch};
use kube::runtime::{WatchStreamExt, watcher};
use recon_fake::ApiServer;
use recon_test_fixtures::*;
use serde_json::json;

async fn with_widgets(names: &[&str]) -> (ApiServer, Api<Widget>) {
    let server = server().await;
    let api = widgets(&server);
    for name in names {
        api.create(&PostParams::default(), &widget(name, 1))
            .await
            .unwrap();
    }
    (server, api)
}

fn names(list: &kube::core::ObjectList<Widget>) -> Vec<String> {
    list.items.iter().map(|w| w.name_any()).collect()
}

#[tokio::test]
async fn pages_follow_key_order_and_count_what_remains() {
    let (server, api) = with_widgets(&["a", "b", "c", "d", "e"]).await;
    let revision = server.resource_version().to_string();
    let first = api.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(names(&first), ["a", "b"]);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    assert_eq!(
        first.metadata.resource_version.as_deref(),
        Some(revision.as_str())
    );
    let token = first.metadata.continue_.clone().unwrap();
    let second = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&second), ["c", "d"]);
    assert_eq!(second.metadata.remaining_item_count, Some(1));
    let token = second.metadata.continue_.clone().unwrap();
    let last = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&last), ["e"]);
    assert_eq!(last.metadata.continue_.as_deref(), Some(""));
    assert_eq!(last.metadata.remaining_item_count, None);
}

#[tokio::test]
async fn later_pages_read_the_snapshot_of_the_first_page() {
    let (server, api) = with_widgets(&["a", "b", "c", "d"]).await;
    let snapshot = server.resource_version().to_string();
    let first = api.list(&ListParams::default().limit(2)).await.unwrap();
    // Changes between pages: a creation, an update, a deletion, all after the token's revision.
    api.create(&PostParams::default(), &widget("bb", 1))
        .await
        .unwrap();
    api.patch(
        "c",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"size": 7}})),
    )
    .await
    .unwrap();
    api.delete("d", &DeleteParams::default()).await.unwrap();
    let token = first.metadata.continue_.unwrap();
    let rest = api
        .list(&ListParams::default().continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&rest), ["c", "d"]);
    assert_eq!(rest.items[0].spec.size, 1);
    assert_eq!(rest.metadata.resource_version, Some(snapshot));
    // A fresh list sees the changes.
    let now = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&now), ["a", "b", "bb", "c"]);
}

#[tokio::test]
async fn selective_pages_do_not_count_what_remains() {
    let (_server, api) = with_widgets(&["a", "b", "c"]).await;
    let page = api
        .list(
            &ListParams::default()
                .limit(1)
                .fields("metadata.namespace=default"),
        )
        .await
        .unwrap();
    assert_eq!(names(&page), ["a"]);
    assert_eq!(page.metadata.remaining_item_count, None);
    assert!(page.metadata.continue_.is_some_and(|c| !c.is_empty()));
}

#[tokio::test]
async fn a_token_older_than_the_retained_history_is_gone() {
    let (server, api) = with_widgets(&["a", "b"]).await;
    let first = api.list(&ListParams::default().limit(1)).await.unwrap();
    api.create(&PostParams::default(), &widget("c", 1))
        .await
        .unwrap();
    server.compact_history();
    let token = first.metadata.continue_.unwrap();
    let got = status(
        api.list(&ListParams::default().continue_token(&token))
            .await,
    );
    assert_eq!((got.code, got.reason.as_str()), (410, "Expired"));
    assert_eq!(
        got.message,
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."
    );
}

#[tokio::test]
async fn malformed_tokens_and_a_version_with_a_token_are_bad_requests() {
    let (_server, api) = with_widgets(&["a", "b"]).await;
    let got = status(api.list(&ListParams::default().continue_token("abc")).await);
    assert_eq!(
        (got.code, got.message.as_str()),
        (
            400,
            "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value"
        )
    );
    let token = api
        .list(&ListParams::default().limit(1))
        .await
        .unwrap()
        .metadata
        .continue_
        .unwrap();
    // kube leaves the resourceVersion out when a token is given: send the request by hand.
    let path = format!(
        "/apis/example.com/v1/namespaces/default/widgets?continue={token}&resourceVersion=5"
    );
    let request = http::Request::get(path).body(Vec::new()).unwrap();
    let got = status(
        api.clone()
            .into_client()
            .request::<serde_json::Value>(request)
            .await,
    );
    assert_eq!(
        (got.code, got.message.as_str()),
        (
            400,
            "specifying resource version is not allowed when using continue"
        )
    );
}

#[tokio::test]
async fn an_exact_resource_version_lists_the_past() {
    let (server, api) = with_widgets(&["a"]).await;
    let then = server.resource_version().to_string();
    api.create(&PostParams::default(), &widget("b", 1))
        .await
        .unwrap();
    let past = api
        .list(
            &ListParams::default()
                .at(&then)
                .matching(VersionMatch::Exact),
        )
        .await
        .unwrap();
    assert_eq!(names(&past), ["a"]);
    assert_eq!(past.metadata.resource_version, Some(then.clone()));
    server.compact_history();
    let got = status(
        api.list(
            &ListParams::default()
                .at(&then)
                .matching(VersionMatch::Exact),
        )
        .await,
    );
    assert_eq!(
        (got.code, got.message.as_str()),
        (410, "The resourceVersion for the provided list is too old.")
    );
}

#[tokio::test]
async fn a_future_resource_version_is_too_large() {
    let (server, api) = with_widgets(&["a"]).await;
    let current = server.resource_version();
    let future = (current + 10).to_string();
    let got = status(
        api.list(
            &ListParams::default()
                .at(&future)
                .matching(VersionMatch::NotOlderThan),
        )
        .await,
    );
    assert_eq!(got.code, 504);
    assert_eq!(
        got.message,
        format!("Too large resource version: {future}, current: {current}")
    );
}

#[tokio::test]
async fn the_watcher_pages_its_initial_list() {
    let (server, api) = with_widgets(&["a", "b", "c", "d", "e"]).await;
    let config = watcher::Config::default().page_size(2);
    let stream = watcher(api.clone(), config).applied_objects();
    let seen: Vec<String> = tokio::time::timeout(
        Duration::from_secs(2),
        stream.take(5).map_ok(|w| w.name_any()).try_collect(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(seen, ["a", "b", "c", "d", "e"]);
    let pages = server
        .requests()
        .iter()
        .filter(|r| r.query.contains("limit=2"))
        .count();
    assert_eq!(pages, 3);
}
