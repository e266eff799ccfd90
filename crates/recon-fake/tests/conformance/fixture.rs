//! Scenario files: reading them (errors name the file, the step and the field) and writing the
//! recorded `response` of each step back without touching anything written by hand.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// Where the scenario files live, relative to this crate.
pub const ROOT: &str = "../../fixtures/conformance";

/// The API group every scenario's CRDs belong to; `${api}` is its `v1` prefix.
pub const API: &str = "/apis/conformance.example.com/v1";

/// A scenario file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioFile {
    /// The rule the scenario checks, in a sentence or two.
    pub description: String,
    /// CRD files of `crds/`, without `.yaml`; installed before the first step (not compared).
    #[serde(default)]
    pub crds: Vec<String>,
    /// Variables bound to a fresh namespace each; `ns` when not given.
    #[serde(default = "default_namespaces")]
    pub namespaces: Vec<String>,
    /// Compare `metadata.managedFields` too. Off by default: every write records them and a
    /// scenario about something else should not fail on them.
    #[serde(default)]
    pub managed_fields: bool,
    /// The real server the scenario is recorded from.
    #[serde(default)]
    pub server: Server,
    /// Opt-in controllers of kube-controller-manager the scenario needs (`root-ca-publisher`):
    /// the real server is recorded with kube-controller-manager running
    /// (`RECON_KUBE_CONTROLLERS=1`), the in-memory one is built with them.
    #[serde(default)]
    pub controllers: Vec<Controller>,
    pub steps: Vec<StepFile>,
}

/// An opt-in controller a scenario runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Controller {
    /// `ApiServerBuilder::publish_root_ca`.
    RootCaPublisher,
    /// The ClusterRole aggregation, which the in-memory server always runs.
    ClusterRoleAggregation,
}

/// Which real server a scenario is recorded from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Server {
    /// apiextensions-apiserver (`xtask/real-apiserver.sh`): custom resources only, namespaces
    /// not checked.
    #[default]
    Apiextensions,
    /// kube-apiserver without controllers (`xtask/kube-apiserver.sh`): every built-in kind.
    /// The scenario's namespaces are created before its first step, as setup (not compared).
    KubeApiserver,
}

impl Server {
    /// The value of `RECON_CONFORMANCE_SERVER` naming this server.
    pub fn name(self) -> &'static str {
        match self {
            Server::Apiextensions => "apiextensions",
            Server::KubeApiserver => "kube-apiserver",
        }
    }
}

fn default_namespaces() -> Vec<String> {
    vec!["ns".into()]
}

/// One step as written: a request, a watch, or the reading of events from a watch.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepFile {
    pub name: String,
    pub method: Option<String>,
    pub watch: Option<String>,
    pub events: Option<String>,
    pub path: Option<String>,
    #[serde(default)]
    pub query: BTreeMap<String, Value>,
    pub content_type: Option<String>,
    /// The `Accept` header (the response form: `as=PartialObjectMetadata`, ...).
    pub accept: Option<String>,
    /// Whom the request impersonates (`Impersonate-*` headers).
    #[serde(default)]
    pub impersonate: Option<Impersonate>,
    pub body: Option<Value>,
    pub raw_body: Option<String>,
    pub count: Option<usize>,
    pub timeout: Option<f64>,
    pub quiet: Option<f64>,
    #[serde(default)]
    pub bookmarks: bool,
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
    pub filter: Option<String>,
    /// Lists of the answer (dotted paths; of each event, for an `events` step) compared sorted:
    /// the real server's order for them follows an informer's, or a clock's, which is not
    /// defined.
    #[serde(default)]
    pub sort: Vec<String>,
    pub response: Option<Value>,
}

/// The identity a step's request asks to act as.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Impersonate {
    pub user: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    pub uid: Option<String>,
    #[serde(default)]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Impersonate {
    /// The headers, in a fixed order.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        if let Some(user) = &self.user {
            headers.push(("Impersonate-User".to_owned(), user.clone()));
        }
        for group in &self.groups {
            headers.push(("Impersonate-Group".to_owned(), group.clone()));
        }
        if let Some(uid) = &self.uid {
            headers.push(("Impersonate-Uid".to_owned(), uid.clone()));
        }
        for (key, values) in &self.extra {
            for value in values {
                headers.push((format!("Impersonate-Extra-{key}"), value.clone()));
            }
        }
        headers
    }
}

/// A request to send; strings still hold `${var}` references.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub content_type: Option<String>,
    pub accept: Option<String>,
    /// Extra headers (impersonation).
    pub headers: Vec<(String, String)>,
    pub body: Option<Body>,
}

#[derive(Debug, Clone)]
pub enum Body {
    /// A JSON body, and the text `serde_json` writes for it when its variables can be put
    /// straight into that text ([`json_text`]): written once, when the file is read.
    Json {
        value: Value,
        text: Option<String>,
    },
    Raw(String),
}

/// The text `serde_json` writes for `v`, in which substituting the variables (their values
/// escaped as JSON strings) writes the same bytes as substituting them in `v` and writing that:
/// `None` when a key holds a variable (its value could change the keys' order) or a reference
/// holds a byte JSON escapes.
pub fn json_text(v: &Value) -> Option<String> {
    fn plain(v: &Value) -> bool {
        match v {
            Value::String(s) => !s.contains("${") || !s.bytes().any(json_escapes),
            Value::Array(items) => items.iter().all(plain),
            Value::Object(map) => map.iter().all(|(k, v)| !k.contains("${") && plain(v)),
            _ => true,
        }
    }
    plain(v).then(|| v.to_string())
}

/// Whether JSON escapes the byte in a string: a quote, a backslash or a control character.
/// `|`, not `||`: no branch, so that a run of bytes is tested in vector instructions.
pub fn json_escapes(b: u8) -> bool {
    (b == b'"') | (b == b'\\') | (b < 0x20)
}

/// What a step does, checked when the file is read.
#[derive(Debug, Clone)]
pub enum Action {
    Request(RequestSpec),
    Watch {
        stream: String,
        request: RequestSpec,
    },
    Events {
        stream: String,
        count: usize,
        /// How long to wait for `count` events.
        timeout: f64,
        /// After `count` events, how long to keep listening for events that should not come.
        quiet: Option<f64>,
        bookmarks: bool,
    },
}

/// Keeps only the items of the list at `path` whose `key` equals `value` (for discovery
/// documents, which also list groups that are not this suite's).
#[derive(Debug, Clone)]
pub struct Filter {
    pub path: Vec<String>,
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone)]
pub struct Step {
    pub name: String,
    pub action: Action,
    pub capture: BTreeMap<String, String>,
    pub filter: Option<Filter>,
    /// Paths of lists sorted before comparing ([`StepFile::sort`]).
    pub sort: Vec<Vec<String>>,
    pub response: Option<Value>,
}

/// A scenario ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub path: PathBuf,
    /// `area/name`: the key of `KNOWN_GAPS` and the name in reports.
    pub id: String,
    pub description: String,
    pub crds: Vec<(String, Value)>,
    pub namespaces: Vec<String>,
    pub managed_fields: bool,
    pub server: Server,
    pub controllers: Vec<Controller>,
    pub steps: Vec<Step>,
}

/// A scenario file that cannot be used.
#[derive(Debug)]
pub struct FixtureError(pub String);

impl std::fmt::Display for FixtureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn parse<T: for<'de> Deserialize<'de>>(path: &Path, text: &str) -> Result<T, FixtureError> {
    serde_saphyr::from_str(text).map_err(|e| {
        let message = e
            .to_string()
            .replace("<input>", &path.display().to_string());
        FixtureError(format!("{}: {message}", path.display()))
    })
}

/// `area/name` of a scenario file under [`ROOT`].
pub fn scenario_id(path: &Path) -> String {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match path.parent().and_then(Path::file_name) {
        Some(area) => format!("{}/{stem}", area.to_string_lossy()),
        None => stem.into_owned(),
    }
}

pub fn load(path: &Path) -> Result<Scenario, FixtureError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| FixtureError(format!("{}: cannot read: {e}", path.display())))?;
    let file: ScenarioFile = parse(path, &text)?;
    let at = |message: String| FixtureError(format!("{}: {message}", path.display()));

    let crd_dir = Path::new(ROOT).join("crds");
    let mut crds = Vec::new();
    for name in &file.crds {
        let crd_path = crd_dir.join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&crd_path)
            .map_err(|e| at(format!("crds: cannot read {}: {e}", crd_path.display())))?;
        crds.push((name.clone(), parse::<Value>(&crd_path, &text)?));
    }
    for (i, ns) in file.namespaces.iter().enumerate() {
        // The variable's name ends the namespace's name: a DNS label.
        let usable = !ns.is_empty()
            && ns.len() <= 16
            && ns != "api"
            && ns
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !usable {
            return Err(at(format!(
                "namespaces[{i}]: {ns:?} is not usable: up to 16 lowercase letters and digits"
            )));
        }
    }

    let mut steps: Vec<Step> = Vec::new();
    // Variables and watches a step may use: those defined before it.
    let mut defined: Vec<String> = file.namespaces.clone();
    defined.push("api".into());
    let mut watches: Vec<String> = Vec::new();
    for (i, written) in file.steps.iter().enumerate() {
        let step = check_step(written)
            .and_then(|step| check_names(&step, &defined, &watches).map(|()| step))
            .map_err(|(field, message)| {
                at(format!(
                    "steps[{i}] ({:?}): field `{field}`: {message}",
                    written.name
                ))
            })?;
        defined.extend(step.capture.keys().cloned());
        if let Action::Watch { stream, .. } = &step.action {
            watches.push(stream.clone());
        }
        if let Some(first) = steps.iter().position(|s| s.name == step.name) {
            return Err(at(format!(
                "steps[{i}]: field `name`: {:?} is already the name of steps[{first}]",
                step.name
            )));
        }
        steps.push(step);
    }
    Ok(Scenario {
        path: path.to_owned(),
        id: scenario_id(path),
        description: file.description,
        crds,
        namespaces: file.namespaces,
        managed_fields: file.managed_fields,
        controllers: file.controllers.clone(),
        server: file.server,
        steps,
    })
}

fn is_variable_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

type FieldError = (&'static str, String);

fn check_step(s: &StepFile) -> Result<Step, FieldError> {
    if s.name.trim().is_empty() {
        return Err(("name", "must not be empty".into()));
    }
    let kinds = [s.method.is_some(), s.watch.is_some(), s.events.is_some()];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err((
            "method",
            "a step has exactly one of `method` (a request), `watch` or `events`".into(),
        ));
    }
    for key in s.capture.keys() {
        if !is_variable_name(key) {
            return Err(("capture", format!("{key:?} is not a usable variable name")));
        }
    }
    let filter = s.filter.as_deref().map(parse_filter).transpose()?;
    let action = if let Some(stream) = &s.events {
        let request_fields = [
            ("path", s.path.is_some()),
            ("query", !s.query.is_empty()),
            ("contentType", s.content_type.is_some()),
            ("accept", s.accept.is_some()),
            ("impersonate", s.impersonate.is_some()),
            ("body", s.body.is_some()),
            ("rawBody", s.raw_body.is_some()),
            ("filter", s.filter.is_some()),
        ];
        if let Some((field, _)) = request_fields.iter().find(|(_, set)| *set) {
            return Err((field, "an `events` step sends no request".into()));
        }
        let count = s
            .count
            .ok_or(("count", "an `events` step needs it".to_string()))?;
        let timeout = s.timeout.unwrap_or(5.0);
        if !(timeout > 0.0 && timeout <= 60.0) {
            return Err(("timeout", "seconds, more than 0 and at most 60".into()));
        }
        if let Some(quiet) = s.quiet
            && !(quiet > 0.0 && quiet <= 10.0)
        {
            return Err(("quiet", "seconds, more than 0 and at most 10".into()));
        }
        Action::Events {
            stream: stream.clone(),
            count,
            timeout,
            quiet: s.quiet,
            bookmarks: s.bookmarks,
        }
    } else {
        for (field, set) in [
            ("count", s.count.is_some()),
            ("timeout", s.timeout.is_some()),
            ("quiet", s.quiet.is_some()),
            ("bookmarks", s.bookmarks),
        ] {
            if set {
                return Err((field, "only an `events` step reads events".into()));
            }
        }
        let path = s
            .path
            .clone()
            .ok_or(("path", "a request needs it".to_string()))?;
        if !path.starts_with('/') && !path.starts_with("${") {
            return Err((
                "path",
                "starts with `/` (or a variable such as `${api}`)".into(),
            ));
        }
        let body = match (&s.body, &s.raw_body) {
            (Some(_), Some(_)) => {
                return Err(("rawBody", "give `body` or `rawBody`, not both".into()));
            }
            (Some(v), None) => Some(Body::Json {
                value: v.clone(),
                text: json_text(v),
            }),
            (None, Some(raw)) => Some(Body::Raw(raw.clone())),
            (None, None) => None,
        };
        let mut query = Vec::new();
        for (key, value) in &s.query {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(("query", format!("`{key}`: a string, number or boolean"))),
            };
            query.push((key.clone(), value));
        }
        let method = s.method.clone().unwrap_or_else(|| "GET".into());
        if s.watch.is_some() && method != "GET" {
            return Err(("method", "a watch is a GET".into()));
        }
        let request = RequestSpec {
            method: method.to_ascii_uppercase(),
            path,
            query,
            content_type: s.content_type.clone(),
            accept: s.accept.clone(),
            headers: s
                .impersonate
                .as_ref()
                .map(Impersonate::headers)
                .unwrap_or_default(),
            body,
        };
        match &s.watch {
            Some(stream) => Action::Watch {
                stream: stream.clone(),
                request,
            },
            None => Action::Request(request),
        }
    };
    Ok(Step {
        name: s.name.clone(),
        action,
        capture: s.capture.clone(),
        filter,
        sort: s
            .sort
            .iter()
            .map(|path| path.split('.').map(str::to_owned).collect())
            .collect(),
        response: s.response.clone(),
    })
}

/// The largest `${pad:N}`: what a size-limit scenario needs, with room to spare.
const MAX_PADDING: usize = 8 << 20;

/// `${pad:N}`: `N` bytes of `x`, for bodies too large to write out in a scenario file. `None`
/// for a name of another form, `Err` for a size that is not a number or too large.
pub fn padding(name: &str) -> Option<Result<String, String>> {
    let size = name.strip_prefix("pad:")?;
    Some(match size.parse::<usize>() {
        Ok(n) if n <= MAX_PADDING => Ok("x".repeat(n)),
        _ => Err(format!(
            "`${{{name}}}`: a padding is `${{pad:N}}` with N a number of bytes up to {MAX_PADDING}"
        )),
    })
}

/// The `${name}` references in `text`.
fn references(text: &str) -> Result<Vec<&str>, String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unclosed `${{` in {text:?}"))?;
        found.push(&after[..end]);
        rest = &after[end + 1..];
    }
    Ok(found)
}

fn strings_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings_in(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings_in(v, out);
            }
        }
        _ => {}
    }
}

/// Every `${var}` a step uses is defined by then, and every stream it reads was opened.
fn check_names(step: &Step, defined: &[String], watches: &[String]) -> Result<(), FieldError> {
    let request = match &step.action {
        Action::Request(r) | Action::Watch { request: r, .. } => r,
        Action::Events { stream, .. } => {
            if watches.contains(stream) {
                return Ok(());
            }
            return Err((
                "events",
                format!("no earlier `watch` step opens `{stream}`"),
            ));
        }
    };
    let mut texts: Vec<(&'static str, String)> = vec![("path", request.path.clone())];
    texts.extend(request.query.iter().map(|(_, v)| ("query", v.clone())));
    match &request.body {
        Some(Body::Raw(raw)) => texts.push(("rawBody", raw.clone())),
        Some(Body::Json { value: v, .. }) => {
            let mut strings = Vec::new();
            strings_in(v, &mut strings);
            texts.extend(strings.into_iter().map(|s| ("body", s)));
        }
        None => {}
    }
    for (field, text) in &texts {
        for name in references(text).map_err(|e| (*field, e))? {
            if let Some(pad) = padding(name) {
                pad.map_err(|e| (*field, e))?;
                continue;
            }
            if let Some(nested) =
                crate::nest::nesting(name).or_else(|| crate::nest::schema_nesting(name))
            {
                nested.map_err(|e| (*field, e))?;
                continue;
            }
            if !defined.iter().any(|d| d == name) {
                return Err((
                    *field,
                    format!(
                        "`${{{name}}}` is not defined by then (namespaces, `api` and the \
                         captures of earlier steps are)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `a.b[key=value]`: keep the items of the list at `a.b` whose `key` is `value`.
fn parse_filter(text: &str) -> Result<Filter, FieldError> {
    let bad = || {
        (
            "filter",
            format!("{text:?}: expected `path.to.list[key=value]`"),
        )
    };
    let (path, rest) = text.split_once('[').ok_or_else(bad)?;
    let inner = rest.strip_suffix(']').ok_or_else(bad)?;
    let (key, value) = inner.split_once('=').ok_or_else(bad)?;
    if path.is_empty() || key.is_empty() {
        return Err(bad());
    }
    Ok(Filter {
        path: path.split('.').map(str::to_owned).collect(),
        key: key.into(),
        value: value.into(),
    })
}

/// Every scenario file under [`ROOT`] (not the CRDs), sorted.
pub fn all_scenario_files() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(areas) = std::fs::read_dir(ROOT) else {
        return found;
    };
    for area in areas.flatten() {
        let dir = area.path();
        if !dir.is_dir() || dir.file_name().is_some_and(|n| n == "crds") {
            continue;
        }
        for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "yaml") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

// ---- writing recorded responses back ----------------------------------------------------------

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// The line ranges `[start, end)` of the items of the top-level `steps:` list, and the
/// indentation of their keys.
fn step_items(lines: &[&str]) -> Result<Vec<(usize, usize, usize)>, String> {
    let start = lines
        .iter()
        .position(|l| l.trim_end() == "steps:")
        .ok_or("no top-level `steps:` line (a block list of steps is needed to write responses)")?;
    let first = lines[start + 1..]
        .iter()
        .position(|l| !is_blank_or_comment(l))
        .map(|p| p + start + 1)
        .ok_or("`steps:` is empty")?;
    let item_indent = indent_of(lines[first]);
    if !lines[first].trim_start().starts_with("- ") {
        return Err("`steps:` must be a block list (`- name: ...`)".into());
    }
    let mut items: Vec<(usize, usize, usize)> = Vec::new();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(first) {
        // Comments never end the list: one may head the next step.
        if is_blank_or_comment(line) {
            continue;
        }
        let indent = indent_of(line);
        let is_item = line.trim_start().starts_with("- ");
        if indent < item_indent || (indent == item_indent && !is_item) {
            end = i; // a key after the list
            break;
        }
        if indent == item_indent {
            items.push((i, lines.len(), item_indent + 2));
        }
    }
    for k in 0..items.len() {
        items[k].1 = items.get(k + 1).map_or(end, |next| next.0);
    }
    Ok(items)
}

/// A response written with `code` first and the body or events after it.
struct Ordered<'a>(&'a Value);

impl serde::Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(map) = self.0 else {
            return self.0.serialize(s);
        };
        const FIRST: [&str; 4] = ["code", "body", "events", "error"];
        let mut out = s.serialize_map(Some(map.len()))?;
        for key in FIRST {
            if let Some(v) = map.get(key) {
                out.serialize_entry(key, v)?;
            }
        }
        for (k, v) in map.iter().filter(|(k, _)| !FIRST.contains(&k.as_str())) {
            out.serialize_entry(k, v)?;
        }
        out.end()
    }
}

/// Writes `responses[i]` as the `response:` of step `i` (replacing the one written before, if
/// any), keeping every other line of the file as it is.
pub fn write_responses(path: &Path, responses: &[Value]) -> Result<(), FixtureError> {
    let at = |message: String| FixtureError(format!("{}: {message}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| at(format!("cannot read: {e}")))?;
    let lines: Vec<&str> = text.lines().collect();
    let items = step_items(&lines).map_err(at)?;
    if items.len() != responses.len() {
        return Err(at(format!(
            "found {} step items in the text but {} steps were run",
            items.len(),
            responses.len()
        )));
    }
    let mut out: Vec<String> = Vec::new();
    let mut copied = 0;
    for ((start, end, key_indent), response) in items.iter().zip(responses) {
        let (start, end, key_indent) = (*start, *end, *key_indent);
        // The item's own lines end at its last line indented deeper than the list's items.
        let mut last = end;
        while last > start + 1
            && (lines[last - 1].trim().is_empty()
                || (is_blank_or_comment(lines[last - 1])
                    && indent_of(lines[last - 1]) < key_indent))
        {
            last -= 1;
        }
        let key = format!("{}response:", " ".repeat(key_indent));
        let found = (start + 1..last).find(|&i| lines[i].starts_with(&key));
        let (cut_from, cut_to) = match found {
            Some(r) => {
                let mut e = r + 1;
                while e < last && (lines[e].trim().is_empty() || indent_of(lines[e]) > key_indent) {
                    e += 1;
                }
                while e > r + 1 && lines[e - 1].trim().is_empty() {
                    e -= 1;
                }
                (r, e)
            }
            None => (last, last),
        };
        out.extend(lines[copied..cut_from].iter().map(|l| l.to_string()));
        out.push(key);
        let yaml = serde_saphyr::to_string(&Ordered(response))
            .map_err(|e| at(format!("cannot write a response: {e}")))?;
        let pad = " ".repeat(key_indent + 2);
        for line in yaml.lines() {
            out.push(if line.is_empty() {
                String::new()
            } else {
                format!("{pad}{line}")
            });
        }
        copied = cut_to;
    }
    out.extend(lines[copied..].iter().map(|l| l.to_string()));
    let mut new_text = String::new();
    for line in out {
        let _ = writeln!(new_text, "{line}");
    }
    // What was written must read back as the same responses.
    let reread: ScenarioFile = parse(path, &new_text)?;
    for (i, (step, expected)) in reread.steps.iter().zip(responses).enumerate() {
        if step.response.as_ref() != Some(expected) {
            return Err(at(format!(
                "steps[{i}] ({:?}): the rewritten response does not read back as written",
                step.name
            )));
        }
    }
    std::fs::write(path, new_text).map_err(|e| at(format!("cannot write: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A file in a directory of this process and test (`name` is unique among the tests).
    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("recon-conformance-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }

    fn error_of(name: &str, text: &str) -> String {
        let path = temp_file(name, text);
        let result = load(&path);
        remove_dir(&path);
        match result {
            Ok(_) => panic!("{name} loaded"),
            Err(e) => e.to_string(),
        }
    }

    fn remove_dir(path: &Path) {
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn errors_name_the_file_the_step_and_the_field() {
        let unknown = error_of(
            "unknown.yaml",
            "description: d\nsteps:\n- name: a\n  method: GET\n  path: /x\n  bodee: {}\n",
        );
        assert!(
            unknown.contains("unknown.yaml") && unknown.contains("bodee"),
            "{unknown}"
        );
        assert!(unknown.contains("line 6"), "{unknown}");

        let events = error_of(
            "events.yaml",
            "description: d\nsteps:\n- name: read\n  events: w\n  path: /x\n",
        );
        assert!(
            events.contains("events.yaml") && events.contains("steps[0] (\"read\"): field `path`"),
            "{events}"
        );

        let twice = error_of(
            "twice.yaml",
            "description: d\nsteps:\n\
             - {name: a, method: GET, path: /x}\n\
             - {name: a, method: GET, path: /y}\n",
        );
        assert!(twice.contains("steps[1]: field `name`"), "{twice}");

        let undefined = error_of(
            "undefined.yaml",
            "description: d\nsteps:\n- {name: a, method: GET, path: \"${api}/x/${rv}\"}\n",
        );
        assert!(
            undefined.contains("steps[0] (\"a\"): field `path`: `${rv}`"),
            "{undefined}"
        );

        let stream = error_of(
            "stream.yaml",
            "description: d\nsteps:\n- {name: a, events: w, count: 1}\n",
        );
        assert!(
            stream.contains("no earlier `watch` step opens `w`"),
            "{stream}"
        );

        let crd = error_of(
            "crd.yaml",
            "description: d\ncrds: [nothing-here]\nsteps:\n- {name: a, method: GET, path: /x}\n",
        );
        assert!(crd.contains("crds: cannot read"), "{crd}");
    }

    #[test]
    fn responses_are_written_without_touching_the_rest() {
        let text = "# heading comment
description: d
steps:
- name: a
  method: GET
  path: /x
  # a comment in the step
  query: {limit: 1}
  response:
    code: 500

# about b
- name: b
  method: GET
  path: /y
";
        let path = temp_file("rewrite.yaml", text);
        let responses = [
            json!({"code": 200, "body": {"kind": "List", "items": []}}),
            json!({"code": 404, "body": "404 page not found\n"}),
        ];
        write_responses(&path, &responses).unwrap_or_else(|e| panic!("{e}"));
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        for kept in [
            "# heading comment",
            "  # a comment in the step",
            "\n# about b\n- name: b",
        ] {
            assert!(written.contains(kept), "{kept:?} lost:\n{written}");
        }
        assert!(!written.contains("code: 500"), "{written}");
        let loaded = load(&path).unwrap_or_else(|e| panic!("{e}"));
        let read: Vec<_> = loaded.steps.iter().map(|s| s.response.clone()).collect();
        assert_eq!(read, responses.clone().map(Some));
        // Writing the same responses again changes nothing.
        write_responses(&path, &responses).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), written);
        remove_dir(&path);
    }
}
