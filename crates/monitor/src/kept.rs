//! A long watch's old readings wait on disk ([`herd_spill`]): a process read once a second for a
//! day is 86,400 readings, a Prometheus series as many points, and nothing reads them before the
//! end (the live outputs get each reading as it is taken). Each series keeps its newest readings
//! in memory and hands older ones to its spill, read back when the watch stops.

use crate::process::{Gauges, ProcessSample};
use herd_spill::{get_varint, put_varint, Spill, SpillError, Spilled};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Readings a series keeps in memory; once it holds twice as many, the older half goes to disk.
pub(crate) const KEPT: usize = 300;

/// Moves all but the newest [`KEPT`] of `samples` to `spill` once there are twice as many.
pub(crate) fn spill_old<T: Spilled>(samples: &mut Vec<T>, spill: &mut Spill<T>) {
    if samples.len() < 2 * KEPT {
        return;
    }
    for s in samples.drain(..samples.len() - KEPT) {
        spill.push(&s);
    }
}

/// Puts the spilled readings back in front of those in memory.
pub(crate) fn read_back<T: Spilled>(
    samples: &mut Vec<T>,
    spill: Spill<T>,
) -> Result<(), SpillError> {
    if spill.is_empty() {
        return Ok(());
    }
    let mut all = spill.read_back()?;
    all.append(samples);
    *samples = all;
    Ok(())
}

/// Instants are stored as nanoseconds from one instant of the process, signed (a reading may
/// come before it), so they come back exactly.
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

fn put_instant(out: &mut Vec<u8>, at: Instant) {
    let base = base();
    let zigzag = match at.checked_duration_since(base) {
        Some(d) => (d.as_nanos() as u64) << 1,
        None => ((base.duration_since(at).as_nanos() as u64) << 1) | 1,
    };
    put_varint(out, zigzag);
}

fn get_instant(input: &mut &[u8]) -> Option<Instant> {
    let zigzag = get_varint(input)?;
    let d = Duration::from_nanos(zigzag >> 1);
    match zigzag & 1 {
        0 => base().checked_add(d),
        _ => base().checked_sub(d),
    }
}

fn put_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_bits().to_le_bytes());
}

fn get_f64(input: &mut &[u8]) -> Option<f64> {
    let (bits, rest) = input.split_first_chunk::<8>()?;
    *input = rest;
    Some(f64::from_bits(u64::from_le_bytes(*bits)))
}

impl Spilled for ProcessSample {
    fn encode(&self, out: &mut Vec<u8>) {
        let g = &self.gauges;
        put_instant(out, g.at);
        put_varint(out, u64::from(g.processes));
        put_varint(out, g.rss_bytes);
        put_varint(out, g.threads);
        // fds + 1, 0 for none
        put_varint(out, g.fds.map_or(0, |f| f.saturating_add(1)));
        put_f64(out, self.cpu_percent);
        put_f64(out, self.cpu_seconds);
        put_varint(out, self.ctx_voluntary);
        put_varint(out, self.ctx_involuntary);
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        let gauges = Gauges {
            at: get_instant(input)?,
            processes: u32::try_from(get_varint(input)?).ok()?,
            rss_bytes: get_varint(input)?,
            threads: get_varint(input)?,
            fds: get_varint(input)?.checked_sub(1),
        };
        Some(ProcessSample {
            gauges,
            cpu_percent: get_f64(input)?,
            cpu_seconds: get_f64(input)?,
            ctx_voluntary: get_varint(input)?,
            ctx_involuntary: get_varint(input)?,
        })
    }
}

/// One point of a Prometheus series: when it was scraped, and its value (NaN and infinities
/// as the exporter wrote them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point(pub Instant, pub f64);

impl Spilled for Point {
    fn encode(&self, out: &mut Vec<u8>) {
        put_instant(out, self.0);
        put_f64(out, self.1);
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some(Point(get_instant(input)?, get_f64(input)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_come_back_exactly_and_in_order() {
        let t0 = Instant::now();
        let reading = |i: u64| ProcessSample {
            gauges: Gauges {
                // One before the base, the rest after.
                at: t0 + Duration::from_nanos(i * 1_000_000_007) - Duration::from_millis(5),
                processes: (i % 3) as u32,
                rss_bytes: i << 20,
                threads: 4,
                fds: (i % 2 == 0).then_some(i),
            },
            cpu_percent: i as f64 / 7.0,
            cpu_seconds: f64::NAN,
            ctx_voluntary: i,
            ctx_involuntary: u64::MAX,
        };
        let all: Vec<ProcessSample> = (0..1_000).map(reading).collect();
        let (mut samples, mut spill) = (Vec::new(), Spill::default());
        for s in &all {
            samples.push(*s);
            spill_old(&mut samples, &mut spill);
            assert!(samples.len() < 2 * KEPT);
        }
        assert_eq!(spill.len(), 600, "two halves of 600 on disk");
        read_back(&mut samples, spill).unwrap();
        // NaN is not equal to itself: compare the bits.
        let bits = |v: &[ProcessSample]| -> Vec<String> {
            v.iter()
                .map(|s| format!("{:?} {}", s.gauges, s.cpu_seconds.to_bits()))
                .collect()
        };
        assert_eq!(bits(&samples), bits(&all));
        assert_eq!(
            samples.iter().map(|s| s.cpu_percent).collect::<Vec<_>>(),
            all.iter().map(|s| s.cpu_percent).collect::<Vec<_>>()
        );
        let p = Point(t0, f64::INFINITY);
        let mut bytes = Vec::new();
        p.encode(&mut bytes);
        assert_eq!(Point::decode(&mut bytes.as_slice()), Some(p));
    }
}
