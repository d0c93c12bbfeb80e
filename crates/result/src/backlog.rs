//! A server whose listen queue overflowed, read off the connect times. When the queue of a
//! listening socket is full, the kernel drops new SYNs; the client's kernel sends the SYN again
//! after 1 s, then 3 s, 7 s, 15 s from the first try (Linux's initial RTO of 1 s, doubling). So
//! connect times pile up just past those instants while the times between stay empty. That is
//! the server's backlog (`listen(2)`'s queue, `net.core.somaxconn`), not its speed: a user
//! reading "p99 3.0 s" would otherwise blame the application.

use crate::format::{count, percent};
use crate::{decode_histogram, RunResult};
use hdrhistogram::Histogram;

/// When a retransmitted SYN is answered, in seconds after the first.
pub const SYN_RETRIES_S: [f64; 5] = [1.0, 3.0, 7.0, 15.0, 31.0];

/// A connect counts as retransmitted when it took from a little before a retransmission instant
/// (timer slack) to this long after it (the round trip of the retried handshake).
const EARLY_US: u64 = 20_000;
const LATE_US: u64 = 250_000;

/// Connections whose set-up waited for a retransmitted SYN.
#[derive(Clone, Debug, PartialEq)]
pub struct Backlog {
    /// Connections in the windows after each retransmission instant.
    pub retried: u64,
    pub connects: u64,
    /// (retransmission instant in seconds, connections answered just after it), non-empty ones.
    pub at: Vec<(f64, u64)>,
}

/// Finds the cluster in a histogram of connect times in microseconds: at least 3 connections
/// just past the SYN retransmission instants, and at least 4 times as many as in bands of the
/// same width just before them (a server slow at everything spreads its connects evenly).
pub fn syn_retries(connect_us: &Histogram<u64>) -> Option<Backlog> {
    let mut at = Vec::new();
    let (mut inside, mut before) = (0, 0);
    let width = EARLY_US + LATE_US;
    for t in SYN_RETRIES_S {
        let us = (t * 1e6) as u64;
        let n = connect_us.count_between(us - EARLY_US, us + LATE_US);
        before += connect_us.count_between(us - EARLY_US - width, us - EARLY_US - 1);
        if n > 0 {
            at.push((t, n));
        }
        inside += n;
    }
    (inside >= 3 && inside >= 4 * before).then(|| Backlog {
        retried: inside,
        connects: connect_us.len(),
        at,
    })
}

/// The cluster in a run's connect histogram, if any (none when the histogram cannot be read).
pub fn run_syn_retries(r: &RunResult) -> Option<Backlog> {
    syn_retries(&decode_histogram(&r.histograms.connect).ok()?)
}

impl Backlog {
    /// "1 s, 3 s".
    pub fn instants(&self) -> String {
        let s: Vec<String> = self.at.iter().map(|(t, _)| format!("{t:.0} s")).collect();
        s.join(", ")
    }

    /// The note under a run's summary.
    pub fn sentence(&self) -> String {
        format!(
            "{} of {} connections ({}) took ~{} to connect: the kernel's SYN retransmission times. \
             The server's listen queue overflowed (its backlog, not its speed): raise its listen \
             backlog (net.core.somaxconn, and e.g. nginx's `listen ... backlog=N`) or accept faster",
            count(self.retried),
            count(self.connects),
            percent(100.0 * self.retried as f64 / self.connects.max(1) as f64),
            self.instants()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(connects_us: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &(us, n) in connects_us {
            h.record_n(us, n).unwrap();
        }
        h
    }

    #[test]
    fn connects_clustered_at_the_syn_retransmission_times_are_a_full_listen_queue() {
        // (connect times in us with counts, retried connections found)
        type Case<'a> = (&'a [(u64, u64)], Option<u64>);
        let table: [Case; 7] = [
            // Loopback: 60 us each, nothing retried.
            (&[(60, 10_000)], None),
            // Seed 004's ab at 1,000 users: most fast, some at 1 s and 3 s.
            (&[(80, 9_000), (1_000_300, 120), (3_001_000, 15)], Some(135)),
            // Over a LAN round trip: the retried handshake lands a little later.
            (&[(900, 5_000), (1_040_000, 30)], Some(30)),
            // One straggler is not a cluster.
            (&[(80, 9_000), (1_000_300, 2)], None),
            // A server slow at everything: connects spread from 0.5 s to 4 s.
            (
                &[
                    (500_000, 100),
                    (750_000, 100),
                    (1_000_000, 100),
                    (1_250_000, 100),
                    (2_900_000, 100),
                    (3_100_000, 100),
                ],
                None,
            ),
            // Half a second is no retransmission instant.
            (&[(80, 9_000), (500_000, 50)], None),
            // 7 s: the third try.
            (&[(80, 100), (7_002_000, 4)], Some(4)),
        ];
        for (i, (connects, want)) in table.iter().enumerate() {
            let got = syn_retries(&histogram(connects)).map(|b| b.retried);
            assert_eq!(got, *want, "row {i}: {connects:?}");
        }
    }

    #[test]
    fn the_note_names_the_instants_and_the_fix() {
        let b = syn_retries(&histogram(&[
            (80, 9_865),
            (1_000_300, 120),
            (3_001_000, 15),
        ]))
        .unwrap();
        assert_eq!(b.instants(), "1 s, 3 s");
        assert_eq!(
            b.sentence(),
            "135 of 10,000 connections (1.35%) took ~1 s, 3 s to connect: the kernel's SYN \
             retransmission times. The server's listen queue overflowed (its backlog, not its \
             speed): raise its listen backlog (net.core.somaxconn, and e.g. nginx's `listen ... \
             backlog=N`) or accept faster"
        );
    }
}
