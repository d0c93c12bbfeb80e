//! The workload crate's tests, one test binary (ripgrep's layout): workload files compiled and
//! played by virtual users against a fake HTTP transport on a virtual clock, their diagnostics,
//! and the JSON schema. `common` holds the fake server and the ways to compile a workload.

mod common;

mod browser_like;
mod diagnostics;
mod grpc;
mod language;
mod schema;
mod sockets;
