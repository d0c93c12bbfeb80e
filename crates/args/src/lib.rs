//! herd's command line: every command's flags, their help and value parsers, and the plain
//! specs they make (uv's `uv-cli`; ripgrep's low-level arguments turned into high-level ones).
//! Nothing here opens a file, reads the environment or the clock, prints or starts anything (a
//! word is a workload file by its extension or by being a file; a listen address may name a
//! host): the `herd` binary (crates/cli) parses [`Cli`], hands each command's arguments to its
//! glue and adds what it reads from the environment.
//!
//! ```
//! use clap::Parser;
//! let cli = herd_args::Cli::try_parse_from(["herd", "run", "-c", "4", "http://127.0.0.1:8080/"])
//!     .expect("herd run's flags");
//! let herd_args::Command::Run(run) = &cli.command else { unreachable!() };
//! assert_eq!(run.spec().load.connections, Some(4));
//! ```
//!
//! Each subcommand's arguments are declared only when it is the one given (`deferred.rs`).
//! The groups every command that sends load shares are flattened into each: the load
//! (`load.rs`, said otherwise per command by a table), the request and the reach (`run.rs`),
//! the protocol (`http.rs`), the outputs (`outputs.rs`), the shard, the secrets, the watch.

pub mod capacity;
pub mod codes;
pub mod compare;
pub mod deferred;
pub mod demo;
pub mod doctor;
pub mod grpc;
pub mod history;
pub mod http;
pub mod k8s;
pub mod load;
pub mod logs;
pub mod merge;
pub mod model;
pub mod outputs;
pub mod plot;
pub mod proxy;
pub mod replay;
pub mod report;
pub mod run;
pub mod secrets;
pub mod series;
pub mod serve;
pub mod shard;
pub mod shell;
pub mod short_help;
pub mod store;
pub mod sweep;
pub mod validate;
pub mod values;
pub mod watch;

use clap::{Parser, Subcommand};
use deferred::Deferred;

#[derive(Parser, Debug)]
#[command(
    name = "herd",
    version,
    about = "HTTP load generator and web-server benchmarking tool",
    long_about = "herd answers \"how many simultaneous visitors can the site handle, and how fast?\"\n\
                  Closed model (-c N connections) or open model (--rate R per second, latency from the \
                  intended send time: no coordinated omission).",
    after_help = codes::HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Each subcommand's arguments are [`Deferred`]: declared only for the subcommand given.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Load a URL or run a workload file and print what the server did
    #[command(after_help = codes::RUN_HELP, allow_negative_numbers = true)]
    Run(Deferred<Box<run::RunArgs>>),
    /// Check a workload file and report every problem with its line and column; sends nothing
    Validate(Deferred<validate::ValidateArgs>),
    /// Run the mock target server: routes with latency distributions, sizes, statuses and faults
    Serve(Deferred<serve::ServeArgs>),
    /// Start the mock server in-process and run a short load test against it
    Demo(Deferred<Box<demo::DemoArgs>>),
    /// Show a stored result: text, or a self-contained HTML page or PDF with charts (-o FILE)
    Report(Deferred<report::ReportArgs>),
    /// Compare runs with a base run; exit 3 when a key metric regressed beyond --threshold and noise
    #[command(after_help = codes::COMPARE_HELP)]
    Compare(Deferred<compare::CompareArgs>),
    /// Check this machine for load testing: open files, local ports, TIME_WAIT, listen queues,
    /// cores, clock scaling, and whether the target answers; each problem with its fix
    Doctor(Deferred<doctor::DoctorArgs>),
    /// Load targets at rising rates or users, a table line per step (autobench, ab at 1..1000 users)
    #[command(after_help = codes::HELP, allow_negative_numbers = true)]
    Sweep(Deferred<Box<sweep::SweepArgs>>),
    /// Find the highest rate (or most users) a target sustains within an SLO
    #[command(after_help = codes::HELP, allow_negative_numbers = true)]
    Capacity(Deferred<Box<capacity::CapacityArgs>>),
    /// Draw a sweep (herd's or autobench's TSV, or JSON) or a run's JSON as PNG or SVG
    Plot(Deferred<plot::PlotArgs>),
    /// Add up the results of a run's shards (--shard I/N) exactly into one result
    #[command(after_help = codes::HELP)]
    Merge(Deferred<merge::MergeArgs>),
    /// Run a workload as N shards on Kubernetes: render the manifests, collect the results
    K8s(Deferred<k8s::K8sArgs>),
    /// What is in a web server's access log: rate, request types, sizes, time taken, sessions;
    /// or, with --against, whether the server logged what a run sent
    Logs(Deferred<Box<logs::LogsArgs>>),
    /// Write a workload file from access logs (top request types, weights, think times, ids, peak
    /// rate) or from a browser's HAR file (--har: the session's steps, think times, extractions)
    Model(Deferred<Box<model::ModelArgs>>),
    /// Replay access logs with their timing against a target (--dry-run: what would be sent)
    #[command(allow_negative_numbers = true)]
    Replay(Deferred<Box<replay::ReplayArgs>>),
    /// Call a gRPC method under load, with ghz's flags (--proto, --call, -d, -c, -n, -z, --rps)
    #[command(after_help = codes::HELP)]
    Grpc(Deferred<Box<grpc::GrpcArgs>>),
    /// A TCP fault proxy (latency, resets, cut connections...) driven by toxiproxy's API and CLI
    Proxy(Deferred<proxy::ProxyArgs>),
    /// Keep results written earlier in a store of runs (SQLite or PostgreSQL)
    Store(Deferred<store::StoreArgs>),
    /// Questions about the stored runs: list, show, trend, change points, baselines
    History(Deferred<history::HistoryArgs>),
    /// Print shell completions (bash, zsh, fish, elvish, powershell), made from herd's own flags
    Completions(Deferred<shell::CompletionsArgs>),
    /// Print herd's man page (roff), or a subcommand's (`herd man run`), made from its flags
    Man(Deferred<shell::ManArgs>),
}
