//! Reading what a reconcile did from the in-memory API server's request log, the event log and
//! the tracker's log.

use recon_core::EventType;
use recon_fake::{RecordedRequest, RequestOrigin, Verb};
use serde_json::Value;

use crate::env::Cluster;
use crate::expect::{
    DeleteCollectionRef, DeleteRef, EventKind, EventRef, Expectations, PatchRef, PatchType,
    RelatedRef,
};

/// What the code under test did in `cluster`, whose request log is `requests` (the writes it
/// sent, the events it published, the tracks it made), as [`Expectations`].
pub(crate) fn observe(cluster: &Cluster, requests: &[RecordedRequest]) -> Expectations {
    let mut seen = Expectations::default();
    let mut api_events = Vec::new();
    for r in requests
        .iter()
        .filter(|r| r.origin == RequestOrigin::Client)
    {
        let status = r.subresource.as_deref() == Some("status");
        let body = || r.body_json().unwrap_or(Value::Null);
        let group = || Some(r.group.clone());
        // kube's `Recorder` publishes an event by creating it, and a repeat by patching the
        // whole event with its series: each is one event published.
        if r.kind == "Event"
            && matches!(r.group.as_str(), "" | "events.k8s.io")
            && matches!(r.verb, Verb::Create | Verb::Patch)
            && r.subresource.is_none()
            && let Some(event) = published_event(&body())
        {
            api_events.push(event);
            continue;
        }
        match r.verb {
            Verb::Create if r.subresource.is_none() => seen.creates.push(body()),
            Verb::Update if status => seen.status_updates.push(body()),
            Verb::Update => seen.updates.push(body()),
            Verb::Patch => {
                let patch_type = r
                    .content_type
                    .as_deref()
                    .and_then(PatchType::from_content_type)
                    .unwrap_or(PatchType::Merge);
                let patch = PatchRef {
                    kind: r.kind.clone(),
                    group: group(),
                    namespace: r.namespace.clone(),
                    name: r.name.clone().unwrap_or_default(),
                    patch_type,
                    field_manager: r.query_param("fieldManager"),
                    force: Some(r.query_param("force").as_deref() == Some("true")),
                    dry_run: Some(r.is_dry_run()),
                    patch: Some(body()),
                    exact: Some(String::from_utf8_lossy(&r.body).into_owned()),
                };
                match (status, patch_type) {
                    (true, PatchType::Apply) => seen.status_applies.push(patch),
                    (true, _) => seen.status_patches.push(patch),
                    (false, PatchType::Apply) => seen.applies.push(patch),
                    (false, _) => seen.patches.push(patch),
                }
            }
            Verb::Delete => seen.deletes.push(DeleteRef {
                kind: r.kind.clone(),
                group: group(),
                namespace: r.namespace.clone(),
                name: r.name.clone().unwrap_or_default(),
                dry_run: Some(r.is_dry_run()),
            }),
            Verb::DeleteCollection => seen.delete_collections.push(DeleteCollectionRef {
                kind: r.kind.clone(),
                group: group(),
                namespace: r.namespace.clone(),
                label_selector: r.query_param("labelSelector"),
                field_selector: r.query_param("fieldSelector"),
                dry_run: Some(r.is_dry_run()),
            }),
            _ => {}
        }
    }
    seen.tracks = cluster.tracker().requests();
    seen.events = api_events;
    seen.events
        .extend(cluster.events().events().into_iter().map(|e| EventRef {
            type_: match e.event.type_ {
                EventType::Normal => EventKind::Normal,
                EventType::Warning => EventKind::Warning,
            },
            reason: e.event.reason,
            note: e.event.note,
            action: Some(e.event.action).filter(|a| !a.is_empty()),
            reporting_controller: None,
            related: None,
        }));
    seen
}

/// The event an `Event` body publishes (`note` in events.k8s.io/v1, `message` in core/v1;
/// `reportingController`, or core/v1's `reportingComponent`), when it has a type and a reason.
fn published_event(body: &Value) -> Option<EventRef> {
    let type_ = match body.get("type")?.as_str()? {
        "Normal" => EventKind::Normal,
        "Warning" => EventKind::Warning,
        _ => return None,
    };
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    let related = body.get("related").and_then(|r| {
        let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(RelatedRef {
            kind: text("kind")?,
            api_version: text("apiVersion"),
            namespace: text("namespace"),
            name: text("name")?,
        })
    });
    Some(EventRef {
        type_,
        reason: text("reason")?,
        note: text("note").or_else(|| text("message")),
        action: text("action"),
        reporting_controller: text("reportingController").or_else(|| text("reportingComponent")),
        related,
    })
}
