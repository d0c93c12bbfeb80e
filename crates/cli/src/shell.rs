//! `herd completions SHELL` and `herd man [SUBCOMMAND]`: shell completions (clap_complete) and
//! man pages in roff (clap_mangen), both made from the clap definitions `herd` parses with, so
//! they cannot drift from the flags.

use herd_args::shell::{CompletionsArgs, ManArgs};
use std::io::Write;

/// Every subcommand declared: `herd`'s subcommands declare their flags only when parsed
/// (`Deferred`), and completions and pages need them all. `cmd` is herd's whole command
/// (`herd_args::Cli::command()`), handed down by main.
fn built(mut cmd: clap::Command) -> clap::Command {
    cmd.build();
    cmd
}

pub fn completions(a: &CompletionsArgs, cmd: clap::Command) -> Result<i32, crate::exit::Exit> {
    let mut cmd = built(cmd);
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "herd", &mut script);
    print(&script)
}

pub fn man(a: &ManArgs, cmd: clap::Command) -> Result<i32, crate::exit::Exit> {
    print(&page(a.subcommand.as_deref(), cmd)?)
}

/// Writes `bytes` to stdout. A reader that stopped early (`herd man run | head`) ends herd as
/// it ends other commands, exit 141 without a word; any other failure is said.
fn print(bytes: &[u8]) -> Result<i32, crate::exit::Exit> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(crate::exit::OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(141),
        Err(e) => Err(crate::exit::Exit::bad_input(format!(
            "cannot write to standard output: {e}"
        ))),
    }
}

/// The roff page of `herd`, or of one of its subcommands (named `herd-run` as git's are).
fn page(subcommand: Option<&str>, cmd: clap::Command) -> Result<Vec<u8>, crate::exit::Exit> {
    let cmd = built(cmd);
    let cmd = match subcommand {
        None => cmd,
        Some(name) => {
            let Some(sub) = cmd.find_subcommand(name).cloned() else {
                let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
                return Err(crate::exit::Exit::bad_input(format!(
                    "herd has no subcommand `{name}`: give one of {}",
                    names.join(", ")
                )));
            };
            // clap names are 'static: the page is printed once and the process ends.
            let title: &'static str = Box::leak(format!("herd-{name}").into_boxed_str());
            sub.name(title)
                .bin_name(format!("herd {name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .map_err(|e| crate::exit::Exit::bad_input(format!("cannot render the page: {e}")))?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::page;
    use clap::CommandFactory;

    fn herd() -> clap::Command {
        herd_args::Cli::command()
    }

    #[test]
    fn the_run_page_lists_every_flag_run_takes() {
        let text = String::from_utf8(page(Some("run"), herd()).expect("page")).expect("utf-8");
        assert!(text.starts_with(".ie"), "{}", &text[..80.min(text.len())]);
        assert!(text.contains(".TH herd-run 1"), "no title");
        let mut cmd = super::built(herd());
        let run = cmd.find_subcommand_mut("run").expect("run");
        for arg in run.get_arguments() {
            if let Some(long) = arg.get_long() {
                // roff escapes a `-` as `\-`
                let shown = format!("\\-\\-{}", long.replace('-', "\\-"));
                assert!(text.contains(&shown), "--{long} missing from herd-run(1)");
            }
        }
    }

    #[test]
    fn an_unknown_subcommand_names_the_known_ones() {
        let e = page(Some("runn"), herd()).expect_err("no such subcommand");
        assert!(e.message.contains("run, validate"), "{}", e.message);
    }
}
