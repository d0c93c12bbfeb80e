//! HTTP/3 over QUIC, client side only: quinn-proto (sans-IO, on the same rustls and ring as
//! https) under a thin HTTP/3 layer of herd's own: frames, and QPACK with the static table only
//! (the server is told its dynamic table has 0 bytes). The `h3` crate is async-only and quiche
//! brings cmake, libclang and a second TLS stack (docs/design notes, protocols §2).
//!
//! [`H3Config`] is built once per run; each [`H3Connection`] is one QUIC connection whose
//! datagrams and timers the caller moves (one UDP socket per connection). [`H3Request`] is a
//! request's frames, laid out once from the HTTP/1.1 bytes the rest of herd prepares.
//! [`H3Transport`] is the engine's transport for `--http3`: UDP sockets on each worker's poll.
//! [`H3Client`] drives one connection on a blocking socket, for probes and tests.

mod blocking;
mod config;
mod connection;
mod event;
mod frame;
mod loss;
mod qpack;
mod request;
mod response;
mod resumption;
mod session;
mod static_table;
mod tickets;
mod transport;
mod wire;

pub use blocking::H3Client;
pub use config::{H3Config, IDLE_TIMEOUT};
pub use connection::{H3Connection, MAX_GSO_SEGMENTS};
pub use event::{EarlyData, H3Event, Handshake, Outgoing};
pub use qpack::QpackError;
pub use request::H3Request;
pub use session::H3Session;
pub use wire::{H3Conn, H3Transport, H3Wire};

pub(crate) use resumption::counting_checks;
pub(crate) use tickets::{store as ticket_store, Tickets};
