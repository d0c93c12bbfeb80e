//! herd's end-to-end tests: the `herd` binary against real servers (nginx, the mock server,
//! scripted ones), a real browser (headless Chromium) and a real Prometheus exporter. One test
//! binary (ripgrep's layout): each file below is a command or a concern; `common` holds what
//! they share. Those that drive load run one at a time (`-- --skip quiet:: --test-threads=1`):
//! each loads the machine on purpose, and herd's own generator verdict rightly notices when
//! another test steals its CPU. Those under `quiet` put no load on the machine and run in
//! parallel (`-- quiet::`). The target is `test = false`: `cargo test --test e2e` names it.

mod common;

mod capacity;
mod cli;
mod connect;
mod dashboard;
mod dashboard_live;
mod doctor;
mod environment;
mod fault_proxy;
mod fault_proxy_h2;
mod fault_proxy_http;
mod fault_timeline;
mod faults;
mod flags;
mod form;
mod generator;
mod grpc;
mod har;
mod history;
mod http2;
mod http2_wire;
mod http3;
mod logs;
mod mismatch;
mod outputs;
mod panel;
mod phases;
mod pipeline;
mod plot;
mod ports;
mod proxy;
mod quiet;
mod report;
mod run_guards;
mod run_nginx;
mod scripting;
mod secrets;
mod serve_grpc;
mod shard;
mod sse;
mod stop_the_server;
mod sweep;
mod tls_facts;
mod token;
mod url_file_flags;
mod watch;
mod wording;
mod workload;
mod workload_lua;
mod ws;
