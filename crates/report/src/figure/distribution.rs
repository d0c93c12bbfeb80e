//! A latency distribution as HdrHistogram's percentile plots draw it: a position per
//! percentile, `x = log10(1 / (1 - q))`, so 90%, 99%, 99.9% are equally spaced.

use super::{Panel, Reading, Series, XAxis};
use hdrhistogram::Histogram;

/// Steps per decade of the percentile axis.
const STEPS_PER_NINE: u32 = 20;

/// The title of the percentile axis.
pub const PERCENTILE_AXIS: &str = "percentile (log scale of 1/(1−q))";

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

/// A distribution chart of one or more percentile lines (a run's latency and service time, or
/// the latency of runs being compared). The y axis is logarithmic when the tail is more than
/// 30 times the median of the first line, so both stay readable.
pub fn distribution_panel(id: &str, caption: &str, series: Vec<Series>) -> Panel {
    let max_x = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let ys = || series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let max_y = ys().fold(0.0, f64::max);
    let median = series
        .first()
        .and_then(|s| s.points.iter().find(|p| p.0 >= 0.3))
        .map_or(max_y, |p| p.1);
    let min_y = ys().filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
    let log = median > 0.0 && max_y / median > 30.0 && min_y.is_finite();
    let y_axis = if log { XAxis::Log10 } else { XAxis::Linear };
    Panel::new(id, "Latency by percentile", caption)
        .x(
            PERCENTILE_AXIS,
            XAxis::Percentile,
            Reading::Percentile,
            (0.0, max_x),
        )
        .y("latency", y_axis, Reading::Duration, (min_y, max_y))
        .height(260.0)
        .series(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(points: Vec<(f64, f64)>) -> Series {
        Series::line("l", "#000000", points)
    }

    #[test]
    fn points_follow_the_histogram_to_its_maximum() {
        let mut h = herd_metrics::new_histogram();
        for us in 1..=10_000u64 {
            h.record(us).unwrap();
        }
        let pts = percentiles(&h);
        assert_eq!(pts[0].0, 0.0);
        let at99 = pts.iter().find(|p| (p.0 - 2.0).abs() < 1e-9).unwrap();
        assert!((at99.1 - 9.9).abs() < 0.05, "{at99:?}");
        assert_eq!(pts.last().unwrap(), &(4.0, h.max() as f64 / 1e3));
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(percentiles(&herd_metrics::new_histogram()).is_empty());
        assert_eq!(reach(1_500), 1_500f64.log10());
        assert_eq!(reach(10_000_000), 5.0);
    }

    #[test]
    fn the_y_axis_is_log_when_the_tail_is_thirty_times_the_median() {
        // (points of the first line, log?, x extent)
        let table = [
            (vec![(0.0, 1.0), (0.3, 2.0), (3.0, 61.0)], XAxis::Log10, 3.0),
            (
                vec![(0.0, 1.0), (0.3, 2.0), (3.0, 59.0)],
                XAxis::Linear,
                3.0,
            ),
            (vec![(0.0, 0.0), (0.3, 0.0), (0.5, 0.0)], XAxis::Linear, 1.0),
            (vec![], XAxis::Linear, 1.0),
        ];
        for (points, want, max_x) in table {
            let p = distribution_panel("d", "c", vec![line(points.clone())]);
            assert_eq!(p.y_axis, want, "{points:?}");
            assert_eq!(p.x_range.1, max_x, "{points:?}");
            assert_eq!(
                (p.x_axis, &p.x_reads),
                (XAxis::Percentile, &Reading::Percentile)
            );
            assert_eq!(p.y_range.1, points.iter().map(|p| p.1).fold(0.0, f64::max));
        }
    }
}
