//! `ResourceReconciler`: the root of a reconciler tree for one resource type. It reads the
//! resource, runs the tree, and persists status at most once per reconcile.

use jiff::Timestamp;
use kube::core::object::HasStatus;

use super::Tree;
use super::around::{AfterHook, BeforeHook, after_hook, before_hook};
use super::status_strategy::{ConflictPolicy, StatusStrategy, StatusWrite, write_status};
use crate::conditions::{ConditionedStatus, keep_transition_times};
use crate::context::{Config, Context, Event, Request};
use crate::error::{Error, describe_failure};
use crate::object_api::ObjectApi;
use crate::outcome::Outcome;
use crate::tree::{AsyncStep, AsyncStep0, IntoOutcome, Reconciled, SubReconciler};

type SkipRequestHook = Box<dyn Fn(&Context) -> bool + Send + Sync>;
type SkipResourceHook<R> = Box<dyn Fn(&Context, &R) -> bool + Send + Sync>;
type DefaultHook<R> = Box<dyn Fn(&Context, &mut R) -> Result<(), Error> + Send + Sync>;

/// The hooks around the tree, as reconciler.io's `ResourceReconciler` has them.
struct RootHooks<R> {
    skip_request: Option<SkipRequestHook>,
    skip_resource: Option<SkipResourceHook<R>>,
    default: Option<DefaultHook<R>>,
    before: Option<BeforeHook>,
    after: Option<AfterHook>,
}

/// How the reconciler reaches a resource's [`ConditionedStatus`].
struct StatusAccess<R> {
    read: fn(&R) -> Option<&dyn ConditionedStatus>,
    write: fn(&mut R) -> &mut dyn ConditionedStatus,
}

/// The root of a reconciler tree.
///
/// One reconcile: read the resource (NotFound ends quietly); initialise its conditions; run the
/// sub-reconcilers (unless it is being deleted with no finalizer left); record
/// `status.observedGeneration`; keep the `lastTransitionTime` of conditions that did not really
/// change; then, if the status differs from what was read, write it once with the chosen
/// [`StatusStrategy`]. A steady-state reconcile sends no write at all.
///
/// `observedGeneration` is recorded only when the tree succeeds or halts on purpose
/// ([`ErrorKind::HaltSubReconcilers`](crate::ErrorKind::HaltSubReconcilers) or a durable
/// error): after a failed step it keeps the generation last reconciled in full, while the
/// conditions the steps set before failing are still written, as reconciler.io does.
///
/// What a reconcile returns, as reconciler.io's `ResourceReconciler` decides it:
///
/// | the tree returned | status written | no status write (unchanged or skipped) |
/// |---|---|---|
/// | `Ok(outcome)` | `Ok(done)` | `Ok(outcome)` |
/// | a halt, a durable or any quiet error | `Ok(done)` | `Ok(requeue)` |
/// | an error with [`SkipStatusUpdate`](crate::ErrorKind::SkipStatusUpdate) | — | the error (`Ok(requeue)` if also quiet) |
/// | another error | the error | the error |
///
/// A successful status write suppresses the result: the write is watched, and the reconcile it
/// brings reads the new status (a requeue now could read a stale cache). A loud error is
/// returned all the same (reconciler.io drops it). A failed status write
/// is returned as the error (joined with the tree's), and a conflicting one is requeued or
/// retried by the [`ConflictPolicy`].
///
/// See the [crate documentation](crate) for a complete example.
pub struct ResourceReconciler<R: Reconciled> {
    pub(crate) tree: Tree<R>,
    status: Option<StatusAccess<R>>,
    strategy: StatusStrategy,
    conflicts: ConflictPolicy,
    skip_status_update: bool,
    sync_status_during_finalization: bool,
    pub(crate) requeue_delay: std::time::Duration,
    pub(crate) error_delay: std::time::Duration,
    pub(crate) max_concurrent_reconciles: u16,
    hooks: RootHooks<R>,
}

impl<R: Reconciled> ResourceReconciler<R>
where
    R::DynamicType: Default,
{
    /// A reconciler running `reconciler` for each resource, with `config`.
    pub fn new(config: Config, reconciler: impl SubReconciler<R> + 'static) -> Self {
        Self::new_with(config, R::DynamicType::default(), reconciler)
    }
}

impl<R: Reconciled> ResourceReconciler<R> {
    /// A reconciler for a resource type known at runtime (`DynamicObject` and its `ApiResource`).
    pub fn new_with(
        config: Config,
        dyntype: R::DynamicType,
        reconciler: impl SubReconciler<R> + 'static,
    ) -> Self {
        ResourceReconciler {
            tree: Tree::new("ResourceReconciler", config, dyntype, reconciler),
            status: None,
            strategy: StatusStrategy::default(),
            conflicts: ConflictPolicy::default(),
            skip_status_update: false,
            sync_status_during_finalization: false,
            requeue_delay: std::time::Duration::from_secs(1),
            error_delay: std::time::Duration::from_secs(5),
            max_concurrent_reconciles: 0,
            hooks: RootHooks {
                skip_request: None,
                skip_resource: None,
                default: None,
                before: None,
                after: None,
            },
        }
    }

    /// Requests this returns true for are not reconciled: nothing is read, the outcome is
    /// done (reconciler.io's `SkipRequest`).
    #[must_use]
    pub fn skip_request(mut self, f: impl Fn(&Context) -> bool + Send + Sync + 'static) -> Self {
        self.hooks.skip_request = Some(Box::new(f));
        self
    }

    /// Resources this returns true for (as read and defaulted) are not reconciled: the tree
    /// does not run and no status is written (reconciler.io's `SkipResource`).
    #[must_use]
    pub fn skip_resource(
        mut self,
        f: impl Fn(&Context, &R) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.hooks.skip_resource = Some(Box::new(f));
        self
    }

    /// Defaults the resource as read before anything else sees it, as reconciler.io calls the
    /// type's `Default` (the webhook defaulter a CRD usually has): the tree works on the
    /// defaulted resource; only its status is written back. An error ends the reconcile.
    #[must_use]
    pub fn default_resource(
        mut self,
        f: impl Fn(&Context, &mut R) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Self {
        self.hooks.default = Some(Box::new(f));
        self
    }

    /// Runs before the resource is read (reconciler.io's `BeforeReconcile`), an `async fn` or an
    /// async closure of the context (see [`AsyncStep0`]) returning `()` or an [`Outcome`]: it may stash
    /// values for the tree; its outcome is merged with the reconcile's, and its error ends the
    /// reconcile at once (as returned, even a quiet one).
    #[must_use]
    pub fn before_reconcile<T, F>(mut self, hook: F) -> Self
    where
        T: IntoOutcome + 'static,
        F: for<'a> AsyncStep0<'a, T> + 'static,
    {
        self.hooks.before = Some(before_hook(hook));
        self
    }

    /// Sees what the reconcile returns and returns it, or something else, in its place
    /// (reconciler.io's `AfterReconcile`), an `async fn` or an async closure of the context
    /// and that result (see [`AsyncStep`]); a quiet error it returns still becomes a requeue.
    #[must_use]
    pub fn after_reconcile<F>(mut self, hook: F) -> Self
    where
        F: for<'a> AsyncStep<'a, Result<Outcome, Error>, Outcome> + 'static,
    {
        self.hooks.after = Some(after_hook(hook));
        self
    }

    /// The same reconciler under another name (for logs).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.tree.name = name.into();
        self
    }

    /// Manage the resource's [`ConditionedStatus`]: initialise its conditions before the tree
    /// runs, record `observedGeneration` after it (not when a step failed), and keep unchanged
    /// conditions' transition times.
    #[must_use]
    pub fn manage_status(mut self) -> Self
    where
        R: HasStatus,
        R::Status: ConditionedStatus + Default + 'static,
    {
        self.status = Some(StatusAccess {
            read: |r| r.status().map(|s| s as &dyn ConditionedStatus),
            write: |r| r.status_mut().get_or_insert_with(Default::default),
        });
        self
    }

    /// How status is written (default [`StatusStrategy::MergePatchWithLock`]).
    #[must_use]
    pub fn status_strategy(mut self, strategy: StatusStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// What to do when a status write conflicts (default: retry 3 times).
    #[must_use]
    pub fn on_conflict(mut self, policy: ConflictPolicy) -> Self {
        self.conflicts = policy;
        self
    }

    /// Never write status (some other component owns it).
    #[must_use]
    pub fn skip_status_update(mut self, yes: bool) -> Self {
        self.skip_status_update = yes;
        self
    }

    /// Write status while the resource is being deleted too (by default it is left alone then).
    #[must_use]
    pub fn sync_status_during_finalization(mut self, yes: bool) -> Self {
        self.sync_status_during_finalization = yes;
        self
    }

    /// The delay of a requeue the tree asks for without a delay of its own (default 1s), and of
    /// a retry after a failure (default 5s), when run under `kube::runtime::Controller`.
    #[must_use]
    pub fn delays(
        mut self,
        requeue: std::time::Duration,
        after_error: std::time::Duration,
    ) -> Self {
        self.requeue_delay = requeue;
        self.error_delay = after_error;
        self
    }

    /// How many objects [`controller`](Self::controller)'s controller reconciles at once
    /// (controller-runtime's `MaxConcurrentReconciles`); 0, the default, is
    /// `kube::runtime::Controller`'s own default: no limit. One object is never reconciled twice
    /// at once either way. The runner exports it as `controller_runtime_max_concurrent_reconciles`.
    #[must_use]
    pub fn max_concurrent_reconciles(mut self, limit: u16) -> Self {
        self.max_concurrent_reconciles = limit;
        self
    }

    /// The reconciler's name.
    pub fn name(&self) -> &str {
        &self.tree.name
    }

    /// Reconciles the resource `request` names, at the current time.
    pub async fn reconcile(&self, request: &Request) -> Result<Outcome, Error> {
        self.reconcile_in(&Context::new(self.tree.config.clone(), request.clone()))
            .await
    }

    /// Reconciles the resource `request` names with the request time fixed at `now`.
    pub async fn reconcile_at(&self, request: &Request, now: Timestamp) -> Result<Outcome, Error> {
        self.reconcile_in(&Context::new(self.tree.config.clone(), request.clone()).at(now))
            .await
    }

    /// Reconciles within an existing context (its request names the resource).
    pub async fn reconcile_in(&self, ctx: &Context) -> Result<Outcome, Error> {
        if self
            .hooks
            .skip_request
            .as_ref()
            .is_some_and(|skip| skip(ctx))
        {
            return Ok(Outcome::done());
        }
        let before = match &self.hooks.before {
            Some(before) => before(ctx).await?,
            None => Outcome::done(),
        };
        let result = match self.reconcile_resource(ctx).await {
            Ok(outcome) => Ok(before.merge(outcome)),
            Err(err) => Err(err.with_outcome(before)),
        };
        let result = match &self.hooks.after {
            Some(after) => after(ctx, result).await,
            None => result,
        };
        finish(result)
    }

    /// Reads, defaults and reconciles the resource, and writes its status: what the tree
    /// returned, unless a status write settled it.
    async fn reconcile_resource(&self, ctx: &Context) -> Result<Outcome, Error> {
        let request = ctx.request();
        let reader = ObjectApi::<R>::new(
            ctx.original_config().api_reader(),
            &self.tree.dyntype,
            request.namespace.as_deref(),
            &request.name,
        );
        let original = match reader.get().await {
            Ok(resource) => resource,
            Err(kube::Error::Api(status)) if status.code == 404 => {
                tracing::debug!(reconciler = %self.tree.name, %request, "resource not found");
                return Ok(Outcome::done());
            }
            Err(err) => return Err(err.into()),
        };
        let mut resource = original.clone();
        if let Some(default) = &self.hooks.default {
            default(ctx, &mut resource)?;
        }
        if self
            .hooks
            .skip_resource
            .as_ref()
            .is_some_and(|skip| skip(ctx, &resource))
        {
            return Ok(Outcome::done());
        }
        if let Some(access) = &self.status {
            let status = (access.write)(&mut resource);
            let set = status.condition_set();
            set.manage(status.conditions_mut(), ctx.now()).initialize();
        }

        let terminating = resource.meta().deletion_timestamp.is_some();
        let finalized = terminating
            && resource
                .meta()
                .finalizers
                .as_ref()
                .is_none_or(Vec::is_empty);
        let result = if finalized {
            Ok(Outcome::done())
        } else {
            self.tree.reconciler.reconcile(ctx, &mut resource).await
        };

        if let Some(access) = &self.status {
            if result.as_ref().map_or_else(Error::is_halt, |_| true) {
                let generation = resource.meta().generation;
                (access.write)(&mut resource).set_observed_generation(generation);
            }
            if let Some(before) = (access.read)(&original) {
                keep_transition_times(
                    (access.write)(&mut resource).conditions_mut(),
                    before.conditions(),
                );
            }
        }

        let skip = self.skip_status_update
            || result.as_ref().is_err_and(Error::is_skip_status_update)
            || (terminating && !self.sync_status_during_finalization);
        if skip {
            return result;
        }
        // The tree's own writes of the resource (a finalizer patch) moved its resourceVersion and
        // left its status alone: the status write builds on the version the tree last saw, or
        // it would conflict with itself.
        let mut base = original.clone();
        base.meta_mut().resource_version = resource.meta().resource_version.clone();
        let written = write_status(
            ctx.original_config().client(),
            &self.tree.dyntype,
            &self.strategy,
            self.conflicts,
            &base,
            &resource,
        )
        .await;
        let regarding = original.object_ref(&self.tree.dyntype);
        let patching = !matches!(self.strategy, StatusStrategy::Update);
        match written {
            Ok(StatusWrite::Unchanged) => result,
            Ok(StatusWrite::Written(_)) => {
                let event = if patching {
                    Event::normal("StatusPatched", "PatchStatus", "Patched status")
                } else {
                    Event::normal("StatusUpdated", "UpdateStatus", "Updated status")
                };
                ctx.publish(&regarding, event).await;
                after_status_write(result)
            }
            Ok(StatusWrite::Requeue(collision)) => {
                tracing::info!(
                    reconciler = %self.tree.name,
                    %request,
                    collision = collision.as_ref().map(|c| c.path.as_str()),
                    "status write conflicted with a concurrent write; requeueing"
                );
                result.map(|o| o.merge(Outcome::requeue()))
            }
            Err(err) => {
                let event = if patching {
                    Event::warning(
                        "StatusPatchFailed",
                        "PatchStatus",
                        format!("Failed to patch status: {}", describe_failure(&err)),
                    )
                } else {
                    Event::warning(
                        "StatusUpdateFailed",
                        "UpdateStatus",
                        format!("Failed to update status: {}", describe_failure(&err)),
                    )
                };
                ctx.publish(&regarding, event).await;
                match result {
                    Ok(_) => Err(err.into()),
                    Err(sub) => Err(Error::join([sub, err.into()])),
                }
            }
        }
    }
}

/// What the root returns when it wrote no status, as reconciler.io's `ResourceReconciler`
/// does: the tree's outcome, or its error; a quiet error (a halt and a durable error are
/// quiet) is no failure but a requeue, whatever the tree asked for besides.
fn finish(result: Result<Outcome, Error>) -> Result<Outcome, Error> {
    match result {
        Err(err) if err.is_quiet() => Ok(Outcome::requeue()),
        other => other,
    }
}

/// What the root returns after a successful status write: nothing, as reconciler.io's does
/// ("suppress result"): the write is watched, and the reconcile it brings reads the new status,
/// where one requeued now could read a stale cache. A loud error is still returned, so that the
/// controller's error policy sees the failure (reconciler.io drops it; see
/// [the porting guide](crate::guide::reconciler_io)).
fn after_status_write(result: Result<Outcome, Error>) -> Result<Outcome, Error> {
    match result {
        Err(err) if !err.is_quiet() => Err(err),
        _ => Ok(Outcome::done()),
    }
}
