//! How a value of an axis reads in words: the hover box's headings and values on the HTML
//! page, with the same formats as the report's tables.

use super::Reading;
use crate::format::{bytes, count, duration_ms, duration_s, percent, rate, sig3};

impl Reading {
    /// `v` as a reader sees it.
    pub fn text(&self, v: f64) -> String {
        match self {
            Reading::Number => rate(v),
            Reading::Count => count(v.round().max(0.0) as u64),
            Reading::Sig3 => sig3(v),
            Reading::Rate(unit) => format!("{}{unit}", rate(v)),
            Reading::Duration => duration_ms(v),
            Reading::Percent => percent(v),
            Reading::Bytes => bytes(v),
            Reading::Second => second(v),
            Reading::Seconds(n) => format!("t = {} .. {} s", v as u64, v as u64 + n),
            Reading::Instant => format!("at {}", duration_s(v)),
            Reading::Percentile => {
                let q = (1.0 - 10f64.powf(-v)) * 100.0;
                let s = format!("{q:.3}");
                format!("p{}", s.trim_end_matches('0').trim_end_matches('.'))
            }
            Reading::Level(unit) => format!("{} {unit}", crate::sweep::level_text(v)),
            Reading::Users => {
                let n = v.round() as u64;
                format!("{} user{}", count(n), if n == 1 { "" } else { "s" })
            }
            Reading::Ordinal(names) => {
                let i = (v.round() as usize).clamp(1, names.len().max(1)) - 1;
                names.get(i).cloned().unwrap_or_default()
            }
        }
    }
}

/// The unit for times up to `max_ms`: the divisor from milliseconds and its name.
pub fn time_unit(max_ms: f64) -> (f64, &'static str) {
    if max_ms < 1.0 {
        (1e-3, "us")
    } else if max_ms < 1_000.0 {
        (1.0, "ms")
    } else {
        (1e3, "s")
    }
}

/// An exact tick value in its own unit: `0.5` ms -> `500 us`, `2000` ms -> `2 s`.
pub fn short_duration(ms: f64) -> String {
    let (div, unit) = time_unit(ms * 1.0001);
    format!("{} {unit}", trim(ms / div, 3))
}

/// `v` with at most `decimals` decimals and no trailing zeros.
pub(crate) fn trim(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A second of the timeline: `3–4 s` for any moment within it.
fn second(t: f64) -> String {
    let start = t.floor().max(0.0) as u64;
    format!("{start}–{} s", start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_say_what_a_value_is() {
        let table: [(Reading, f64, &str); 14] = [
            (Reading::Second, 3.5, "3–4 s"),
            (Reading::Seconds(5), 10.0, "t = 10 .. 15 s"),
            (Reading::Instant, 3.2, "at 3.20 s"),
            (Reading::Percentile, 3.0, "p99.9"),
            (Reading::Percentile, 2f64.log10(), "p50"),
            (Reading::Rate(" req/s".into()), 1234.0, "1,234 req/s"),
            (Reading::Rate("/s".into()), 12.0, "12.0/s"),
            (Reading::Level("users".into()), 10.0, "10 users"),
            (Reading::Users, 1.0, "1 user"),
            (Reading::Users, 20.0, "20 users"),
            (Reading::Count, 2.6, "3"),
            (Reading::Percent, 5.0, "5.00%"),
            (Reading::Ordinal(vec!["a".into(), "b".into()]), 2.0, "b"),
            (Reading::Ordinal(vec!["a".into()]), 7.0, "a"),
        ];
        for (reading, v, want) in table {
            assert_eq!(reading.text(v), want, "{reading:?} {v}");
        }
        assert_eq!(short_duration(2_000.0), "2 s");
        assert_eq!(short_duration(0.5), "500 us");
        assert_eq!(trim(2.50, 3), "2.5");
    }
}
