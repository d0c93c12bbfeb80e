//! `herd capacity` against servers whose true limit is known (`server`): the search lands on it
//! in requests per second, users or a workload's iterations (`search`), and the other ways a
//! search ends: herd the bottleneck, an SLO no rate meets, Ctrl-C, input refused (`ends`); what
//! it shows and writes probe by probe: the dashboard, a requests log per probe (`live`).

mod ends;
mod live;
mod search;
mod server;
