//! Real servers for herd's tests, shared by the crates whose tests meet them (herd-http's
//! HTTP/3 client, the CLI's end-to-end runs). A dev-dependency only.

mod caddy;

pub use caddy::Caddy;
