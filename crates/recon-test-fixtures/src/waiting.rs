//! Waiting for a condition that a controller or runner makes true in the background.

use std::future::Future;
use std::time::Duration;

/// How often a condition is checked again.
const POLL: Duration = Duration::from_millis(10);

/// Polls `check` until it holds, for at most five seconds; panics naming `what` when it never
/// does.
pub async fn eventually<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually_within(Duration::from_secs(5), what, check).await;
}

/// Polls `check` until it holds, for at most `limit`; panics naming `what` when it never does.
pub async fn eventually_within<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let settled = async {
        while !check().await {
            tokio::time::sleep(POLL).await;
        }
    };
    tokio::time::timeout(limit, settled)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}
