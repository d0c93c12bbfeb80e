//! A histogram of microseconds with the buckets of [`new_histogram`], that costs nothing until it
//! records and stays small while few buckets are in use.
//!
//! A dense HdrHistogram from 1 us to one hour at 3 significant digits is 23,552 counters (184 KiB)
//! whatever it holds. One per request name per worker thread made a 3,000-URL file cost gigabytes
//! before the first request. Here an empty histogram is a tag, a lightly used one a sorted list of
//! (bucket, count) pairs, and only a histogram with many distinct buckets becomes dense, and then
//! only as large as its largest value needs (HdrHistogram's auto-resize). Every state counts in the
//! same buckets, so recording and merging are exact: [`CompactHistogram::to_histogram`] gives the
//! histogram that recording the same values in `new_histogram()` would have given.

use hdrhistogram::Histogram;
use std::sync::OnceLock;

/// Largest value a histogram holds, in microseconds (one hour); larger values are clamped to it.
pub const HISTOGRAM_MAX_US: u64 = 3_600_000_000;

/// A histogram of microseconds from 1 us to one hour at 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, 3).expect("static histogram bounds are valid")
}

/// Distinct buckets kept as a list before the histogram turns dense: 8 KiB of pairs, against at
/// least 16 KiB for the smallest dense histogram at 3 digits.
const SPARSE_LIMIT: usize = 1024;

/// The bucket layout every histogram here shares; its counts are never touched. A bucket's bounds
/// depend on the precision alone, not on the top, so the smallest histogram gives them (one
/// made by `new_histogram` would be 184 KiB, every page written by its constructor).
fn layout() -> &'static Histogram<u64> {
    static LAYOUT: OnceLock<Histogram<u64>> = OnceLock::new();
    LAYOUT.get_or_init(dense_empty)
}

#[derive(Clone, Debug, Default)]
enum Repr {
    #[default]
    Empty,
    /// (lowest value of the bucket, count), sorted by bucket. Values fit in u32 because they are
    /// clamped to one hour in microseconds.
    Sparse(Vec<(u32, u32)>),
    Dense(Box<Histogram<u64>>),
}

/// See the module documentation. Values are microseconds, clamped to 1..=[`HISTOGRAM_MAX_US`].
#[derive(Clone, Debug, Default)]
pub struct CompactHistogram {
    repr: Repr,
}

/// Records into an auto-resizing histogram: `saturating_record` would clamp to its current top
/// instead of growing it. Values are at most one hour, so growing cannot fail.
#[inline]
fn record_dense(h: &mut Histogram<u64>, us: u64, n: u64) {
    let _ = h.record_n(us, n);
}

fn dense_empty() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 2, 3).expect("static histogram bounds are valid");
    h.auto(true);
    h
}

impl CompactHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// A histogram dense from the start: for the few that record on every request (a worker's
    /// totals, the generator's lag), where the sparse list's search would cost on the hot path.
    /// Its counts reach only as far as its largest value (16 KiB up to 2 ms, ~100 KiB up to a
    /// few seconds), not to one hour: hdrhistogram writes every counter it allocates, so a full
    /// 184 KiB histogram is resident from birth, and a run holding 10,000 connections had 1.5 MB
    /// of them.
    pub fn dense() -> Self {
        CompactHistogram {
            repr: Repr::Dense(Box::new(dense_empty())),
        }
    }

    /// Forgets every value, keeping the state's memory for the next ones.
    pub fn reset(&mut self) {
        match &mut self.repr {
            Repr::Empty => {}
            Repr::Sparse(pairs) => pairs.clear(),
            Repr::Dense(h) => h.reset(),
        }
    }

    /// Records one value; out-of-range values are clamped, never lost. Inlined with a path of
    /// its own for a dense histogram: six of these run per response.
    #[inline]
    pub fn saturating_record(&mut self, us: u64) {
        if let Repr::Dense(h) = &mut self.repr {
            record_dense(h, us.clamp(1, HISTOGRAM_MAX_US), 1);
        } else {
            self.record_n(us, 1);
        }
    }

    /// Records `n` of one value; out-of-range values are clamped, never lost.
    pub(crate) fn record_n(&mut self, us: u64, n: u64) {
        let us = us.clamp(1, HISTOGRAM_MAX_US);
        match &mut self.repr {
            Repr::Empty => {
                if let Ok(n32) = u32::try_from(n) {
                    self.repr = Repr::Sparse(vec![(layout().lowest_equivalent(us) as u32, n32)]);
                    return;
                }
            }
            Repr::Sparse(pairs) => {
                let key = layout().lowest_equivalent(us) as u32;
                match pairs.binary_search_by_key(&key, |p| p.0) {
                    Ok(i) => {
                        if let Some(c) = u32::try_from(n)
                            .ok()
                            .and_then(|n| pairs[i].1.checked_add(n))
                        {
                            pairs[i].1 = c;
                            return;
                        }
                    }
                    Err(i) if pairs.len() < SPARSE_LIMIT && n <= u64::from(u32::MAX) => {
                        pairs.insert(i, (key, n as u32));
                        return;
                    }
                    Err(_) => {}
                }
            }
            Repr::Dense(h) => {
                record_dense(h, us, n);
                return;
            }
        }
        record_dense(self.densify(), us, n);
    }

    /// Turns the histogram dense (it stays so) and returns the dense counts.
    fn densify(&mut self) -> &mut Histogram<u64> {
        if !matches!(self.repr, Repr::Dense(_)) {
            let mut h = dense_empty();
            if let Repr::Sparse(pairs) = &self.repr {
                for &(v, n) in pairs {
                    record_dense(&mut h, u64::from(v), u64::from(n));
                }
            }
            self.repr = Repr::Dense(Box::new(h));
        }
        match &mut self.repr {
            Repr::Dense(h) => h,
            _ => unreachable!("just made dense"),
        }
    }

    /// Adds every count of `other`, bucket by bucket.
    pub fn add(&mut self, other: &CompactHistogram) {
        match &other.repr {
            Repr::Empty => {}
            Repr::Sparse(pairs) => {
                for &(v, n) in pairs {
                    self.record_n(u64::from(v), u64::from(n));
                }
            }
            Repr::Dense(h) => {
                if let Repr::Empty = self.repr {
                    self.repr = other.repr.clone();
                } else {
                    // Both are auto-resizing with the same precision, so adding cannot fail.
                    let _ = self.densify().add(&**h);
                }
            }
        }
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        match &self.repr {
            Repr::Empty => 0,
            Repr::Sparse(pairs) => pairs.iter().map(|p| u64::from(p.1)).sum(),
            Repr::Dense(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Highest value recorded (the top of its bucket), 0 when empty; as `Histogram::max`.
    pub fn max(&self) -> u64 {
        match &self.repr {
            Repr::Empty => 0,
            Repr::Sparse(pairs) => pairs
                .last()
                .map_or(0, |p| layout().highest_equivalent(u64::from(p.0))),
            Repr::Dense(h) => h.max(),
        }
    }

    /// Lowest value recorded (the bottom of its bucket), 0 when empty; as `Histogram::min`.
    pub fn min(&self) -> u64 {
        match &self.repr {
            Repr::Empty => 0,
            Repr::Sparse(pairs) => pairs.first().map_or(0, |p| u64::from(p.0)),
            Repr::Dense(h) => h.min(),
        }
    }

    /// As `Histogram::value_at_quantile`: the top of the bucket holding the ceiling rank.
    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        match &self.repr {
            Repr::Empty => 0,
            Repr::Dense(h) => h.value_at_quantile(quantile),
            Repr::Sparse(pairs) => {
                let quantile = quantile.min(1.0);
                let rank = ((quantile * self.len() as f64).ceil() as u64).max(1);
                let mut seen = 0u64;
                for &(v, n) in pairs {
                    seen += u64::from(n);
                    if seen >= rank {
                        let v = u64::from(v);
                        return if quantile == 0.0 {
                            v
                        } else {
                            layout().highest_equivalent(v)
                        };
                    }
                }
                0
            }
        }
    }

    /// The same counts in a histogram made by [`new_histogram`] (1 us to one hour, 3 digits), as
    /// the JSON encodes and the report summarizes them.
    pub fn to_histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        match &self.repr {
            Repr::Empty => {}
            Repr::Sparse(pairs) => {
                for &(v, n) in pairs {
                    h.saturating_record_n(u64::from(v), u64::from(n));
                }
            }
            Repr::Dense(d) => {
                // Bucket by bucket; the bottom of a bucket is within range where its top (past
                // one hour, for the last bucket) may not be.
                for v in d.iter_recorded() {
                    let bottom = layout().lowest_equivalent(v.value_iterated_to());
                    h.saturating_record_n(bottom, v.count_at_value());
                }
            }
        }
        h
    }

    /// Bytes this histogram holds on the heap: what a recorder's memory grows with.
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Empty => 0,
            Repr::Sparse(pairs) => pairs.capacity() * std::mem::size_of::<(u32, u32)>(),
            Repr::Dense(h) => std::mem::size_of::<Histogram<u64>>() + h.distinct_values() * 8,
        }
    }
}

impl From<&Histogram<u64>> for CompactHistogram {
    fn from(h: &Histogram<u64>) -> Self {
        let mut c = CompactHistogram::new();
        for v in h.iter_recorded() {
            c.record_n(v.value_iterated_to(), v.count_at_value());
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread of values over the whole range, with repeats.
    fn values(n: u64) -> impl Iterator<Item = u64> {
        (0..n).map(|i| {
            let x = i.wrapping_mul(6_364_136_223_846_793_005).rotate_left(17) % 1_000_003;
            match i % 4 {
                0 => 1 + x % 3_000,
                1 => 1 + x * 37,
                2 => 1 + x % 100_000,
                _ => (x << 12).min(HISTOGRAM_MAX_US + 5),
            }
        })
    }

    fn dense_of(vs: impl Iterator<Item = u64>) -> Histogram<u64> {
        let mut h = new_histogram();
        for v in vs {
            h.saturating_record(v.clamp(1, HISTOGRAM_MAX_US));
        }
        h
    }

    fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    fn agrees(c: &CompactHistogram, d: &Histogram<u64>) {
        let h = c.to_histogram();
        assert!(buckets(&h) == buckets(d), "buckets differ");
        assert_eq!(
            (h.len(), h.max(), h.min(), h.min_nz()),
            (d.len(), d.max(), d.min(), d.min_nz())
        );
        assert_eq!((c.len(), c.max(), c.min()), (d.len(), d.max(), d.min()));
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(c.value_at_quantile(q), d.value_at_quantile(q), "q {q}");
        }
    }

    #[test]
    fn every_state_counts_in_the_buckets_of_new_histogram() {
        for n in [0, 1, 5, 300, SPARSE_LIMIT as u64 + 200, 20_000] {
            let mut c = CompactHistogram::new();
            for v in values(n) {
                c.saturating_record(v);
            }
            agrees(&c, &dense_of(values(n)));
        }
    }

    #[test]
    fn merging_is_exact_in_every_combination_of_states() {
        for (na, nb) in [
            (0, 3),
            (3, 0),
            (40, 50),
            (40, 5_000),
            (5_000, 40),
            (5_000, 6_000),
        ] {
            let (mut a, mut b) = (CompactHistogram::new(), CompactHistogram::new());
            values(na).for_each(|v| a.saturating_record(v));
            values(nb + 7).skip(7).for_each(|v| b.saturating_record(v));
            a.add(&b);
            agrees(&a, &dense_of(values(na).chain(values(nb + 7).skip(7))));
        }
    }

    #[test]
    fn an_empty_histogram_holds_nothing_and_a_light_one_little() {
        let mut c = CompactHistogram::new();
        assert_eq!(c.heap_bytes(), 0);
        c.saturating_record(1_500);
        assert!(c.heap_bytes() <= 64, "{}", c.heap_bytes());
        assert_eq!(
            c.value_at_quantile(0.5),
            dense_of([1_500].into_iter()).value_at_quantile(0.5)
        );
    }

    #[test]
    fn a_dense_histogram_is_small_until_its_values_are_large_and_counts_the_same() {
        let mut c = CompactHistogram::dense();
        assert!(c.heap_bytes() <= 17 * 1024, "{}", c.heap_bytes());
        (0..5_000).for_each(|i| c.saturating_record(1 + i % 1_900));
        assert!(c.heap_bytes() <= 17 * 1024, "{}", c.heap_bytes());
        values(20_000).for_each(|v| c.saturating_record(v));
        let all = (0..5_000).map(|i| 1 + i % 1_900).chain(values(20_000));
        agrees(&c, &dense_of(all));

        c.reset();
        assert_eq!((c.len(), c.max(), c.value_at_quantile(0.99)), (0, 0, 0));
        c.saturating_record(700);
        agrees(&c, &dense_of([700].into_iter()));
    }
}
