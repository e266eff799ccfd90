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
//! # Guides
//!
//! - [Tables](guide::tables): cases, expectations and how they are compared, YAML suites and
//!   regenerating them, admission webhook tables, running under the operator's RBAC,
//!   snapshots.
//! - [Testing a kube-rs controller](guide::kube_controllers) unchanged, with
//!   [`kube_reconcile`].
//!
//! recon-core's guides cover writing the reconcilers; recon-fake's, the in-memory API server
//! the tables run on.

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

/// Guides, one page a topic; each page's code is compiled and run as a doctest.
pub mod guide {
    #[doc = include_str!("docs/tables.md")]
    pub mod tables {}

    #[doc = include_str!("docs/testing-kube-controllers.md")]
    pub mod kube_controllers {}
}

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
