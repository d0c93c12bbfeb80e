//! The transport's tests, one test binary (ripgrep's layout): responses a real server may send,
//! every error class, corrupted input, TLS, and the one engine loop on loopback sockets, against
//! tiny scripted servers. `common` holds what they share.

mod common;

mod engine_loop;
mod exchange;
mod failures;
mod h3;
mod robustness;
mod tls;
