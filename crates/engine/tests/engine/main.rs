//! The engine's tests, one test binary (ripgrep's layout): the one loop against a fake transport
//! on a virtual clock (no sockets, no sleeps, no luck), a module per concern, and the pure shard
//! arithmetic (`segment`). `common` holds what they share.

mod common;

mod arrivals;
mod closed;
mod failures;
mod open;
mod phases;
mod pipeline;
mod requests_log;
mod segment;
mod stream;
mod window;
