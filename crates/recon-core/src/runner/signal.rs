//! The signals that stop an operator process.

/// Resolves on SIGTERM (what the kubelet sends a pod it stops) or SIGINT (ctrl-c); elsewhere
/// than Unix, on ctrl-c alone. If a signal cannot be listened for, waits for the other.
///
/// ```no_run
/// # async fn demo() {
/// recon_core::runner::shutdown_signal().await;
/// println!("shutting down");
/// # }
/// ```
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for ctrl-c");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut sigterm) => {
                sigterm.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("ctrl-c: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
