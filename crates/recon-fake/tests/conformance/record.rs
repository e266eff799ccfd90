//! Record mode: the scenario runs against a real API server and its `response`s are rewritten.
//!
//! Scenarios share the real server, so they run one at a time, each between two clean-ups of
//! every object of this suite's group; the CRDs are applied once per run and waited for.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::fixture::{self, API, Scenario};
use super::runner;
use super::transport::{Curl, HttpRequest, Transport};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
static CRDS_APPLIED: AtomicBool = AtomicBool::new(false);

/// Held (outside the async runtime) while a scenario is recorded or timed on the real server.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn enabled() -> bool {
    std::env::var("RECON_CONFORMANCE").is_ok_and(|v| v == "record")
}

/// Whether the real server at hand (`RECON_CONFORMANCE_SERVER`, `apiextensions` unless set) is
/// the one `scenario` is recorded from; the others are left as they are.
pub fn records(scenario: &Scenario) -> bool {
    let server = std::env::var("RECON_CONFORMANCE_SERVER");
    server.as_deref().unwrap_or("apiextensions") == scenario.server.name()
}

/// Records `scenario`; the caller holds [`one_at_a_time`]. A scenario that needs controllers is
/// recorded only on a server running kube-controller-manager (`RECON_KUBE_CONTROLLERS=1`), and
/// every other only on one without, whose controllers would act between its steps: on the
/// wrong one it is left as it is.
pub async fn record(scenario: &Scenario) -> Result<(), String> {
    let with_controllers = std::env::var("RECON_KUBE_CONTROLLERS").as_deref() == Ok("1");
    if scenario.controllers.is_empty() == with_controllers {
        let needs = match with_controllers {
            true => "no kube-controller-manager: record it without RECON_KUBE_CONTROLLERS=1",
            false => "kube-controller-manager: record it with RECON_KUBE_CONTROLLERS=1",
        };
        eprintln!("{}: needs {needs}; left as it is", scenario.path.display());
        return Ok(());
    }
    let curl = Curl::from_env()?;
    ensure_crds(&curl)?;
    let transport = Transport::Real(curl);
    clean(&transport).await?;
    let mode = runner::Mode { compare: false };
    let outcome = runner::run(scenario, &transport, &mode).await;
    clean(&transport).await?;
    if let Some(why) = &outcome.stopped {
        return Err(format!("{}: {why}", scenario.path.display()));
    }
    let responses: Vec<Value> = outcome.observed.into_iter().flatten().collect();
    fixture::write_responses(&scenario.path, &responses).map_err(|e| e.to_string())
}

/// Applies every CRD of `crds/` once per process (see [`install_all_crds`]).
pub fn ensure_crds(curl: &Curl) -> Result<(), String> {
    if !CRDS_APPLIED.load(Ordering::SeqCst) {
        install_all_crds(curl)?;
        CRDS_APPLIED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

fn crd_files() -> Result<Vec<(String, Value)>, String> {
    let dir = Path::new(fixture::ROOT).join("crds");
    let mut out = Vec::new();
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let crd: Value =
                serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            out.push((
                crd["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                crd,
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Applies every CRD of `crds/` (creating or updating it) and waits until each is Established
/// and its resource answers a list.
fn install_all_crds(curl: &Curl) -> Result<(), String> {
    for (name, mut crd) in crd_files()? {
        crate::conversion::point_at_the_webhook(&mut crd);
        let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
        let applied = curl.send(&HttpRequest {
            method: "PATCH".into(),
            uri: format!("{path}?fieldManager=recon-conformance&force=true"),
            content_type: Some("application/apply-patch+yaml".into()),
            accept: None,
            headers: Vec::new(),
            body: serde_json::to_vec(&crd).map_err(|e| e.to_string())?,
        })?;
        if !matches!(applied.code, 200 | 201) {
            return Err(format!(
                "applying the CRD {name} answered {}: {}",
                applied.code,
                String::from_utf8_lossy(&applied.body)
            ));
        }
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = curl.send(&get(&path))?;
            let stored: Value = serde_json::from_slice(&got.body).unwrap_or_default();
            let established = stored["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if established && curl.send(&get(&format!("{API}/{plural}")))?.code == 200 {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("the CRD {name} was not served within 30 s"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(())
}

fn get(uri: &str) -> HttpRequest {
    HttpRequest {
        method: "GET".into(),
        uri: uri.into(),
        content_type: None,
        accept: None,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

/// The built-in kinds scenarios create, by the API prefix and plural they are listed at, and
/// the query deleting one at once (a Pod has no kubelet to stop it; a Job's default
/// propagation would leave it to a garbage collector that does not run).
const BUILTIN_KINDS: &[(&str, &str, &str)] = &[
    ("/api/v1", "pods", "?gracePeriodSeconds=0"),
    ("/api/v1", "persistentvolumeclaims", ""),
    ("/api/v1", "replicationcontrollers", ""),
    ("/api/v1", "podtemplates", ""),
    ("/api/v1", "services", ""),
    ("/api/v1", "configmaps", ""),
    ("/api/v1", "secrets", ""),
    ("/api/v1", "serviceaccounts", ""),
    ("/apis/apps/v1", "deployments", ""),
    ("/apis/apps/v1", "replicasets", ""),
    ("/apis/apps/v1", "statefulsets", ""),
    ("/apis/apps/v1", "daemonsets", ""),
    ("/apis/batch/v1", "jobs", "?propagationPolicy=Background"),
    ("/apis/batch/v1", "cronjobs", ""),
    ("/apis/autoscaling/v2", "horizontalpodautoscalers", ""),
    ("/apis/policy/v1", "poddisruptionbudgets", ""),
    ("/apis/networking.k8s.io/v1", "ingresses", ""),
    ("/apis/networking.k8s.io/v1", "networkpolicies", ""),
    ("/apis/rbac.authorization.k8s.io/v1", "roles", ""),
    ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", ""),
    ("/apis/coordination.k8s.io/v1", "leases", ""),
];

/// The cluster-scoped kinds scenarios create that act on other requests (admission, access,
/// flow control), bindings before what they bind.
const CLUSTER_KINDS: &[(&str, &str, &str)] = &[
    (ADMISSION, "validatingadmissionpolicybindings", ""),
    (ADMISSION, "validatingadmissionpolicies", ""),
    (ADMISSION, "mutatingadmissionpolicybindings", ""),
    (ADMISSION, "mutatingadmissionpolicies", ""),
    (ADMISSION, "validatingwebhookconfigurations", ""),
    (ADMISSION, "mutatingwebhookconfigurations", ""),
    (
        "/apis/rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        "",
    ),
    ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", ""),
    ("/apis/flowcontrol.apiserver.k8s.io/v1", "flowschemas", ""),
    (
        "/apis/flowcontrol.apiserver.k8s.io/v1",
        "prioritylevelconfigurations",
        "",
    ),
];

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";

/// Which objects of a kind [`clean`] deletes.
#[derive(Clone, Copy, PartialEq)]
enum Owned {
    /// Every one (the suite's own kinds).
    All,
    /// Those in the scenarios' own namespaces (`cf-...`).
    InScenarioNamespaces,
    /// The cluster-scoped ones the scenarios name after their namespaces (`cf-...`).
    NamedByScenarios,
}

/// Deletes every object of the suite's kinds, in every namespace, the built-in objects of the
/// scenarios' own namespaces (`cf-...`), and the cluster-scoped ones scenarios name so (an
/// admission policy left behind would judge every later scenario's writes), finalizers removed
/// first: a scenario recorded again then starts from nothing, as on a fresh server.
pub async fn clean(transport: &Transport) -> Result<(), String> {
    let mut kinds: Vec<(String, String, &str, Owned)> = crd_files()?
        .iter()
        .map(|(_, crd)| {
            let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
            (API.to_owned(), plural.to_owned(), "", Owned::All)
        })
        .collect();
    let builtin = |(prefix, plural, query): &(&str, &'static str, &'static str), owned| {
        ((*prefix).to_owned(), (*plural).to_owned(), *query, owned)
    };
    kinds.extend(
        BUILTIN_KINDS
            .iter()
            .map(|kind| builtin(kind, Owned::InScenarioNamespaces)),
    );
    kinds.extend(
        CLUSTER_KINDS
            .iter()
            .map(|kind| builtin(kind, Owned::NamedByScenarios)),
    );
    for (prefix, plural, query, owned) in kinds {
        let listed = transport.send(&get(&format!("{prefix}/{plural}"))).await?;
        let list: Value = serde_json::from_slice(&listed.body).unwrap_or_default();
        for item in list["items"].as_array().into_iter().flatten() {
            let meta = &item["metadata"];
            let name = meta["name"].as_str().unwrap_or_default();
            let namespace = meta["namespace"].as_str();
            let scenarios = match owned {
                Owned::All => true,
                Owned::InScenarioNamespaces => namespace.is_some_and(|ns| ns.starts_with("cf-")),
                Owned::NamedByScenarios => namespace.is_none() && name.starts_with("cf-"),
            };
            if !scenarios {
                continue;
            }
            let path = match namespace {
                Some(ns) => format!("{prefix}/namespaces/{ns}/{plural}/{name}"),
                None => format!("{prefix}/{plural}/{name}"),
            };
            if meta["finalizers"].is_array() {
                transport
                    .send(&HttpRequest {
                        method: "PATCH".into(),
                        uri: path.clone(),
                        content_type: Some("application/merge-patch+json".into()),
                        accept: None,
                        headers: Vec::new(),
                        body: br#"{"metadata":{"finalizers":null}}"#.to_vec(),
                    })
                    .await?;
            }
            transport
                .send(&HttpRequest {
                    method: "DELETE".into(),
                    uri: format!("{path}{query}"),
                    content_type: None,
                    accept: None,
                    headers: Vec::new(),
                    body: Vec::new(),
                })
                .await?;
        }
    }
    Ok(())
}
