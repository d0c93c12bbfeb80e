//! What a sweep concludes about one target, clause by clause, each following from the numbers
//! in the table: where good throughput stopped following load (a bracket, [`crate::knee`]),
//! where latency rose, and where errors started. A throughput curve alone can say "saturates at
//! ~5 users" while p99 reached 7.7 s and 1-2% timed out at 500 users; the three together cannot.

use crate::backlog::Backlog;
use crate::format::{count, duration_ms, percent, rate};
use crate::knee::{Shape, TOLERANCE};
use crate::Model;

/// A level as asked: whole numbers exactly (`50`, `1,000`), fractions at three digits.
pub fn level_text(x: f64) -> String {
    if x.fract() == 0.0 && x >= 0.0 {
        count(x as u64)
    } else {
        rate(x)
    }
}

/// What a level counts: `req/s asked` or `users`.
pub fn level_unit(model: Model) -> &'static str {
    match model {
        Model::Open => "req/s asked",
        Model::Closed => "users",
    }
}

/// One step of one target, as much as a conclusion needs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    pub level: f64,
    /// Good replies per second.
    pub good: f64,
    pub p99_ms: f64,
    /// Percent of requests without an OK answer.
    pub error_percent: f64,
    /// How many requests that is.
    pub errored: u64,
}

/// "1 user", "5 users", "300 req/s asked", "1 connection x 10 streams".
fn at_level(level: f64, unit: &str) -> String {
    match unit.strip_prefix("connections") {
        _ if unit == "users" && level == 1.0 => "1 user".to_owned(),
        Some(streams) if level == 1.0 => format!("1 connection{streams}"),
        _ => format!("{} {unit}", level_text(level)),
    }
}

/// p99 has risen when it is this many times its lowest value...
pub const LATENCY_FACTOR: f64 = 3.0;
/// ... and at least this much above it: sub-millisecond jitter on loopback is not saturation.
pub const LATENCY_FLOOR_MS: f64 = 1.0;
/// Errors have started at a level with at least this share of requests...
pub const ERRORS_PERCENT: f64 = 0.5;
/// ... and at least this many of them (one arrival left unsent as a short step ends is not it).
pub const ERRORS_COUNT: u64 = 10;

/// Where p99 rose past `LATENCY_FACTOR` x its lowest value and stayed there at every higher
/// level: (the lowest point, the first risen point).
pub fn latency_rise(points: &[Point]) -> Option<(Point, Point)> {
    let low = *points
        .iter()
        .filter(|p| p.p99_ms.is_finite())
        .min_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms))?;
    let risen = |p: &Point| {
        p.p99_ms > LATENCY_FACTOR * low.p99_ms && p.p99_ms >= low.p99_ms + LATENCY_FLOOR_MS
    };
    // The first level from which every higher level is risen too: one spike is not a trend.
    let mut first = None;
    for p in points.iter().filter(|p| p.level > low.level) {
        match (risen(p), first) {
            (true, None) => first = Some(*p),
            (false, _) => first = None,
            (true, Some(_)) => {}
        }
    }
    first.map(|f| (low, f))
}

/// The first level where errors reached `ERRORS_PERCENT` and `ERRORS_COUNT`, and the worst
/// share seen at any level.
pub fn errors_start(points: &[Point]) -> Option<(Point, f64)> {
    let first = points
        .iter()
        .find(|p| p.error_percent >= ERRORS_PERCENT && p.errored >= ERRORS_COUNT)?;
    let worst = points.iter().map(|p| p.error_percent).fold(0.0, f64::max);
    Some((*first, worst))
}

/// The throughput clause: "saturates between 40 and 60 users: good replies level off near 990
/// req/s". `unit` is what a level counts ("users", "req/s asked").
pub fn throughput_clause(shape: Option<Shape>, unit: &str, open: bool) -> String {
    let at = |l: f64| at_level(l, unit);
    let tol = format!("{:.0}%", TOLERANCE * 100.0);
    match shape {
        None => "no steps measured".to_owned(),
        Some(Shape::Single { level, throughput }) => format!(
            "one level only ({}: {} good replies/s): no curve to read a knee from",
            at(level),
            rate(throughput)
        ),
        Some(Shape::Rising { top, throughput }) if open => format!(
            "no saturation up to {}: good replies kept up with every rate asked (within {tol}), \
             {} req/s at the top",
            at(top),
            rate(throughput)
        ),
        Some(Shape::Rising { top, throughput }) => format!(
            "no saturation up to {}: good replies still rising at the top level ({} req/s); the \
             knee, if any, lies above the levels tried",
            at(top),
            rate(throughput)
        ),
        Some(Shape::FlatFromFirst {
            first,
            at_first,
            throughput,
        }) if open => format!(
            "saturated from the first level: good replies fell more than {tol} behind already at \
             {} ({} req/s), and never rose above {} req/s; the knee lies at or below {}",
            at(first),
            rate(at_first),
            rate(throughput),
            at(first)
        ),
        Some(Shape::FlatFromFirst {
            first,
            at_first,
            throughput,
        }) => format!(
            "saturated from the first level: at {} good replies ({} req/s) were already within \
             {tol} of their best ({} req/s); the knee lies at or below {}",
            at(first),
            rate(at_first),
            rate(throughput),
            at(first)
        ),
        Some(Shape::Knee {
            below,
            at: knee,
            throughput,
        }) if open => format!(
            "saturates between {} and {}: good replies kept up (within {tol}) to {} and fell \
             behind at {}, topping out near {} req/s",
            level_text(below),
            at(knee),
            level_text(below),
            level_text(knee),
            rate(throughput)
        ),
        Some(Shape::Knee {
            below,
            at: knee,
            throughput,
        }) => format!(
            "saturates between {} and {}: from {} good replies are within {tol} of their best ({} \
             req/s)",
            level_text(below),
            at(knee),
            level_text(knee),
            rate(throughput)
        ),
    }
}

/// The latency clause: "p99 rises past 3x its lowest (21.4 ms at 1 users) from 500 users
/// (7.70 s)", or that it did not.
pub fn latency_clause(points: &[Point], unit: &str) -> String {
    let at = |l: f64| at_level(l, unit);
    let factor = format!("{LATENCY_FACTOR:.0}x");
    match latency_rise(points) {
        Some((low, risen)) => format!(
            "p99 rises past {factor} its lowest ({} at {}) from {} ({})",
            duration_ms(low.p99_ms),
            at(low.level),
            at(risen.level),
            duration_ms(risen.p99_ms)
        ),
        None => {
            let lowest = points
                .iter()
                .map(|p| p.p99_ms)
                .fold(f64::INFINITY, f64::min);
            let highest = points.iter().map(|p| p.p99_ms).fold(0.0, f64::max);
            if lowest.is_finite() {
                format!(
                    "p99 stays within {factor} its lowest ({} to {})",
                    duration_ms(lowest),
                    duration_ms(highest)
                )
            } else {
                String::new()
            }
        }
    }
}

/// The errors clause: "errors from 500 users (1.20%, up to 2.00%)", "no errors", or "errors
/// under 0.5% at every level".
pub fn errors_clause(points: &[Point], unit: &str) -> String {
    match errors_start(points) {
        Some((first, worst)) => format!(
            "errors from {} ({}, up to {})",
            at_level(first.level, unit),
            percent(first.error_percent),
            percent(worst)
        ),
        None if points.iter().all(|p| p.errored == 0) => "no errors".to_owned(),
        None => format!(
            "errors under {ERRORS_PERCENT}% (or under {ERRORS_COUNT} requests) at every level"
        ),
    }
}

/// The listen-queue clause, when a step's connect times clustered at the SYN retransmission
/// times: "connects cluster at the SYN retransmission times (1 s, 3 s) from 500 users: the
/// server's listen queue overflowed (its backlog, not its speed)".
pub fn backlog_clause(first: Option<(f64, &Backlog)>, unit: &str) -> String {
    match first {
        Some((level, b)) => format!(
            "connects cluster at the SYN retransmission times ({}) from {}: the server's listen \
             queue overflowed (its backlog, not its speed)",
            b.instants(),
            at_level(level, unit)
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests;
