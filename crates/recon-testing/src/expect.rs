//! What a test case expects a reconcile to do, in the same shape as what is observed: the
//! writes it sent (read from the in-memory API server's request log), the events it published,
//! its result or error, for sub-reconcilers the resulting resource and stash, and for admission
//! webhooks the response.

use std::collections::BTreeMap;
use std::time::Duration;

use recon_core::{Outcome, TrackRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error_spec::ErrorSpec;

/// The writes, events and result of one reconcile. A case lists what it expects; the harness
/// builds the same structure from what it observed and compares them list by list, in order.
///
/// Objects (creates, updates, status updates, the resulting resource) and patch bodies are
/// compared as JSON without the fields the server sets — `metadata.uid`, `resourceVersion`,
/// `creationTimestamp`, `generation`, `managedFields` and conditions' `lastTransitionTime` —
/// unless the case sets `compareServerFields`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectations {
    /// Objects created (POST bodies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub creates: Vec<Value>,
    /// Objects replaced (PUT bodies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updates: Vec<Value>,
    /// Patches of objects (JSON merge, JSON and strategic merge).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<PatchRef>,
    /// Server-side applies of objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applies: Vec<PatchRef>,
    /// Deletes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletes: Vec<DeleteRef>,
    /// Deletes of collections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delete_collections: Vec<DeleteCollectionRef>,
    /// Status replaced (`PUT /status` bodies; their `.status` is compared).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_updates: Vec<Value>,
    /// Status patches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_patches: Vec<PatchRef>,
    /// Server-side applies of status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_applies: Vec<PatchRef>,
    /// Events published.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventRef>,
    /// Tracks made, renewals included, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracks: Vec<TrackRequest>,
    /// The outcome (nothing, a requeue, a requeue after a delay). Checked when the reconcile
    /// succeeds.
    #[serde(default, skip_serializing_if = "OutcomeSpec::is_done")]
    pub result: OutcomeSpec,
    /// The reconcile must fail with this error: a part of its message (`""` for any error), or
    /// its API error's code, reason and message (see [`ErrorSpec`]). Absent, it must succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorSpec>,
    /// Signals the error must carry (`[quiet, halt]`), beside `error`. A durable error is also
    /// a halt and quiet, a halt also quiet, as [`recon_core::Error`] reads them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_signals: Vec<ErrorSignal>,
    /// Sub-reconcilers only: the resource after the reconcile. Absent, it must be unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Value>,
    /// Sub-reconcilers only: stashed values, by key (only the keys listed are checked).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stashed: BTreeMap<String, Value>,
    /// Admission webhooks only: the response, as written in a case — `allowed`, and when
    /// present `status`, `patch` (the RFC 6902 operations, decoded), `warnings` and
    /// `auditAnnotations`; no `uid` (the runner checks it against the request's). Absent, the
    /// webhook must allow the request without a patch (see [`ResponseSpec`](crate::ResponseSpec)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
}

/// The kind of a patch, from its `Content-Type`. The default is `Merge`, as a patch of no
/// known `Content-Type` is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7396).
    #[default]
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchType {
    pub(crate) fn from_content_type(content_type: &str) -> Option<PatchType> {
        Some(match content_type.split(';').next().unwrap_or("").trim() {
            "application/merge-patch+json" => PatchType::Merge,
            "application/json-patch+json" => PatchType::Json,
            "application/strategic-merge-patch+json" => PatchType::Strategic,
            "application/apply-patch+yaml" => PatchType::Apply,
            _ => return None,
        })
    }
}

/// A patch request.
///
/// The query fields (`fieldManager`, `force`, `dryRun`) are read from the request's query, as
/// kube's `PatchParams` writes it, and like `group` are compared only when the expectation
/// names them. `Default` is for struct-update syntax (`..Default::default()`); the short
/// constructors ([`PatchRef::merge`], [`PatchRef::apply`], ...) are the usual way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchRef {
    /// The kind patched.
    pub kind: String,
    /// The API group; when an expectation leaves it out, any group matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// The patch format.
    #[serde(rename = "type")]
    pub patch_type: PatchType,
    /// The `fieldManager` the request named (`None` in an observation: it named none); when an
    /// expectation leaves it out, any manager matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_manager: Option<String>,
    /// Whether the request forced the apply over conflicts (`force=true`); when an
    /// expectation leaves it out, either matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// Whether the request was a dry run (`dryRun=All`); when an expectation leaves it out,
    /// either matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The body, compared as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    /// The body, compared byte for byte (a wire-body assertion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<String>,
}

/// A delete of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteRef {
    /// The kind.
    pub kind: String,
    /// The API group; when an expectation leaves it out, any group matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
    /// Whether the request was a dry run (`dryRun: [All]` in its options, or `dryRun=All`);
    /// when an expectation leaves it out, either matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

/// A delete of a collection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteCollectionRef {
    /// The kind.
    pub kind: String,
    /// The API group; when an expectation leaves it out, any group matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The `labelSelector` parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// The `fieldSelector` parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// Whether the request was a dry run; when an expectation leaves it out, either matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

/// An event published about the reconciled resource.
///
/// `action`, `reportingController` and `related` are compared only when the expectation names
/// them. An event published through recon's in-memory [`recon_core::EventLog`] has an action
/// but no reporting controller or related object; one created through the API (kube's
/// `Recorder`) has what its body holds (`reportingComponent` in core/v1 is read as the
/// reporting controller). `Default` is for struct-update syntax; [`EventRef::normal`] and
/// [`EventRef::warning`] are the usual way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventRef {
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub type_: EventKind,
    /// The reason.
    pub reason: String,
    /// The note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What was done, such as `Hiding`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The controller that published it (`reportingController`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporting_controller: Option<String>,
    /// The secondary object the event refers to (`related`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<RelatedRef>,
}

/// The object an event names besides the one it is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelatedRef {
    /// The kind.
    pub kind: String,
    /// The `apiVersion`; when an expectation leaves it out, any matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

/// The severity of an expected event (`Normal` by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// A Normal event.
    #[default]
    Normal,
    /// A Warning event.
    Warning,
}

/// A signal an error carries ([`recon_core::ErrorKind`], as the error reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorSignal {
    /// The remaining sub-reconcilers do not run ([`recon_core::Error::is_halt`]).
    Halt,
    /// The root writes no status ([`recon_core::Error::is_skip_status_update`]).
    SkipStatusUpdate,
    /// Not reported as a failure ([`recon_core::Error::is_quiet`]).
    Quiet,
    /// Not retried before a change ([`recon_core::Error::is_durable`]).
    Durable,
}

impl ErrorSignal {
    /// The signals `err` carries.
    pub(crate) fn of(err: &recon_core::Error) -> Vec<ErrorSignal> {
        [
            (err.is_halt(), ErrorSignal::Halt),
            (err.is_skip_status_update(), ErrorSignal::SkipStatusUpdate),
            (err.is_quiet(), ErrorSignal::Quiet),
            (err.is_durable(), ErrorSignal::Durable),
        ]
        .into_iter()
        .filter_map(|(has, signal)| has.then_some(signal))
        .collect()
    }
}

/// An expected [`Outcome`], as written in a case (`requeueAfter: 30s`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutcomeSpec {
    /// Requeue soon.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requeue: bool,
    /// Requeue after this long (`30s`, `1m 30s`, ISO 8601 `PT30S`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_after: Option<String>,
}

impl OutcomeSpec {
    fn is_done(&self) -> bool {
        *self == OutcomeSpec::default()
    }

    /// The outcome this describes, or why it is not one.
    pub fn outcome(&self) -> Result<Outcome, String> {
        let requeue_after = match &self.requeue_after {
            None => None,
            Some(text) => {
                let d: jiff::SignedDuration = text
                    .parse()
                    .map_err(|e| format!("result.requeueAfter {text:?} is not a duration: {e}"))?;
                Some(
                    Duration::try_from(d)
                        .map_err(|e| format!("result.requeueAfter {text:?}: {e}"))?,
                )
            }
        };
        Ok(Outcome {
            requeue: self.requeue,
            requeue_after,
        })
    }

    /// The outcome as controller-runtime acts on it: a delay makes the requeue flag moot, and
    /// a zero delay is no delay (`{requeue: true, requeueAfter: 30s}` is `{requeueAfter: 30s}`).
    /// A spec that does not read is left as it is.
    pub(crate) fn as_acted_on(&self) -> OutcomeSpec {
        match self.outcome() {
            Ok(outcome) => {
                let delay = outcome.requeue_after.filter(|d| !d.is_zero());
                OutcomeSpec::of(Outcome {
                    requeue: outcome.requeue && delay.is_none(),
                    requeue_after: delay,
                })
            }
            Err(_) => self.clone(),
        }
    }

    /// How `outcome` is written.
    pub fn of(outcome: Outcome) -> Self {
        OutcomeSpec {
            requeue: outcome.requeue,
            requeue_after: outcome
                .requeue_after
                .and_then(|d| jiff::SignedDuration::try_from(d).ok())
                .map(|d| format!("{d:#}")),
        }
    }
}

impl From<Outcome> for OutcomeSpec {
    fn from(outcome: Outcome) -> Self {
        OutcomeSpec::of(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_through_their_written_form() {
        let o = Outcome::requeue_after(Duration::from_secs(90));
        let spec = OutcomeSpec::of(o);
        assert_eq!(spec.requeue_after.as_deref(), Some("1m 30s"));
        assert_eq!(spec.outcome(), Ok(o));
    }

    #[test]
    fn an_unreadable_duration_is_an_error() {
        let spec = OutcomeSpec {
            requeue: false,
            requeue_after: Some("soon".into()),
        };
        assert!(
            spec.outcome()
                .unwrap_err()
                .contains("requeueAfter \"soon\"")
        );
    }
}
