//! The one engine loop on real loopback sockets through this crate's transport, against tiny
//! thread-per-connection servers (`common::loop_server`): counting, connection reuse and
//! replacement, deadlines, refused connections, early closes, the open model's queue, Ctrl-C.

mod closed;
mod faults;
mod open;
