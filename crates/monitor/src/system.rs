//! Facts about this machine that cap a load generator, and the one rule that reads them: the
//! open-file limit, the local port range, TIME_WAIT reuse. `herd doctor` checks them before a run,
//! and the generator's verdict judges a run by them afterwards; both must say the same thing.
//!
//! The rule for local ports: a new outgoing connection needs a local port not already used toward
//! the *same destination* (the kernel picks ports per destination 4-tuple), so what limits herd is
//! its own connections to its target (open ones, plus each one it closed in the last 60 s,
//! held in TIME_WAIT) against the range, unless TIME_WAIT reuse applies. Sockets of other
//! programs (to other destinations) do not take herd's ports; they are worth a warning only.

use std::io;

/// How long a closed connection's port stays in TIME_WAIT on Linux (TCP_TIMEWAIT_LEN, fixed).
pub const TIME_WAIT_S: f64 = 60.0;

/// The process's open-file limit: (soft, hard).
pub fn fd_limit() -> io::Result<(u64, u64)> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((rl.rlim_cur, rl.rlim_max))
}

/// Sets the soft open-file limit, keeping the hard one.
pub fn set_fd_soft_limit(soft: u64) -> io::Result<()> {
    let (_, hard) = fd_limit()?;
    let rl = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Open file descriptors of this process.
pub fn open_fds() -> Option<u64> {
    std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64)
}

/// `net.ipv4.ip_local_port_range`: the ports outgoing connections get.
pub fn local_port_range() -> Result<(u16, u16), String> {
    parse_port_range(&read_sys("/proc/sys/net/ipv4/ip_local_port_range")?)
}

pub fn parse_port_range(text: &str) -> Result<(u16, u16), String> {
    let mut it = text.split_whitespace().map(str::parse::<u16>);
    match (it.next(), it.next()) {
        (Some(Ok(lo)), Some(Ok(hi))) if lo <= hi => Ok((lo, hi)),
        _ => Err(format!("unexpected value {:?}", text.trim())),
    }
}

/// How many ports a range holds.
pub fn range_size((lo, hi): (u16, u16)) -> u64 {
    u64::from(hi - lo) + 1
}

/// `net.ipv4.tcp_tw_reuse`: 0 off, 1 on, 2 loopback only (the default since Linux 4.19).
pub fn tw_reuse() -> Result<u8, String> {
    let text = read_sys("/proc/sys/net/ipv4/tcp_tw_reuse")?;
    text.trim()
        .parse()
        .map_err(|_| format!("unexpected value {:?}", text.trim()))
}

/// Whether Linux reuses TIME_WAIT ports for new connections to a target. `None` when it depends
/// on whether the target is loopback and that is not known.
pub fn tw_reuse_applies(tw_reuse: u8, loopback: Option<bool>) -> Option<bool> {
    match tw_reuse {
        1 => Some(true),
        2 => loopback,
        _ => Some(false),
    }
}

/// TCP sockets on this machine (any state, TIME_WAIT included, every program's) whose local port
/// lies in `range`, from /proc/net/tcp and tcp6.
pub fn ports_in_use(range: (u16, u16)) -> Option<u64> {
    let mut n = 0;
    let mut any = false;
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        // Streamed, never read whole: with 10,000 connections open the table is megabytes,
        // and reading it into one string was the run's peak of memory.
        if let Ok(file) = std::fs::File::open(f) {
            any = true;
            n += count_ports(io::BufReader::new(file), range);
        }
    }
    any.then_some(n)
}

/// [`ports_in_use`] read once a second without paying for it every second. The kernel walks its
/// whole connection hash table to write /proc/net/tcp, which on a machine with much memory
/// costs milliseconds however few sockets there are; /proc/net/sockstat counts the sockets
/// for nothing. So the table is read each second while that is cheap, and otherwise when the
/// machine's socket count has moved by a twentieth of the range since the last reading, or
/// ten seconds have passed: between readings the last one stands, off by less than that.
#[derive(Debug)]
pub struct PortsGauge {
    range: (u16, u16),
    last: Option<PortsReading>,
}

/// One reading of the table, with what it cost and what sockstat said at the time.
#[derive(Clone, Copy, Debug)]
struct PortsReading {
    second: u64,
    ports: u64,
    sockets: Option<u64>,
    cost: std::time::Duration,
}

impl PortsGauge {
    pub fn new(range: (u16, u16)) -> Self {
        PortsGauge { range, last: None }
    }

    /// Ports in the range in use machine-wide at second `second` of the run.
    pub fn read(&mut self, second: u64) -> Option<u64> {
        let sockets = tcp_sockets();
        if let Some(last) = self.last {
            if !table_due(&last, second, sockets, range_size(self.range)) {
                return Some(last.ports);
            }
        }
        let began = std::time::Instant::now();
        let ports = ports_in_use(self.range)?;
        self.last = Some(PortsReading {
            second,
            ports,
            sockets,
            cost: began.elapsed(),
        });
        Some(ports)
    }
}

/// Whether the port table must be read again at `second` (see [`PortsGauge`]).
fn table_due(last: &PortsReading, second: u64, sockets: Option<u64>, range: u64) -> bool {
    let cheap = last.cost < std::time::Duration::from_millis(1);
    let moved = match (last.sockets, sockets) {
        (Some(a), Some(b)) => a.abs_diff(b) * 20 > range,
        _ => true,
    };
    cheap || moved || second >= last.second + 10
}

/// TCP sockets on this machine, IPv4 and IPv6, TIME_WAIT included, from /proc/net/sockstat.
fn tcp_sockets() -> Option<u64> {
    let v4 = std::fs::read_to_string("/proc/net/sockstat").ok()?;
    let v6 = std::fs::read_to_string("/proc/net/sockstat6").unwrap_or_default();
    Some(sockstat_tcp(&v4, "TCP:") + sockstat_tcp(&v6, "TCP6:"))
}

/// `inuse` plus `tw` of the line starting with `tag` ("TCP: inuse 3 orphan 0 tw 176 ...").
fn sockstat_tcp(text: &str, tag: &str) -> u64 {
    let Some(line) = text.lines().find(|l| l.starts_with(tag)) else {
        return 0;
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| w[0] == "inuse" || w[0] == "tw")
        .filter_map(|w| w[1].parse::<u64>().ok())
        .sum()
}

fn count_ports(table: impl io::BufRead, (lo, hi): (u16, u16)) -> u64 {
    table
        .lines()
        .skip(1)
        .map_while(Result::ok)
        .filter_map(|l| local_port(&l))
        .filter(|p| (lo..=hi).contains(p))
        .count() as u64
}

/// The local port of one line of /proc/net/tcp: "0: 0100007F:1F90 ..." is 8080.
fn local_port(line: &str) -> Option<u16> {
    let local = line.split_whitespace().nth(1)?;
    u16::from_str_radix(local.rsplit(':').next()?, 16).ok()
}

/// Local ports herd's own connections hold toward one destination: those open, plus those it
/// closed within the last TIME_WAIT (a run shorter than that holds only what it closed so far).
pub fn ports_held(new_per_s: f64, over_s: f64, open: u64) -> u64 {
    let waiting = new_per_s.max(0.0) * over_s.clamp(0.0, TIME_WAIT_S);
    waiting.ceil() as u64 + open
}

/// How the ports held compare with the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortBudget {
    /// Three quarters of the range or less.
    Fits,
    /// More than three quarters: a burst or another program's connections to the same
    /// destination can exhaust it.
    Tight,
    /// More than the range: new connections fail (EADDRNOTAVAIL) unless TIME_WAIT reuse applies.
    Exhausted,
}

pub fn port_budget(held: u64, range: u64) -> PortBudget {
    if held > range {
        PortBudget::Exhausted
    } else if held > range * 3 / 4 {
        PortBudget::Tight
    } else {
        PortBudget::Fits
    }
}

pub(crate) fn read_sys(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// A short fingerprint of this machine, as Bencher's testbeds: its host name, cores and CPU
/// model, and a hash of its machine id with them (`shop-ci-3 8x AMD EPYC 7B13 #1a2b3c4d`). A
/// run records the machine that ran its load, so runs stored later elsewhere stay comparable
/// only with runs of the same machine.
pub fn fingerprint() -> String {
    use sha2::{Digest, Sha256};
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let host = read("/etc/hostname").trim().to_owned();
    let id = read("/etc/machine-id");
    let hash = Sha256::digest(format!("{id}|{cpu}|{cores}").as_bytes());
    let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{host} {cores}x {cpu} #{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_tables_and_ranges_are_read_as_the_kernel_writes_them() {
        let table = "  sl  local_address rem_address   st\n\
                     0: 0100007F:1F90 00000000:0000 0A\n\
                     1: 0100007F:8D3A 0100007F:1F90 01\n\
                     2: 00000000000000000000000001000000:EA60 00000000000000000000000000000000:0000 0A\n";
        // 0x1F90 = 8080 (outside), 0x8D3A = 36154 and 0xEA60 = 60000 (inside)
        assert_eq!(count_ports(table.as_bytes(), (32768, 60999)), 2);
        assert_eq!(parse_port_range("32768\t60999\n"), Ok((32768, 60999)));
        assert!(parse_port_range("60999 32768").is_err());
        assert!(parse_port_range("garbage").is_err());
        assert_eq!(range_size((32768, 60999)), 28_232);
    }

    #[test]
    fn sockstat_counts_tcp_sockets_in_use_and_in_time_wait() {
        let v4 =
            "sockets: used 15\nTCP: inuse 3 orphan 0 tw 176 alloc 3 mem 0\nUDP: inuse 9 mem 0\n";
        assert_eq!(sockstat_tcp(v4, "TCP:"), 179);
        assert_eq!(sockstat_tcp("TCP6: inuse 2\nUDP6: inuse 4\n", "TCP6:"), 2);
        assert_eq!(sockstat_tcp("", "TCP6:"), 0);
    }

    #[test]
    fn a_slow_port_table_is_read_again_only_when_sockets_moved_or_ten_seconds_passed() {
        let slow = PortsReading {
            second: 3,
            ports: 100,
            sockets: Some(1_000),
            cost: std::time::Duration::from_millis(5),
        };
        let range = 28_232; // a twentieth: 1,411 sockets
        assert!(!table_due(&slow, 4, Some(1_000), range));
        assert!(!table_due(&slow, 12, Some(2_400), range));
        assert!(table_due(&slow, 4, Some(2_412), range));
        assert!(!table_due(&slow, 4, Some(0), range));
        assert!(table_due(&slow, 13, Some(1_000), range));
        assert!(table_due(&slow, 4, None, range));
        let cheap = PortsReading {
            cost: std::time::Duration::from_micros(200),
            ..slow
        };
        assert!(table_due(&cheap, 4, Some(1_000), range));
    }

    #[test]
    fn herds_own_ports_are_its_churn_over_time_wait_plus_its_open_connections() {
        assert_eq!(ports_held(0.0, 600.0, 2), 2);
        assert_eq!(ports_held(2000.0, 600.0, 1000), 121_000);
        // A 5 s run has closed only 5 s worth of connections so far.
        assert_eq!(ports_held(2000.0, 5.0, 10), 10_010);
        assert_eq!(port_budget(7_000, 28_232), PortBudget::Fits);
        assert_eq!(port_budget(25_000, 28_232), PortBudget::Tight);
        assert_eq!(port_budget(121_000, 28_232), PortBudget::Exhausted);
        assert_eq!(tw_reuse_applies(2, Some(true)), Some(true));
        assert_eq!(tw_reuse_applies(2, Some(false)), Some(false));
        assert_eq!(tw_reuse_applies(2, None), None);
        assert_eq!(tw_reuse_applies(0, None), Some(false));
        assert_eq!(tw_reuse_applies(1, Some(false)), Some(true));
    }

    #[test]
    fn this_process_has_open_fds_and_a_limit() {
        assert!(open_fds().unwrap() >= 3);
        let (soft, hard) = fd_limit().unwrap();
        assert!(soft <= hard);
    }
}
