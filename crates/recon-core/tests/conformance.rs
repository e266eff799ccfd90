//! Differential conformance: every scenario under `fixtures/conformance/` was recorded from a
//! real API server (apiextensions-apiserver 1.36, kube-apiserver's custom resource code, with
//! etcd); here each one is replayed on a fresh in-memory `ApiServer` and must get the same
//! answers, after normalising what differs only by identity (uids, resourceVersions,
//! timestamps, generated names, namespaces).
//!
//! `RECON_CONFORMANCE=record` with the `REAL_APISERVER_*` variables set records them again
//! instead (`cargo xtask conformance --record` does it all). The format is described in the
//! README, section "Conformance".

mod conformance {
    pub mod fixture;
    pub mod normalize;
    pub mod record;
    pub mod runner;
    pub mod transport;
}

use std::path::PathBuf;

use conformance::fixture::{self, Scenario};
use conformance::record;
use conformance::runner::{self, Outcome};
use conformance::transport::Transport;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use recon_core::fake::ApiServer;
use rstest::rstest;

/// Scenarios the in-memory server is known to answer differently, with why (`bug:` marks a
/// difference outside the features still to come). Each must still differ: once a gap is
/// closed its test fails until the entry is removed.
// Why the schema/ scenarios differ: the in-memory server does not yet validate, prune or default
// custom resources against their CRD's openAPIV3Schema, nor run its CEL rules. Every object
// the real server accepts in them also carries defaults, so most differ on defaulting as well.
const SCHEMA_VALIDATION: &str = "schema: no validation against the CRD's openAPIV3Schema yet";
const SCHEMA_PRUNING: &str = "schema: no pruning of fields the schema does not declare yet";
const SCHEMA_DEFAULTING: &str = "schema: no defaulting from the schema's `default`s yet";
const SCHEMA_CEL: &str = "schema: no CEL (`x-kubernetes-validations`) yet";
const SCHEMA_FIELD_VALIDATION: &str =
    "schema: no pruning, hence no fieldValidation=Strict/Warn on unknown fields, yet";
const SCHEMA_CRD_SCHEMA: &str =
    "schema: a CRD's openAPIV3Schema is not checked to be structural when it is created yet";

const KNOWN_GAPS: &[(&str, &str)] = &[
    (
        "apply/malformed-yaml-is-400",
        "bug: YAML parser's error text instead of `error decoding YAML: ...` with Go's",
    ),
    ("schema/additional-properties-schema", SCHEMA_VALIDATION),
    ("schema/apply-is-validated", SCHEMA_VALIDATION),
    ("schema/cel-message-expression", SCHEMA_CEL),
    ("schema/cel-rule-fails", SCHEMA_CEL),
    ("schema/cel-transition-rule-oldself", SCHEMA_CEL),
    ("schema/crd-with-unique-items-is-refused", SCHEMA_CRD_SCHEMA),
    ("schema/defaults-applied-on-create", SCHEMA_DEFAULTING),
    ("schema/defaults-on-update-and-patch", SCHEMA_DEFAULTING),
    (
        "schema/embedded-resource-needs-apiversion-kind",
        SCHEMA_VALIDATION,
    ),
    ("schema/enum-value-not-allowed", SCHEMA_VALIDATION),
    (
        "schema/exclusive-minimum-and-exclusive-maximum",
        SCHEMA_VALIDATION,
    ),
    (
        "schema/field-validation-ignore-prunes",
        SCHEMA_FIELD_VALIDATION,
    ),
    (
        "schema/field-validation-strict-merge-patch",
        SCHEMA_FIELD_VALIDATION,
    ),
    (
        "schema/field-validation-strict-unknown-field",
        SCHEMA_FIELD_VALIDATION,
    ),
    (
        "schema/field-validation-warn-sets-warning-header",
        SCHEMA_FIELD_VALIDATION,
    ),
    ("schema/format-byte", SCHEMA_VALIDATION),
    ("schema/format-date-time", SCHEMA_VALIDATION),
    ("schema/format-int32-and-int64", SCHEMA_VALIDATION),
    ("schema/int-or-string", SCHEMA_VALIDATION),
    (
        "schema/list-type-map-duplicate-key-is-422",
        SCHEMA_VALIDATION,
    ),
    ("schema/list-type-set-duplicate-is-422", SCHEMA_VALIDATION),
    ("schema/merge-patch-result-is-validated", SCHEMA_VALIDATION),
    ("schema/min-and-max-items", SCHEMA_VALIDATION),
    ("schema/min-and-max-length", SCHEMA_VALIDATION),
    ("schema/min-and-max-properties", SCHEMA_VALIDATION),
    ("schema/minimum-and-maximum", SCHEMA_VALIDATION),
    (
        "schema/null-for-a-defaulted-field-gets-the-default",
        SCHEMA_DEFAULTING,
    ),
    ("schema/nullable-keeps-null", SCHEMA_PRUNING),
    ("schema/pattern-mismatch", SCHEMA_VALIDATION),
    ("schema/preserve-unknown-fields-keeps-them", SCHEMA_PRUNING),
    ("schema/required-field-missing", SCHEMA_VALIDATION),
    (
        "schema/several-errors-are-one-422-with-causes",
        SCHEMA_VALIDATION,
    ),
    ("schema/status-write-is-validated", SCHEMA_VALIDATION),
    ("schema/unknown-fields-are-pruned", SCHEMA_PRUNING),
    ("schema/update-is-validated", SCHEMA_VALIDATION),
    ("schema/wrong-type-is-422", SCHEMA_VALIDATION),
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("cannot build a Tokio runtime: {e}"))
}

async fn replay(scenario: &Scenario) -> Result<Outcome, String> {
    let server = ApiServer::new();
    for (name, manifest) in &scenario.crds {
        let crd: CustomResourceDefinition = serde_json::from_value(manifest.clone())
            .map_err(|e| format!("crds/{name}.yaml is not a CustomResourceDefinition: {e}"))?;
        server
            .install_crd(&crd)
            .await
            .map_err(|e| format!("installing crds/{name}.yaml failed: {e}"))?;
    }
    let mode = runner::Mode {
        compare: true,
        quiet_scale: 0.2,
    };
    Ok(runner::run(scenario, &Transport::Fake(server.client()), &mode).await)
}

#[rstest]
fn scenario(
    #[files("../../fixtures/conformance/*/*.yaml")]
    #[exclude("/crds/")]
    path: PathBuf,
) {
    let scenario = fixture::load(&path).unwrap_or_else(|e| panic!("{e}"));
    if record::enabled() {
        let _one = record::one_at_a_time();
        runtime()
            .block_on(record::record(&scenario))
            .unwrap_or_else(|e| panic!("{e}"));
        return;
    }
    let outcome = runtime()
        .block_on(replay(&scenario))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let gap = KNOWN_GAPS.iter().find(|(id, _)| *id == scenario.id);
    match (gap, outcome.differs()) {
        (None, false) => {}
        (None, true) => panic!(
            "the in-memory server answers differently from the real one\n{}",
            outcome.report(&scenario)
        ),
        (Some((_, why)), true) => {
            eprintln!("known gap ({why}):\n{}", outcome.report(&scenario));
        }
        (Some((id, why)), false) => panic!(
            "{id} is listed in KNOWN_GAPS ({why}) but now matches the real server: \
             remove it from the list"
        ),
    }
}

#[test]
fn known_gaps_name_scenarios_that_exist() {
    let ids: Vec<String> = fixture::all_scenario_files()
        .iter()
        .map(|p| fixture::scenario_id(p))
        .collect();
    for (id, _) in KNOWN_GAPS {
        assert!(
            ids.iter().any(|s| s == id),
            "KNOWN_GAPS names {id}, which is not a scenario under {}",
            fixture::ROOT
        );
    }
}

#[test]
fn every_scenario_file_parses() {
    let files = fixture::all_scenario_files();
    assert!(files.len() >= 75, "only {} scenarios", files.len());
    for path in files {
        if let Err(e) = fixture::load(&path) {
            panic!("{e}");
        }
    }
}
