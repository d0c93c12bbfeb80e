//! `herd proxy`: a TCP fault proxy between a client and the servers it depends on, driven
//! through toxiproxy's HTTP API, so toxiproxy's CLI and client libraries work unchanged.
//!
//! Every proxy's connections run on one readiness loop (mio, as herd's client runs its
//! own): both directions of each connection go through the toxics of their stream in the
//! order they were added (`latency`, `bandwidth`, `slow_close`, `timeout`, `reset_peer`,
//! `slicer`, `limit_data`, `packet_loss`), with toxiproxy's attributes, units and defaults.
//! A toxic the API answered for is on every connection already open and every one accepted
//! after (none escapes); a proxy created with `toxics` has them before its first connection.
//! Whether a toxic acts on a connection (its toxicity) is drawn from the proxy's seed, so a
//! run repeats its choices.
//!
//! ```
//! use std::io::{Read, Write};
//! use herd_proxy::{Config, Server};
//!
//! // Something to proxy to: a server that answers "pong".
//! let upstream = std::net::TcpListener::bind("127.0.0.1:0")?;
//! let target = upstream.local_addr()?;
//! std::thread::spawn(move || {
//!     let (mut c, _) = upstream.accept().unwrap();
//!     c.write_all(b"pong").unwrap();
//! });
//!
//! let proxy = Server::start(Config {
//!     api: "127.0.0.1:0".parse()?,
//!     ..Config::default()
//! })?;
//! let created = proxy.shared().create(&serde_json::json!({
//!     "name": "db", "listen": "127.0.0.1:0", "upstream": target.to_string(),
//!     "toxics": [{"type": "latency", "attributes": {"latency": 20}}]
//! }))?;
//! let listen = created["listen"].as_str().unwrap();
//!
//! let started = std::time::Instant::now();
//! let mut got = String::new();
//! std::net::TcpStream::connect(listen)?.read_to_string(&mut got)?;
//! assert_eq!(got, "pong");
//! assert!(started.elapsed() >= std::time::Duration::from_millis(20));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod alarm;
mod api;
mod error;
mod flags;
mod framing;
mod h2_fault;
mod h2_follow;
mod http_fault;
mod link;
mod metrics;
mod pipe;
mod registry;
mod relay;
mod request;
mod stage;
mod stats;
mod toxic;

use std::net::SocketAddr;
use std::sync::Arc;

pub use error::ApiError;
pub use flags::ProxyFlags;
pub use h2_fault::{H2Action, H2Fault};
pub use http_fault::HttpFault;
pub use registry::{Entry, Registry, Shared};
pub use stats::Stats;
pub use toxic::{Kind, Stream, Toxic};

/// What `herd proxy` starts with.
#[derive(Clone, Debug)]
pub struct Config {
    /// The API's address; toxiproxy's is 127.0.0.1:8474.
    pub api: SocketAddr,
    /// Seeds every toxic's random choices.
    pub seed: u64,
    /// Proxies to create at start: toxiproxy's populate JSON (an array of proxies).
    pub populate: Option<serde_json::Value>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            api: SocketAddr::from(([127, 0, 0, 1], 8474)),
            seed: 0,
            populate: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen for the API on {addr}: {error} (give another with --api ADDR)")]
    Api {
        addr: SocketAddr,
        error: std::io::Error,
    },
    #[error("cannot start the relay loop: {0}")]
    Loop(std::io::Error),
    #[error(transparent)]
    Proxy(#[from] ApiError),
}

/// A running proxy server: its relay loop and its API, each on its own thread, for the life
/// of the process.
pub struct Server {
    api: SocketAddr,
    shared: Arc<Shared>,
}

impl Server {
    pub fn start(config: Config) -> Result<Server, StartError> {
        let poll = mio::Poll::new().map_err(StartError::Loop)?;
        let waker = mio::Waker::new(poll.registry(), relay::WAKER).map_err(StartError::Loop)?;
        let shared = Arc::new(Shared::new(waker));
        let listener =
            std::net::TcpListener::bind(config.api).map_err(|error| StartError::Api {
                addr: config.api,
                error,
            })?;
        let api = listener.local_addr().map_err(StartError::Loop)?;
        let relay = relay::Relay::new(poll, Arc::clone(&shared), config.seed);
        std::thread::Builder::new()
            .name("herd-proxy".into())
            .spawn(move || relay.run())
            .map_err(StartError::Loop)?;
        if let Some(p) = &config.populate {
            shared.populate(p)?;
        }
        let for_api = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("herd-proxy-api".into())
            .spawn(move || api::serve(listener, for_api))
            .map_err(StartError::Loop)?;
        Ok(Server { api, shared })
    }

    /// Where the API listens (its port when 0 was asked).
    pub fn api_addr(&self) -> SocketAddr {
        self.api
    }

    /// The proxies, for the process that started the server (the same calls as the API's).
    pub fn shared(&self) -> &Shared {
        &self.shared
    }
}
