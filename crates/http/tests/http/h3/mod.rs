//! HTTP/3: against a real Caddy (counts, bytes and statuses as Caddy logs them; a server that
//! goes away), and in memory against a quinn-proto server for what Caddy cannot be made to do.

mod caddy;
mod memory;
