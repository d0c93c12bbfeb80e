//! The one reading of durations, percentages and rates that people type.
//!
//! The rule (docs/units.md): a duration needs a unit (`800us`, `100ms`, `2s`, `5m`, `1h30m`)
//! everywhere, except in command-line flags whose help says TIME, where a bare number is
//! seconds as it always was (`-d 30`). A percentage in a criterion needs `%`; a PERCENT flag
//! may leave it out. A rate is a bare number of requests per second (`/s` may follow).

use std::time::Duration;

/// What a bare number means where it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bare {
    /// A bare number is refused: the text must carry its unit.
    Refused,
    /// A bare number is in the flag's documented unit (seconds, or percent).
    Allowed,
}

/// What to write instead of a text that is not a duration.
pub const DURATION_HINT: &str =
    "write a number with a unit, e.g. 100ms or 2s; units: us, ms, s, m, h";

/// A duration: `800us`, `100ms`, `1.5s`, `5m`, `1h30m`; a bare number only when `bare` allows
/// it, and then it is seconds.
pub fn duration(text: &str, bare: Bare) -> Result<Duration, String> {
    let t = text.trim();
    let refuse = |why: &str| format!("`{text}` is not a duration{why}: {DURATION_HINT}");
    if let Ok(secs) = t.parse::<f64>() {
        return match bare {
            Bare::Allowed if secs.is_finite() && secs >= 0.0 => {
                Duration::try_from_secs_f64(secs).map_err(|_| refuse(" (too long)"))
            }
            Bare::Allowed => Err(refuse("")),
            Bare::Refused => Err(refuse(" (a bare number has no unit)")),
        };
    }
    let units: [(&str, f64); 6] = [
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ms", 1e-3),
        ("s", 1.0),
        ("m", 60.0),
        ("h", 3600.0),
    ];
    for (unit, scale) in units {
        if let Some(n) = t.strip_suffix(unit) {
            if let Ok(x) = n.trim().parse::<f64>() {
                return if x.is_finite() && x >= 0.0 {
                    // Found by fuzzing: 18446744073709551616s overflowed a Duration and panicked.
                    Duration::try_from_secs_f64(x * scale).map_err(|_| refuse(" (too long)"))
                } else {
                    Err(refuse(""))
                };
            }
        }
    }
    // Compound forms such as `1h30m`.
    humantime::parse_duration(t).map_err(|_| refuse(""))
}

/// A duration in milliseconds, unit required: how criteria read a latency limit.
pub fn duration_ms(text: &str) -> Result<f64, String> {
    duration(text, Bare::Refused).map(|d| d.as_secs_f64() * 1e3)
}

/// A percentage from 0 to 100: `1%`, `0.5%`; a bare number only when `bare` allows it.
pub fn percent(text: &str, bare: Bare) -> Result<f64, String> {
    let t = text.trim();
    let number = match (t.strip_suffix('%'), bare) {
        (Some(n), _) => n.trim(),
        (None, Bare::Allowed) => t,
        (None, Bare::Refused) => {
            return Err(format!(
                "`{text}` is not a percentage: write it with %, e.g. 1% or 0.5%"
            ))
        }
    };
    number
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && (0.0..=100.0).contains(x))
        .ok_or_else(|| format!("`{text}` is not a percentage from 0 to 100, e.g. 1% or 0.5%"))
}

/// Requests per second: a plain number, optionally followed by `/s`.
pub fn rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    t.strip_suffix("/s")
        .unwrap_or(t)
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| {
            format!("`{text}` is not a rate: write requests per second as a number, e.g. 100")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_unit_unless_the_flag_says_seconds() {
        let ok = [
            ("800us", 0.8),
            ("100ms", 100.0),
            ("1.5s", 1500.0),
            ("5m", 300_000.0),
            ("1h30m", 5_400_000.0),
            ("0s", 0.0),
        ];
        for (s, ms) in ok {
            for bare in [Bare::Refused, Bare::Allowed] {
                let d = duration(s, bare).unwrap_or_else(|e| panic!("{s}: {e}"));
                assert!((d.as_secs_f64() * 1e3 - ms).abs() < 1e-9, "{s}");
            }
        }
        assert_eq!(
            duration("1.5", Bare::Allowed),
            Ok(Duration::from_millis(1500))
        );
        let e = duration("100", Bare::Refused).unwrap_err();
        assert!(
            e.contains("bare number") && e.contains("100ms or 2s"),
            "{e}"
        );
        for bad in ["", "fast", "-3s", "10 parsecs", "-1"] {
            for bare in [Bare::Refused, Bare::Allowed] {
                let e = duration(bad, bare).unwrap_err();
                assert!(e.contains("is not a duration"), "{bad}: {e}");
            }
        }
    }

    /// Found by fuzzing a workload file: a duration past `Duration::MAX` panicked.
    #[test]
    fn a_duration_too_long_for_a_duration_is_refused_not_a_panic() {
        for huge in ["18446744073709551616s", "1e300h", "1e300"] {
            let e = duration(huge, Bare::Allowed).unwrap_err();
            assert!(e.contains("too long"), "{huge}: {e}");
        }
    }

    #[test]
    fn percentages_and_rates() {
        assert_eq!(percent("1%", Bare::Refused), Ok(1.0));
        assert_eq!(percent(" 0.5 % ", Bare::Refused), Ok(0.5));
        assert_eq!(percent("10", Bare::Allowed), Ok(10.0));
        assert!(percent("1", Bare::Refused).unwrap_err().contains("with %"));
        assert!(percent("101%", Bare::Allowed).is_err());
        assert_eq!(rate("100"), Ok(100.0));
        assert_eq!(rate("2.5/s"), Ok(2.5));
        assert!(rate("lots").unwrap_err().contains("not a rate"));
    }
}
