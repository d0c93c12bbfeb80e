//! `herd doctor`'s readings and checks: is this machine ready to generate load? Reads the limits
//! and kernel settings that silently cap a load test (open files, local ports and TIME_WAIT,
//! listen queues, cores and their clock) and whether the target accepts a connection, and judges
//! each with OK, WARN or FAIL and the command that fixes it ([`checks`]: pure, tested as tables).

pub mod checks;
mod text;

pub use checks::{Check, Load, Status};
pub use text::{checks_text, heading};

use crate::system::{self, read_sys};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What was found of the target.
pub struct Probe {
    resolved: Result<String, String>,
    connect: Result<Duration, String>,
    ip_loopback: Option<bool>,
}

impl Probe {
    /// A TCP connection to the target's address (or why there is none), timed.
    pub fn connect(addr: Result<SocketAddr, String>) -> Probe {
        let addr = match addr {
            Ok(a) => a,
            Err(e) => {
                return Probe {
                    resolved: Err(e),
                    connect: Err(String::new()),
                    ip_loopback: None,
                }
            }
        };
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
}

/// Reads the machine and runs every check, the target's (its URL and what was found of it)
/// last. A setting that cannot be read is said so (WARN), never guessed.
pub fn run_checks(target: Option<(&str, Probe)>, load: &Load) -> Vec<Check> {
    let mut out = Vec::new();
    // Without a target that resolved, assume a remote one: the stricter case.
    let loopback = target
        .as_ref()
        .and_then(|t| t.1.ip_loopback)
        .unwrap_or(false);
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
    if let Some((url, t)) = target {
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
