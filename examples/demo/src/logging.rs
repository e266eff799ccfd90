//! How the demo prints: one short line per thing, no timestamps, no level on its own lines,
//! no span names; `RUST_LOG` picks what is printed without dependencies drowning the rest.

use std::fmt;

use tracing::{Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

/// What is printed when `RUST_LOG` is unset: the demo's lines and the warnings of the rest.
/// recon-core's own info lines (`creating object`, `updating object` with the change) repeat
/// the writes each reconcile prints; `RUST_LOG=info` or `RUST_LOG=recon_core=info` shows them.
const DEFAULT: &str = "info,recon_core=warn";

/// Crates whose debug and trace lines are about transport, not about the operators: a request
/// is logged several times by tower's buffer, and rustls narrates every TLS handshake. They
/// stay at `warn` unless `RUST_LOG` names them.
const QUIET: [&str; 8] = [
    "tower",
    "tower_http",
    "hyper",
    "hyper_util",
    "h2",
    "rustls",
    "tokio_rustls",
    "kube_client",
];

/// The filter for `rust_log` (the value of `RUST_LOG`, if set). The quiet crates' directives
/// come first so that the user's own directive for one of them, parsed later, replaces it
/// (`EnvFilter` keeps the last directive for a target); a bare `debug` does not name them, and
/// a directive with a target is more specific than one without, so they stay at `warn`.
pub fn filter(rust_log: Option<&str>) -> EnvFilter {
    let quiet: Vec<String> = QUIET.iter().map(|t| format!("{t}=warn")).collect();
    let user = rust_log.map(str::trim).filter(|s| !s.is_empty());
    let directives = format!("{},{}", quiet.join(","), user.unwrap_or(DEFAULT));
    // A directive that does not parse is skipped (and reported on stderr), as `RUST_LOG`
    // usually is, rather than stopping the demo.
    EnvFilter::builder().parse_lossy(directives)
}

/// The demo's subscriber: [`filter`] and the [`Compact`] format, written to `writer`.
pub fn subscriber<W>(rust_log: Option<&str>, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_env_filter(filter(rust_log))
        .with_ansi(false)
        .with_writer(writer)
        .event_format(Compact)
        .finish()
}

/// `message field=value`, nothing else, for the demo's own info lines. Other lines say where they
/// come from (the crate) and, unless info, their level: `warn recon_core: reconcile failed …`.
pub struct Compact;

impl<S, N> FormatEvent<S, N> for Compact
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        let level = *metadata.level();
        if level != Level::INFO {
            write!(writer, "{} ", level.as_str().to_ascii_lowercase())?;
        }
        let target = metadata.target();
        if !target.starts_with("recon_demo") {
            let origin = target.split("::").next().unwrap_or(target);
            write!(writer, "{origin}: ")?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
