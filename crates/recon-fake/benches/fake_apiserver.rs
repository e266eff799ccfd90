//! Throughput of the in-memory API server through `kube::Api`, median of a few runs.
//!
//! 1. The workloads of `PERFORMANCE.md` on the in-memory server: ConfigMaps of about 1 KiB in
//!    one namespace (create, get, merge patch, server-side apply, list with a label selector
//!    matching 1%), plus memory per stored object.
//! 2. The same kind of work on a custom resource with a status subresource (patches go to
//!    `/status`), on the in-memory server and, when one is reachable, on a real API server in
//!    the same run, for the ratio. `cargo xtask bench --real` starts the project's real server
//!    (`xtask/real-apiserver.sh`) and points this bench at it through `KUBECONFIG`.
//!
//! 3. Setup (`setup`): a new server, a new server with one CRD installed (a schema with a CEL
//!    rule) until it is served, and one with ten such CRDs, each timed per server over
//!    `SETUP_SERVERS` servers (a tenth of them for ten CRDs).
//!
//! Run with `cargo bench -p recon-fake --bench fake_apiserver [-- WORKLOAD...]` or
//! `cargo xtask bench`. Naming workloads (`create`, `get`, `patch`, `apply`, `list`) runs only
//! those (objects are still created first). `RECON_BENCH_OBJECTS` (default 10000) and
//! `RECON_BENCH_RUNS` (default 3) change the size; `RECON_BENCH_REAL=0` skips the real server.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use recon_fake::ApiServer;
use serde_json::json;

/// The workloads, in the order they run.
const WORKLOADS: [&str; 5] = ["create", "get", "patch", "apply", "list"];
/// List requests per run: each returns 1% of the objects.
const LIST_ROUNDS: usize = 50;
/// Servers made per run of the `setup` workload.
const SETUP_SERVERS: usize = 200;

struct Settings {
    objects: usize,
    runs: usize,
    only: Vec<String>,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: usize| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        Settings {
            // A multiple of 100, so that the selected 1% is exact.
            objects: number("RECON_BENCH_OBJECTS", 10_000).div_ceil(100) * 100,
            runs: number("RECON_BENCH_RUNS", 3),
            // `cargo bench` passes `--bench`; anything else names a workload.
            only: std::env::args()
                .skip(1)
                .filter(|a| !a.starts_with('-'))
                .collect(),
        }
    }

    fn runs(&self, workload: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|w| w == workload)
    }
}

/// Time per workload of one run; `None` for workloads not run.
#[derive(Default)]
struct Figures {
    elapsed: BTreeMap<&'static str, Duration>,
    bytes_per_object: Option<u64>,
}

/// Requests per second of `workload` over `runs`, median.
fn rate(runs: &[Figures], workload: &str, requests: usize) -> Option<f64> {
    let mut rates: Vec<f64> = runs
        .iter()
        .filter_map(|f| f.elapsed.get(workload))
        .map(|d| requests as f64 / d.as_secs_f64())
        .collect();
    rates.sort_by(f64::total_cmp);
    rates.get(rates.len() / 2).copied()
}

fn requests(workload: &str, objects: usize) -> usize {
    if workload == "list" {
        LIST_ROUNDS
    } else {
        objects
    }
}

fn label(workload: &str) -> &'static str {
    match workload {
        "create" => "create, sequential",
        "get" => "get by name",
        "patch" => "merge patch",
        "apply" => "server-side apply",
        _ => "list, label selector at 1%",
    }
}

/// Resident set size in bytes (Linux), to estimate memory per stored object.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

async fn timed<F: Future<Output = ()>>(
    figures: &mut Figures,
    settings: &Settings,
    workload: &'static str,
    work: F,
) {
    if settings.runs(workload) || workload == "create" {
        let start = Instant::now();
        work.await;
        figures.elapsed.insert(workload, start.elapsed());
    }
}

fn name(i: usize) -> String {
    format!("obj-{i:05}")
}

/// 1% of the objects carry the selected label value.
fn group(i: usize) -> &'static str {
    if i.is_multiple_of(100) {
        "selected"
    } else {
        "other"
    }
}

fn payload() -> String {
    "x".repeat(900)
}

// --- ConfigMaps on the in-memory server -------------------------------------------------

fn configmap(i: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name(i));
    cm.metadata.labels = Some(BTreeMap::from([("group".to_owned(), group(i).to_owned())]));
    cm.data = Some(BTreeMap::from([("payload".to_owned(), payload())]));
    cm
}

/// One run over ConfigMaps. Memory is measured on the first run only: later runs reuse pages
/// the earlier ones freed, so their resident set does not grow.
async fn configmaps_once(settings: &Settings, measure_memory: bool) -> Figures {
    let n = settings.objects;
    let objects: Vec<ConfigMap> = (0..n).map(configmap).collect();
    // No request log: what grows is the store.
    let server = ApiServer::builder().record_requests(false).build();
    let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    let mut figures = Figures::default();
    let before = resident_bytes().filter(|_| measure_memory);

    timed(&mut figures, settings, "create", async {
        for cm in &objects {
            api.create(&PostParams::default(), cm)
                .await
                .expect("create");
        }
    })
    .await;
    figures.bytes_per_object = before
        .zip(resident_bytes())
        .map(|(b, a)| a.saturating_sub(b) / n as u64);

    timed(&mut figures, settings, "get", get_each(&api, n)).await;
    timed(&mut figures, settings, "patch", async {
        for i in 0..n {
            let patch = json!({"data": {"round": i.to_string()}});
            api.patch(&name(i), &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("merge patch");
        }
    })
    .await;
    let applied = |i: usize| {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name(i)},
            "data": {"applied": i.to_string()},
        })
    };
    timed(
        &mut figures,
        settings,
        "apply",
        apply_each(&api, n, applied),
    )
    .await;
    timed(&mut figures, settings, "list", list_rounds(&api, n)).await;
    figures
}

async fn get_each<K>(api: &Api<K>, objects: usize)
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    for i in 0..objects {
        api.get(&name(i)).await.expect("get");
    }
}

/// Applies `applied(i)` to every object, as the manager `bench`, forcing conflicts.
async fn apply_each<K>(api: &Api<K>, objects: usize, applied: impl Fn(usize) -> serde_json::Value)
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = PatchParams::apply("bench").force();
    for i in 0..objects {
        api.patch(&name(i), &params, &Patch::Apply(&applied(i)))
            .await
            .expect("apply");
    }
}

async fn list_rounds<K>(api: &Api<K>, objects: usize)
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let selector = ListParams::default().labels("group=selected");
    for _ in 0..LIST_ROUNDS {
        let list = api.list(&selector).await.expect("list");
        assert_eq!(list.items.len(), objects / 100, "selected objects listed");
    }
}

// --- A custom resource, in-memory and real -----------------------------------------------

const GROUP: &str = "bench.recon.dev";

/// A CRD of the bench group serving `kind` (plural `<kind lower-cased>s`) at `v1`, with a status
/// subresource and `spec` as `spec_schema` says.
fn bench_crd(kind: &str, spec_schema: serde_json::Value) -> CustomResourceDefinition {
    let singular = kind.to_lowercase();
    let plural = format!("{singular}s");
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List")},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": spec_schema,
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    },
                }},
            }],
        },
    }))
    .expect("the bench CRDs are valid")
}

fn crd() -> CustomResourceDefinition {
    bench_crd(
        "Sample",
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    )
}

fn sample_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, "v1", "Sample"), "samples")
}

fn sample(i: usize) -> DynamicObject {
    let mut obj = DynamicObject::new(&name(i), &sample_resource());
    obj.metadata.labels = Some(BTreeMap::from([("group".to_owned(), group(i).to_owned())]));
    obj.data = json!({"spec": {"payload": payload()}});
    obj
}

/// Installs the bench CRD (once) and waits until it is established.
async fn install_crd(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = crd();
    let name = crd.metadata.name.clone().unwrap_or_default();
    if crds.get_opt(&name).await.expect("get CRD").is_none() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("create CRD");
    }
    for _ in 0..600 {
        let current = crds.get(&name).await.expect("get CRD");
        let established = current
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the bench CRD was not established within 30 s");
}

/// One run over custom resources in the namespace `namespace` (a fresh one per run, so that a
/// real server's earlier runs do not interfere).
async fn samples_once(client: Client, settings: &Settings, namespace: &str) -> Figures {
    let n = settings.objects;
    let api: Api<DynamicObject> = Api::namespaced_with(client, namespace, &sample_resource());
    let objects: Vec<DynamicObject> = (0..n).map(sample).collect();
    let mut figures = Figures::default();

    timed(&mut figures, settings, "create", async {
        for obj in &objects {
            api.create(&PostParams::default(), obj)
                .await
                .expect("create");
        }
    })
    .await;
    timed(&mut figures, settings, "get", get_each(&api, n)).await;
    timed(&mut figures, settings, "patch", async {
        for i in 0..n {
            let patch = json!({"status": {"round": i}});
            api.patch_status(&name(i), &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("merge patch /status");
        }
    })
    .await;
    let applied = |i: usize| {
        json!({
            "apiVersion": format!("{GROUP}/v1"),
            "kind": "Sample",
            "metadata": {"name": name(i)},
            "spec": {"applied": i},
        })
    };
    timed(
        &mut figures,
        settings,
        "apply",
        apply_each(&api, n, applied),
    )
    .await;
    timed(&mut figures, settings, "list", list_rounds(&api, n)).await;
    api.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("delete the run's objects");
    figures
}

/// A client for the real server, when the environment names one (`xtask/real-apiserver.sh run`
/// sets `KUBECONFIG` and `REAL_APISERVER_URL`).
async fn real_client() -> Result<Option<Client>, String> {
    if std::env::var("RECON_BENCH_REAL").is_ok_and(|v| v == "0")
        || std::env::var_os("REAL_APISERVER_URL").is_none()
    {
        return Ok(None);
    }
    let kubeconfig = Kubeconfig::read().map_err(|e| format!("reading KUBECONFIG: {e}"))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("loading KUBECONFIG: {e}"))?;
    Client::try_from(config)
        .map(Some)
        .map_err(|e| format!("building a client for the real server: {e}"))
}

// --- Output --------------------------------------------------------------------------------

/// The CRD a plain test installs: a typed spec with a default, an enum, a list-set and a CEL
/// rule.
fn validated_crd() -> CustomResourceDefinition {
    validated_crd_of("Gadget")
}

/// [`validated_crd`]'s schema under the kind `kind`.
fn validated_crd_of(kind: &str) -> CustomResourceDefinition {
    bench_crd(
        kind,
        json!({
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 0},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            },
            "x-kubernetes-validations": [{"rule": "self.size <= 100", "message": "too big"}],
        }),
    )
}

/// Microseconds of the first server of the process, which reads the recorded OpenAPI, Go field
/// orders and boot objects that every later server shares.
fn first_server() -> f64 {
    let start = Instant::now();
    drop(ApiServer::new());
    start.elapsed().as_secs_f64() * 1e6
}

/// Microseconds per server, median of the runs: a new server, a new server with
/// [`validated_crd`] installed and served, and one with ten such CRDs of as many kinds.
async fn setup_once() -> (f64, f64, f64) {
    let start = Instant::now();
    for _ in 0..SETUP_SERVERS {
        drop(ApiServer::new());
    }
    let new = start.elapsed();
    let crd = validated_crd();
    let start = Instant::now();
    for _ in 0..SETUP_SERVERS {
        let server = ApiServer::new();
        server
            .install_crd(&crd)
            .await
            .expect("install the setup CRD");
    }
    let with_crd = start.elapsed();
    let ten: Vec<CustomResourceDefinition> = (0..10)
        .map(|i| validated_crd_of(&format!("Gadget{i}")))
        .collect();
    let start = Instant::now();
    for _ in 0..SETUP_SERVERS / 10 {
        let server = ApiServer::new();
        for crd in &ten {
            server
                .install_crd(crd)
                .await
                .expect("install the setup CRDs");
        }
    }
    let with_ten = start.elapsed() * 10;
    let per = |d: Duration| d.as_secs_f64() * 1e6 / SETUP_SERVERS as f64;
    (per(new), per(with_crd), per(with_ten))
}

fn print_setup(first: f64, runs: &[(f64, f64, f64)]) {
    let median = |pick: fn(&(f64, f64, f64)) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(pick).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!();
    println!(
        "setup, {SETUP_SERVERS} servers per run, median of {} runs",
        runs.len()
    );
    println!(
        "  {:<32} {:>10.0} µs",
        "first ApiServer::new() of a process", first
    );
    println!("  {:<32} {:>10.0} µs", "ApiServer::new()", median(|r| r.0));
    println!(
        "  {:<32} {:>10.0} µs",
        "new server + one CRD served",
        median(|r| r.1)
    );
    println!(
        "  {:<32} {:>10.0} µs",
        "new server + ten CRDs served",
        median(|r| r.2)
    );
}

fn print_configmaps(settings: &Settings, runs: &[Figures]) {
    println!(
        "in-memory server, {} ConfigMaps of ~1 KiB (request log off), median of {} runs",
        settings.objects, settings.runs
    );
    for w in WORKLOADS.iter().filter(|w| settings.runs(w)) {
        if let Some(r) = rate(runs, w, requests(w, settings.objects)) {
            println!("  {:<32} {r:>10.0} /s", label(w));
        }
    }
    if let Some(bytes) = runs.first().and_then(|f| f.bytes_per_object) {
        println!(
            "  {:<32} {bytes:>10} B (first run: resident set growth while creating)",
            "memory per stored object"
        );
    }
}

fn print_samples(settings: &Settings, fake: &[Figures], real: Option<&[Figures]>) {
    println!();
    println!(
        "custom resource with a status subresource, {} objects of ~1 KiB, median of {} runs",
        settings.objects, settings.runs
    );
    println!(
        "  {:<32} {:>12} {:>12} {:>8}",
        "", "in-memory", "real server", "ratio"
    );
    for w in WORKLOADS.iter().filter(|w| settings.runs(w)) {
        let n = requests(w, settings.objects);
        let workload = if *w == "patch" {
            "merge patch /status"
        } else {
            label(w)
        };
        let Some(f) = rate(fake, w, n) else { continue };
        match real.and_then(|r| rate(r, w, n)) {
            Some(r) => println!("  {workload:<32} {f:>10.0}/s {r:>10.0}/s {:>7.0}×", f / r),
            None => println!("  {workload:<32} {f:>10.0}/s {:>12} {:>8}", "-", "-"),
        }
    }
    if real.is_none() {
        println!("  (real server not measured: `cargo xtask bench --real` starts one)");
    }
}

fn main() {
    let settings = Settings::from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        if settings.runs("setup") {
            let first = first_server();
            let mut runs = Vec::new();
            for _ in 0..settings.runs {
                runs.push(setup_once().await);
            }
            print_setup(first, &runs);
            if !settings.only.is_empty() && settings.only.iter().all(|w| w == "setup") {
                return;
            }
        }
        let configmaps: Vec<Figures> = {
            let mut runs = Vec::new();
            for i in 0..settings.runs {
                runs.push(configmaps_once(&settings, i == 0).await);
            }
            runs
        };
        print_configmaps(&settings, &configmaps);

        let mut fake = Vec::new();
        for i in 0..settings.runs {
            let server = ApiServer::builder().record_requests(false).build();
            install_crd(&server.client()).await;
            fake.push(samples_once(server.client(), &settings, &format!("run-{i}")).await);
        }
        let real = match real_client().await {
            Ok(Some(client)) => {
                install_crd(&client).await;
                let stamp = std::process::id();
                let mut runs = Vec::new();
                for i in 0..settings.runs {
                    runs.push(
                        samples_once(client.clone(), &settings, &format!("run-{stamp}-{i}")).await,
                    );
                }
                Some(runs)
            }
            Ok(None) => None,
            Err(e) => {
                eprintln!("real server: {e}");
                None
            }
        };
        print_samples(&settings, &fake, real.as_deref());
    });
}
