//! `AdmissionWebhookAdapter`: runs a reconciler tree on the object of an admission request and
//! answers with the decision and, for a mutating webhook, the patch of what the tree changed.

use std::sync::Arc;

use jiff::Timestamp;
use serde_json::Value;
use tracing::Instrument;

use super::denied::AdmissionDenied;
use super::exchange::Admission;
use super::handler::AdmissionHandler;
use super::review::{
    AdmissionKind, AdmissionRequest, AdmissionResponse, AdmissionStatus, Operation,
};
use crate::context::{Config, Context, Request};
use crate::error::Error;
use crate::json::carry_changes;
use crate::root::Tree;
use crate::tree::{Reconciled, SubReconciler};

/// A hook run before or after the tree, with the exchange (the request, and the response it
/// may change).
type HandleHook = Box<dyn Fn(&Context, &Admission) + Send + Sync>;

/// Runs the sub-reconcilers of a controller at admission time: the object of each admission
/// request (the stored object, for a delete) is read as an `R` and handed to the tree.
///
/// - The request is **allowed** unless the tree fails. A failure refuses it: an
///   [`AdmissionDenied`] error gives its own code, reason and message; any other error reads as
///   an internal error (500) with the error's message. A status a step already set on the
///   response is kept.
/// - A **mutating** webhook (the default) answers with an RFC 6902 JSON Patch of what the tree
///   changed, computed against the object as the request carried it: fields `R` does not know
///   are left alone, and defaults `R` fills in are not written unless the tree changed them.
///   A step that set a patch itself keeps it. Deletes and connects are never patched.
/// - A [`validating`](Self::validating) webhook never answers with a patch (kube-apiserver
///   refuses a validating webhook's response that carries one); what the tree changes, and a
///   patch a step sets on the response, are dropped.
/// - An object of another kind than `R`, or one that does not read as an `R`, is refused
///   with 400 `BadRequest` before the tree runs.
///
/// The tree sees the exchange through [`Context::admission`]: the request (who asks, a dry
/// run or not) and the response (warnings, audit annotations). The context's request is the
/// object's namespace and name, and its request time is the time the request arrived.
///
/// Serve it over HTTPS with `WebhookServer` (feature `webhook-server`), or from any HTTP
/// server with [`respond`](super::respond).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::admission::{AdmissionDenied, AdmissionRequest};
/// use recon_core::{AdmissionWebhookAdapter, Config, SyncReconciler};
///
/// let labels = SyncReconciler::<ConfigMap>::new("TeamLabel").sync(async |_ctx, cm| {
///     let labels = cm.metadata.labels.get_or_insert_default();
///     if labels.get("team").is_some_and(|t| t == "nobody") {
///         return Err(AdmissionDenied::forbidden("team nobody does not exist").into());
///     }
///     labels.entry("team".into()).or_insert_with(|| "platform".into());
///     Ok(())
/// });
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let server = recon_fake::ApiServer::new();
/// let webhook = AdmissionWebhookAdapter::new(Config::new(server.client(), "defaulter"), labels);
///
/// let cm: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "settings", "namespace": "default"},
/// })).unwrap();
/// let response = webhook.handle(AdmissionRequest::create(&cm).with_uid("u-1")).await;
/// assert!(response.allowed);
/// assert_eq!(
///     serde_json::to_value(response.patch.unwrap()).unwrap(),
///     serde_json::json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "platform"}}])
/// );
/// # });
/// ```
pub struct AdmissionWebhookAdapter<R: Reconciled> {
    tree: Tree<R>,
    mutating: bool,
    before: Option<HandleHook>,
    after: Option<HandleHook>,
}

impl<R: Reconciled> AdmissionWebhookAdapter<R>
where
    R::DynamicType: Default,
{
    /// A mutating webhook running `reconciler` with `config`. Named
    /// `<Kind>AdmissionWebhookAdapter`.
    pub fn new(config: Config, reconciler: impl SubReconciler<R> + 'static) -> Self {
        Self::new_with(config, R::DynamicType::default(), reconciler)
    }
}

impl<R: Reconciled> AdmissionWebhookAdapter<R> {
    /// A webhook for a resource type known at runtime (`DynamicObject` and its `ApiResource`).
    pub fn new_with(
        config: Config,
        dyntype: R::DynamicType,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        AdmissionWebhookAdapter {
            tree: Tree::new("AdmissionWebhookAdapter", config, dyntype, reconciler),
            mutating: true,
            before: None,
            after: None,
        }
    }

    /// The same webhook under another name (for logs).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.tree.name = name.into();
        self
    }

    /// The same webhook as a validating one: it admits or refuses, and never patches.
    #[must_use]
    pub fn validating(mut self) -> Self {
        self.mutating = false;
        self
    }

    /// Runs `hook` before the tree (to stash values for it, say). Setting a refusal on the
    /// response here does not stop the tree; its decision is kept unless the tree fails.
    #[must_use]
    pub fn before_handle(
        mut self,
        hook: impl Fn(&Context, &Admission) + Send + Sync + 'static,
    ) -> Self {
        self.before = Some(Box::new(hook));
        self
    }

    /// Runs `hook` after the tree, with the response about to be sent (to add audit
    /// annotations or warnings, or to log the decision).
    #[must_use]
    pub fn after_handle(
        mut self,
        hook: impl Fn(&Context, &Admission) + Send + Sync + 'static,
    ) -> Self {
        self.after = Some(Box::new(hook));
        self
    }

    /// The webhook's name.
    pub fn name(&self) -> &str {
        &self.tree.name
    }

    /// Whether the webhook patches what its tree changed.
    pub fn is_mutating(&self) -> bool {
        self.mutating
    }

    /// Decides `request`, timed now.
    pub async fn handle(&self, request: AdmissionRequest) -> AdmissionResponse {
        self.handle_at(Admission::new(request), Timestamp::now())
            .await
    }

    /// Decides the exchange `admission` with the request time fixed at `now` (tests pin it).
    pub async fn handle_at(&self, admission: Admission, now: Timestamp) -> AdmissionResponse {
        let request = admission.request();
        let span = tracing::debug_span!(
            "admission",
            webhook = %self.tree.name,
            uid = %request.uid,
            kind = %request.kind,
            operation = ?request.operation,
        );
        self.decide(admission, now).instrument(span).await
    }

    async fn decide(&self, admission: Admission, now: Timestamp) -> AdmissionResponse {
        let admission = Arc::new(admission);
        let request = admission.request();
        let target = Request {
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        let ctx = Context::new(self.tree.config.clone(), target)
            .at(now)
            .with_admission(Arc::clone(&admission));
        if let Some(before) = &self.before {
            before(&ctx, &admission);
        }
        match self.admit(&ctx, &admission).await {
            Ok(Some(patch)) => {
                tracing::debug!(webhook = %self.tree.name, ?patch, "mutating the object");
                admission.update_response(|response| {
                    response.patch.get_or_insert(patch);
                });
            }
            Ok(None) => {}
            Err(err) => {
                if !err.is_quiet() {
                    tracing::info!(webhook = %self.tree.name, error = %err, "refusing the request");
                }
                admission.deny_unless_denied(refusal(&err));
            }
        }
        if let Some(after) = &self.after {
            after(&ctx, &admission);
        }
        if !self.mutating {
            admission.update_response(|response| {
                if response.patch.take().is_some() {
                    tracing::warn!(webhook = %self.tree.name, "a validating webhook cannot patch: dropping the patch a step set");
                }
            });
        }
        drop(ctx);
        match Arc::try_unwrap(admission) {
            Ok(admission) => admission.into_response(),
            // A step kept the exchange alive (in a task it spawned): answer as it stands.
            Err(shared) => shared.response(),
        }
    }

    /// Runs the tree on the request's object; the patch of what it changed, when there is one
    /// to send.
    async fn admit(
        &self,
        ctx: &Context,
        admission: &Admission,
    ) -> Result<Option<json_patch::Patch>, Error> {
        let request = admission.request();
        let raw = request.subject().ok_or_else(|| {
            let field = match request.operation {
                Operation::Delete => "oldObject",
                _ => "object",
            };
            AdmissionDenied::bad_request(format!(
                "the {:?} request has no {field}",
                request.operation
            ))
        })?;
        let expected = AdmissionKind {
            group: R::group(&self.tree.dyntype).into_owned(),
            version: R::version(&self.tree.dyntype).into_owned(),
            kind: R::kind(&self.tree.dyntype).into_owned(),
        };
        if request.kind != expected {
            return Err(AdmissionDenied::bad_request(format!(
                "{} admits {expected}, not {}",
                self.tree.name, request.kind
            ))
            .into());
        }
        let mut resource: R = serde_json::from_value(raw.clone()).map_err(|e| {
            AdmissionDenied::bad_request(format!("the object is not a valid {expected}: {e}"))
        })?;
        let before = as_json(&resource)?;
        self.tree.reconciler.reconcile(ctx, &mut resource).await?;
        let patchable = matches!(request.operation, Operation::Create | Operation::Update);
        if !self.mutating || !patchable {
            return Ok(None);
        }
        let after = as_json(&resource)?;
        if after == before {
            return Ok(None);
        }
        let mut patched = raw.clone();
        carry_changes(&mut patched, &before, &after).map_err(|why| {
            Error::msg(format!(
                "cannot patch the changes made to the {expected} onto the object sent: {why}"
            ))
        })?;
        let patch = json_patch::diff(raw, &patched);
        Ok((!patch.0.is_empty()).then_some(patch))
    }
}

fn as_json<R: Reconciled>(resource: &R) -> Result<Value, Error> {
    serde_json::to_value(resource).map_err(|e| {
        Error::msg(format!(
            "cannot serialise the {}: {e}",
            std::any::type_name::<R>()
        ))
    })
}

/// The status a failed tree refuses the request with.
fn refusal(err: &Error) -> AdmissionStatus {
    match err.find::<AdmissionDenied>() {
        Some(denied) => denied.status(),
        None => AdmissionDenied::internal(err.to_string()).status(),
    }
}

impl<R: Reconciled> AdmissionHandler for AdmissionWebhookAdapter<R> {
    fn name(&self) -> &str {
        &self.tree.name
    }

    fn is_mutating(&self) -> bool {
        self.mutating
    }

    async fn handle_at(&self, admission: Admission, now: Timestamp) -> AdmissionResponse {
        AdmissionWebhookAdapter::handle_at(self, admission, now).await
    }
}
