//! What a flag's value means: clap's value parsers for the units of docs/units.md, one per kind,
//! so every command reads `-d 30`, `--timeout 1.5s` or `--stop-errors 10%` the same way.

use herd_result::units::{self, Bare};
use std::time::Duration;

/// Parses `30s`, `5m`, `1h30m`, `250ms`, or a plain number of seconds (`1.5`): a TIME flag is
/// the one place a bare number is allowed, and it is seconds (docs/units.md).
pub fn duration(s: &str) -> Result<Duration, String> {
    units::duration(s, Bare::Allowed)
}

/// A count of connections, requests or threads: a whole number, 0 or more (what is too few for
/// a run is the plan's to say). Negative numbers reach here (`allow_negative_numbers`) rather
/// than being taken for flags, so `-c -5` is told what it is.
pub fn count<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.trim()
        .parse::<T>()
        .map_err(|_| format!("`{s}` is not a count: write a whole number, e.g. 10"))
}

/// `100` or `100/s` requests per second (docs/units.md).
pub fn rate(s: &str) -> Result<f64, String> {
    units::rate(s)
}

/// A PERCENT flag: `10%` or `10`, from 0 to 100, as a percentage (10.0).
/// `--arrivals`: how the open model's arrivals are spaced.
pub fn arrivals(s: &str) -> Result<herd_engine::Process, String> {
    herd_engine::Process::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not an arrival process: constant (even gaps), poisson (exponential \
             gaps, httperf's --period e) or uniform (gaps uniform on [0, 2/rate])"
        )
    })
}

pub fn percent(s: &str) -> Result<f64, String> {
    units::percent(s, Bare::Allowed)
}

/// How much worse or different something may get: `10%`, `10` or `2.5%` -> 0.10, 0.10, 0.025.
/// A change can exceed 100% (a latency that triples changed by 200%), so there is no upper bound.
pub fn threshold(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    match n.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p / 100.0),
        _ => Err(format!(
            "`{s}` is not a threshold: write a percentage, e.g. 10% or 2.5%"
        )),
    }
}

/// `--event-timeout TIME`: a duration longer than 0.
pub fn event_timeout(s: &str) -> Result<Duration, String> {
    match duration(s)? {
        d if d.is_zero() => Err(format!(
            "`{s}` is no wait at all: give the longest gap a stream may have between events, \
             e.g. 2s, or leave the flag out to wait as long as --timeout"
        )),
        d => Ok(d),
    }
}

/// `--sse MODE`: `llm` (true) or `events` (false).
pub fn sse_mode(s: &str) -> Result<bool, String> {
    match s {
        "llm" => Ok(true),
        "events" => Ok(false),
        _ => Err(format!(
            "'{s}' is not a mode: write events (time every event) or llm (an OpenAI-compatible chat completion's tokens)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_timeout_is_a_duration_above_zero() {
        assert_eq!(event_timeout("1.5s"), Ok(Duration::from_millis(1_500)));
        for bad in ["0", "0s", "soon"] {
            let e = event_timeout(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
        assert!(event_timeout("0ms").unwrap_err().contains("e.g. 2s"));
    }

    #[test]
    fn durations_people_write() {
        let ok = [
            ("30s", 30_000),
            ("5m", 300_000),
            ("1h30m", 5_400_000),
            ("250ms", 250),
            ("1.5", 1_500),
            ("1.5s", 1_500),
            ("0s", 0),
        ];
        for (s, ms) in ok {
            assert_eq!(duration(s).unwrap(), Duration::from_millis(ms), "{s}");
        }
        for bad in ["10 parsecs", "", "-3s", "fast"] {
            let e = duration(bad).unwrap_err();
            assert!(e.contains("is not a duration"), "{bad}: {e}");
        }
    }

    #[test]
    fn percentages_people_write() {
        assert_eq!(percent("10%"), Ok(10.0));
        assert_eq!(percent("0.5"), Ok(0.5));
        assert!(percent("150%").is_err());
        assert!(percent("lots").is_err());
    }

    #[test]
    fn thresholds_people_write() {
        for (s, want) in [
            ("10%", 0.10),
            ("10", 0.10),
            (" 2.5 % ", 0.025),
            ("0%", 0.0),
            ("200%", 2.0),
        ] {
            assert!((threshold(s).unwrap() - want).abs() < 1e-12, "{s}");
        }
        for bad in ["-5%", "ten", "", "%"] {
            assert!(
                threshold(bad).unwrap_err().contains("not a threshold"),
                "{bad}"
            );
        }
    }
}
