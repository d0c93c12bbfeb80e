//! `herd doctor [URL] [--rate R] [-c N]`: is this machine ready to generate load? Reads the
//! limits and kernel settings that silently cap a load test (open files, local ports and
//! TIME_WAIT, listen queues, cores and their clock) and whether the target answers, and prints
//! each with OK, WARN or FAIL and the command that fixes it. Exit 0 without a FAIL, else 2.
//! The readings and checks are herd-monitor's (`herd_monitor::doctor`).

use crate::exit::{self, Exit};
use herd_args::doctor::DoctorArgs;
use herd_http::Target;
use herd_monitor::doctor::{checks_text, heading, run_checks, Load, Probe};

pub fn cmd(a: &DoctorArgs) -> Result<i32, Exit> {
    if let Some(r) = a.rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Exit::bad_input(format!("--rate {r}: must be above 0")));
    }
    if a.calls_per_conn == Some(0) || a.connections == Some(0) {
        return Err(Exit::bad_input(
            "-c and --calls-per-conn must be at least 1",
        ));
    }
    let load = Load {
        connections: a.connections.unwrap_or(if a.rate.is_some() {
            herd_run::DEFAULT_OPEN_CAP
        } else {
            herd_run::DEFAULT_CONNECTIONS
        }),
        rate: a.rate,
        calls_per_conn: a.calls_per_conn,
        spare_fds: herd_run::SPARE_FDS,
    };
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
