//! Throughput of the in-memory API server through `kube::Api`, on the workloads of
//! `PERFORMANCE.md`: 10,000 ConfigMaps of about 1 KiB in one namespace. Prints one line per
//! workload (median of 3 runs). Run with `cargo bench -p recon-core` or `cargo xtask bench`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use recon_core::fake::ApiServer;
use serde_json::json;

const OBJECTS: usize = 10_000;
const RUNS: usize = 3;
const LIST_ROUNDS: usize = 50;

fn configmap(i: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("cm-{i:05}"));
    // 1% of the objects carry the selected label value.
    let group = if i.is_multiple_of(100) {
        "selected"
    } else {
        "other"
    };
    cm.metadata.labels = Some(BTreeMap::from([("group".to_owned(), group.to_owned())]));
    cm.data = Some(BTreeMap::from([("payload".to_owned(), "x".repeat(900))]));
    cm
}

/// Resident set size in bytes (Linux), to estimate memory per stored object.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

struct Figures {
    create: Duration,
    get: Duration,
    patch: Duration,
    list: Duration,
    bytes_per_object: Option<u64>,
}

/// One run of every workload. Memory is measured on the first run only: later runs reuse pages
/// the earlier ones freed, so their resident set does not grow.
async fn run_once(measure_memory: bool) -> Figures {
    let objects: Vec<ConfigMap> = (0..OBJECTS).map(configmap).collect();
    // No request log: what grows is the store.
    let server = ApiServer::builder().record_requests(false).build();
    let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    let before = resident_bytes().filter(|_| measure_memory);

    let start = Instant::now();
    for cm in &objects {
        api.create(&PostParams::default(), cm)
            .await
            .expect("create");
    }
    let create = start.elapsed();
    let after = resident_bytes();

    let start = Instant::now();
    for i in 0..OBJECTS {
        api.get(&format!("cm-{i:05}")).await.expect("get");
    }
    let get = start.elapsed();

    let start = Instant::now();
    for i in 0..OBJECTS {
        let patch = json!({"data": {"round": i.to_string()}});
        api.patch(
            &format!("cm-{i:05}"),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .expect("patch");
    }
    let patch = start.elapsed();

    let selector = ListParams::default().labels("group=selected");
    let start = Instant::now();
    for _ in 0..LIST_ROUNDS {
        let list = api.list(&selector).await.expect("list");
        assert_eq!(list.items.len(), OBJECTS / 100);
    }
    let list = start.elapsed();

    Figures {
        create,
        get,
        patch,
        list,
        bytes_per_object: before
            .zip(after)
            .map(|(b, a)| a.saturating_sub(b) / OBJECTS as u64),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let runs: Vec<Figures> = (0..RUNS)
        .map(|i| runtime.block_on(run_once(i == 0)))
        .collect();
    let rate = |count: usize, pick: fn(&Figures) -> Duration| {
        median(
            runs.iter()
                .map(|f| count as f64 / pick(f).as_secs_f64())
                .collect(),
        )
    };
    println!(
        "recon fake::ApiServer (request log off), {OBJECTS} ConfigMaps of ~1 KiB, median of {RUNS} runs"
    );
    println!(
        "  create, sequential          {:>10.0} /s",
        rate(OBJECTS, |f| f.create)
    );
    println!(
        "  get by name                 {:>10.0} /s",
        rate(OBJECTS, |f| f.get)
    );
    println!(
        "  merge patch                 {:>10.0} /s",
        rate(OBJECTS, |f| f.patch)
    );
    println!(
        "  list, label selector at 1%  {:>10.0} /s",
        rate(LIST_ROUNDS, |f| f.list)
    );
    if let Some(bytes) = runs[0].bytes_per_object {
        println!(
            "  memory per stored object    {bytes:>10} B (first run: resident set growth while creating)"
        );
    }
}
