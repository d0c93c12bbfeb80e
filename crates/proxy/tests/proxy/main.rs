//! herd-proxy against real sockets: its API as toxiproxy's clients call it, and what each
//! toxic does to bytes on connections open before and after it was added.

mod api;
mod common;
mod toxics;
