//! A latency distribution as HdrHistogram's percentile plots draw it: a position per
//! percentile, `x = log10(1 / (1 - q))`, so 90%, 99%, 99.9% are equally spaced.

use hdrhistogram::Histogram;

/// Steps per decade of the percentile axis.
const STEPS_PER_NINE: u32 = 20;

/// Points `(x, ms)` of a histogram of microseconds, from 0% up to the last percentile the
/// samples can speak for (1 − 1/n, at most 99.999%), then the maximum.
pub fn percentiles(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let last = reach(h.len());
    let steps = (last * STEPS_PER_NINE as f64).ceil() as u32;
    let mut pts: Vec<(f64, f64)> = (0..=steps)
        .map(|i| (i as f64 / STEPS_PER_NINE as f64).min(last))
        .map(|x| (x, h.value_at_quantile(1.0 - 10f64.powf(-x)) as f64 / 1e3))
        .collect();
    pts.dedup_by(|a, b| a.0 == b.0);
    pts.push((last, h.max() as f64 / 1e3));
    pts
}

/// How far along the percentile axis `n` samples reach.
pub fn reach(n: u64) -> f64 {
    (n.max(2) as f64).log10().min(5.0)
}
