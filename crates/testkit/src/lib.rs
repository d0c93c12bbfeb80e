//! Real servers for herd's tests, shared by the crates whose tests meet them (herd-http's
//! HTTP/3 client, the CLI's end-to-end runs): Caddy, PostgreSQL, grpc-go's and Python grpcio's
//! greeters.
//! A dev-dependency only.

mod caddy;
mod grpc_server;
mod postgres;

pub use caddy::Caddy;
pub use grpc_server::{go_bin, GrpcServer, Streams};
pub use postgres::Postgres;
