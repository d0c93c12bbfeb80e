//! Real servers for herd's tests, shared by the crates whose tests meet them (herd-http's
//! HTTP/3 client, the CLI's end-to-end runs): Caddy, PostgreSQL, grpc-go's example services.
//! A dev-dependency only.

mod caddy;
mod grpc_go;
mod postgres;

pub use caddy::Caddy;
pub use grpc_go::{go_bin, GrpcGo, Streams};
pub use postgres::Postgres;
