//! herd's [`Transport`](herd_engine::Transport): HTTP/1.1 on a lean codec over TCP or TLS.
//!
//! Before a run, [`Target::parse`] checks and resolves the URL once and [`serialize`] (or
//! [`prepare`]) turns each [`RequestSpec`] into the bytes sent on every repetition. During the run,
//! [`HttpTransport`] opens connections and does exchanges: one write of those bytes, then reads
//! into a buffer the connection keeps, a head parsed in place by httparse, and a body counted
//! without being copied unless the request asks to keep it. That parsing is sans-IO, in
//! [`ResponseParser`]: [`HttpCodec`] hands it to the engine's direct worker, which feeds it from
//! its own event loop. Whatever goes wrong on the wire becomes a
//! [`Failure`](herd_engine::Failure) classed by [`ErrorKind`](herd_metrics::ErrorKind); timeouts
//! are the engine's business.
//!
//! ```no_run
//! use herd_engine::{Response, Transport};
//! use herd_http::{HttpTransport, RequestSpec, Target, TlsOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let target = Target::parse("http://127.0.0.1:8080/health")?;
//! let request = herd_http::prepare(&target, &RequestSpec::get(""))?;
//! let transport = HttpTransport::new(&target, TlsOptions::default())?;
//!
//! let mut conn = transport.connect().await.map_err(|f| f.message)?;
//! let mut response = Response::default();
//! transport.exchange(&mut conn, &request, &mut response).await.map_err(|f| f.message)?;
//! assert_eq!(response.status, 200);
//! # Ok(())
//! # }
//! ```

mod chunked;
mod conn;
mod error;
mod head;
mod parse;
mod request;
mod target;
mod tls;
mod transport;

pub use conn::Conn;
pub use error::HttpError;
pub use parse::{HttpCodec, ResponseParser};
pub use request::{prepare, serialize, RequestSpec};
pub use target::{Scheme, Target};
pub use tls::TlsOptions;
pub use transport::HttpTransport;
