//! `herd serve`'s lifetime: serve until SIGINT or SIGTERM, then shut down cleanly.

use crate::{Config, MockError, Server, ServerStats};
use std::net::SocketAddr;

/// Starts a server with `config`, tells `listening` its address, and serves until SIGINT or
/// SIGTERM; then shuts it down and returns what it served.
pub fn serve_until_signal(
    config: Config,
    listening: impl FnOnce(SocketAddr),
) -> Result<ServerStats, MockError> {
    // Signal handlers go in before the server starts, so an early Ctrl-C still shuts it down
    // cleanly rather than killing the process.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|error| MockError::Signals {
            what: "cannot start the signal handler",
            error,
        })?;
    let interrupted = {
        let _entered = runtime.enter();
        shutdown_signal().map_err(|error| MockError::Signals {
            what: "cannot install signal handlers",
            error,
        })?
    };
    let server = Server::start(config)?;
    listening(server.local_addr());
    runtime.block_on(interrupted);
    Ok(server.shutdown())
}

/// A future that completes on SIGINT or SIGTERM; the handlers are installed by the call.
#[cfg(unix)]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
