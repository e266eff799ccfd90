//! Table-driven tests for recon reconcilers, backed by recon's in-memory Kubernetes API
//! server: what is asserted is what kube-rs sent.
//!
//! A table is a list of [`TestCase`]s. Each case starts fresh in-memory API servers holding its
//! `given` objects, runs the reconciler (a [`ReconcilerTests`] / [`ReconcilerTestSuite`] runs a
//! `ResourceReconciler` for the case's `request`; a [`SubReconcilerTests`] /
//! [`SubReconcilerTestSuite`] runs a sub-reconciler on the case's `resource`; an
//! [`AdmissionWebhookTests`] / [`AdmissionWebhookTestSuite`] runs an admission webhook on the
//! case's `admissionRequest`), reads the writes it sent from the server's request log, the events
//! it published and the tracks it made, and compares them with the case's [`Expectations`]. Every mismatch of every case is reported,
//! each with a unified diff, coloured when stderr is a terminal (plain when `NO_COLOR` is set or
//! stderr is redirected, as in a CI log).
//!
//! Runs are deterministic: each case has a fixed clock (`now`, default
//! `2024-01-01T00:00:00Z`) and seeded identifiers.
//!
//! # Comparison rules
//!
//! - Lists (creates, patches, events, tracks, ...) are compared in order, element by element;
//!   tracks include renewals, and `givenTracks` (held before the reconcile) are not expected.
//! - Objects and patch bodies are compared as JSON, without the fields the server sets
//!   (`metadata.uid`, `resourceVersion`, `creationTimestamp`, `generation`, `managedFields`,
//!   conditions' `lastTransitionTime`) unless the case sets `compareServerFields`.
//! - A patch with `exact` is also compared byte for byte: a wire-body assertion.
//! - Status updates compare the object's identity and `.status`.
//! - Every request the code under test sent is listed, including those the server refused (a
//!   status patch answered 409 and then retried shows as two status patches); requests made by
//!   hooks and reactors are not.
//! - Without `error`, the reconcile must succeed and return `result` (default: nothing to do).
//!   With `error`, it must fail with a message containing that text, or with the API error
//!   its fields name (`{code: 500, reason: InternalError, message: etcd}`, see [`ErrorSpec`]);
//!   regenerated fixtures write an API error's Status fields, not kube's debug dump of it.
//!   A sub-reconciler's error
//!   must also carry `result` (what it gathered before failing, which a `Sequence` hands on);
//!   a reconciler case expects both only when its reconciler has an error policy
//!   ([`kube_controller`]): the result is then the requeue the policy decides.
//! - Sub-reconcilers: without `resource` in `expect`, the resource must be unchanged; resources
//!   are compared as their Rust type writes them. Only the `stashed` keys listed are checked.
//! - Each case of a table needs a name of its own.
//!
//! A table builds the reconciler with its factory, once per case; cases that need different
//! reconcilers say so in their `metadata`, which the factory reads from [`TestEnv::metadata`].
//!
//! # YAML suites
//!
//! A suite file holds CRDs (paths relative to the file, or inline manifests) and cases; field
//! names are those of [`TestCase`] in camelCase. An unknown field or a malformed value is an
//! error naming the file, line and field.
//!
//! ```yaml
//! crds:
//!   - ../crds/widgets.example.com.yaml
//! cases:
//!   - name: a new widget gets its status
//!     now: 2024-05-01T10:00:00Z
//!     request: {namespace: default, name: w}
//!     given:
//!       - apiVersion: example.com/v1
//!         kind: Widget
//!         metadata: {name: w, namespace: default}
//!         spec: {size: 1}
//!     reactors:
//!       - {verb: get, resource: configmaps, fail: notFound}
//!     expect:
//!       statusPatches:
//!         - kind: Widget
//!           namespace: default
//!           name: w
//!           type: merge
//!           patch: {status: {ready: true}}
//!       events:
//!         - {type: Normal, reason: StatusPatched, note: Patched status}
//!       result: {requeueAfter: 30s}
//! ```
//!
//! Load it with [`ReconcilerTestSuite::from_yaml_file`]; with rstest, one test per file:
//!
//! ```ignore
//! #[rstest::rstest]
//! fn widget_suites(#[files("fixtures/suites/widget/*.yaml")] path: std::path::PathBuf) {
//!     ReconcilerTestSuite::from_yaml_file(&path).unwrap().run(|env| widget_reconciler(env.config()));
//! }
//! ```
//!
//! `RECON_FIXTURES=overwrite cargo test` rewrites each suite file's expectations with what its
//! cases observed, for review as a diff. Only the `expect` blocks that changed are rewritten, in
//! place and in block style at their own indentation; the rest of the file (the inputs in the
//! author's style, comments, key order) stays byte for byte. Written: no fields the server sets,
//! byte-exact bodies only where the file had them, an admission case's `response` (left out
//! where the file had none and the webhook allowed the request unchanged). A CRD manifest the
//! same run generates (see [`assert_generated_file`]) is waited for, so one run suffices.
//!
//! # Admission webhook tables
//!
//! An [`AdmissionWebhookTests`] / [`AdmissionWebhookTestSuite`] tests an admission webhook: any
//! `recon_core::admission::AdmissionHandler`, such as an `AdmissionWebhookAdapter`, built by the
//! table's factory once per case. A case gives the request the webhook decides and expects its
//! response, along with the writes, events and tracks the webhook's tree makes, compared as in
//! reconciler tables.
//!
//! - `admissionRequest` is an `admission.k8s.io/v1` `AdmissionRequest`; `operation` is required.
//!   Left out, `uid` is [`DEFAULT_ADMISSION_UID`]; `kind` is the `apiVersion` and `kind` of the
//!   subject (`oldObject` for a `DELETE`, else `object`); `resource` is the plural the case's
//!   cluster serves that kind as, read from its discovery (built-in kinds and the table's CRDs;
//!   a kind it does not serve fails the case); `name` and `namespace` are the subject's. The
//!   discovery reads are in the server's request log, before the webhook's own requests.
//! - `expect.response` is the response as written: `allowed`, and what the webhook sets of
//!   `status`, `patch` (its RFC 6902 operations, decoded), `warnings` and `auditAnnotations`;
//!   never `uid`. It is compared as JSON. **Without `response`, the webhook must allow the
//!   request without a patch** (`{allowed: true}`). In Rust, write it with [`ResponseSpec`].
//! - The response is first checked as kube-apiserver reads it: sent in an `admission.k8s.io/v1`
//!   `AdmissionReview`, with the request's `uid`, a `patch` if and only if `patchType` is
//!   `JSONPatch`, that patch base64 of a JSON array of RFC 6902 operations, and no patch at all
//!   from a validating webhook (`AdmissionHandler::is_mutating`). A response
//!   kube-apiserver would refuse fails the case (`response.uid`, `response.patch`, ...), and
//!   rewriting fixtures does not settle it.
//! - An admission case has no `request`, `resource`, `stashed`, `result` or `error`: a webhook
//!   answers every request, and an error in its tree is a refusal (`allowed: false` with the
//!   status the error gives). `shouldPanic`, hooks, reactors, `additionalConfigs` and snapshots
//!   work as in the other tables.
//!
//! ```yaml
//! crds:
//!   - ../crds/widgets.example.com.yaml
//! cases:
//!   - name: a widget of size 0 is given size 1
//!     admissionRequest:
//!       operation: CREATE
//!       userInfo: {username: alice}
//!       object:
//!         apiVersion: example.com/v1
//!         kind: Widget
//!         metadata: {name: w, namespace: default}
//!         spec: {size: 0}
//!     expect:
//!       response:
//!         allowed: true
//!         patch:
//!           - {op: replace, path: /spec/size, value: 1}
//!         warnings: [size defaulted to 1 for alice]
//!   - name: a negative size is refused
//!     admissionRequest:
//!       operation: UPDATE
//!       object: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {size: -1}}
//!       oldObject: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {size: 2}}
//!     expect:
//!       response:
//!         allowed: false
//!         status: {code: 422, reason: Invalid, message: "spec.size: must not be negative", status: Failure}
//! ```
//!
//! ```ignore
//! AdmissionWebhookTestSuite::from_yaml_file("tests/fixtures/admission/widgets.yaml")
//!     .unwrap()
//!     .run(|env| AdmissionWebhookAdapter::new(env.config(), widget_defaults()));
//! ```
//!
//! # Running under the operator's RBAC
//!
//! A table given [`OperatorRbac`] (`.run_as(...)`, or `runAs` in a suite file; one case with
//! [`TestCase::run_as`]) stores the
//! operator's RBAC manifest in every case's cluster and gives the code under test clients
//! acting as its service account. The in-memory server authorizes each request as
//! kube-apiserver's RBAC authorizer does, and the first request it refuses fails the case
//! (`rbac`) with the rule that would allow it:
//!
//! ```yaml
//! runAs:
//!   serviceAccount: default/echo-controller
//!   rbac: [../../rbac.yaml]   # Roles, ClusterRoles, bindings; relative to the suite
//! cases: [...]
//! ```
//!
//! Every [`Report`] also says what its cases needed ([`Report::needed`]): per API group and
//! resource the verbs the code under test used, allowed or not. Print it as the smallest
//! ClusterRole with [`NeededRules::to_cluster_role_yaml`], and keep a manifest honest with
//! [`OperatorRbac::check_grants`], which fails when the manifest grants less than was needed
//! (or, asked for exactness, more). [`OperatorRbac::check_requests`] checks a real
//! `Controller` run on the in-memory server, with a client acting as the account, the same
//! way. Tables call the reconcile function, not the watches that feed it: add those with
//! [`NeededRules::watch`]. `examples/echo-controller/tests/echo/rbac.rs` shows it all. To write
//! a manifest in the first place, run the tests with `RECON_NEEDED_RBAC=1`: each table prints
//! what it needed.
//!
//! # Snapshots
//!
//! A case with `snapshot` set hands what it observed to the table's snapshot sink instead of
//! comparing `expect`, written as a regenerated fixture would be (without the fields the server
//! sets, unless the case compares them; an admission case's `response` included); with [`snapshot!`] that is an insta snapshot, approved
//! with `cargo insta review`.

mod admission;
mod case;
mod compare;
mod conversion;
pub mod diff;
mod dynamic_api;
mod env;
mod error_policy;
mod error_spec;
mod expect;
pub mod explore;
mod generated;
mod kube_reconcile;
mod normalize;
mod observe;
mod owner;
mod rbac;
mod reactors;
mod report;
mod runner;
#[doc(hidden)]
pub mod snapshot_file;
mod stub_object_manager;
mod tables;
mod yaml;

pub use admission::{DEFAULT_ADMISSION_UID, ResponseSpec};
pub use case::{AppliedGiven, ExpectConfig, Hook, Hooks, TestCase, VerifyHook};
pub use compare::Mismatch;
pub use conversion::{ConversionCase, ConversionTests, assert_round_trips};
pub use diff::{assert_json_eq, json_diff};
pub use env::{Cluster, TestEnv};
pub use error_policy::{ErrorPolicy, NoErrorPolicy};
pub use error_spec::ErrorSpec;
pub use expect::{
    DeleteCollectionRef, DeleteRef, ErrorSignal, EventKind, EventRef, Expectations, OutcomeSpec,
    PatchRef, PatchType, RelatedRef,
};
pub use generated::assert_generated_file;
pub use kube_reconcile::{
    KubeController, KubeReconcile, kube_controller, kube_controller_async, kube_reconcile,
};
pub use owner::{controller_reference, given_uid, kube_controller_reference};
pub use rbac::OperatorRbac;
pub use reactors::{FailureSpec, ReactorSpec};
pub use recon_fake::rbac::{NeededRules, PolicyRule};
pub use report::{CaseReport, CaseStatus, Report};
pub use runner::{DEFAULT_NOW, SnapshotSink};
pub use stub_object_manager::StubObjectManager;
pub use tables::{
    AdmissionWebhookTestSuite, AdmissionWebhookTests, ReconcilerTestSuite, ReconcilerTests,
    RootReconciler, SubReconcilerTestSuite, SubReconcilerTests,
};
pub use yaml::FixtureError;

#[doc(hidden)]
pub use insta;
#[doc(hidden)]
pub use serde_json;

/// A [`SnapshotSink`] that approves what `snapshot` cases observed as insta YAML snapshots,
/// stored next to the calling test (review them with `cargo insta review`).
///
/// ```ignore
/// ReconcilerTests::new().snapshots(recon_testing::snapshot!()).case(/* ... */).run(factory);
/// ```
#[macro_export]
macro_rules! snapshot {
    () => {
        ::std::sync::Arc::new(|name: &str, observed: &$crate::serde_json::Value| {
            let new = $crate::snapshot_file::is_new(
                env!("CARGO_MANIFEST_DIR"),
                file!(),
                module_path!(),
                name,
            );
            let checked = ::std::panic::catch_unwind(|| {
                $crate::insta::assert_yaml_snapshot!(name, observed);
            });
            if checked.is_err() {
                ::std::panic::resume_unwind(::std::boxed::Box::new(
                    $crate::snapshot_file::Rejected { new },
                ));
            }
        }) as $crate::SnapshotSink
    };
}
