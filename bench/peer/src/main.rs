//! kube-fake-client's side of `cargo xtask bench --peer` (issue 24): one run of one workload
//! shape on kube-fake-client 0.3, for the xtask to interleave with recon's runs and compare.
//!
//! `crates/recon-fake/benches/versus_peer.rs` is the same program on recon: the two differ only
//! in how they make the client (the function `client`; the peer has no request log to turn
//! off). Everything else is identical, so that both measure the same thing: `cargo xtask bench
//! --peer` checks that the two files agree below their marked line, and that both send
//! byte-identical bodies, before it measures. The modes, flags and output are described there.

use std::process::ExitCode;
use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_fake_client::ClientBuilder;
use serde_json::Value;

/// The client under test, and what must live as long as it. Only this function differs from
/// recon's program. kube-fake-client as its README sets it up: no options.
async fn client(log: bool) -> Result<(kube::Client, ()), String> {
    if !log {
        return Err("kube-fake-client has no request log to turn off".into());
    }
    let client = ClientBuilder::new()
        .build()
        .await
        .map_err(|e| format!("kube-fake-client: {e}"))?;
    Ok((client, ()))
}

// ---- From here on, both programs are identical (`cargo xtask bench --peer` checks). ----

#[derive(PartialEq)]
enum Mode {
    Speed,
    Memory,
    Bodies,
}

struct Args {
    workload: String,
    shape: String,
    mode: Mode,
    objects: Option<usize>,
    log: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        workload: String::new(),
        shape: String::new(),
        mode: Mode::Speed,
        objects: None,
        log: true,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        // `cargo bench` passes `--bench` to a bench without the test harness.
        if flag == "--bench" {
            continue;
        }
        let value = given
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--workload" => args.workload = value,
            "--shape" => args.shape = value,
            "--mode" => {
                args.mode = match value.as_str() {
                    "speed" => Mode::Speed,
                    "memory" => Mode::Memory,
                    "bodies" => Mode::Bodies,
                    _ => return Err(format!("unknown mode `{value}`")),
                }
            }
            "--objects" => {
                args.objects = Some(value.parse().map_err(|_| "--objects takes a number")?)
            }
            "--log" => args.log = value == "on",
            _ => return Err(format!("unknown flag `{flag}`")),
        }
    }
    if args.workload.is_empty() || args.shape.is_empty() {
        return Err("--workload and --shape are required".into());
    }
    Ok(args)
}

/// `bench/workload.json`, with the shape chosen.
struct Workload {
    namespace: String,
    objects: usize,
    list_rounds: usize,
    selector: String,
    apply_manager: String,
    object: Value,
    patch: Value,
    apply: Value,
}

fn load(args: &Args) -> Result<Workload, String> {
    let text = std::fs::read_to_string(&args.workload)
        .map_err(|e| format!("reading {}: {e}", args.workload))?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", args.workload))?;
    let field = |path: &str| {
        file.pointer(path)
            .cloned()
            .ok_or_else(|| format!("{}: no {path}", args.workload))
    };
    let string = |path: &str| {
        field(path)?
            .as_str()
            .map(str::to_owned)
            .ok_or(path.to_owned())
    };
    let number = |path: &str| {
        field(path)?
            .as_u64()
            .map(|n| n as usize)
            .ok_or(path.to_owned())
    };
    Ok(Workload {
        namespace: string("/namespace")?,
        objects: args.objects.map_or_else(|| number("/objects"), Ok)?,
        list_rounds: number("/list_rounds")?,
        selector: string("/selector")?,
        apply_manager: string("/apply_manager")?,
        object: field(&format!("/shapes/{}/object", args.shape))?,
        patch: field("/patch")?,
        apply: field("/apply")?,
    })
}

fn name(i: usize) -> String {
    format!("obj-{i:05}")
}

/// One string of a template, its placeholders replaced for object `i`.
fn expand_str(template: &str, i: usize) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("unclosed placeholder in `{template}`"))?;
        let placeholder = &rest[open + 1..open + close];
        match placeholder {
            "name" => out.push_str(&name(i)),
            "i" => out.push_str(&i.to_string()),
            "group" if i.is_multiple_of(100) => out.push_str("selected"),
            "group" => out.push_str("unlisted"),
            _ => {
                let count = placeholder
                    .strip_prefix("x:")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("unknown placeholder `{{{placeholder}}}`"))?;
                out.push_str(&"x".repeat(count));
            }
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A template (any JSON value) for object `i`: every string value expanded, keys kept.
fn expand(template: &Value, i: usize) -> Result<Value, String> {
    Ok(match template {
        Value::String(s) => Value::String(expand_str(s, i)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| expand(v, i))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), expand(v, i)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

fn configmap(w: &Workload, i: usize) -> Result<ConfigMap, String> {
    serde_json::from_value(expand(&w.object, i)?).map_err(|e| format!("a ConfigMap: {e}"))
}

/// The process's peak resident set (`VmHWM`, Linux).
fn peak_rss() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| "no VmHWM in /proc/self/status".into())
}

/// What kube sends as a body: `serde_json::to_vec` of the object or patch.
fn body(value: &impl serde::Serialize) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| e.to_string())
}

fn bodies(w: &Workload) -> Result<(), String> {
    for i in 0..w.objects {
        println!("{}", body(&configmap(w, i)?)?);
    }
    for i in 0..w.objects {
        println!("{}", body(&expand(&w.patch, i)?)?);
    }
    for i in 0..w.objects {
        println!("{}", body(&expand(&w.apply, i)?)?);
    }
    Ok(())
}

async fn memory(w: &Workload, api: &Api<ConfigMap>) -> Result<(), String> {
    for i in 0..w.objects {
        api.create(&PostParams::default(), &configmap(w, i)?)
            .await
            .map_err(|e| format!("create {}: {e}", name(i)))?;
    }
    println!("objects={} peak_rss={}", w.objects, peak_rss()?);
    Ok(())
}

async fn speed(w: &Workload, api: &Api<ConfigMap>) -> Result<(), String> {
    let n = w.objects;
    let objects: Vec<ConfigMap> = (0..n).map(|i| configmap(w, i)).collect::<Result<_, _>>()?;
    let names: Vec<String> = (0..n).map(name).collect();
    let patches: Vec<Value> = (0..n)
        .map(|i| expand(&w.patch, i))
        .collect::<Result<_, _>>()?;
    let applies: Vec<Value> = (0..n)
        .map(|i| expand(&w.apply, i))
        .collect::<Result<_, _>>()?;
    let selected = (0..n).filter(|i| i.is_multiple_of(100)).count();
    let apply = PatchParams::apply(&w.apply_manager).force();
    let list = ListParams::default().labels(&w.selector);
    let mut seconds = Vec::new();

    let start = Instant::now();
    for (cm, name) in objects.iter().zip(&names) {
        api.create(&PostParams::default(), cm)
            .await
            .map_err(|e| format!("create {name}: {e}"))?;
    }
    seconds.push(("create", start.elapsed()));
    let start = Instant::now();
    for name in &names {
        api.get(name)
            .await
            .map_err(|e| format!("get {name}: {e}"))?;
    }
    seconds.push(("get", start.elapsed()));
    let start = Instant::now();
    for (patch, name) in patches.iter().zip(&names) {
        api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map_err(|e| format!("merge patch {name}: {e}"))?;
    }
    seconds.push(("patch", start.elapsed()));
    let start = Instant::now();
    for (applied, name) in applies.iter().zip(&names) {
        api.patch(name, &apply, &Patch::Apply(applied))
            .await
            .map_err(|e| format!("apply {name}: {e}"))?;
    }
    seconds.push(("apply", start.elapsed()));
    let start = Instant::now();
    for _ in 0..w.list_rounds {
        let items = api
            .list(&list)
            .await
            .map_err(|e| format!("list: {e}"))?
            .items
            .len();
        if items != selected {
            return Err(format!(
                "list {}: {items} items, not {selected}",
                w.selector
            ));
        }
    }
    seconds.push(("list", start.elapsed()));

    // Both servers did the same writes: the last object has every label and every key.
    if let Some(last) = names.last() {
        let cm = api
            .get(last)
            .await
            .map_err(|e| format!("get {last}: {e}"))?;
        let data = cm.data.unwrap_or_default();
        let labels = cm.metadata.labels.unwrap_or_default().len();
        let wanted = w.object["metadata"]["labels"]
            .as_object()
            .map_or(0, |l| l.len());
        if !data.contains_key("round") || !data.contains_key("applied") || labels != wanted {
            return Err(format!(
                "{last} after the writes: {labels} labels, data {data:?}"
            ));
        }
    }
    let times: Vec<String> = seconds
        .iter()
        .map(|(w, d)| format!("{w}={:.6}", d.as_secs_f64()))
        .collect();
    println!(
        "objects={n} list_rounds={} {}",
        w.list_rounds,
        times.join(" ")
    );
    Ok(())
}

fn main() -> ExitCode {
    let result = parse_args().and_then(|args| {
        let w = load(&args)?;
        if args.mode == Mode::Bodies {
            return bodies(&w);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("tokio runtime: {e}"))?;
        runtime.block_on(async {
            let (client, _server) = client(args.log).await?;
            let api: Api<ConfigMap> = Api::namespaced(client, &w.namespace);
            match args.mode {
                Mode::Memory => memory(&w, &api).await,
                _ => speed(&w, &api).await,
            }
        })
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", env!("CARGO_CRATE_NAME"));
            ExitCode::FAILURE
        }
    }
}
