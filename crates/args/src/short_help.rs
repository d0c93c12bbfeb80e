//! `herd run -h`: the flags most runs need, on one screen; `--help` lists them all (ripgrep's
//! `-h` against `--help`). The list is of long names, so a flag moved between argument groups
//! keeps its place here.

use clap::Arg;

/// What `-h` shows besides the URL: the load, the request, the protocol, the outputs.
const RUN: &[&str] = &[
    "connections",
    "rate",
    "duration",
    "requests",
    "threads",
    "method",
    "header",
    "body",
    "body-file",
    "script",
    "timeout",
    "warmup",
    "http2",
    "http3",
    "streams",
    "pipeline",
    "insecure",
    "json",
    "quiet",
    "help",
];

/// `herd run`'s arguments as `-h` shows them: positional ones and those in `RUN`.
pub fn run(arg: Arg) -> Arg {
    match arg.get_long() {
        Some(long) if !RUN.contains(&long) => arg.hide_short_help(true),
        _ => arg,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_flag_run_h_shows_exists() {
        let mut cli = crate::Cli::command();
        cli.build();
        let run = cli.find_subcommand("run").expect("run");
        for long in super::RUN {
            if ["help"].contains(long) {
                continue;
            }
            assert!(
                run.get_arguments().any(|a| a.get_long() == Some(long)),
                "--{long} is listed for -h but herd run has no such flag"
            );
        }
    }
}
