//! Runs a scenario's steps against a transport, normalises what came back, and compares it with
//! the recorded responses.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Value, json};

use super::fixture::{self, API, Action, Body, Filter, RequestSpec, Scenario, Server, Step};
use super::nest;
use super::normalize::Normalizer;
use super::transport::{HttpRequest, HttpResponse, Next, Opened, Stream, Transport};

/// What a run observed.
pub struct Outcome {
    /// Per step, the normalised response (`None` for steps not reached).
    pub observed: Vec<Option<Value>>,
    /// Readable differences from the recorded responses, one per step that differs.
    pub differences: Vec<String>,
    /// Why the run stopped early, if it did (the server's answer lacked a captured value, or
    /// a request could not be sent).
    pub stopped: Option<String>,
}

impl Outcome {
    pub fn differs(&self) -> bool {
        !self.differences.is_empty() || self.stopped.is_some()
    }

    pub fn report(&self, scenario: &Scenario) -> String {
        let mut out = format!(
            "{} ({}):\n  {}\n",
            scenario.id,
            scenario.path.display(),
            scenario.description.trim()
        );
        for d in &self.differences {
            out.push_str(d);
            out.push('\n');
        }
        if let Some(why) = &self.stopped {
            out.push_str(&format!("stopped: {why}\n"));
        }
        out
    }
}

/// The namespace each of the scenario's namespace variables stands for.
pub fn namespace_bindings(scenario: &Scenario) -> Vec<(String, String)> {
    let stem = scenario
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    scenario
        .namespaces
        .iter()
        .map(|var| {
            // A DNS label: at most 63 characters.
            let room = 63usize.saturating_sub("cf--".len() + var.len());
            let stem: String = stem.chars().take(room).collect();
            let stem = stem.trim_end_matches('-');
            (format!("cf-{stem}-{var}"), var.clone())
        })
        .collect()
}

/// How a run goes: comparing with the recorded responses (replay) or not (record). Waits
/// (`timeout`, `quiet`) are on Tokio's clock: replay pauses it, so a window in which no more
/// events may arrive ends as soon as the in-memory server has nothing left to do, at no cost in
/// wall time.
pub struct Mode {
    pub compare: bool,
}

/// Runs every step.
pub async fn run(scenario: &Scenario, transport: &Transport, mode: &Mode) -> Outcome {
    let bindings = namespace_bindings(scenario);
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    vars.insert("api".into(), API.into());
    for (value, var) in &bindings {
        vars.insert(var.clone(), value.clone());
    }
    let mut norm = Normalizer::new(&bindings, scenario.managed_fields);
    let mut outcome = Outcome {
        observed: vec![None; scenario.steps.len()],
        differences: Vec::new(),
        stopped: None,
    };
    if scenario.server == Server::KubeApiserver {
        for (namespace, _) in &bindings {
            if let Err(why) = create_namespace(transport, namespace).await {
                outcome.stopped = Some(format!("setup: {why}"));
                return outcome;
            }
        }
    }
    let mut streams: BTreeMap<String, Result<Stream, String>> = BTreeMap::new();

    for (i, step) in scenario.steps.iter().enumerate() {
        let label = format!("step {} {:?}", i + 1, step.name);
        let raw = match run_step(step, transport, &vars, &mut norm, &mut streams).await {
            Ok(raw) => raw,
            Err(why) => {
                outcome.stopped = Some(format!("{label}: {why}"));
                break;
            }
        };
        let mut actual = norm_response(&raw, &mut norm);
        nest::fold_long_strings(&mut actual);
        if mode.compare {
            match &step.response {
                None => outcome.differences.push(format!(
                    "{label}: no recorded response (record with `cargo xtask conformance --record`)"
                )),
                Some(expected) if *expected != actual => {
                    outcome
                        .differences
                        .push(format!("{label}: {}", diff(expected, &actual)));
                }
                Some(_) => {}
            }
        }
        outcome.observed[i] = Some(actual);
        for (var, path) in &step.capture {
            match capture(&raw, path) {
                Some(value) => {
                    vars.insert(var.clone(), value);
                }
                None => {
                    outcome.stopped = Some(format!(
                        "{label}: cannot capture `{var}`: no string or number at `{path}`"
                    ));
                    return outcome;
                }
            }
        }
    }
    outcome
}

/// Creates `namespace` (kube-apiserver refuses objects in a namespace that does not exist).
async fn create_namespace(transport: &Transport, namespace: &str) -> Result<(), String> {
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    let response = transport
        .send(&HttpRequest {
            method: "POST".into(),
            uri: "/api/v1/namespaces".into(),
            content_type: Some("application/json".into()),
            accept: None,
            headers: Vec::new(),
            body: body.to_string().into_bytes(),
        })
        .await?;
    match response.code {
        201 | 409 => Ok(()),
        code => Err(format!(
            "creating the namespace {namespace} answered {code}: {}",
            String::from_utf8_lossy(&response.body)
        )),
    }
}

/// A step's answer before normalisation: `{code, body}` for a request or a watch that failed,
/// `{code}` for an opened watch, `{events}` for events read.
async fn run_step(
    step: &Step,
    transport: &Transport,
    vars: &BTreeMap<String, String>,
    norm: &mut Normalizer,
    streams: &mut BTreeMap<String, Result<Stream, String>>,
) -> Result<Value, String> {
    match &step.action {
        Action::Request(spec) => {
            let req = build(spec, vars, false)?;
            let response = transport.send(&req).await?;
            let mut answer = answer(&response, step);
            note_generated(spec, vars, &answer, norm);
            if let Some(body) = answer.get_mut("body") {
                remember_generated_in(body, norm);
            }
            Ok(answer)
        }
        Action::Watch { stream, request } => {
            let req = build(request, vars, true)?;
            let (answer, opened) = match transport.watch(&req).await? {
                Opened::Stream(s) => (json!({"code": 200}), Ok(s)),
                Opened::Failed(response) => {
                    let code = response.code;
                    (
                        answer(&response, step),
                        Err(format!("the watch answered {code}")),
                    )
                }
            };
            streams.insert(stream.clone(), opened);
            Ok(answer)
        }
        Action::Events {
            stream,
            count,
            timeout,
            quiet,
            bookmarks,
        } => {
            let s = match streams.get_mut(stream) {
                None => return Err(format!("no watch named `{stream}` was opened before")),
                Some(Err(why)) => {
                    return Ok(
                        json!({"error": format!("the watch `{stream}` is not open: {why}")}),
                    );
                }
                Some(Ok(s)) => s,
            };
            let mut events = Vec::new();
            let deadline = Instant::now() + Duration::from_secs_f64(*timeout);
            let mut closed = false;
            while events.len() < *count {
                match s.next_line(deadline).await {
                    Next::Line(line) => push_event(&mut events, &line, *bookmarks, &step.sort),
                    Next::Timeout => break,
                    Next::Closed => {
                        closed = true;
                        break;
                    }
                }
            }
            if let Some(quiet) = quiet
                && events.len() == *count
                && !closed
            {
                let until = Instant::now() + Duration::from_secs_f64(*quiet);
                while let Next::Line(line) = s.next_line(until).await {
                    push_event(&mut events, &line, *bookmarks, &step.sort);
                }
            }
            Ok(json!({"events": events}))
        }
    }
}

/// Keeps an event unless it is a BOOKMARK nobody asked for: the real server sends those at
/// times of its own. The `k8s.io/initial-events-end` bookmark is part of the protocol: kept.
/// The lists at `sort` are sorted.
fn push_event(events: &mut Vec<Value>, line: &str, bookmarks: bool, sort: &[Vec<String>]) {
    let mut event: Value = nest::read(line.as_bytes()).unwrap_or_else(|_| json!({"line": line}));
    for path in sort {
        sort_list(&mut event, path);
    }
    let is_bookmark = event["type"] == "BOOKMARK";
    let initial_end =
        event["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true";
    if is_bookmark && !bookmarks && !initial_end {
        return;
    }
    events.push(event);
}

fn answer(response: &HttpResponse, step: &Step) -> Value {
    let mut out = json!({"code": response.code});
    if !response.body.is_empty() {
        let mut body = nest::read(&response.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&response.body).into()));
        if let Some(f) = &step.filter {
            apply_filter(&mut body, f);
        }
        for path in &step.sort {
            sort_list(&mut body, path);
        }
        out["body"] = body;
    }
    out
}

/// Sorts the list at `path` by each item's JSON text.
fn sort_list(body: &mut Value, path: &[String]) {
    let mut at = body;
    for key in path {
        match at.get_mut(key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Value::Array(items) = at {
        items.sort_by_cached_key(Value::to_string);
    }
}

fn apply_filter(body: &mut Value, f: &Filter) {
    let mut at = body;
    for key in &f.path {
        match at.get_mut(key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Value::Array(items) = at {
        items.retain(|item| item.get(&f.key).and_then(Value::as_str) == Some(f.value.as_str()));
    }
}

/// A name the server made from `generateName` is written `<generated:N>` on both sides.
fn note_generated(
    spec: &RequestSpec,
    vars: &BTreeMap<String, String>,
    answer: &Value,
    norm: &mut Normalizer,
) {
    let Some(Body::Json { value: body, .. }) = &spec.body else {
        return;
    };
    let Some(prefix) = body["metadata"]["generateName"].as_str() else {
        return;
    };
    let prefix = substitute(prefix, vars).unwrap_or_default();
    // The created object's name, or the name an error about it reports.
    for name in [
        &answer["body"]["metadata"]["name"],
        &answer["body"]["details"]["name"],
    ] {
        if let Some(name) = name.as_str()
            && name.len() > prefix.len()
            && name.starts_with(&prefix)
        {
            norm.note_generated(name);
        }
    }
}

/// Generated names also come back in lists and watch events; those carry `generateName`.
fn remember_generated_in(body: &Value, norm: &mut Normalizer) {
    let mut check = |obj: &Value| {
        let meta = &obj["metadata"];
        if let (Some(prefix), Some(name)) = (meta["generateName"].as_str(), meta["name"].as_str())
            && name.len() > prefix.len()
            && name.starts_with(prefix)
        {
            norm.note_generated(name);
        }
    };
    check(body);
    if let Some(items) = body["items"].as_array() {
        items.iter().for_each(check);
    }
}

fn norm_response(raw: &Value, norm: &mut Normalizer) -> Value {
    if let Some(events) = raw["events"].as_array() {
        for e in events {
            remember_generated_in(&e["object"], norm);
        }
    }
    norm.value(raw)
}

/// A dotted path into the answer's body (or into the events: `events.0.object...`).
fn capture(raw: &Value, path: &str) -> Option<String> {
    let mut at = raw.get("body").unwrap_or(raw);
    if path.starts_with("events.") {
        at = raw;
    }
    for key in path.split('.') {
        at = match at {
            Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
            _ => at.get(key)?,
        };
    }
    match at {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `${var}` references replaced by their values.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    substitute_with(text, vars, |out, value| out.push_str(value))
}

/// [`substitute`] in a body's JSON text ([`Body::Json`]'s `text`): each value goes in as
/// `serde_json` escapes a string's characters.
fn substitute_in_json(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    substitute_with(text, vars, |out, value| {
        // A test with no early exit, a chunk at a time: paddings are megabytes long.
        let escaped = |chunk: &[u8]| {
            chunk
                .iter()
                .fold(false, |any, &b| any | fixture::json_escapes(b))
        };
        if value.as_bytes().chunks(64).any(escaped) {
            let quoted = Value::String(value.to_owned()).to_string();
            out.push_str(&quoted[1..quoted.len() - 1]);
        } else {
            out.push_str(value);
        }
    })
}

fn substitute_with(
    text: &str,
    vars: &BTreeMap<String, String>,
    push: impl Fn(&mut String, &str),
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unclosed `${{` in {text:?}"))?;
        let name = &after[..end];
        if let Some(pad) = fixture::padding(name) {
            push(&mut out, &pad?);
        } else if let Some(nested) = nest::nesting(name).or_else(|| nest::schema_nesting(name)) {
            push(&mut out, &nested?);
        } else {
            let value = vars.get(name).ok_or_else(|| {
                format!(
                    "`${{{name}}}` is not defined here (namespaces, `api` and earlier captures are)"
                )
            })?;
            push(&mut out, value);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn substitute_value(v: &Value, vars: &BTreeMap<String, String>) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => Value::String(substitute(s, vars)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| substitute_value(i, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((substitute(k, vars)?, substitute_value(v, vars)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

fn build(
    spec: &RequestSpec,
    vars: &BTreeMap<String, String>,
    watch: bool,
) -> Result<HttpRequest, String> {
    let mut uri = substitute(&spec.path, vars)?;
    let mut pairs = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    if watch && !spec.query.iter().any(|(k, _)| k == "watch") {
        pairs.append_pair("watch", "true");
        any = true;
    }
    for (k, v) in &spec.query {
        pairs.append_pair(k, &substitute(v, vars)?);
        any = true;
    }
    if any {
        uri.push(if uri.contains('?') { '&' } else { '?' });
        uri.push_str(&pairs.finish());
    }
    let (body, default_type) = match &spec.body {
        None => (Vec::new(), None),
        Some(Body::Raw(text)) => (
            substitute(text, vars)?.into_bytes(),
            Some("application/json"),
        ),
        Some(Body::Json {
            text: Some(text), ..
        }) => (
            substitute_in_json(text, vars)?.into_bytes(),
            Some("application/json"),
        ),
        Some(Body::Json { value: v, .. }) => (
            serde_json::to_vec(&substitute_value(v, vars)?).map_err(|e| e.to_string())?,
            Some("application/json"),
        ),
    };
    Ok(HttpRequest {
        method: spec.method.clone(),
        uri,
        content_type: spec
            .content_type
            .clone()
            .or(default_type.map(str::to_owned)),
        accept: spec.accept.clone(),
        headers: spec
            .headers
            .iter()
            .map(|(name, value)| Ok((name.clone(), substitute(value, vars)?)))
            .collect::<Result<_, String>>()?,
        body,
    })
}

/// A unified diff of the two values as pretty JSON.
fn diff(expected: &Value, actual: &Value) -> String {
    let pretty =
        |v: &Value| serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()) + "\n";
    let (e, a) = (pretty(expected), pretty(actual));
    let text = similar::TextDiff::from_lines(&e, &a);
    format!(
        "differs (-recorded from the real server, +in-memory server):\n{}",
        text.unified_diff()
            .context_radius(4)
            .header("recorded", "in-memory")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body `build` writes from the text written once equals the one it writes by
    /// substituting in the value, escapes and paddings included.
    #[test]
    fn a_json_body_written_once_is_the_body_written_each_time() {
        let vars = BTreeMap::from([
            ("ns".to_string(), "cf-a-ns".to_string()),
            ("odd".to_string(), "a\"b\\c\nd\u{1}é".to_string()),
        ]);
        let bodies = [
            json!({"metadata": {"name": "x-${ns}", "namespace": "${ns}"}, "data": {"k": "${odd}"}}),
            json!({"data": {"big": "${pad:100}", "list": ["${ns}", 1, null, {"a": "${odd}${ns}"}]}}),
            json!({"data": {"${ns}": "keys with variables are written each time"}}),
        ];
        for value in bodies {
            let written = |text: Option<String>| {
                let spec = RequestSpec {
                    method: "POST".into(),
                    path: "/${ns}".into(),
                    query: Vec::new(),
                    content_type: None,
                    accept: None,
                    headers: Vec::new(),
                    body: Some(Body::Json {
                        value: value.clone(),
                        text,
                    }),
                };
                build(&spec, &vars, false).map(|r| r.body)
            };
            let once = fixture::json_text(&value);
            assert_eq!(
                once.is_some(),
                !value["data"]
                    .as_object()
                    .is_some_and(|d| d.contains_key("${ns}"))
            );
            assert_eq!(written(once), written(None), "{value}");
        }
    }
}
