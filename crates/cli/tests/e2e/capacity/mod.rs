//! `herd capacity` against servers whose true limit is known (`server`): the search lands on it
//! in requests per second, users or a workload's iterations (`search`), and the other ways a
//! search ends: herd the bottleneck, an SLO no rate meets, Ctrl-C, input refused (`ends`).

mod ends;
mod search;
mod server;
