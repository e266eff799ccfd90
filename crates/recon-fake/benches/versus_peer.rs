//! recon's side of `cargo xtask bench --peer` (issue 24): one run of one workload shape on the
//! in-memory server, for the xtask to interleave with kube-fake-client's runs and compare.
//!
//! `bench/peer/src/main.rs` is the same program on kube-fake-client: the two differ only in how
//! they make the client (the function `client`; the peer has no request log to turn off).
//! Everything else — reading `bench/workload.json`, expanding its templates, the workloads and
//! what they print — is identical, so that both measure the same thing: `cargo xtask bench
//! --peer` checks that the two files agree below their marked line, and that both send
//! byte-identical bodies, before it measures.
//!
//! ```text
//! versus_peer --workload bench/workload.json --shape large --mode speed|memory|bodies
//!             [--objects N] [--log on|off]
//! ```
//!
//! - `speed`: creates the objects, gets each by name, merge-patches each, applies each
//!   (server-side, forced) and lists with the label selector `list_rounds` times, sequential
//!   `.await`s on a current-thread runtime; prints the seconds each took as
//!   `objects=N list_rounds=R create=S get=S patch=S apply=S list=S`. Every body is built
//!   before the clock starts.
//! - `memory`: creates the objects only, each built just before it is sent (so the workload's
//!   own objects do not count), and prints the process's peak resident set as
//!   `objects=N peak_rss=BYTES`.
//! - `bodies`: prints every create, patch and apply body, one a line, for the check.
//!
//! `--log off` turns the request log off; on (the default) is `ApiServer::new()`.
//!
//! `RECON_BENCH_ANSWERS=record:FILE` writes, at the end, every answer the server gave (status
//! and body, in order) to FILE; `RECON_BENCH_ANSWERS=replay:FILE` then runs the same workload
//! with no server at all: the client is fed those answers by a service that does nothing else.
//! That run measures what `kube::Api` itself costs (building, sending and decoding), the
//! floor of any in-memory backend: `cargo xtask bench --peer` prints it as its last column.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use recon_fake::ApiServer;
use serde_json::Value;

/// The client under test, and what must live as long as it. Only this function (and what it
/// calls) differs from the peer's program.
async fn client(log: bool) -> Result<(kube::Client, Keep), String> {
    let answers = std::env::var("RECON_BENCH_ANSWERS").unwrap_or_default();
    if let Some(file) = answers.strip_prefix("replay:") {
        return Ok((replaying(file)?, Keep::Nothing));
    }
    let record = answers.strip_prefix("record:").map(PathBuf::from);
    let server = if log || record.is_some() {
        ApiServer::new()
    } else {
        ApiServer::builder().record_requests(false).build()
    };
    Ok((server.client(), Keep::Server { server, record }))
}

/// What the client needs kept alive.
enum Keep {
    Server {
        server: ApiServer,
        /// Where to write the server's answers when the run ends.
        record: Option<PathBuf>,
    },
    Nothing,
}

impl Drop for Keep {
    fn drop(&mut self) {
        let Keep::Server {
            server,
            record: Some(file),
        } = self
        else {
            return;
        };
        let mut out = Vec::new();
        for request in server.requests() {
            out.extend_from_slice(&request.status.to_le_bytes());
            out.extend_from_slice(&(request.response.len() as u64).to_le_bytes());
            out.extend_from_slice(&request.response);
        }
        if let Err(e) = std::fs::write(&*file, out) {
            eprintln!("writing {}: {e}", file.display());
        }
    }
}

/// A client answered, in order, with the answers a recorded run wrote to `file`.
fn replaying(file: &str) -> Result<kube::Client, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("reading {file}: {e}"))?;
    let mut answers = VecDeque::new();
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let (status, after) = rest.split_at_checked(2).ok_or("a truncated answer")?;
        let (len, after) = after.split_at_checked(8).ok_or("a truncated answer")?;
        let status = u16::from_le_bytes([status[0], status[1]]);
        let len = u64::from_le_bytes(len.try_into().map_err(|_| "a truncated answer")?);
        let (body, after) = after
            .split_at_checked(usize::try_from(len).map_err(|e| e.to_string())?)
            .ok_or("a truncated answer")?;
        answers.push_back((status, Bytes::copy_from_slice(body)));
        rest = after;
    }
    let answers = Arc::new(Mutex::new(answers));
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let answers = answers.clone();
        async move {
            // Read the request as a server would; answer with the next recorded answer.
            let _ = request.into_body().collect_bytes().await;
            let next = answers.lock().ok().and_then(|mut a| a.pop_front());
            let (status, body) = next.unwrap_or((500, Bytes::from_static(b"no answer left")));
            let mut response = http::Response::new(Full::new(body));
            *response.status_mut() = http::StatusCode::from_u16(status)
                .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            Ok::<_, Infallible>(response)
        }
    });
    Ok(kube::Client::new(service, "default"))
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
