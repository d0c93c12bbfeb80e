//! The `herd` binary: glue from arguments to plan, engine and report. The only crate that
//! prints, reads the environment and exits.

mod args;
mod demo;
mod exit;
mod interrupt;
mod limits;
mod progress;
mod run;
mod serve;
mod workload_cmd;

use clap::{Parser, Subcommand};

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

#[derive(Subcommand, Debug)]
enum Command {
    /// Load a URL or run a workload file and print what the server did
    #[command(after_help = exit::HELP)]
    Run(Box<args::RunArgs>),
    /// Check a workload file and report every problem with its line and column; sends nothing
    Validate(workload_cmd::ValidateArgs),
    /// Run the mock target server: routes with latency distributions, sizes, statuses and faults
    Serve(serve::ServeArgs),
    /// Start the mock server in-process and run a short load test against it
    Demo(demo::DemoArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Run(a) => run::cmd(a),
        Command::Serve(a) => serve::run(a)
            .map(|()| exit::OK)
            .map_err(|e| exit::Exit::bad_input(format!("{e:#}"))),
        Command::Demo(a) => demo::cmd(a),
        Command::Validate(a) => workload_cmd::validate(a),
    };
    match code {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("herd: {}", e.message);
            std::process::exit(e.code);
        }
    }
}
