//! The `herd` binary: glue from arguments to plan, engine and report. The only crate that
//! prints, reads the environment and exits.

mod args;
mod capacity;
mod compare_cmd;
mod deferred;
mod demo;
mod doctor;
mod env_values;
mod exit;
mod grpc;
mod grpc_args;
mod history_cmd;
mod http_args;
mod interrupt;
mod k8s;
mod load_args;
mod logs_cmd;
mod merge_cmd;
mod model_cmd;
mod outputs;
mod plot;
mod proxy_cmd;
mod replay_cmd;
mod report_cmd;
mod report_format;
mod run;
mod secret_args;
mod series;
mod serve;
mod shard_args;
mod shell;
mod short_help;
mod store_cmd;
mod sweep;
mod sweep_table;
mod values;
mod watch;
mod workload_cmd;

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
    after_help = exit::HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Each subcommand's arguments are [`Deferred`]: declared only for the subcommand given.
#[derive(Subcommand, Debug)]
enum Command {
    /// Load a URL or run a workload file and print what the server did
    #[command(after_help = exit::RUN_HELP, allow_negative_numbers = true)]
    Run(Deferred<Box<args::RunArgs>>),
    /// Check a workload file and report every problem with its line and column; sends nothing
    Validate(Deferred<workload_cmd::ValidateArgs>),
    /// Run the mock target server: routes with latency distributions, sizes, statuses and faults
    Serve(Deferred<serve::ServeArgs>),
    /// Start the mock server in-process and run a short load test against it
    Demo(Deferred<Box<demo::DemoArgs>>),
    /// Show a stored result: text, or a self-contained HTML page or PDF with charts (-o FILE)
    Report(Deferred<report_cmd::ReportArgs>),
    /// Compare runs with a base run; exit 3 when a key metric regressed beyond --threshold and noise
    #[command(after_help = exit::COMPARE_HELP)]
    Compare(Deferred<compare_cmd::CompareArgs>),
    /// Check this machine for load testing: open files, local ports, TIME_WAIT, listen queues,
    /// cores, clock scaling, and whether the target answers; each problem with its fix
    Doctor(Deferred<doctor::DoctorArgs>),
    /// Load targets at rising rates or users, a table line per step (autobench, ab at 1..1000 users)
    #[command(after_help = exit::HELP, allow_negative_numbers = true)]
    Sweep(Deferred<Box<sweep::SweepArgs>>),
    /// Find the highest rate (or most users) a target sustains within an SLO
    #[command(after_help = exit::HELP, allow_negative_numbers = true)]
    Capacity(Deferred<Box<capacity::CapacityArgs>>),
    /// Draw a sweep (herd's or autobench's TSV, or JSON) or a run's JSON as PNG or SVG
    Plot(Deferred<plot::PlotArgs>),
    /// Add up the results of a run's shards (--shard I/N) exactly into one result
    #[command(after_help = exit::HELP)]
    Merge(Deferred<merge_cmd::MergeArgs>),
    /// Run a workload as N shards on Kubernetes: render the manifests, collect the results
    K8s(Deferred<k8s::K8sArgs>),
    /// What is in a web server's access log: rate, request types, sizes, time taken, sessions;
    /// or, with --against, whether the server logged what a run sent
    Logs(Deferred<Box<logs_cmd::LogsArgs>>),
    /// Write a workload file from access logs (top request types, weights, think times, ids, peak
    /// rate) or from a browser's HAR file (--har: the session's steps, think times, extractions)
    Model(Deferred<Box<model_cmd::ModelArgs>>),
    /// Replay access logs with their timing against a target (--dry-run: what would be sent)
    #[command(allow_negative_numbers = true)]
    Replay(Deferred<Box<replay_cmd::ReplayArgs>>),
    /// Call a gRPC method under load, with ghz's flags (--proto, --call, -d, -c, -n, -z, --rps)
    #[command(after_help = exit::HELP)]
    Grpc(Deferred<Box<grpc_args::GrpcArgs>>),
    /// A TCP fault proxy (latency, resets, cut connections...) driven by toxiproxy's API and CLI
    Proxy(Deferred<proxy_cmd::ProxyArgs>),
    /// Keep results written earlier in a store of runs (SQLite or PostgreSQL)
    Store(Deferred<store_cmd::StoreArgs>),
    /// Questions about the stored runs: list, show, trend, change points, baselines
    History(Deferred<history_cmd::HistoryArgs>),
    /// Print shell completions (bash, zsh, fish, elvish, powershell), made from herd's own flags
    Completions(Deferred<shell::CompletionsArgs>),
    /// Print herd's man page (roff), or a subcommand's (`herd man run`), made from its flags
    Man(Deferred<shell::ManArgs>),
}

fn main() {
    quiet_on_closed_stdout();
    let cli = Cli::parse_from(serve::listen_values(std::env::args_os().collect()));
    let code = match &cli.command {
        Command::Run(a) => run::cmd(a),
        Command::Grpc(a) => grpc::cmd(a),
        Command::Serve(a) => serve::run(a)
            .map(|()| exit::OK)
            .map_err(|e| exit::Exit::bad_input(format!("{e:#}"))),
        Command::Demo(a) => demo::cmd(a),
        Command::Report(a) => report_cmd::cmd(a),
        Command::Compare(a) => compare_cmd::cmd(a),
        Command::Doctor(a) => doctor::cmd(a),
        Command::Sweep(a) => sweep::cmd(a),
        Command::Capacity(a) => capacity::cmd(a),
        Command::Plot(a) => plot::cmd(a),
        Command::Validate(a) => workload_cmd::validate(a),
        Command::Merge(a) => merge_cmd::cmd(a),
        Command::K8s(a) => k8s::cmd(a),
        Command::Logs(a) => logs_cmd::cmd(a),
        Command::Model(a) => model_cmd::cmd(a),
        Command::Replay(a) => replay_cmd::cmd(a),
        Command::Proxy(a) => proxy_cmd::run(a)
            .map(|()| exit::OK)
            .map_err(|e| exit::Exit::bad_input(format!("{e:#}"))),
        Command::Store(a) => store_cmd::cmd(a),
        Command::History(a) => history_cmd::cmd(a),
        Command::Completions(a) => shell::completions(a, <Cli as clap::CommandFactory>::command()),
        Command::Man(a) => shell::man(a, <Cli as clap::CommandFactory>::command()),
    };
    match code {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("herd: {}", e.message);
            std::process::exit(e.code);
        }
    }
}

/// `herd ... | head` closes standard output early: like other Unix tools, herd then stops
/// without a panic message (exit 141, as a shell reports SIGPIPE). Results files are written
/// before the summary is printed, so nothing measured is lost.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if text.contains("failed printing to stdout") && text.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
