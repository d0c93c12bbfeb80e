//! The one rule for when an axis of load (users or requests per second) is logarithmic.

use super::{max_y, Panel, Reading, Series, XAxis};
use crate::Model;

/// The x axis of curves against load: linear for requests per second (open model), and for
/// users (closed) too unless the levels span a factor of 50 or more (seed 004's 1, 5, 10,
/// 100, 1000 users are invisible on a linear axis). Both back ends ask this function.
pub fn load_axis(model: Model, levels: &[f64]) -> XAxis {
    let lo = levels.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = levels.iter().copied().fold(0.0, f64::max);
    if model == Model::Closed && lo > 0.0 && hi / lo >= 50.0 {
        XAxis::Log10
    } else {
        XAxis::Linear
    }
}

/// A y axis of replies per second, whose highest is `max` and lowest above zero `min`, of
/// which the good replies reach `good_max`: logarithmic when the other replies (fast 503s of an
/// overloaded server) are so many more that a linear axis would flatten the good ones to zero.
pub fn rate_axis(min: f64, max: f64, good_max: f64) -> XAxis {
    if good_max > 0.0 && max / good_max > 5.0 && min.is_finite() && min > 0.0 {
        XAxis::Log10
    } else {
        XAxis::Linear
    }
}

/// A y axis of latency from `min` (the lowest above zero) to `max`: logarithmic when the
/// slowest is more than 30 times the fastest, so a p50 of 1 ms and a p99 of 200 ms both read.
pub fn latency_axis(min: f64, max: f64) -> XAxis {
    if min.is_finite() && min > 0.0 && max / min > 30.0 {
        XAxis::Log10
    } else {
        XAxis::Linear
    }
}

/// The lowest value above zero and the highest of `values` (infinity and zero when none).
pub fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, 0.0), |(lo, hi), v| {
            (if v > 0.0 { lo.min(v) } else { lo }, hi.max(v))
        })
}

/// Every y value of `series`.
fn ys(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| s.points.iter().map(|p| p.1))
}

impl Panel {
    /// A y axis of replies per second fitted to the panel's series, of which the good replies
    /// reach `good_max`: logarithmic by [`rate_axis`], else linear from zero with room above.
    pub fn y_rates(self, good_max: f64) -> Panel {
        let (min, max) = span(ys(&self.series));
        let reads = Reading::Rate(" req/s".into());
        match rate_axis(min, max, good_max) {
            XAxis::Log10 => self.y(
                "replies per second (req/s, log scale)",
                XAxis::Log10,
                reads,
                (min, max),
            ),
            _ => self.y(
                "replies per second (req/s)",
                XAxis::Linear,
                reads,
                (min, max * 1.08),
            ),
        }
    }

    /// A latency y axis fitted to the panel's series and to `limits` (an SLO's, a stop
    /// rule's, drawn as marks): logarithmic by [`latency_axis`].
    pub fn y_latency(self, limits: &[f64]) -> Panel {
        let max = max_y(&self.series, limits);
        let (min, _) = span(ys(&self.series));
        let axis = latency_axis(min, max);
        self.y("latency", axis, Reading::Duration, (min, max * 1.1))
    }

    /// A y axis of the share of requests not ok, in percent, up to the highest share or
    /// limit with room above, from 1% to 100%.
    pub fn y_not_ok(self, limits: &[f64]) -> Panel {
        let top = (max_y(&self.series, limits) * 1.1).clamp(1.0, 100.0);
        self.y_to("not ok (%)", Reading::Percent, top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_axis_is_log_only_for_users_spanning_fifty_times() {
        let table: [(Model, &[f64], XAxis); 8] = [
            (
                Model::Closed,
                &[1.0, 5.0, 10.0, 100.0, 1000.0],
                XAxis::Log10,
            ),
            (Model::Closed, &[2.0, 100.0], XAxis::Log10),
            (Model::Closed, &[2.0, 99.0], XAxis::Linear),
            (Model::Closed, &[10.0, 20.0, 40.0], XAxis::Linear),
            // A level of zero users has no place on a log axis.
            (Model::Closed, &[0.0, 1000.0], XAxis::Linear),
            (Model::Closed, &[], XAxis::Linear),
            // Rates are always linear: the demanded-rate diagonal must stay straight.
            (Model::Open, &[1.0, 1000.0], XAxis::Linear),
            (Model::Open, &[100.0, 200.0], XAxis::Linear),
        ];
        for (model, levels, want) in table {
            assert_eq!(load_axis(model, levels), want, "{model:?} {levels:?}");
        }
    }

    #[test]
    fn y_axes_are_log_when_linear_would_flatten_a_line() {
        use XAxis::{Linear, Log10};
        // (lowest, highest, highest good): 503s at 10 times the good replies need a log axis.
        let rates = [
            (10.0, 1000.0, 100.0, Log10),
            (10.0, 500.0, 100.0, Linear),
            (10.0, 1000.0, 0.0, Linear),
            (f64::INFINITY, 1000.0, 100.0, Linear),
        ];
        for (min, max, good, want) in rates {
            assert_eq!(rate_axis(min, max, good), want, "{min} {max} {good}");
        }
        let latencies = [
            (1.0, 200.0, Log10),
            (1.0, 30.0, Linear),
            (f64::INFINITY, 0.0, Linear),
        ];
        for (min, max, want) in latencies {
            assert_eq!(latency_axis(min, max), want, "{min} {max}");
        }
        assert_eq!(span([0.0, 2.0, 7.0, f64::NAN].into_iter()), (2.0, 7.0));
    }
}
