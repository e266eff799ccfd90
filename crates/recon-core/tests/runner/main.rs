//! The runner against the in-memory API server: leader election and failover with Tokio's clock
//! paused (a 15 s lease takes no time), graceful shutdown, and the metrics and probes served
//! over HTTP.

mod exclusion;
mod failover;
mod metrics;
mod probes;
mod series;
mod shutdown;
mod signal;
mod support;
