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
    /// included, every program's): machine-wide pressure, not herd's own use.
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

// What belongs to the process and the machine is read by herd_monitor::system, the module
// `herd doctor` reads too, so the check before a run and the verdict after it agree.
pub use herd_monitor::system::{open_fds, PortsGauge};

/// The ephemeral port range (`net.ipv4.ip_local_port_range`).
pub fn ephemeral_range() -> Option<(u16, u16)> {
    herd_monitor::system::local_port_range().ok()
}

/// `net.ipv4.tcp_tw_reuse`.
pub fn tw_reuse() -> Option<u8> {
    herd_monitor::system::tw_reuse().ok()
}

/// The collector's side of the generator's self-watch: merges the workers' seconds and adds
/// what belongs to the process and the machine (file descriptors, ephemeral ports).
pub(crate) struct Watch {
    threads: usize,
    pub samples: std::collections::BTreeMap<u64, HealthSample>,
    /// The last second each worker reported.
    latest: Vec<Option<u64>>,
    pub range: Option<(u16, u16)>,
    pub ports: Option<PortsGauge>,
    pub tw_reuse: Option<u8>,
    pub fds_peak: Option<u64>,
    /// Descriptors open before the workers started.
    pub fds_base: Option<u64>,
    pub ports_peak: Option<u64>,
}

impl Watch {
    pub fn new(threads: usize) -> Self {
        let range = ephemeral_range();
        Watch {
            threads,
            samples: Default::default(),
            latest: vec![None; threads],
            range,
            ports: range.map(PortsGauge::new),
            tw_reuse: tw_reuse(),
            fds_peak: open_fds(),
            fds_base: open_fds(),
            ports_peak: None,
        }
    }

    pub fn add(&mut self, s: &ThreadSecond) {
        if !self.samples.contains_key(&s.index) {
            let mut h = HealthSample::new(s.index, self.threads);
            h.fds = open_fds();
            h.ephemeral_ports = self.ports.as_mut().and_then(|p| p.read(s.index));
            self.fds_peak = self.fds_peak.max(h.fds);
            self.ports_peak = self.ports_peak.max(h.ephemeral_ports);
            self.samples.insert(s.index, h);
        }
        if let Some(h) = self.samples.get_mut(&s.index) {
            h.add(s);
        }
        if let Some(l) = self.latest.get_mut(s.thread) {
            *l = (*l).max(Some(s.index));
        }
    }

    /// Every second below this one has been reported by every worker.
    pub fn reported_below(&self) -> u64 {
        let below = |l: &Option<u64>| l.map_or(0, |i| i + 1);
        self.latest.iter().map(below).min().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
