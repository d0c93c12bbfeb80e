//! The checks of `herd doctor` as pure functions of what was read from the machine: each takes
//! values and returns a verdict, the value shown, and the exact command that fixes it. Tested as
//! tables, no `/proc` needed.

use crate::system::{port_budget, ports_held, PortBudget, TIME_WAIT_S};
use herd_result::format::count;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    /// What was found, and what it means.
    pub value: String,
    /// The command or setting that fixes it; `None` when OK.
    pub fix: Option<String>,
}

impl Check {
    fn new(name: &'static str, status: Status, value: String, fix: Option<String>) -> Self {
        Check {
            name,
            status,
            value,
            fix,
        }
    }
}

/// The load the user plans, as `herd run` would resolve it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub connections: u64,
    pub rate: Option<f64>,
    pub calls_per_conn: Option<u64>,
    /// The files herd keeps open besides its connections (`herd_run::SPARE_FDS`).
    pub spare_fds: u64,
}

/// New connections per second the load implies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Churn {
    /// Keep-alive: connections are opened once.
    None,
    Known(f64),
    /// Connections are replaced as fast as the server answers (closed model with
    /// `--calls-per-conn`): only the server decides how fast.
    Unknown,
}

impl Load {
    pub fn churn(&self) -> Churn {
        match (self.calls_per_conn, self.rate) {
            (None, _) => Churn::None,
            (Some(k), Some(r)) => Churn::Known(r / k.max(1) as f64),
            (Some(_), None) => Churn::Unknown,
        }
    }
}

/// The open-file limit against the connections asked for. herd raises its soft limit to the hard
/// limit itself, so only the hard limit can stop it.
pub fn open_files(soft: u64, hard: u64, load: &Load) -> Check {
    let needed = load.connections + load.spare_fds;
    let value = format!(
        "soft {}, hard {}; {} connections need {}",
        limit(soft),
        limit(hard),
        count(load.connections),
        count(needed)
    );
    if hard < needed {
        let fix = format!(
            "ulimit -Hn {needed}; ulimit -n {needed} (as root), or `* hard nofile {needed}` in \
             /etc/security/limits.conf, or LimitNOFILE={needed} for a systemd service"
        );
        return Check::new("open files", Status::Fail, value, Some(fix));
    }
    let value = if soft < needed {
        format!("{value} (herd raises its soft limit to the hard limit)")
    } else {
        value
    };
    Check::new("open files", Status::Ok, value, None)
}

/// The local port range against the ports the load keeps busy: its connections, plus every
/// port it closed in the last 60 s (TIME_WAIT), unless TIME_WAIT reuse applies to the target.
/// The same rule judges a finished run (`herd_engine::generator`), by the ports herd really held.
pub fn local_ports(range: (u16, u16), load: &Load, tw_reuse: u8, loopback: bool) -> Check {
    let (lo, hi) = range;
    let ports = crate::system::range_size(range);
    let reuse = tw_reuse_applies(tw_reuse, loopback);
    let fix_range = "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"";
    let fix_reuse = "sysctl -w net.ipv4.tcp_tw_reuse=1";
    let range_text = format!("{lo}-{hi} ({} ports)", count(ports));
    match load.churn() {
        Churn::None => {
            let value = format!(
                "{range_text}; {} keep-alive connections",
                count(load.connections)
            );
            if load.connections > ports {
                let fix = format!("{fix_range}, or fewer connections (-c)");
                return Check::new("local ports", Status::Fail, value, Some(fix));
            }
            Check::new("local ports", Status::Ok, value, None)
        }
        Churn::Unknown => {
            let value = format!(
                "{range_text}; connections are replaced as fast as the server answers, and past {} \
                 new connections/s the ports run out, each held 60 s in TIME_WAIT",
                count(ports / 60)
            );
            if reuse {
                let value = format!("{value}; TIME_WAIT reuse is on for this target");
                return Check::new("local ports", Status::Ok, value, None);
            }
            let fix = format!(
                "pass --rate to doctor to check the numbers; {fix_reuse}; {fix_range}; or keep \
                 connections alive longer (larger --calls-per-conn)"
            );
            Check::new("local ports", Status::Warn, value, Some(fix))
        }
        Churn::Known(per_s) => {
            let busy = ports_held(per_s, TIME_WAIT_S, load.connections);
            let value = format!(
                "{range_text}; {} new connections/s x {TIME_WAIT_S} s in TIME_WAIT + {} open = {} busy",
                rate_text(per_s),
                count(load.connections),
                count(busy)
            );
            let budget = port_budget(busy, ports);
            if budget == PortBudget::Fits {
                return Check::new("local ports", Status::Ok, value, None);
            }
            if reuse {
                let value = format!(
                    "{value}; relies on TIME_WAIT reuse (tcp_tw_reuse={tw_reuse}) for this target"
                );
                let fix = format!("{fix_range} for headroom");
                return Check::new("local ports", Status::Warn, value, Some(fix));
            }
            let status = if budget == PortBudget::Exhausted {
                Status::Fail
            } else {
                Status::Warn
            };
            let fix = format!(
                "{fix_reuse}; {fix_range}; or keep connections alive longer (larger --calls-per-conn)"
            );
            Check::new("local ports", status, value, Some(fix))
        }
    }
}

/// Whether Linux reuses TIME_WAIT ports for new connections to this target: 1 for all, 2 (the
/// default since 4.19) for loopback only.
fn tw_reuse_applies(tw_reuse: u8, loopback: bool) -> bool {
    crate::system::tw_reuse_applies(tw_reuse, Some(loopback)) == Some(true)
}

/// `net.ipv4.tcp_tw_reuse`: matters only when connections are replaced.
pub fn tw_reuse(value: u8, loopback: bool, load: &Load) -> Check {
    let meaning = match value {
        0 => "off",
        1 => "on",
        2 => "loopback only",
        _ => "unknown setting",
    };
    let text = format!("{value} ({meaning})");
    let churns = load.churn() != Churn::None;
    if !churns || tw_reuse_applies(value, loopback) {
        let why = if churns {
            "applies to this target"
        } else {
            "keep-alive connections do not need it"
        };
        return Check::new("tcp_tw_reuse", Status::Ok, format!("{text}: {why}"), None);
    }
    let value = format!("{text}: replaced connections leave their ports in TIME_WAIT for 60 s");
    Check::new(
        "tcp_tw_reuse",
        Status::Warn,
        value,
        Some("sysctl -w net.ipv4.tcp_tw_reuse=1".to_owned()),
    )
}

/// `net.core.somaxconn` caps every listen queue on this machine: herd opens its connections at
/// once, and a server here that accepts fewer drops the SYNs of the rest (a connect then takes 1
/// s or more).
pub fn somaxconn(value: u64, load: &Load) -> Check {
    let wanted = load.connections.clamp(1024, 4096);
    let text = format!(
        "{} (listen queue cap for servers on this machine)",
        count(value)
    );
    if value >= wanted {
        return Check::new("somaxconn", Status::Ok, text, None);
    }
    let value = if load.connections > value {
        format!(
            "{text}: {} connections opened at once can overflow it",
            count(load.connections)
        )
    } else {
        format!("{text}: below 1,024, a burst of new connections can overflow it")
    };
    let fix = format!(
        "sysctl -w net.core.somaxconn={wanted} (and the server's own backlog, e.g. nginx `listen ... backlog={wanted}`)"
    );
    Check::new("somaxconn", Status::Warn, value, Some(fix))
}

/// Cores: herd runs one event loop per core, and a server on the same machine competes for them.
pub fn cpus(n: usize, loopback: bool) -> Check {
    let text = format!("{n} core{}", if n == 1 { "" } else { "s" });
    if n < 2 || (loopback && n < 4) {
        let value = format!(
            "{text}, shared by herd and a server on this machine: each slows the other, and the \
             run measures both"
        );
        let fix = "load from another machine, or pin them apart: taskset -c 0 herd run -t 1 ...; \
                   taskset -c 1- <server>"
            .to_owned();
        return Check::new("cpu", Status::Warn, value, Some(fix));
    }
    Check::new(
        "cpu",
        Status::Ok,
        format!("{text}: herd runs one event loop per core"),
        None,
    )
}

/// The cpufreq governor of each core: anything but `performance` changes the clock with the load,
/// and latencies with it.
pub fn governor(governors: &[String]) -> Check {
    if governors.is_empty() {
        let value = "not exposed by /sys (a virtual machine, or a fixed clock): nothing to set";
        return Check::new("cpu scaling", Status::Ok, value.to_owned(), None);
    }
    let slow: Vec<&String> = governors.iter().filter(|g| *g != "performance").collect();
    if slow.is_empty() {
        let value = format!("performance on all {} cores", governors.len());
        return Check::new("cpu scaling", Status::Ok, value, None);
    }
    let value = format!(
        "{} on {} of {} cores: the clock follows the load, and latencies with it",
        slow[0],
        slow.len(),
        governors.len()
    );
    let fix = "cpupower frequency-set -g performance (or: echo performance | tee \
               /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)"
        .to_owned();
    Check::new("cpu scaling", Status::Warn, value, Some(fix))
}

/// Whether the target resolves and accepts a connection.
pub fn target(
    url: &str,
    resolved: &Result<String, String>,
    connect: &Result<Duration, String>,
) -> Check {
    let addr = match resolved {
        Ok(a) => a,
        Err(e) => {
            let fix = "check the URL and the host name (getent hosts NAME)".to_owned();
            return Check::new("target", Status::Fail, e.clone(), Some(fix));
        }
    };
    match connect {
        Ok(d) => {
            let value = format!(
                "{url} -> {addr}, connected in {}",
                herd_result::format::duration_ms(d.as_secs_f64() * 1e3)
            );
            Check::new("target", Status::Ok, value, None)
        }
        Err(e) => {
            let value = format!("{url} -> {addr}: {e}");
            let fix = "start the server, or check the port and any firewall between".to_owned();
            Check::new("target", Status::Fail, value, Some(fix))
        }
    }
}

fn limit(n: u64) -> String {
    if n == libc::RLIM_INFINITY {
        "unlimited".to_owned()
    } else {
        count(n)
    }
}

fn rate_text(r: f64) -> String {
    herd_result::format::rate(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(connections: u64, rate: Option<f64>, calls: Option<u64>) -> Load {
        Load {
            connections,
            rate,
            calls_per_conn: calls,
            spare_fds: 64,
        }
    }

    #[test]
    fn open_files_only_the_hard_limit_can_stop_herd() {
        let table = [
            (1024, 1024, 10, Status::Ok, ""),
            (1024, 1_048_576, 5000, Status::Ok, "raises its soft limit"),
            (1024, 4096, 5000, Status::Fail, ""),
            (65536, 65536, 65472, Status::Ok, ""),
            (65536, 65536, 65473, Status::Fail, ""),
        ];
        for (soft, hard, c, want, note) in table {
            let ch = open_files(soft, hard, &load(c, None, None));
            assert_eq!(ch.status, want, "{soft}/{hard} for {c}: {ch:?}");
            assert!(ch.value.contains(note), "{ch:?}");
            assert_eq!(ch.fix.is_some(), want == Status::Fail);
        }
        let fail = open_files(1024, 4096, &load(5000, None, None));
        assert!(fail.fix.unwrap().contains("ulimit -n 5064"));
    }

    #[test]
    fn local_ports_count_time_wait() {
        let debian = (32768, 60999); // 28,232 ports
        let wide = (1024, 65535); // 64,512 ports
        let table = [
            // keep-alive: only the open connections hold ports
            (debian, load(1000, Some(5000.0), None), 0, false, Status::Ok),
            (debian, load(30_000, None, None), 0, false, Status::Fail),
            // 100/s x 60 s + 1000 open = 7,000: fine
            (
                debian,
                load(1000, Some(100.0), Some(1)),
                0,
                false,
                Status::Ok,
            ),
            // 400/s: 25,000 of 28,232: tight
            (
                debian,
                load(1000, Some(400.0), Some(1)),
                0,
                false,
                Status::Warn,
            ),
            // 2000/s: 121,000: exhausted, unless reuse applies
            (
                debian,
                load(1000, Some(2000.0), Some(1)),
                0,
                false,
                Status::Fail,
            ),
            (
                debian,
                load(1000, Some(2000.0), Some(1)),
                2,
                false,
                Status::Fail,
            ),
            (
                debian,
                load(1000, Some(2000.0), Some(1)),
                2,
                true,
                Status::Warn,
            ),
            (
                debian,
                load(1000, Some(2000.0), Some(1)),
                1,
                false,
                Status::Warn,
            ),
            // 2000/s, 10 per connection: 12,000 + 1000
            (
                debian,
                load(1000, Some(2000.0), Some(10)),
                0,
                false,
                Status::Ok,
            ),
            (wide, load(1000, Some(700.0), Some(1)), 0, false, Status::Ok),
            // closed model replacing connections: the server sets the pace
            (debian, load(10, None, Some(1)), 0, false, Status::Warn),
            (debian, load(10, None, Some(1)), 2, true, Status::Ok),
        ];
        for (range, l, reuse, loopback, want) in table {
            let ch = local_ports(range, &l, reuse, loopback);
            assert_eq!(
                ch.status, want,
                "{range:?} {l:?} reuse={reuse}: {}",
                ch.value
            );
            assert_eq!(ch.fix.is_some(), want != Status::Ok, "{ch:?}");
        }
        let ch = local_ports(debian, &load(1000, Some(2000.0), Some(1)), 0, false);
        assert_eq!(
            ch.value,
            "32768-60999 (28,232 ports); 2,000 new connections/s x 60 s in TIME_WAIT + 1,000 open = 121,000 busy"
        );
        assert!(ch.fix.unwrap().contains("net.ipv4.tcp_tw_reuse=1"));
    }

    #[test]
    fn tw_reuse_matters_only_for_replaced_connections() {
        let churn = load(100, Some(1000.0), Some(1));
        let keep = load(100, Some(1000.0), None);
        let table = [
            (0, false, keep, Status::Ok),
            (0, false, churn, Status::Warn),
            (2, true, churn, Status::Ok),
            (2, false, churn, Status::Warn),
            (1, false, churn, Status::Ok),
        ];
        for (value, loopback, l, want) in table {
            let ch = tw_reuse(value, loopback, &l);
            assert_eq!(ch.status, want, "{value} loopback={loopback}: {ch:?}");
        }
    }

    #[test]
    fn somaxconn_against_connections_opened_at_once() {
        let table = [
            (4096, 10, Status::Ok),
            (4096, 10_000, Status::Ok),
            (1024, 10, Status::Ok),
            (1024, 2000, Status::Warn),
            (128, 10, Status::Warn),
        ];
        for (value, c, want) in table {
            let ch = somaxconn(value, &load(c, None, None));
            assert_eq!(ch.status, want, "{value} for {c}: {ch:?}");
        }
        let ch = somaxconn(128, &load(10, None, None));
        assert!(ch
            .fix
            .unwrap()
            .starts_with("sysctl -w net.core.somaxconn=1024"));
    }

    #[test]
    fn cores_and_their_clock() {
        assert_eq!(cpus(1, false).status, Status::Warn);
        assert_eq!(cpus(2, true).status, Status::Warn);
        assert_eq!(cpus(2, false).status, Status::Ok);
        assert_eq!(cpus(8, true).status, Status::Ok);
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(governor(&[]).status, Status::Ok);
        assert_eq!(
            governor(&s(&["performance", "performance"])).status,
            Status::Ok
        );
        let ch = governor(&s(&["performance", "powersave", "powersave"]));
        assert_eq!(ch.status, Status::Warn);
        assert!(ch.value.starts_with("powersave on 2 of 3 cores"), "{ch:?}");
        assert!(ch
            .fix
            .unwrap()
            .contains("cpupower frequency-set -g performance"));
    }

    #[test]
    fn the_target_must_resolve_and_accept() {
        let url = "http://127.0.0.1:8080/";
        let addr = Ok("127.0.0.1:8080".to_owned());
        let ok = target(url, &addr, &Ok(Duration::from_micros(150)));
        assert_eq!(ok.status, Status::Ok);
        assert!(ok.value.ends_with("connected in 150 us"), "{ok:?}");
        let refused = target(url, &addr, &Err("Connection refused".into()));
        assert_eq!(refused.status, Status::Fail);
        assert!(refused.fix.unwrap().contains("start the server"));
        let unresolved = target(
            url,
            &Err("cannot resolve x.invalid".into()),
            &Ok(Duration::ZERO),
        );
        assert_eq!(unresolved.status, Status::Fail);
        assert!(unresolved.fix.unwrap().contains("getent hosts"));
    }
}
