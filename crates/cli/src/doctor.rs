//! `herd doctor [URL] [--rate R] [-c N]`: is this machine ready to generate load? Reads the
//! limits and kernel settings that silently cap a load test (open files, local ports and
//! TIME_WAIT, listen queues, cores and their clock) and whether the target answers, and prints
//! each with OK, WARN or FAIL and the command that fixes it. Exit 0 without a FAIL, else 2.

mod checks;

use crate::exit::{self, Exit};
use checks::{Check, Load, Status};
use clap::Args;
use herd_http::Target;
use herd_monitor::system;
use herd_result::format::{count, rate};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The URL you will load: checked to resolve and accept a connection
    pub url: Option<String>,

    /// The arrival rate you plan (herd run --rate)
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,

    /// The connections you plan (herd run -c) [default: 10, or 1000 with --rate]
    #[arg(short = 'c', long = "connections", value_name = "N")]
    pub connections: Option<u64>,

    /// Requests per connection you plan (herd run --calls-per-conn) [default: keep-alive]
    #[arg(long = "calls-per-conn", value_name = "K")]
    pub calls_per_conn: Option<u64>,
}

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
    };
    println!(
        "herd doctor: this machine as a load generator for {}; target {}",
        describe(&load),
        describe_target(a.url.as_deref())
    );
    let checks = run_checks(a.url.as_deref(), &load);
    for c in &checks {
        println!("  {:<5} {:<13} {}", c.status.label(), c.name, c.value);
        if let Some(fix) = &c.fix {
            println!("  {:<5} {:<13} fix: {fix}", "", "");
        }
    }
    let n = |s: Status| checks.iter().filter(|c| c.status == s).count();
    println!(
        "doctor: {} FAIL, {} WARN, {} OK",
        n(Status::Fail),
        n(Status::Warn),
        n(Status::Ok)
    );
    Ok(if n(Status::Fail) > 0 {
        exit::BAD_INPUT
    } else {
        exit::OK
    })
}

fn describe(load: &Load) -> String {
    let plural =
        |n: u64, noun: &str| format!("{} {noun}{}", count(n), if n == 1 { "" } else { "s" });
    let mut s = plural(load.connections, "connection");
    if let Some(r) = load.rate {
        s.push_str(&format!(" at {} req/s", rate(r)));
    }
    match load.calls_per_conn {
        Some(k) => s.push_str(&format!(", {} per connection", plural(k, "request"))),
        None => s.push_str(", kept alive"),
    }
    s
}

fn describe_target(url: Option<&str>) -> String {
    match url {
        Some(url) => url.to_owned(),
        None => "not given (checked as a remote server)".to_owned(),
    }
}

/// Reads the machine and runs every check. A setting that cannot be read is said so (WARN), never
/// guessed.
fn run_checks(url: Option<&str>, load: &Load) -> Vec<Check> {
    let mut out = Vec::new();
    let target = url.map(probe);
    // Without a target that resolved, assume a remote one: the stricter case.
    let loopback = target.as_ref().and_then(|t| t.ip_loopback).unwrap_or(false);
    out.push(match system::fd_limit() {
        Ok((soft, hard)) => checks::open_files(soft, hard, load),
        Err(e) => unreadable("open files", "getrlimit(RLIMIT_NOFILE)", e.to_string()),
    });
    let tw = system::tw_reuse();
    out.push(match system::local_port_range() {
        Ok(range) => checks::local_ports(range, load, *tw.as_ref().unwrap_or(&0), loopback),
        Err(e) => unreadable("local ports", "net.ipv4.ip_local_port_range", e),
    });
    out.push(match tw {
        Ok(v) => checks::tw_reuse(v, loopback, load),
        Err(e) => unreadable("tcp_tw_reuse", "net.ipv4.tcp_tw_reuse", e),
    });
    out.push(
        match read_sys("/proc/sys/net/core/somaxconn").and_then(|s| parse_one::<u64>(&s)) {
            Ok(v) => checks::somaxconn(v, load),
            Err(e) => unreadable("somaxconn", "net.core.somaxconn", e),
        },
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    out.push(checks::cpus(cores, loopback));
    out.push(checks::governor(&governors()));
    if let (Some(url), Some(t)) = (url, target) {
        out.push(checks::target(url, &t.resolved, &t.connect));
    }
    out
}

fn unreadable(name: &'static str, what: &str, error: String) -> Check {
    Check {
        name,
        status: Status::Warn,
        value: format!("cannot read {what}: {error}"),
        fix: None,
    }
}

/// What was found of the target.
struct Probe {
    resolved: Result<String, String>,
    connect: Result<Duration, String>,
    ip_loopback: Option<bool>,
}

fn probe(url: &str) -> Probe {
    let target = match Target::parse(url) {
        Ok(t) => t,
        Err(e) => {
            return Probe {
                resolved: Err(e.to_string()),
                connect: Err(String::new()),
                ip_loopback: None,
            }
        }
    };
    let addr = target.addr();
    let started = Instant::now();
    let connect = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
        .map(|_| started.elapsed())
        .map_err(|e| e.to_string());
    Probe {
        resolved: Ok(addr.to_string()),
        connect,
        ip_loopback: Some(addr.ip().is_loopback()),
    }
}

fn read_sys(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

fn parse_one<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("unexpected value {:?}", s.trim()))
}

/// The scaling governor of each core that exposes one.
fn governors() -> Vec<String> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") else {
        return out;
    };
    let mut cpus: Vec<_> = dir
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cpu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|e| e.path())
        .collect();
    cpus.sort();
    for cpu in cpus {
        if let Ok(g) = std::fs::read_to_string(cpu.join("cpufreq/scaling_governor")) {
            out.push(g.trim().to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_values_as_the_kernel_writes_them() {
        assert_eq!(parse_one::<u8>("2\n"), Ok(2));
        assert!(parse_one::<u8>("two").is_err());
    }
}
