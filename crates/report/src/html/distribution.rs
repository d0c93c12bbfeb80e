//! The latency percentile distribution, drawn from the full HdrHistogram the way its own
//! percentile plots are: percentiles on a log axis so the tail (99%, 99.9%, ...) gets the room.

use super::axis::Axis;
use super::chart::{lines, Frame, Series};
use crate::format::duration_ms;

pub use crate::figure::percentiles as points;
#[cfg(test)]
use crate::figure::reach;

/// A distribution chart of one or more histograms (a run's latency and service time, or the
/// latency of runs being compared). The y axis turns logarithmic when the tail is far above
/// the median, so both stay readable.
pub fn chart(id: &str, title: &str, series: Vec<Series>) -> String {
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
    let y = if log {
        Axis::duration_log("latency", min_y, max_y)
    } else {
        Axis::duration("latency", max_y)
    };
    let head = |x: f64| {
        let q = (1.0 - 10f64.powf(-x)) * 100.0;
        format!("p{}", trim_q(q))
    };
    let value = |ms: f64| duration_ms(ms);
    let frame = Frame {
        id,
        title,
        x: Axis::percentile(max_x),
        y,
        height: 260.0,
        x_label: &head,
        y_label: &value,
    };
    lines(&frame, &series)
}

/// A percentile for the hover heading: `99.9`, `99.99`, `50`, `97.8`.
fn trim_q(q: f64) -> String {
    let s = format!("{q:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::axis::percentile_x;

    #[test]
    fn points_follow_the_histogram_to_its_maximum() {
        let mut h = herd_metrics::new_histogram();
        for us in 1..=10_000u64 {
            h.record(us).unwrap();
        }
        let pts = points(&h);
        assert_eq!(pts[0].0, 0.0);
        let at99 = pts
            .iter()
            .find(|p| (p.0 - percentile_x(0.99)).abs() < 1e-9)
            .unwrap();
        assert!((at99.1 - 9.9).abs() < 0.05, "{at99:?}");
        assert_eq!(pts.last().unwrap(), &(4.0, h.max() as f64 / 1e3));
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(points(&herd_metrics::new_histogram()).is_empty());
    }

    #[test]
    fn quantile_headings() {
        assert_eq!(trim_q(99.9), "99.9");
        assert_eq!(trim_q(50.0), "50");
        assert_eq!(reach(1_500), 1_500f64.log10());
        assert_eq!(reach(10_000_000), 5.0);
    }
}
