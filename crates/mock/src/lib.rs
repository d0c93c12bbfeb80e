//! The mock target server behind `herd serve`.
//!
//! It answers HTTP/1.1 with responses serialized once at start, on its own threads (one
//! single-threaded tokio runtime per thread, SO_REUSEPORT listeners), so it is fast enough to
//! be the target of herd's own benchmarks and can run inside any program, async or not.
//! Each [`Route`] can add what a real dependency has and a loopback mock lacks: latency drawn
//! from a distribution, large bodies, error statuses, and network [`Fault`]s (resets, stalls,
//! truncated bodies). A `seed` makes the random choices repeatable.
//!
//! A client opening with HTTP/2's preface gets HTTP/2 on the same port (h2c with prior
//! knowledge, on nghttp2 through herd-h2), with the same routes and faults on each stream.
//!
//! Keep-alive, pipelining (answered in order, coalesced into one write), request bodies (read
//! and discarded, Content-Length or chunked) and `Expect: 100-continue` are handled; a malformed
//! request gets 400 and its connection is closed.
//!
//! With no routes, [`default_routes`] apply: `/echo` answers with the request itself, and
//! everything else gets `200 hello from herd serve`.
//!
//! ```
//! use std::io::{Read, Write};
//! use herd_mock::{Config, Route, Server};
//!
//! let config = Config {
//!     routes: vec![Route::parse("/slow latency=normal:20ms:5ms size=1kb")?, Route::new("/*")],
//!     ..Config::default() // 127.0.0.1, port 0, one thread, seed 0
//! };
//! let server = Server::start(config)?;
//!
//! let mut client = std::net::TcpStream::connect(server.local_addr())?;
//! client.write_all(b"GET /slow HTTP/1.1\r\nHost: mock\r\nConnection: close\r\n\r\n")?;
//! let mut response = String::new();
//! client.read_to_string(&mut response)?;
//! assert!(response.starts_with("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n"));
//!
//! assert_eq!(server.shutdown().requests, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod auth;
mod conn;
mod counters;
mod delay;
mod error;
mod events;
mod flags;
mod grpc;
mod h2;
mod h2_ws;
mod latency;
mod listen;
mod request;
mod response;
mod route;
mod server;
mod spec;
mod tls;
mod until_signal;
mod worker;
mod ws_frame;

use std::net::{Ipv4Addr, SocketAddr};

pub use error::MockError;
pub use events::Events;
pub use flags::{serve_flags_until_signal, ServeFlags};
pub use latency::Latency;
pub use listen::parse_listen;
pub use route::{default_routes, Auth, Fault, Route, HELLO, MAX_BODY};
pub use server::{Server, ServerStats};
pub use tls::Tls;
pub use until_signal::serve_until_signal;

/// Everything [`Server::start`] needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; port 0 picks a free port (see [`Server::local_addr`]).
    pub listen: SocketAddr,
    /// Worker threads, each with its own listener and event loop. One per core serves most.
    pub threads: usize,
    /// Tried in order, first match wins; empty means [`default_routes`].
    pub routes: Vec<Route>,
    /// Seeds the random choices (latency samples, which requests fail). Each thread has its own
    /// stream, so with one thread the n-th request always gets the same draw; with several,
    /// which thread serves a connection is up to the kernel.
    pub seed: u64,
    /// Serve HTTPS (HTTP/2 or HTTP/1.1 by ALPN) instead of plain HTTP and h2c.
    pub tls: Option<Tls>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 1,
            routes: Vec::new(),
            seed: 0,
            tls: None,
        }
    }
}
