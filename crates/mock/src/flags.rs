//! `herd serve`'s flags as plain data, served until a signal, with what it says when it
//! starts and when it stops.

use crate::{serve_until_signal, Config, MockError, Route, Tls};
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;

/// What `herd serve` was given.
#[derive(Debug, Clone)]
pub struct ServeFlags {
    pub listen: SocketAddr,
    /// Worker threads; `None`: one per core.
    pub threads: Option<NonZeroUsize>,
    /// Empty: [`crate::default_routes`].
    pub routes: Vec<Route>,
    pub seed: u64,
    /// HTTPS with a self-signed certificate, unless `tls_files` names one.
    pub tls: bool,
    /// A PEM certificate chain and its private key.
    pub tls_files: Option<(PathBuf, PathBuf)>,
}

/// Serves until SIGINT or SIGTERM; `say` hears where it listens and, at the end, what it served.
pub fn serve_flags_until_signal(
    f: ServeFlags,
    mut say: impl FnMut(String),
) -> Result<(), MockError> {
    let threads = match f.threads {
        Some(n) => n.get(),
        None => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
    };
    let routes = if f.routes.is_empty() {
        crate::default_routes()
    } else {
        f.routes
    };
    let summary: Vec<String> = routes.iter().map(Route::to_string).collect();
    let tls = match f.tls_files {
        Some((cert, key)) => Some(Tls::Files { cert, key }),
        None => f.tls.then_some(Tls::SelfSigned),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let config = Config {
        listen: f.listen,
        threads,
        routes,
        seed: f.seed,
        tls,
    };
    let stats = serve_until_signal(config, |addr| {
        say(format!(
            "herd serve listening on {scheme}://{addr} ({threads} thread{}, routes: {})",
            if threads == 1 { "" } else { "s" },
            summary.join("; "),
        ))
    })?;
    say(format!(
        "herd serve stopped: {} requests served on {} connections ({} injected errors)",
        stats.requests, stats.connections, stats.injected
    ));
    Ok(())
}
