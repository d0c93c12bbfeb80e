//! Real servers for herd's tests, shared by the crates whose tests meet them (herd-http's
//! HTTP/3 client, the CLI's end-to-end runs). A dev-dependency only.

mod caddy;
mod postgres;

pub use caddy::Caddy;
pub use postgres::Postgres;
