//! recon: reconciler trees for kube-rs, and a faithful in-memory Kubernetes API server to test
//! them against.
//!
//! A reconciler is a tree of small steps ([`SubReconciler`]s) under a root
//! [`ResourceReconciler`] that reads the resource, runs the steps, and writes status once, only
//! when it changed, with the [`StatusStrategy`] you choose. Steps share a per-request
//! [`Context`]: the [`Config`] (client, reader, event recorder), a [`Stash`], and a request time
//! that stays fixed for the whole reconcile. [`prelude`] brings in what nearly every reconciler
//! names.
//!
//! Your own code runs in [`SyncReconciler`] hooks: an `async fn` of the context and the
//! resource, or an async closure capturing nothing, given as is ([`SyncReconciler::sync`];
//! [`AsyncStep`] says what fits); state a hook needs is an argument, not a capture
//! ([`SyncReconciler::sync_with`]). Every other hook (of [`Advice`], [`TryCatch`],
//! [`WithFinalizer`], the roots) takes the same style. Steps of different types go in a tuple,
//! [`Sequence::of`].
//!
//! The in-memory API server is the `recon-fake` crate (`recon_fake`): a real `kube::Client`
//! backed by a store that answers like kube-apiserver, records every request, and lets tests
//! inject failures and concurrent writes. The reconciler tree knows nothing of it, so a
//! production build leaves it out; tests depend on `recon-fake` and hand the tree its client.
//!
//! # Example
//!
//! A custom resource whose status records a resolved image and a `Ready` condition that
//! follows `ImageResolved`:
//!
//! ```
//! use kube::CustomResource;
//! use recon_core::prelude::*;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
//! #[kube(group = "example.com", version = "v1", kind = "Function", namespaced, status = "FunctionStatus")]
//! pub struct FunctionSpec {
//!     pub image: String,
//! }
//!
//! #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! pub struct FunctionStatus {
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub observed_generation: Option<i64>,
//!     #[serde(default)]
//!     pub conditions: Vec<Condition>,
//!     // Left out when unset: a `null` here would be sent in every status patch.
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub target_image: Option<String>,
//! }
//!
//! const FUNCTION: ConditionSet = ConditionSet::living(&["ImageResolved"]);
//! impl_conditioned_status!(FunctionStatus, FUNCTION);
//!
//! async fn target_image(ctx: &Context, function: &mut Function) -> Result<(), Error> {
//!     let status = function.status.get_or_insert_default();
//!     status.target_image = Some(format!("registry.example.com/{}", function.spec.image));
//!     FUNCTION.manage(&mut status.conditions, ctx.now()).mark_true("ImageResolved", "Resolved", "");
//!     Ok(())
//! }
//!
//! fn function_reconciler(config: Config) -> ResourceReconciler<Function> {
//!     let target_image = SyncReconciler::new("TargetImage").sync(target_image);
//!     ResourceReconciler::new(config, target_image).manage_status()
//! }
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! # use kube::{Api, CustomResourceExt, api::PostParams};
//! # let server = recon_fake::ApiServer::new();
//! # server.install_crd(&Function::crd()).await.unwrap();
//! # let functions: Api<Function> = Api::default_namespaced(server.client());
//! # let f = Function::new("f", FunctionSpec { image: "app".into() });
//! # functions.create(&PostParams::default(), &f).await.unwrap();
//! # let config = Config::new(server.client(), "demo").with_recorder(recon_core::EventLog::default());
//! # function_reconciler(config).reconcile(&recon_core::Request::namespaced("default", "f")).await.unwrap();
//! # let status = functions.get("f").await.unwrap().status.unwrap();
//! # assert_eq!(status.target_image.as_deref(), Some("registry.example.com/app"));
//! # assert!(status.conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
//! # });
//! ```
//!
//! Run it with `kube::runtime::Controller` through [`ResourceReconciler::reconcile_object`] and
//! [`ResourceReconciler::error_policy`], or call [`ResourceReconciler::reconcile`] directly; in
//! production, `runner::Runner` (feature `runner`) runs several with leader election, metrics,
//! probes and a graceful shutdown.
//!
//! [`admission`] runs the same trees as admission webhooks; [`conversion`] converts a custom
//! resource between its versions, with typed functions, as its CRD's conversion webhook.
//!
//! # Guides
//!
//! - [Writing a reconciler](guide::writing_reconcilers): the tree, hooks, children, tracking
//!   and watches.
//! - [Status writes](guide::status_writes): the strategies and what each owns.
//! - [Admission and conversion webhooks](guide::webhooks).
//! - [Running in production](guide::production): the `Runner` (feature `runner`).
//! - [Porting from reconciler.io](guide::reconciler_io): what maps to what, and where recon
//!   differs.
//!
//! Testing a reconciler is recon-testing's guide; the in-memory API server is recon-fake's.

// docs.rs (`--cfg docsrs`, nightly) marks what a feature gates, such as `webhook-server`.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod admission;
mod children;
mod combinators;
pub mod conditions;
mod context;
pub mod conversion;
mod error;
mod json;
mod object_api;
mod outcome;
mod root;
#[cfg(feature = "runner")]
#[cfg_attr(docsrs, doc(cfg(feature = "runner")))]
pub mod runner;
mod tree;
mod webhook_http;

/// Guides: how to write, test-drive and run reconcilers with recon, one page a topic. Each
/// page's code is compiled and run as a doctest.
pub mod guide {
    #[doc = include_str!("docs/writing-reconcilers.md")]
    pub mod writing_reconcilers {}

    #[doc = include_str!("docs/status-writes.md")]
    pub mod status_writes {}

    #[cfg(feature = "webhook-server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhook-server")))]
    #[doc = include_str!("docs/webhooks.md")]
    pub mod webhooks {}

    #[cfg(feature = "runner")]
    #[cfg_attr(docsrs, doc(cfg(feature = "runner")))]
    #[doc = include_str!("docs/production.md")]
    pub mod production {}

    #[doc = include_str!("docs/reconciler-io.md")]
    pub mod reconciler_io {}
}

// The roots: a resource's reconciler and its status writes, an aggregate's reconciler.
pub use root::{
    AggregateReconciler, ConflictPolicy, ReconcileFailed, ResourceReconciler, StatusStrategy,
    patch_status, patch_status_locked,
};

// A node of the tree, what it returns, and the watches it declares.
pub use error::{BoxError, Error, ErrorKind};
pub use outcome::Outcome;
pub use tree::{
    AsyncStep, AsyncStep0, AsyncStep2, BoxSubReconciler, IntoBoxed, IntoOutcome, IntoSteps,
    ReconcileFuture, Reconciled, Setup, SubReconciler, SyncReconciler, Trigger, Watch,
};

// Nodes made of other nodes.
pub use combinators::{
    Advice, Always, CastResource, Cursor, DEFAULT_FORGET_AFTER, DEFAULT_MAX_ITERATIONS,
    DEFAULT_THRESHOLD, ForEach, IfThen, MaxIterationsExceeded, OverrideSetup, Sequence,
    SuppressTransientErrors, TryCatch, WHILE_ITERATION, While, WithConfig, WithFinalizer,
    add_finalizer, clear_finalizer,
};

// Children, and the object managers that write them.
pub use children::{
    ApplyObjectManager, ChildListOptions, ChildReconciler, ChildSetError, ChildSetItem,
    ChildSetReconciler, ChildSetResult, ObjectManager, OnlyReconcileChildStatus,
    OwnerReferenceError, Parent, UpdatingObjectManager,
};

// What a reconcile works with: its context, config, stash, events and tracker.
pub use context::{
    Config, Context, DEFAULT_LEASE, Event, EventLog, EventRecorder, EventType, RecordedEvent,
    Reference, Request, SharedRecorder, Stash, StashError, Stasher, TrackError, TrackRequest,
    Tracker,
};

// Admission and conditions are public modules; what most trees name is at the root too.
pub use admission::AdmissionWebhookAdapter;
pub use conditions::{Condition, ConditionManager, ConditionSet, ConditionedStatus};

/// What nearly every reconciler names: the root, the tree's nodes and what they return, the
/// context, conditions, and the child reconcilers with their usual object manager.
///
/// ```
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::prelude::*;
///
/// const KEYS: Stasher<usize> = Stasher::new("keys");
///
/// async fn count_keys(ctx: &Context, cm: &mut ConfigMap) -> Result<(), Error> {
///     KEYS.store(ctx, cm.data.as_ref().map_or(0, |d| d.len()));
///     Ok(())
/// }
///
/// fn recheck_when_empty() -> SyncReconciler<ConfigMap> {
///     SyncReconciler::<ConfigMap>::new("RecheckWhenEmpty").sync(async |ctx, _| {
///         Ok(match KEYS.retrieve(ctx)? {
///             0 => Outcome::requeue_after(Duration::from_secs(60)),
///             _ => Outcome::done(),
///         })
///     })
/// }
///
/// // A ConfigMap has no status to write.
/// fn reconciler(config: Config) -> ResourceReconciler<ConfigMap> {
///     let steps = Sequence::of((
///         SyncReconciler::new("CountKeys").sync(count_keys),
///         recheck_when_empty(),
///     ));
///     ResourceReconciler::new(config, steps).skip_status_update(true)
/// }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # use kube::{Api, api::PostParams};
/// # let server = recon_fake::ApiServer::new();
/// # let mut empty = ConfigMap::default();
/// # empty.metadata.name = Some("empty".into());
/// # Api::<ConfigMap>::default_namespaced(server.client()).create(&PostParams::default(), &empty).await.unwrap();
/// # let config = Config::new(server.client(), "demo").with_recorder(recon_core::EventLog::default());
/// # let outcome = reconciler(config).reconcile(&Request::namespaced("default", "empty")).await.unwrap();
/// # assert_eq!(outcome, Outcome::requeue_after(Duration::from_secs(60)));
/// # });
/// ```
pub mod prelude {
    pub use crate::impl_conditioned_status;
    pub use crate::{
        ChildReconciler, ChildSetReconciler, Condition, ConditionSet, Config, Context, Error,
        ErrorKind, IntoBoxed, Outcome, Request, ResourceReconciler, Sequence, Stasher,
        StatusStrategy, SubReconciler, SyncReconciler, UpdatingObjectManager,
    };
}
