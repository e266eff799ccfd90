//! How raw requests reach a server: the in-memory one through `kube::Client::send`, or a real
//! one through `curl` (no TLS crate needed; only record mode uses it).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tokio::time::Instant;

use http_body_util::BodyExt;

/// Both servers see the same client name (it becomes the field manager of updates).
pub const USER_AGENT: &str = "recon-conformance";

/// A request with its variables substituted; `uri` is the path and the query.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub method: String,
    pub uri: String,
    pub content_type: Option<String>,
    pub accept: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub code: u16,
    pub body: Vec<u8>,
}

pub enum Transport {
    Fake(kube::Client),
    Real(Curl),
}

/// An open watch: its response body, read a line (an event) at a time.
pub enum Stream {
    Fake {
        body: kube::client::Body,
        pending: Vec<u8>,
        done: bool,
    },
    Real {
        child: Child,
        lines: mpsc::Receiver<Line>,
    },
}

pub enum Next {
    Line(String),
    Timeout,
    Closed,
}

/// What the thread reading `curl`'s output hands over.
pub enum Line {
    Status(u16),
    Body(String),
}

/// A watch request's answer: the stream when it is 200, the whole body otherwise.
pub enum Opened {
    Stream(Stream),
    Failed(HttpResponse),
}

impl Transport {
    pub async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, String> {
        match self {
            Transport::Fake(client) => {
                let response = client
                    .send(fake_request(req)?)
                    .await
                    .map_err(|e| format!("the request failed: {e}"))?;
                let code = response.status().as_u16();
                let body = tokio::time::timeout(
                    Duration::from_secs(10),
                    response.into_body().collect_bytes(),
                )
                .await
                .map_err(|_| "the response body did not end within 10 s".to_string())?
                .map_err(|e| format!("reading the body failed: {e}"))?;
                Ok(HttpResponse {
                    code,
                    body: body.to_vec(),
                })
            }
            Transport::Real(curl) => curl.send(req),
        }
    }

    pub async fn watch(&self, req: &HttpRequest) -> Result<Opened, String> {
        match self {
            Transport::Fake(client) => {
                let response = client
                    .send(fake_request(req)?)
                    .await
                    .map_err(|e| format!("the watch request failed: {e}"))?;
                let code = response.status().as_u16();
                let body = response.into_body();
                if code == 200 {
                    return Ok(Opened::Stream(Stream::Fake {
                        body,
                        pending: Vec::new(),
                        done: false,
                    }));
                }
                let bytes = tokio::time::timeout(Duration::from_secs(10), body.collect_bytes())
                    .await
                    .map_err(|_| "the error body did not end within 10 s".to_string())?
                    .map_err(|e| format!("reading the body failed: {e}"))?;
                Ok(Opened::Failed(HttpResponse {
                    code,
                    body: bytes.to_vec(),
                }))
            }
            Transport::Real(curl) => curl.watch(req),
        }
    }
}

fn fake_request(req: &HttpRequest) -> Result<http::Request<kube::client::Body>, String> {
    let mut builder = http::Request::builder()
        .method(req.method.as_str())
        .uri(req.uri.as_str())
        .header(http::header::USER_AGENT, USER_AGENT);
    if let Some(ct) = &req.content_type {
        builder = builder.header(http::header::CONTENT_TYPE, ct.as_str());
    }
    if let Some(accept) = &req.accept {
        builder = builder.header(http::header::ACCEPT, accept.as_str());
    }
    for (name, value) in &req.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(kube::client::Body::from(req.body.clone()))
        .map_err(|e| format!("cannot build the request {} {}: {e}", req.method, req.uri))
}

impl Stream {
    /// The next line of the body, waiting until `deadline` at most.
    pub async fn next_line(&mut self, deadline: Instant) -> Next {
        match self {
            Stream::Fake {
                body,
                pending,
                done,
            } => loop {
                if let Some(end) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let text = String::from_utf8_lossy(&line).trim().to_owned();
                    if text.is_empty() {
                        continue;
                    }
                    return Next::Line(text);
                }
                if *done {
                    // A last event without a newline still counts.
                    if pending.iter().any(|b| !b.is_ascii_whitespace()) {
                        let text = String::from_utf8_lossy(pending).trim().to_owned();
                        pending.clear();
                        return Next::Line(text);
                    }
                    return Next::Closed;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                match tokio::time::timeout(left, body.frame()).await {
                    Err(_) => return Next::Timeout,
                    Ok(None) | Ok(Some(Err(_))) => *done = true,
                    Ok(Some(Ok(frame))) => {
                        if let Ok(data) = frame.into_data() {
                            pending.extend_from_slice(&data);
                        }
                    }
                }
            },
            Stream::Real { lines, .. } => recv_line(lines, deadline),
        }
    }
}

/// The next non-empty body line from the thread reading `curl` (record mode blocks here).
fn recv_line(lines: &mpsc::Receiver<Line>, deadline: Instant) -> Next {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(Line::Body(text)) if text.trim().is_empty() => continue,
            Ok(Line::Body(text)) => return Next::Line(text),
            Ok(Line::Status(_)) => continue,
            Err(mpsc::RecvTimeoutError::Timeout) => return Next::Timeout,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Next::Closed,
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Stream::Real { child, .. } = self {
            // Our own curl: a watch never ends by itself.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The real server, reached with `curl` and the `REAL_APISERVER_*` variables.
pub struct Curl {
    url: String,
    ca: String,
    cert: String,
    key: String,
}

impl Curl {
    pub fn from_env() -> Result<Curl, String> {
        let var = |name: &str| {
            std::env::var(name).map_err(|_| {
                format!(
                    "{name} is not set: record mode needs a real API server \
                     (`cargo xtask conformance --record`, or `. WORKDIR/env` of a started one)"
                )
            })
        };
        Ok(Curl {
            url: var("REAL_APISERVER_URL")?.trim_end_matches('/').to_owned(),
            ca: var("REAL_APISERVER_CA")?,
            cert: var("REAL_APISERVER_CLIENT_CERT")?,
            key: var("REAL_APISERVER_CLIENT_KEY")?,
        })
    }

    fn command(&self, req: &HttpRequest) -> Command {
        let mut c = Command::new("curl");
        c.args([
            "--silent",
            "--show-error",
            "--no-buffer",
            "--dump-header",
            "-",
        ])
        .args([
            "--cacert", &self.ca, "--cert", &self.cert, "--key", &self.key,
        ])
        .args(["--request", &req.method])
        .args(["--header", &format!("User-Agent: {USER_AGENT}")])
        // No `Expect: 100-continue` round trip for large bodies.
        .args(["--header", "Expect:"]);
        if let Some(ct) = &req.content_type {
            c.args(["--header", &format!("Content-Type: {ct}")]);
        }
        for (name, value) in &req.headers {
            c.args(["--header", &format!("{name}: {value}")]);
        }
        if let Some(accept) = &req.accept {
            c.args(["--header", &format!("Accept: {accept}")]);
        }
        if !req.body.is_empty() {
            c.args(["--data-binary", "@-"]);
        }
        c.arg(format!("{}{}", self.url, req.uri));
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn spawn(&self, req: &HttpRequest) -> Result<Child, String> {
        self.spawn_with(req, &[])
    }

    fn spawn_with(&self, req: &HttpRequest, extra: &[&str]) -> Result<Child, String> {
        let mut child = self
            .command(req)
            .args(extra)
            .spawn()
            .map_err(|e| format!("cannot run curl: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(&req.body)
                .map_err(|e| format!("cannot write the body to curl: {e}"))?;
        }
        Ok(child)
    }

    pub fn send(&self, req: &HttpRequest) -> Result<HttpResponse, String> {
        // A plain request that hangs means a broken server; only watches stay open.
        let child = self.spawn_with(req, &["--max-time", "30"])?;
        let output = child
            .wait_with_output()
            .map_err(|e| format!("curl failed: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "curl {} {} failed: {}",
                req.method,
                req.uri,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        let mut reader = BufReader::new(&output.stdout[..]);
        let code = read_head(&mut reader)?;
        let mut body = Vec::new();
        reader
            .read_to_end(&mut body)
            .map_err(|e| format!("reading curl's output: {e}"))?;
        Ok(HttpResponse { code, body })
    }

    pub fn watch(&self, req: &HttpRequest) -> Result<Opened, String> {
        let mut child = self.spawn(req)?;
        let stdout = child.stdout.take().ok_or("curl has no stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let Ok(code) = read_head(&mut reader) else {
                return;
            };
            if tx.send(Line::Status(code)).is_err() {
                return;
            }
            for line in reader.lines() {
                let Ok(line) = line else { return };
                if tx.send(Line::Body(line)).is_err() {
                    return;
                }
            }
        });
        let code = match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Line::Status(code)) => code,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer to the watch {}", req.uri));
            }
        };
        if code == 200 {
            return Ok(Opened::Stream(Stream::Real { child, lines: rx }));
        }
        let mut body = String::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Next::Line(line) = recv_line(&rx, deadline) {
            body.push_str(&line);
        }
        let _ = child.kill();
        let _ = child.wait();
        Ok(Opened::Failed(HttpResponse {
            code,
            body: body.into_bytes(),
        }))
    }
}

/// Reads the status line and headers `--dump-header -` writes before the body (skipping
/// interim `1xx` answers); returns the status code.
fn read_head(reader: &mut impl BufRead) -> Result<u16, String> {
    loop {
        let mut status = String::new();
        reader
            .read_line(&mut status)
            .map_err(|e| format!("reading curl's output: {e}"))?;
        let code: u16 = status
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| format!("no HTTP status line in curl's output: {status:?}"))?;
        loop {
            let mut header = String::new();
            let n = reader
                .read_line(&mut header)
                .map_err(|e| format!("reading curl's output: {e}"))?;
            if n == 0 || header.trim().is_empty() {
                break;
            }
        }
        if code >= 200 {
            return Ok(code);
        }
    }
}
