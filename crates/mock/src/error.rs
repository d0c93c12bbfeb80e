use std::io;
use std::net::SocketAddr;

/// Everything that can go wrong configuring or starting the mock server.
///
/// Serving itself never fails as a whole: a bad request gets a 400 and its connection is closed.
/// Messages are complete on their own (an I/O cause is part of the text, not a separate
/// `source`), so printing one with `{}` says everything once.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// A `--route` spec did not parse; `message` names the bad part and what is allowed.
    #[error("route '{spec}': {message}")]
    Spec { spec: String, message: String },

    /// A [`Route`](crate::Route) built in code is inconsistent (bad path, status, rate, header).
    #[error("route '{path}': {message}")]
    InvalidRoute { path: String, message: String },

    /// The [`Config`](crate::Config) as a whole is unusable (for example zero threads).
    #[error("invalid mock server config: {0}")]
    InvalidConfig(String),

    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {error}{hint}", hint = bind_hint(error))]
    Bind { addr: SocketAddr, error: io::Error },

    /// Creating a worker thread or its runtime failed.
    #[error("cannot start mock server worker: {0}")]
    Worker(io::Error),

    /// [`serve_until_signal`](crate::serve_until_signal) could not watch for SIGINT and SIGTERM.
    #[error("{what}: {error}")]
    Signals {
        what: &'static str,
        error: io::Error,
    },
}

fn bind_hint(err: &io::Error) -> &'static str {
    match err.kind() {
        io::ErrorKind::AddrInUse => {
            " (is another server already listening there? use port 0 to pick a free one)"
        }
        io::ErrorKind::PermissionDenied => " (ports below 1024 need privileges)",
        _ => "",
    }
}
