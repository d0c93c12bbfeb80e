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
            Bare::Allowed => nanos(secs, 1e9).map_err(refuse),
            Bare::Refused => Err(refuse(" (a bare number has no unit)")),
        };
    }
    // Exactly the units the docs list, alone or in a descending sequence (`1h30m`, `2m30s`);
    // `2M`, `1w` or `2d` are refused rather than read as months, weeks or days.
    const UNITS: [(&str, f64); 6] = [
        ("h", 3600e9),
        ("m", 60e9),
        ("s", 1e9),
        ("ms", 1e6),
        ("us", 1e3),
        ("µs", 1e3),
    ];
    let mut total = Duration::ZERO;
    let mut rest = t;
    let mut last = None;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| refuse(" (a number at the end has no unit)"))?;
        let (number, tail) = rest.split_at(digits);
        let tail = tail.trim_start();
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(tail.len());
        let (unit, after) = tail.split_at(unit_len);
        let rank = UNITS
            .iter()
            .position(|(u, _)| *u == unit)
            .ok_or_else(|| refuse(""))?;
        // `ms` then `s` is a typo, not a sum.
        if last.is_some_and(|l| rank <= l) {
            return Err(refuse(""));
        }
        last = Some(rank);
        let x: f64 = number.parse().map_err(|_| refuse(""))?;
        total = total
            .checked_add(nanos(x, UNITS[rank].1).map_err(refuse)?)
            .ok_or_else(|| refuse(" (too long)"))?;
        rest = after.trim_start();
    }
    if last.is_none() {
        return Err(refuse(""));
    }
    Ok(total)
}

/// `x` units of `scale` nanoseconds, exactly to the nanosecond: `16000ms` is 16 s, not
/// 15.999999999 s (`x * 1e-3` in floating point).
/// Found by fuzzing: `18446744073709551616s` overflowed a `Duration` and panicked; it is refused
/// as too long.
fn nanos(x: f64, scale: f64) -> Result<Duration, &'static str> {
    let ns = (x * scale).round();
    if !(x.is_finite() && x >= 0.0) {
        Err("")
    } else if ns >= u64::MAX as f64 {
        Err(" (too long)")
    } else {
        Ok(Duration::from_nanos(ns as u64))
    }
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
    fn durations_take_exactly_the_documented_units_without_float_noise() {
        for (s, want) in [
            ("16000ms", Duration::from_secs(16)),
            ("0.1s", Duration::from_millis(100)),
            ("2m30s", Duration::from_secs(150)),
            ("1h 30m", Duration::from_secs(5400)),
            ("1.5", Duration::from_millis(1500)),
            ("250us", Duration::from_micros(250)),
        ] {
            assert_eq!(duration(s, Bare::Allowed), Ok(want), "{s}");
        }
        for bad in [
            "2M", "1w", "2d", "100y", "5ns", "30s5m", "1h30", "1e400s", "-1s",
        ] {
            let e = duration(bad, Bare::Allowed).unwrap_err();
            assert!(e.contains("units: us, ms, s, m, h"), "{bad}: {e}");
        }
    }

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
        for huge in ["18446744073709551616s", "99999999999999999999h", "1e300"] {
            let e = duration(huge, Bare::Allowed).unwrap_err();
            assert!(e.contains("too long"), "{huge}: {e}");
        }
        // An exponent is no unit the docs list: refused, never a panic.
        assert!(duration("1e300h", Bare::Allowed).is_err());
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
