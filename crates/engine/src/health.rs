//! The generator watching itself every second: CPU per worker thread, send lag, event-loop delay,
//! connections, file descriptors and ephemeral ports. Workers report what only they can see
//! (their own CPU and lateness); the collector adds what belongs to the process or the machine.

use crate::generator::ThreadCpu;
use std::time::Duration;

/// What one worker saw of itself during one second of the measurement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadSecond {
    pub index: u64,
    pub thread: usize,
    pub cpu: ThreadCpu,
    /// The latest its 10 ms ticks woke, this second.
    pub loop_delay_max: Duration,
    /// How late arrivals were handed out this second, 99th percentile (open model).
    pub send_lag_p99: Duration,
    pub open_connections: u64,
}

/// One second of the generator's health, all threads together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HealthSample {
    pub t: u64,
    /// CPU of each worker thread, percent of one core.
    pub cpu_percent: Vec<f64>,
    pub send_lag_p99: Duration,
    pub loop_delay_max: Duration,
    pub open_connections: u64,
    /// Open file descriptors of the whole process.
    pub fds: Option<u64>,
    /// TCP sockets on this machine bound to a port in the ephemeral range (any state, TIME_WAIT
    /// included): what new outgoing connections compete for.
    pub ephemeral_ports: Option<u64>,
}

impl HealthSample {
    pub(crate) fn new(t: u64, threads: usize) -> Self {
        HealthSample {
            t,
            cpu_percent: vec![0.0; threads],
            ..Default::default()
        }
    }

    pub(crate) fn add(&mut self, s: &ThreadSecond) {
        if let Some(c) = self.cpu_percent.get_mut(s.thread) {
            *c = 100.0 * s.cpu.total().as_secs_f64();
        }
        self.send_lag_p99 = self.send_lag_p99.max(s.send_lag_p99);
        self.loop_delay_max = self.loop_delay_max.max(s.loop_delay_max);
        self.open_connections += s.open_connections;
    }
}

/// Open file descriptors of this process.
pub fn open_fds() -> Option<u64> {
    std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64)
}

/// The ephemeral port range (`net.ipv4.ip_local_port_range`).
pub fn ephemeral_range() -> Option<(u16, u16)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    parse_range(&text)
}

fn parse_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(|n| n.parse::<u16>());
    match (it.next(), it.next()) {
        (Some(Ok(lo)), Some(Ok(hi))) if lo <= hi => Some((lo, hi)),
        _ => None,
    }
}

/// TCP sockets whose local port lies in `range`, from /proc/net/tcp and tcp6.
pub fn ports_in_use(range: (u16, u16)) -> Option<u64> {
    let mut n = 0;
    let mut any = false;
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(f) {
            any = true;
            n += count_ports(&text, range);
        }
    }
    any.then_some(n)
}

fn count_ports(table: &str, (lo, hi): (u16, u16)) -> u64 {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|local| local.rsplit(':').next())
        .filter_map(|port| u16::from_str_radix(port, 16).ok())
        .filter(|p| (lo..=hi).contains(p))
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_tables_are_read_as_the_kernel_writes_them() {
        let table = "  sl  local_address rem_address   st\n\
                     0: 0100007F:1F90 00000000:0000 0A\n\
                     1: 0100007F:8D3A 0100007F:1F90 01\n\
                     2: 00000000000000000000000001000000:EA60 00000000000000000000000000000000:0000 0A\n";
        // 0x1F90 = 8080 (outside), 0x8D3A = 36154 and 0xEA60 = 60000 (inside)
        assert_eq!(count_ports(table, (32768, 60999)), 2);
        assert_eq!(parse_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_range("garbage"), None);
    }

    #[test]
    fn this_process_has_open_fds() {
        assert!(open_fds().unwrap() >= 3);
    }

    #[test]
    fn samples_merge_threads() {
        let mut h = HealthSample::new(3, 2);
        h.add(&ThreadSecond {
            thread: 1,
            cpu: ThreadCpu {
                user: Duration::from_millis(300),
                sys: Duration::from_millis(200),
            },
            open_connections: 5,
            ..Default::default()
        });
        h.add(&ThreadSecond {
            thread: 0,
            loop_delay_max: Duration::from_millis(7),
            open_connections: 3,
            ..Default::default()
        });
        assert_eq!(h.cpu_percent, vec![0.0, 50.0]);
        assert_eq!(h.open_connections, 8);
        assert_eq!(h.loop_delay_max, Duration::from_millis(7));
    }
}
