//! One second's latency: a full histogram while the second can still receive outcomes, a few
//! percentiles once it cannot.
//!
//! The timeline keeps one entry per second of the run. A histogram per second (26 KiB each at two
//! digits) made memory climb 1.5 MB a minute, 2 GB over a day. What the results show of a past
//! second is its p50, p90, p99 and max, so a sealed second keeps only those and a few neighbours.
//!
//! The live histogram has one fixed size (two digits, 1 us to one hour, 13 KiB), allocated on the
//! first response. Its counters are u32, half the size of u64's: one second's responses in one
//! bucket stay far below four billion. A run keeps two per second for a minute, 1.5 MB at u64. Seconds are made and sealed all run long, and same-sized blocks are what the
//! allocator reuses: histograms that grew to whatever each second needed left holes new seconds
//! did not fit, and resident memory crept up by a megabyte a minute while the live data did not.

use crate::HISTOGRAM_MAX_US;
use hdrhistogram::Histogram;
use herd_spill::{get_varint, put_varint, Spilled};

/// The quantiles a sealed second answers; a quantile between two of them is answered with the
/// next one up (as a histogram would answer with the top of the next bucket).
pub const SEALED_QUANTILES: [f64; 7] = [0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0];

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sealed {
    len: u64,
    min: u64,
    max: u64,
    at: [u64; SEALED_QUANTILES.len()],
}

/// A second's live histogram: see the module documentation.
pub type LiveHistogram = Histogram<u32>;

/// An empty histogram of one second, as a second with no responses would have.
pub fn empty_second_histogram() -> LiveHistogram {
    *live_histogram()
}

fn live_histogram() -> Box<LiveHistogram> {
    Box::new(
        Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, 2)
            .expect("static histogram bounds are valid"),
    )
}

/// Latency of the responses of one second, in microseconds. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct SecondLatency {
    live: Option<Box<LiveHistogram>>,
    sealed: Option<Box<Sealed>>,
}

impl SecondLatency {
    #[inline]
    pub fn saturating_record(&mut self, us: u64) {
        let us = us.clamp(1, HISTOGRAM_MAX_US);
        match &mut self.sealed {
            None => self
                .live
                .get_or_insert_with(live_histogram)
                .saturating_record(us),
            Some(s) => {
                let mut one = live_histogram();
                one.saturating_record(us);
                fold(s, &summarize(&one));
            }
        }
    }

    /// Adds the values of `h`, recorded in this second (a recorder's values shared by latency
    /// and service time, [`crate::Recorder`]).
    pub(crate) fn add_live(&mut self, h: &LiveHistogram) {
        match &mut self.sealed {
            // Same bounds and precision: adding cannot fail.
            None => {
                let _ = self.live.get_or_insert_with(live_histogram).add(h);
            }
            Some(s) => fold(s, &summarize(h)),
        }
    }

    /// Adds another worker's part of the same second. Exact while neither part is sealed; a part
    /// that arrives after its second was sealed (a worker stalled for a minute) adds to the count,
    /// minimum and maximum, and leaves the sealed percentiles as they were.
    pub fn add(&mut self, other: &SecondLatency) {
        match (&mut self.sealed, &other.sealed) {
            (None, None) => match (&mut self.live, &other.live) {
                // Same bounds and precision: adding cannot fail.
                (Some(h), Some(o)) => {
                    let _ = h.add(&**o);
                }
                (None, Some(o)) => self.live = Some(o.clone()),
                (_, None) => {}
            },
            (Some(s), None) => {
                if let Some(o) = &other.live {
                    fold(s, &summarize(o));
                }
            }
            (_, Some(o)) => {
                self.seal();
                match &mut self.sealed {
                    Some(s) => fold(s, o),
                    None => self.sealed = Some(o.clone()),
                }
            }
        }
    }

    /// Keeps the summary and frees the histogram. A second with no responses stays as it is: it
    /// holds nothing, and a late part then merges exactly.
    pub fn seal(&mut self) {
        if self.sealed.is_none() {
            if let Some(h) = self.live.take() {
                self.sealed = Some(Box::new(summarize(&h)));
            }
        }
    }

    /// The second's histogram while it is live (2 significant digits), for an exact merge of
    /// seconds across machines; `None` once sealed.
    pub fn histogram(&self) -> Option<&LiveHistogram> {
        match self.sealed {
            None => self.live.as_deref(),
            Some(_) => None,
        }
    }

    pub fn is_sealed(&self) -> bool {
        self.sealed.is_some()
    }

    fn read(&self, live: impl Fn(&LiveHistogram) -> u64, sealed: impl Fn(&Sealed) -> u64) -> u64 {
        match (&self.sealed, &self.live) {
            (Some(s), _) => sealed(s),
            (None, Some(h)) => live(h),
            (None, None) => 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.read(|h| h.len(), |s| s.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn max(&self) -> u64 {
        self.read(|h| h.max(), |s| s.max)
    }

    pub fn min(&self) -> u64 {
        self.read(|h| h.min(), |s| s.min)
    }

    /// As `Histogram::value_at_quantile` while live; once sealed, the value at the nearest kept
    /// quantile at or above `quantile`.
    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        self.read(
            |h| h.value_at_quantile(quantile),
            |s| {
                if quantile <= 0.0 {
                    return s.min;
                }
                SEALED_QUANTILES
                    .iter()
                    .position(|k| *k >= quantile)
                    .map_or(s.max, |i| s.at[i])
            },
        )
    }

    pub fn heap_bytes(&self) -> usize {
        let live = self.live.as_ref().map_or(0, |h| {
            std::mem::size_of::<LiveHistogram>() + h.distinct_values() * size_of::<u32>()
        });
        live + self
            .sealed
            .as_ref()
            .map_or(0, |_| std::mem::size_of::<Sealed>())
    }
}

/// A second's latency on disk (the spill's): its summary, as a sealed second answers; a live one
/// is summarized as sealing it would.
impl Spilled for SecondLatency {
    fn encode(&self, out: &mut Vec<u8>) {
        let summary = match (&self.sealed, &self.live) {
            (Some(s), _) => Some(**s),
            (None, Some(h)) => Some(summarize(h)),
            (None, None) => None,
        };
        let Some(s) = summary else {
            out.push(0);
            return;
        };
        out.push(1);
        for v in [s.len, s.min, s.max].iter().chain(s.at.iter()) {
            put_varint(out, *v);
        }
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        let (&tag, rest) = input.split_first()?;
        *input = rest;
        if tag == 0 {
            return Some(SecondLatency::default());
        }
        let (len, min, max) = (get_varint(input)?, get_varint(input)?, get_varint(input)?);
        let mut at = [0; SEALED_QUANTILES.len()];
        for v in &mut at {
            *v = get_varint(input)?;
        }
        Some(SecondLatency {
            live: None,
            sealed: Some(Box::new(Sealed { len, min, max, at })),
        })
    }
}

fn summarize(h: &LiveHistogram) -> Sealed {
    Sealed {
        len: h.len(),
        min: h.min(),
        max: h.max(),
        at: SEALED_QUANTILES.map(|q| h.value_at_quantile(q)),
    }
}

/// Folds a late part into a sealed second: counts and extremes exactly; the percentiles of the
/// larger part stand for both.
fn fold(s: &mut Sealed, o: &Sealed) {
    if o.len == 0 {
        return;
    }
    if o.len > s.len {
        s.at = o.at;
    }
    s.min = if s.len == 0 { o.min } else { s.min.min(o.min) };
    s.max = s.max.max(o.max);
    s.len += o.len;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_second_answers_its_percentiles_as_before_and_holds_little() {
        let mut l = SecondLatency::default();
        for v in 1..=10_000u64 {
            l.saturating_record(v * 7 % 9_973 + 100);
        }
        let before: Vec<u64> = SEALED_QUANTILES
            .iter()
            .map(|q| l.value_at_quantile(*q))
            .collect();
        let (max, min, len) = (l.max(), l.min(), l.len());
        // one fixed-size block while live, whatever the values
        let mut one = SecondLatency::default();
        one.saturating_record(1);
        assert_eq!(l.heap_bytes(), one.heap_bytes());
        l.seal();
        let after: Vec<u64> = SEALED_QUANTILES
            .iter()
            .map(|q| l.value_at_quantile(*q))
            .collect();
        assert_eq!(before, after);
        assert_eq!((l.max(), l.min(), l.len()), (max, min, len));
        assert_eq!(l.heap_bytes(), std::mem::size_of::<Sealed>());
    }

    #[test]
    fn a_late_part_adds_to_counts_and_extremes_of_a_sealed_second() {
        let mut a = SecondLatency::default();
        (1..=100).for_each(|v| a.saturating_record(v * 10));
        a.seal();
        let p50 = a.value_at_quantile(0.5);
        assert!((500..=505).contains(&p50), "{p50}");
        let mut late = SecondLatency::default();
        late.saturating_record(50_000);
        a.add(&late);
        assert_eq!(a.len(), 101);
        assert!(a.max() >= 50_000);
        assert_eq!(a.value_at_quantile(0.5), p50);
    }
}
