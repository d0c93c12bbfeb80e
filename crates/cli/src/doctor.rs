//! `herd doctor [URL] [--rate R] [-c N]`: is this machine ready to generate load? Reads the
//! limits and kernel settings that silently cap a load test (open files, local ports and
//! TIME_WAIT, listen queues, cores and their clock) and whether the target answers, and prints
//! each with OK, WARN or FAIL and the command that fixes it. Exit 0 without a FAIL, else 2.
//! The readings and checks are herd-monitor's (`herd_monitor::doctor`).

use crate::exit::{self, Exit};
use herd_args::doctor::DoctorArgs;
use herd_http::Target;
use herd_monitor::doctor::{checks_text, heading, run_checks, Probe};

pub fn cmd(a: &DoctorArgs) -> Result<i32, Exit> {
    let load = a.load().map_err(Exit::bad_input)?;
    println!("{}", heading(&load, a.url.as_deref()));
    let target = a.url.as_deref().map(|url| {
        let addr = Target::parse(url)
            .map(|t| t.addr())
            .map_err(|e| e.to_string());
        (url, Probe::connect(addr))
    });
    let (text, failed) = checks_text(&run_checks(target, &load));
    print!("{text}");
    Ok(if failed { exit::BAD_INPUT } else { exit::OK })
}
