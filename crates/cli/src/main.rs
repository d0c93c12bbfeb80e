//! The `herd` binary: glue from arguments (herd-args' `Cli`) to plan, engine and report. The
//! only crate that prints, reads the environment and exits.

mod capacity;
mod compare_cmd;
mod demo;
mod doctor;
mod env_values;
mod exit;
mod grpc;
mod history_cmd;
mod interrupt;
mod k8s;
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
mod series;
mod serve;
mod shell;
mod store_cmd;
mod sweep;
mod sweep_table;
mod workload_cmd;

use clap::{CommandFactory, Parser};
use herd_args::{Cli, Command};

fn main() {
    quiet_on_closed_stdout();
    let args = herd_args::serve::listen_values(std::env::args_os().collect());
    let cli = Cli::parse_from(args.unwrap_or_else(|e| {
        eprintln!("herd: {e}");
        std::process::exit(exit::BAD_INPUT);
    }));
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
        Command::Completions(a) => shell::completions(a, Cli::command()),
        Command::Man(a) => shell::man(a, Cli::command()),
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
