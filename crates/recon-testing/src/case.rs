//! One test case: the cluster it starts from, what it reconciles, and what it expects. The same
//! structure is written in Rust (with the builder methods) or in YAML.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use recon_core::admission::AdmissionRequest;
use recon_core::{Outcome, Reference, Request, TrackRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::env::TestEnv;
use crate::expect::{
    DeleteCollectionRef, DeleteRef, ErrorSignal, EventRef, Expectations, OutcomeSpec, PatchRef,
};
use crate::rbac::OperatorRbac;
use crate::reactors::ReactorSpec;

/// A hook run before the reconcile (`prepare`) or after the assertions (`cleanup`); an `Err`
/// fails the case with its message.
pub type Hook = Arc<dyn Fn(&TestEnv) -> Result<(), String> + Send + Sync>;

/// A hook given what was observed, for checks a table cannot express; an `Err` fails the case.
pub type VerifyHook = Arc<dyn Fn(&TestEnv, &Expectations) -> Result<(), String> + Send + Sync>;

/// Rust-only hooks of a case (YAML cases have none).
#[derive(Clone, Default)]
pub struct Hooks {
    pub(crate) prepare: Option<Hook>,
    pub(crate) verify: Option<VerifyHook>,
    pub(crate) cleanup: Option<Hook>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("prepare", &self.prepare.is_some())
            .field("verify", &self.verify.is_some())
            .field("cleanup", &self.cleanup.is_some())
            .finish()
    }
}

/// An additional cluster of a case (a second config, for reconcilers that work across
/// clusters): its own objects, failures and expectations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectConfig {
    /// Objects stored in this cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<Value>,
    /// Objects stored in this cluster as last applied by a field manager (see
    /// [`AppliedGiven`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given_applied: Vec<AppliedGiven>,
    /// Objects only this cluster's API reader sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_given: Vec<Value>,
    /// Failures injected into this cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reactors: Vec<ReactorSpec>,
    /// Tracks this cluster's tracker holds before the reconcile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given_tracks: Vec<TrackRequest>,
    /// The writes and events expected in this cluster (result and error are the case's).
    #[serde(default)]
    pub expect: Expectations,
}

/// A given object as an earlier server-side apply by `manager` left it: stored like a `given`
/// object, then applied (forced) by `manager` through the server's own apply, so its
/// `managedFields` are the ones kube-apiserver would have written. Its `status`, when it has
/// one and the kind has a status subresource, is applied to `/status` by `manager` too, as a
/// controller applying its status leaves it.
///
/// A plain `given` object has no `managedFields` (unless it spells them out): the first apply
/// without force that sets one of its fields to another value conflicts with
/// `"before-first-apply"`, as on kube-apiserver. Give the object as applied by the reconciler's
/// field manager to test the reconcile that follows the one that created it.
///
/// In YAML, `givenApplied: [{manager: my-controller, object: {...}}]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppliedGiven {
    /// The field manager of the earlier apply.
    pub manager: String,
    /// The object as it is stored (and as the manager applied it, less the server's fields).
    pub object: Value,
}

/// One case of a reconciler, sub-reconciler or admission webhook table.
///
/// Reconciler cases name a `request`; sub-reconciler cases give the `resource` the
/// sub-reconciler receives (it is stored in the cluster too, so requests about it work);
/// admission webhook cases give the `admissionRequest` the webhook decides. Every
/// case runs against fresh in-memory API servers holding `given` (and `apiGiven`, which only the
/// API reader sees), at the fixed time `now`, with seeded identifiers: two runs give the same
/// output.
///
/// ```
/// use recon_core::Request;
/// use recon_testing::{EventRef, PatchRef, TestCase};
/// use serde_json::json;
///
/// let case = TestCase::reconcile(Request::namespaced("default", "w"))
///     .given(&json!({"apiVersion": "example.com/v1", "kind": "Widget",
///                    "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}}))
///     .expect_status_patch(PatchRef::merge("Widget", Some("default"), "w", json!({"status": {"ready": true}})))
///     .expect_event(EventRef::normal("StatusPatched", "Patched status"));
/// # let _ = case;
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestCase {
    /// The case name (the key, for named tables).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Run only focused cases (the table then fails, so focus is never committed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub focus: bool,
    /// Do not run this case.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip: bool,
    /// The request time (default: 2024-01-01T00:00:00Z).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<Timestamp>,
    /// Reconciler cases: what is reconciled. It must name an object the cluster holds (of any
    /// kind, `given` or stored by a `prepare` hook), unless `expectMissing` says it is missing
    /// (an `AggregateReconciler`'s, which creates its object, need not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Request>,
    /// Reconciler cases: the `request` names no object on purpose (a deleted object's
    /// request); without it, such a case fails, so that a misspelt request does not pass as
    /// "nothing to do".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expect_missing: bool,
    /// Sub-reconciler cases: the resource the sub-reconciler receives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Value>,
    /// Admission webhook cases: the `admission.k8s.io/v1` `AdmissionRequest` the webhook
    /// decides. `operation` is required; `uid`, `kind`, `resource`, `name` and `namespace` may
    /// be left out and are filled in from the subject (`oldObject` for a `DELETE`, else
    /// `object`) and the cluster's discovery (see the crate docs, "Admission webhook tables").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_request: Option<Value>,
    /// Objects stored in the cluster before the reconcile, managed by no field manager.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<Value>,
    /// Objects stored in the cluster before the reconcile (after `given`) as last applied by a
    /// field manager (see [`AppliedGiven`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given_applied: Vec<AppliedGiven>,
    /// Objects only the config's API reader sees (a separate server for reads).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_given: Vec<Value>,
    /// Sub-reconciler cases: values stashed before the reconcile, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stashed: BTreeMap<String, Value>,
    /// Failures injected into matching requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reactors: Vec<ReactorSpec>,
    /// Tracks the tracker holds before the reconcile (not expected as `tracks`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given_tracks: Vec<TrackRequest>,
    /// Free-form values the table's factory reads ([`TestEnv::metadata`]) to build the
    /// reconciler a case needs, such as which step should fail.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Value>,
    /// More clusters, by config name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub additional_configs: BTreeMap<String, ExpectConfig>,
    /// Also compare the fields the server sets (uid, resourceVersion, timestamps, ...).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compare_server_fields: bool,
    /// Approve what the reconcile does as an insta snapshot instead of comparing `expect`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snapshot: bool,
    /// The reconcile must panic.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub should_panic: bool,
    /// What the reconcile must do.
    #[serde(default)]
    pub expect: Expectations,
    /// More reconciles after this one, each a case of its own (its own given objects and
    /// expectations), run by the reconciler this case built: for state the reconciler itself
    /// keeps between reconciles (reconciler.io's `AdditionalReconciles`). Reported as
    /// `<case> / <additional case>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_reconciles: Vec<TestCase>,
    /// Rust-only hooks.
    #[serde(skip)]
    pub hooks: Hooks,
    /// The service account and RBAC manifest this case's code under test runs under, instead
    /// of its table's (see [`OperatorRbac`]).
    #[serde(skip)]
    pub run_as: Option<OperatorRbac>,
    /// Problems found while building the case (reported when it runs).
    #[serde(skip)]
    pub(crate) setup_errors: Vec<String>,
}

/// Builder methods of [`TestCase`] that add one value to a list of its [`Expectations`].
macro_rules! expected {
    ($($(#[$doc:meta])* $method:ident($arg:ident: $ty:ty) into $list:ident;)*) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $method(mut self, $arg: $ty) -> Self {
                self.expect.$list.push($arg);
                self
            }
        )*
    };
}

/// Builder methods of [`TestCase`] that add an object, as JSON, to a list of its
/// [`Expectations`]; an object that does not serialise fails the case.
macro_rules! objects_expected {
    ($($(#[$doc:meta])* $method:ident into $list:ident as $field:literal;)*) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $method(mut self, object: &impl Serialize) -> Self {
                if let Some(v) = self.json(concat!("expect.", $field), object) {
                    self.expect.$list.push(v);
                }
                self
            }
        )*
    };
}

impl TestCase {
    /// A reconciler case for `request`.
    pub fn reconcile(request: Request) -> Self {
        TestCase {
            request: Some(request),
            ..TestCase::default()
        }
    }

    /// Runs this case's code under test as `rbac`'s service account, under its manifest (a
    /// table's [`run_as`](crate::ReconcilerTests::run_as), for one case): a request the RBAC
    /// authorizer refuses fails the case, naming the rule that would allow it.
    #[must_use]
    pub fn run_as(mut self, rbac: OperatorRbac) -> Self {
        self.run_as = Some(rbac);
        self
    }

    /// A sub-reconciler case handing it `resource`.
    pub fn sub_reconcile(resource: &impl Serialize) -> Self {
        let mut case = TestCase::default();
        case.resource = case.json("resource", resource);
        case
    }

    /// An admission webhook case deciding `request` (complete, as
    /// [`AdmissionRequest::create`] and its siblings build it: nothing is filled in).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::admission::AdmissionRequest;
    /// use recon_testing::{ResponseSpec, TestCase};
    ///
    /// let cm: ConfigMap = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "settings", "namespace": "default"},
    /// })).unwrap();
    /// let case = TestCase::admit(AdmissionRequest::create(&cm).by_user("alice"))
    ///     .expect_response(ResponseSpec::allowed());
    /// assert_eq!(case.admission_request.unwrap()["operation"], "CREATE");
    /// ```
    pub fn admit(request: AdmissionRequest) -> Self {
        let mut case = TestCase::default();
        case.admission_request = case.json("admissionRequest", &request);
        case
    }

    /// An admission webhook case deciding `request`, written as in YAML: `operation` is
    /// required, and `uid`, `kind`, `resource`, `name` and `namespace` are filled in when left
    /// out.
    ///
    /// ```
    /// use recon_testing::TestCase;
    /// use serde_json::json;
    ///
    /// let case = TestCase::admit_json(json!({
    ///     "operation": "DELETE",
    ///     "oldObject": {"apiVersion": "v1", "kind": "ConfigMap",
    ///                   "metadata": {"name": "settings", "namespace": "default"}},
    /// }));
    /// assert!(case.admission_request.is_some());
    /// ```
    pub fn admit_json(request: Value) -> Self {
        TestCase {
            admission_request: Some(request),
            ..TestCase::default()
        }
    }

    fn json(&mut self, what: &str, value: &impl Serialize) -> Option<Value> {
        match serde_json::to_value(value) {
            Ok(v) => Some(v),
            Err(e) => {
                self.setup_errors
                    .push(format!("{what}: cannot be serialised: {e}"));
                None
            }
        }
    }

    /// Sets `metadata[key]`, for the table's factory to read with [`TestEnv::metadata`].
    ///
    /// ```
    /// use recon_core::Request;
    /// use recon_testing::TestCase;
    ///
    /// let case = TestCase::reconcile(Request::namespaced("default", "w")).metadata("failAt", &"Plan");
    /// assert_eq!(case.metadata["failAt"], "Plan");
    /// ```
    #[must_use]
    pub fn metadata(mut self, key: &str, value: &impl Serialize) -> Self {
        if let Some(v) = self.json(&format!("metadata.{key}"), value) {
            self.metadata.insert(key.to_owned(), v);
        }
        self
    }

    /// Names the case.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Marks the case focused.
    #[must_use]
    pub fn focus(mut self) -> Self {
        self.focus = true;
        self
    }

    /// Marks the case skipped.
    #[must_use]
    pub fn skip(mut self) -> Self {
        self.skip = true;
        self
    }

    /// Fixes the request time.
    #[must_use]
    pub fn at(mut self, now: Timestamp) -> Self {
        self.now = Some(now);
        self
    }

    /// Stores `object` in the cluster before the reconcile, managed by no field manager (see
    /// [`AppliedGiven`] for what a later apply meets).
    #[must_use]
    pub fn given(mut self, object: &impl Serialize) -> Self {
        if let Some(v) = self.json("given", object) {
            self.given.push(v);
        }
        self
    }

    /// Stores `object` in the cluster before the reconcile as last server-side applied by
    /// `manager` (its status too, when it has one): see [`AppliedGiven`].
    ///
    /// ```
    /// use recon_core::Request;
    /// use recon_testing::TestCase;
    /// use serde_json::json;
    ///
    /// let case = TestCase::reconcile(Request::namespaced("default", "w")).given_applied(
    ///     &json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///             "metadata": {"name": "w-child", "namespace": "default"}, "data": {"k": "v"}}),
    ///     "widget-controller",
    /// );
    /// assert_eq!(case.given_applied[0].manager, "widget-controller");
    /// ```
    #[must_use]
    pub fn given_applied(mut self, object: &impl Serialize, manager: impl Into<String>) -> Self {
        if let Some(object) = self.json("givenApplied", object) {
            self.given_applied.push(AppliedGiven {
                manager: manager.into(),
                object,
            });
        }
        self
    }

    /// Makes `object` visible to the API reader only.
    #[must_use]
    pub fn api_given(mut self, object: &impl Serialize) -> Self {
        if let Some(v) = self.json("apiGiven", object) {
            self.api_given.push(v);
        }
        self
    }

    /// Stashes `value` under `key` before a sub-reconcile.
    #[must_use]
    pub fn stash(mut self, key: &str, value: &impl Serialize) -> Self {
        if let Some(v) = self.json(&format!("stashed.{key}"), value) {
            self.stashed.insert(key.to_owned(), v);
        }
        self
    }

    /// The `request` names no object: the case reconciles one that is missing (see
    /// [`TestCase::expect_missing`](TestCase#structfield.expect_missing)).
    ///
    /// ```
    /// use recon_core::Request;
    /// use recon_testing::TestCase;
    ///
    /// let case = TestCase::reconcile(Request::namespaced("default", "gone")).expect_missing();
    /// assert!(case.expect_missing);
    /// ```
    #[must_use]
    pub fn expect_missing(mut self) -> Self {
        self.expect_missing = true;
        self
    }

    /// Injects a failure.
    #[must_use]
    pub fn reactor(mut self, reactor: ReactorSpec) -> Self {
        self.reactors.push(reactor);
        self
    }

    /// Has `tracker` observe `reference` before the reconcile.
    #[must_use]
    pub fn given_track(mut self, tracker: Request, reference: Reference) -> Self {
        self.given_tracks.push(TrackRequest { tracker, reference });
        self
    }

    /// Adds a cluster.
    #[must_use]
    pub fn additional_config(mut self, name: &str, config: ExpectConfig) -> Self {
        self.additional_configs.insert(name.to_owned(), config);
        self
    }

    /// Compares server-set fields too.
    #[must_use]
    pub fn compare_server_fields(mut self) -> Self {
        self.compare_server_fields = true;
        self
    }

    /// Approves what the reconcile does as a snapshot (see the suite's `snapshots`).
    #[must_use]
    pub fn snapshot(mut self) -> Self {
        self.snapshot = true;
        self
    }

    /// The reconcile must panic.
    #[must_use]
    pub fn should_panic(mut self) -> Self {
        self.should_panic = true;
        self
    }

    /// Replaces every expectation.
    #[must_use]
    pub fn expect(mut self, expect: Expectations) -> Self {
        self.expect = expect;
        self
    }

    objects_expected! {
        /// Expects `object` to be created.
        expect_create into creates as "creates";
        /// Expects `object` to be replaced (PUT).
        expect_update into updates as "updates";
        /// Expects `object`'s status to be replaced (PUT `/status`).
        expect_status_update into status_updates as "statusUpdates";
    }

    expected! {
        /// Expects a patch.
        expect_patch(patch: PatchRef) into patches;
        /// Expects a server-side apply.
        expect_apply(patch: PatchRef) into applies;
        /// Expects a delete.
        expect_delete(delete: DeleteRef) into deletes;
        /// Expects a delete of a collection.
        expect_delete_collection(delete: DeleteCollectionRef) into delete_collections;
        /// Expects a status patch.
        expect_status_patch(patch: PatchRef) into status_patches;
        /// Expects a server-side apply of status.
        expect_status_apply(patch: PatchRef) into status_applies;
        /// Expects an event.
        expect_event(event: EventRef) into events;
        /// Expects the error to carry `signal` (with [`TestCase::expect_error`]).
        ///
        /// ```
        /// use recon_core::Request;
        /// use recon_testing::{ErrorSignal, TestCase};
        ///
        /// let case = TestCase::reconcile(Request::namespaced("default", "w"))
        ///     .expect_error("")
        ///     .expect_error_signal(ErrorSignal::Durable);
        /// assert_eq!(case.expect.error_signals, [ErrorSignal::Durable]);
        /// ```
        expect_error_signal(signal: ErrorSignal) into error_signals;
    }

    /// Expects the request reconciled (`tracker`) to track `reference`.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use recon_core::{Reference, Request};
    /// use recon_testing::TestCase;
    ///
    /// let request = Request::namespaced("default", "web");
    /// let case = TestCase::reconcile(request.clone())
    ///     .expect_track(request, Reference::of::<ConfigMap>(Some("default"), "settings"));
    /// assert_eq!(case.expect.tracks.len(), 1);
    /// ```
    #[must_use]
    pub fn expect_track(mut self, tracker: Request, reference: Reference) -> Self {
        self.expect.tracks.push(TrackRequest { tracker, reference });
        self
    }

    /// Expects this outcome.
    #[must_use]
    pub fn expect_result(mut self, outcome: Outcome) -> Self {
        self.expect.result = OutcomeSpec::of(outcome);
        self
    }

    /// Expects the reconcile to fail with `error`: a part of its message (`""`: any error), or
    /// an [`ErrorSpec`](crate::ErrorSpec) naming its API error's code, reason and message.
    ///
    /// ```
    /// use recon_core::Request;
    /// use recon_testing::{ErrorSpec, TestCase};
    ///
    /// let case = TestCase::reconcile(Request::namespaced("default", "w"))
    ///     .expect_error(ErrorSpec::api(500, "InternalError").message("etcd"));
    /// assert_eq!(case.expect.error.unwrap().reason.as_deref(), Some("InternalError"));
    /// ```
    #[must_use]
    pub fn expect_error(mut self, error: impl Into<crate::ErrorSpec>) -> Self {
        self.expect.error = Some(error.into());
        self
    }

    /// Runs `case` after this one with the same reconciler instance (see
    /// [`TestCase::additional_reconciles`]); name it with [`TestCase::named`].
    #[must_use]
    pub fn additional_reconcile(mut self, case: TestCase) -> Self {
        self.additional_reconciles.push(case);
        self
    }

    /// Sub-reconcilers: expects the resource to end as `resource`.
    #[must_use]
    pub fn expect_resource(mut self, resource: &impl Serialize) -> Self {
        self.expect.resource = self.json("expect.resource", resource);
        self
    }

    /// Admission webhooks: expects this response (a [`ResponseSpec`](crate::ResponseSpec) or its written form as
    /// JSON). Without one, the webhook must allow the request without a patch.
    ///
    /// ```
    /// use recon_testing::{ResponseSpec, TestCase};
    /// use serde_json::json;
    ///
    /// let case = TestCase::admit_json(json!({"operation": "CREATE", "object": {
    ///         "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}}))
    ///     .expect_response(ResponseSpec::denied(403, "Forbidden", "not today"));
    /// assert_eq!(case.expect.response.unwrap()["status"]["code"], 403);
    /// ```
    #[must_use]
    pub fn expect_response(mut self, response: impl Into<Value>) -> Self {
        self.expect.response = Some(response.into());
        self
    }

    /// Sub-reconcilers: expects `value` stashed under `key`.
    #[must_use]
    pub fn expect_stashed(mut self, key: &str, value: &impl Serialize) -> Self {
        if let Some(v) = self.json(&format!("expect.stashed.{key}"), value) {
            self.expect.stashed.insert(key.to_owned(), v);
        }
        self
    }

    /// Runs `hook` after the cluster is ready and before the reconcile (to add reactors, say).
    #[must_use]
    pub fn prepare(
        mut self,
        hook: impl Fn(&TestEnv) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.hooks.prepare = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` with what was observed, after the table's own comparisons.
    #[must_use]
    pub fn verify(
        mut self,
        hook: impl Fn(&TestEnv, &Expectations) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.hooks.verify = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` at the end of the case, whatever happened.
    #[must_use]
    pub fn cleanup(
        mut self,
        hook: impl Fn(&TestEnv) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.hooks.cleanup = Some(Arc::new(hook));
        self
    }
}

/// Builder methods that set an optional text field of an expected request.
macro_rules! text_setters {
    ($($(#[$doc:meta])* $method:ident($arg:ident) => $field:ident;)*) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $method(mut self, $arg: &str) -> Self {
                self.$field = Some($arg.to_owned());
                self
            }
        )*
    };
}

/// Builder methods that set an optional flag of an expected request.
macro_rules! flag_setters {
    ($($(#[$doc:meta])* $method:ident => $field:ident;)*) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $method(mut self) -> Self {
                self.$field = Some(true);
                self
            }
        )*
    };
}

impl PatchRef {
    /// A JSON merge patch of `name` (in `namespace`) of `kind`, compared as JSON.
    pub fn merge(kind: &str, namespace: Option<&str>, name: &str, patch: Value) -> Self {
        Self::of(
            crate::expect::PatchType::Merge,
            kind,
            namespace,
            name,
            patch,
        )
    }

    /// A JSON patch, compared as JSON.
    pub fn json(kind: &str, namespace: Option<&str>, name: &str, patch: Value) -> Self {
        Self::of(crate::expect::PatchType::Json, kind, namespace, name, patch)
    }

    /// A strategic merge patch, compared as JSON.
    pub fn strategic(kind: &str, namespace: Option<&str>, name: &str, patch: Value) -> Self {
        Self::of(
            crate::expect::PatchType::Strategic,
            kind,
            namespace,
            name,
            patch,
        )
    }

    /// A server-side apply, compared as JSON.
    pub fn apply(kind: &str, namespace: Option<&str>, name: &str, patch: Value) -> Self {
        Self::of(
            crate::expect::PatchType::Apply,
            kind,
            namespace,
            name,
            patch,
        )
    }

    fn of(
        patch_type: crate::expect::PatchType,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        patch: Value,
    ) -> Self {
        PatchRef {
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
            patch_type,
            patch: Some(patch),
            ..Default::default()
        }
    }

    text_setters! {
        /// The same patch, also compared byte for byte with `body` (a wire-body assertion).
        exactly(body) => exact;
        /// The same patch, of a kind in API group `group` (`""` for the core group).
        group(group) => group;
        /// The same patch, sent with `fieldManager` `manager`.
        field_manager(manager) => field_manager;
    }

    flag_setters! {
        /// The same patch, forced over conflicts (`force=true`). Set the `force` field to
        /// `Some(false)` to expect an apply that is not forced.
        force => force;
        /// The same patch, sent as a dry run (`dryRun=All`).
        dry_run => dry_run;
    }
}

impl DeleteRef {
    /// A delete of `name` (in `namespace`) of `kind`, in any group.
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> Self {
        DeleteRef {
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
            ..Default::default()
        }
    }

    text_setters! {
        /// The same delete, of a kind in API group `group` (`""` for the core group).
        group(group) => group;
    }

    flag_setters! {
        /// The same delete, sent as a dry run.
        dry_run => dry_run;
    }
}

impl DeleteCollectionRef {
    /// A delete of every `kind` (in `namespace`), in any group, with no selector; narrow it
    /// with [`label_selector`](Self::label_selector) and
    /// [`field_selector`](Self::field_selector).
    pub fn new(kind: &str, namespace: Option<&str>) -> Self {
        DeleteCollectionRef {
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            ..Default::default()
        }
    }

    text_setters! {
        /// The same delete, with `labelSelector` `selector` (such as `app=web`).
        label_selector(selector) => label_selector;
        /// The same delete, with `fieldSelector` `selector`.
        field_selector(selector) => field_selector;
        /// The same delete, of a kind in API group `group` (`""` for the core group).
        group(group) => group;
    }

    flag_setters! {
        /// The same delete, sent as a dry run.
        dry_run => dry_run;
    }
}

impl EventRef {
    /// A Normal event with `reason` and `note` (`""` for none).
    pub fn normal(reason: &str, note: &str) -> Self {
        Self::of(crate::expect::EventKind::Normal, reason, note)
    }

    /// A Warning event with `reason` and `note` (`""` for none).
    pub fn warning(reason: &str, note: &str) -> Self {
        Self::of(crate::expect::EventKind::Warning, reason, note)
    }

    fn of(type_: crate::expect::EventKind, reason: &str, note: &str) -> Self {
        EventRef {
            type_,
            reason: reason.to_owned(),
            note: (!note.is_empty()).then(|| note.to_owned()),
            ..Default::default()
        }
    }

    /// The same event, with `action` (such as `Hiding`).
    #[must_use]
    pub fn action(mut self, action: &str) -> Self {
        self.action = Some(action.to_owned());
        self
    }

    /// The same event, published by `controller` (`reportingController`).
    #[must_use]
    pub fn reporting_controller(mut self, controller: &str) -> Self {
        self.reporting_controller = Some(controller.to_owned());
        self
    }

    /// The same event, naming `name` (in `namespace`) of `kind` as its related object, of any
    /// `apiVersion`.
    #[must_use]
    pub fn related(mut self, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        self.related = Some(crate::expect::RelatedRef {
            kind: kind.to_owned(),
            api_version: None,
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        });
        self
    }
}
