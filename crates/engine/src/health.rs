//! The generator watching itself every second: CPU per worker thread, send lag, event-loop delay,
//! connections, file descriptors and ephemeral ports. Workers report what only they can see
//! (their own CPU and lateness); the collector adds what belongs to the process or the machine.

use crate::generator::ThreadCpu;
use herd_spill::{get_varint, put_varint, Spill, SpillError, Spilled};
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

/// A second of health on disk (the collector's spill of a long run).
impl Spilled for HealthSample {
    fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.t);
        put_varint(out, self.cpu_percent.len() as u64);
        for c in &self.cpu_percent {
            out.extend_from_slice(&c.to_bits().to_le_bytes());
        }
        for d in [self.send_lag_p99, self.loop_delay_max] {
            put_varint(out, d.as_secs());
            put_varint(out, u64::from(d.subsec_nanos()));
        }
        put_varint(out, self.open_connections);
        for o in [self.fds, self.ephemeral_ports] {
            match o {
                None => out.push(0),
                Some(v) => {
                    out.push(1);
                    put_varint(out, v);
                }
            }
        }
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        let t = get_varint(input)?;
        let threads = get_varint(input)? as usize;
        let mut cpu_percent = Vec::with_capacity(threads.min(input.len() / 8));
        for _ in 0..threads {
            let (bits, rest) = input.split_first_chunk::<8>()?;
            *input = rest;
            cpu_percent.push(f64::from_bits(u64::from_le_bytes(*bits)));
        }
        let mut duration = || -> Option<Duration> {
            let secs = get_varint(input)?;
            Some(Duration::new(secs, u32::try_from(get_varint(input)?).ok()?))
        };
        let (send_lag_p99, loop_delay_max) = (duration()?, duration()?);
        let open_connections = get_varint(input)?;
        let mut option = || -> Option<Option<u64>> {
            let (&tag, rest) = input.split_first()?;
            *input = rest;
            match tag {
                0 => Some(None),
                _ => get_varint(input).map(Some),
            }
        };
        let (fds, ephemeral_ports) = (option()?, option()?);
        Some(HealthSample {
            t,
            cpu_percent,
            send_lag_p99,
            loop_delay_max,
            open_connections,
            fds,
            ephemeral_ports,
        })
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
    /// The samples of the last minutes; older ones are in `spill`.
    pub samples: std::collections::BTreeMap<u64, HealthSample>,
    spill: Spill<HealthSample>,
    spilled_below: u64,
    /// Parts of spilled seconds that came after them, added to them at the end.
    late: Vec<ThreadSecond>,
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
            spill: Spill::default(),
            spilled_below: 0,
            late: Vec::new(),
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
        if s.index < self.spilled_below {
            self.late.push(s.clone());
            return;
        }
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

    /// Moves the samples below `index` out of memory, to be read back by [`Watch::finish`].
    pub fn spill_below(&mut self, index: u64) {
        if index <= self.spilled_below {
            return;
        }
        let keep = self.samples.split_off(&index);
        for h in std::mem::replace(&mut self.samples, keep).values() {
            self.spill.push(h);
        }
        self.spilled_below = index;
    }

    /// Samples held in memory, not spilled.
    pub fn held(&self) -> usize {
        self.samples.len()
    }

    /// Every sample of the run, in order of its second; only an error reading the spill fails.
    pub fn finish(&mut self) -> Result<Vec<HealthSample>, SpillError> {
        let mut out = std::mem::take(&mut self.spill).read_back()?;
        for part in std::mem::take(&mut self.late) {
            // Samples are in order of their second, one each: a part finds its own.
            match out.binary_search_by_key(&part.index, |h| h.t) {
                Ok(k) => out[k].add(&part),
                Err(k) => {
                    let mut h = HealthSample::new(part.index, self.threads);
                    h.add(&part);
                    out.insert(k, h);
                }
            }
        }
        out.extend(std::mem::take(&mut self.samples).into_values());
        Ok(out)
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
    fn spilled_samples_come_back_whole_and_in_order() {
        let mut kept = Watch::new(2);
        let mut spilled = Watch::new(2);
        for index in 0..700u64 {
            for thread in 0..2 {
                let part = ThreadSecond {
                    index,
                    thread,
                    cpu: ThreadCpu {
                        user: Duration::from_micros(index * 977 + thread as u64),
                        sys: Duration::from_nanos(index * 13),
                    },
                    loop_delay_max: Duration::from_nanos(index * 1_000_003),
                    send_lag_p99: Duration::from_micros(index % 7),
                    open_connections: index % 5,
                };
                kept.add(&part);
                spilled.add(&part);
            }
            spilled.spill_below(index.saturating_sub(300));
            assert!(spilled.held() <= 301);
        }
        // Machine-wide readings differ between the two watches; the workers' parts must not.
        let strip = |v: Vec<HealthSample>| -> Vec<HealthSample> {
            v.into_iter()
                .map(|h| HealthSample {
                    fds: None,
                    ephemeral_ports: None,
                    ..h
                })
                .collect()
        };
        let back = spilled.finish().unwrap();
        assert_eq!(back.len(), 700);
        let kept: Vec<HealthSample> = std::mem::take(&mut kept.samples).into_values().collect();
        assert_eq!(strip(back), strip(kept));
        let one = HealthSample {
            fds: Some(70_000),
            ephemeral_ports: Some(0),
            cpu_percent: vec![99.5, f64::MIN_POSITIVE],
            ..HealthSample::new(3, 2)
        };
        let mut bytes = Vec::new();
        one.encode(&mut bytes);
        assert_eq!(HealthSample::decode(&mut bytes.as_slice()), Some(one));
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
