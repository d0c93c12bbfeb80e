//! herd's [`Transport`](herd_engine::Transport)s: HTTP/1.1 on a lean codec and HTTP/2 on
//! nghttp2 (herd-h2) over TCP or TLS, and HTTP/3 over QUIC.
//!
//! Before a run, [`Target::parse`] checks and resolves the URL once and [`serialize`] (or
//! [`prepare`]) turns each [`RequestSpec`] into the bytes sent on every repetition. During the
//! run, each worker thread's [`Wire`] (made by [`HttpTransport::wire`]) opens connections and
//! moves bytes for the engine's loop: plain sockets, or TLS sessions (rustls) over them, on one
//! readiness poll per thread. Responses are parsed sans-IO by [`ResponseParser`], the head in
//! place by httparse and the body counted without being copied unless the request keeps it;
//! with `--http2` a connection's session is an [`HttpSession`] of HTTP/2's streams instead.
//! Whatever goes wrong on the wire becomes a [`Failure`](herd_engine::Failure) classed by
//! [`ErrorKind`](herd_metrics::ErrorKind); timeouts are the engine's business. HTTP/3 has its
//! own transport in [`h3`]: QUIC (quinn-proto) over UDP on the same poll and TLS stack.
//!
//! ```no_run
//! use herd_engine::Response;
//! use herd_http::{prepare, HttpTransport, RequestSpec, Target, TlsOptions};
//! use std::time::Duration;
//!
//! # fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let target = Target::parse("http://127.0.0.1:8080/health")?;
//! let request = prepare(&target, &RequestSpec::get(""))?;
//! let mut wire = HttpTransport::new(&target, TlsOptions::default())?.wire()?;
//! let mut conn = wire.open(Duration::from_secs(5)).map_err(|f| f.message)?;
//! let (mut response, mut pending) = (Response::default(), Vec::new());
//! wire.exchange(&mut conn, &request, &mut response, &mut pending, Duration::from_secs(5))
//!     .map_err(|f| f.message)?;
//! assert_eq!(response.status, 200);
//! # Ok(())
//! # }
//! ```

mod alarm;
mod blocking;
mod chunked;
mod error;
mod grpc_messages;
mod h2;
pub mod h3;
mod handshake;
mod head;
pub mod multipart;
mod parse;
mod protocol;
mod proxy;
mod request;
mod route;
mod session;
mod sse;
mod target;
mod tls;
mod transport;
mod wire;
pub mod ws;

pub use error::HttpError;
pub use herd_h2::Settings as H2Settings;
pub use parse::ResponseParser;
pub use protocol::Protocol;
pub use proxy::Proxy;
pub use request::{closing, parts, prepare, prepare_with, serialize, with_closing, RequestSpec};
pub use route::{Route, RouteError};
pub use session::HttpSession;
pub use target::{Scheme, Target};
pub use tls::{h2_client_config, TlsFiles, TlsOptions};
pub use wire::{Conn, HttpTransport, Wire};
