//! How numbers are written for people: three significant digits, units that scale, thousands
//! separators for counts.
//!
//! Histograms hold three significant digits, so printing a fourth would invent precision. Counts
//! are exact and keep every digit. Sizes use decimal units (1 KB = 1,000 B), as network rates do.

/// A time given in milliseconds, in us, ms or s: `0.0123` -> `"12.3 us"`, `1234.5` -> `"1.23 s"`.
pub fn duration_ms(ms: f64) -> String {
    scaled(ms, &[(1e-3, "us"), (1.0, "ms"), (1e3, "s")])
}

/// A time given in seconds, written as [`duration_ms`] does: `10.0` -> `"10.0 s"`.
pub fn duration_s(s: f64) -> String {
    duration_ms(s * 1e3)
}

/// A size in bytes, in B, KB, MB or GB: `612.0` -> `"612 B"`, `12_345_678.0` -> `"12.3 MB"`.
pub fn bytes(n: f64) -> String {
    // Whole byte counts are exact: "1 B", not "1.00 B".
    if (0.0..999.5).contains(&n) && n.fract() == 0.0 {
        return format!("{n} B");
    }
    scaled(
        n,
        &[
            (1.0, "B"),
            (1e3, "KB"),
            (1e6, "MB"),
            (1e9, "GB"),
            (1e12, "TB"),
        ],
    )
}

/// An exact count with thousands separators: `123456` -> `"123,456"`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number with `places` decimals and thousands separators in its whole part, for the
/// tables that keep a fixed number of decimals: `(67767.43, 1)` -> `"67,767.4"`.
pub fn decimal(x: f64, places: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let fixed = format!("{:.places$}", x.abs());
    let (whole, frac) = fixed.split_once('.').unwrap_or((&fixed, ""));
    let mut out = if x < 0.0 && fixed.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        "-".to_owned()
    } else {
        String::new()
    };
    out += &count(whole.parse().unwrap_or(0));
    if !frac.is_empty() {
        out.push('.');
        out += frac;
    }
    out
}

/// A warm-up's length, or `"none"` when the run had none (never "0 us").
pub fn warmup(s: f64) -> String {
    if s > 0.0 {
        duration_s(s)
    } else {
        "none".to_owned()
    }
}

/// A rate such as requests per second. Whole numbers from 100 up (a count over a measured time
/// is good to the unit), three significant digits below: `12345.6` -> `"12,346"`, `2.5` ->
/// `"2.50"`.
pub fn rate(r: f64) -> String {
    if !r.is_finite() || r <= 0.0 {
        return "0".to_owned();
    }
    if r >= 99.95 {
        count(r.round() as u64)
    } else {
        sig3(r)
    }
}

/// A percentage at three significant digits: `45.06` -> `"45.1%"`.
pub fn percent(p: f64) -> String {
    if !p.is_finite() || p <= 0.0 {
        return "0%".to_owned();
    }
    format!("{}%", sig3(p))
}

/// A relative change at three significant digits with its sign: `0.2` -> `"+20.0%"`,
/// `-0.0512` -> `"-5.12%"`, `0.0` -> `"0%"`; from zero to something, `"+∞%"`.
pub fn change(fraction: f64) -> String {
    if fraction == 0.0 || fraction.is_nan() {
        return "0%".to_owned();
    }
    let sign = if fraction > 0.0 { "+" } else { "-" };
    if fraction.is_infinite() {
        return format!("{sign}∞%");
    }
    let pct = round_sig3(fraction.abs() * 100.0);
    if pct >= 1000.0 {
        return format!("{sign}{}%", count(pct as u64));
    }
    format!("{sign}{}%", sig3(pct))
}

/// A threshold's measured value in its unit, as the summary and the HTML report show it.
pub fn threshold_value(value: f64, unit: &str) -> String {
    match unit {
        "ms" => duration_ms(value),
        "%" => format!("{value:.2}%"),
        _ => format!("{value:.1} {unit}"),
    }
}

/// Writes `value` (in the unit of `units[0]`'s scale 1) in the first unit where it rounds to
/// less than 1000. Rounding first and choosing the unit after is what keeps 999.95 ms from
/// printing as "1000 ms": it becomes "1.00 s".
fn scaled(value: f64, units: &[(f64, &str)]) -> String {
    if !value.is_finite() || value <= 0.0 {
        return format!("0 {}", units[0].1);
    }
    let (last_scale, last_unit) = units[units.len() - 1];
    for &(scale, unit) in units {
        let x = round_sig3(value / scale);
        if x < 1000.0 {
            return format!("{} {unit}", sig3(x));
        }
    }
    let x = round_sig3(value / last_scale);
    format!("{} {last_unit}", count(x as u64))
}

/// `x` rounded to three significant digits.
fn round_sig3(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let factor = 10f64.powi(2 - magnitude);
    (x * factor).round() / factor
}

/// `x` written with three significant digits: "1.23", "12.3", "123", "0.0500".
pub fn sig3(x: f64) -> String {
    let r = round_sig3(x);
    if r == 0.0 {
        return "0".to_owned();
    }
    let magnitude = r.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).max(0) as usize;
    format!("{r:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_scale_and_keep_three_digits() {
        let table = [
            (0.0, "0 us"),
            (0.001, "1.00 us"),
            (0.0123, "12.3 us"),
            (0.123, "123 us"),
            (0.9994, "999 us"),
            (0.99995, "1.00 ms"),
            (1.0, "1.00 ms"),
            (1.234, "1.23 ms"),
            (12.345, "12.3 ms"),
            (999.4, "999 ms"),
            (999.95, "1.00 s"),
            (1234.5, "1.23 s"),
            (10_000.0, "10.0 s"),
            (999_500.0, "1,000 s"),
            (3_600_000.0, "3,600 s"),
            (f64::NAN, "0 us"),
        ];
        for (ms, want) in table {
            assert_eq!(duration_ms(ms), want, "{ms} ms");
        }
        assert_eq!(duration_s(10.0), "10.0 s");
        assert_eq!(duration_s(0.21), "210 ms");
    }

    #[test]
    fn sizes_use_decimal_units() {
        let table = [
            (0.0, "0 B"),
            (1.0, "1 B"),
            (12.34, "12.3 B"),
            (612.0, "612 B"),
            (612.4, "612 B"),
            (999.6, "1.00 KB"),
            (1_100.0, "1.10 KB"),
            (12_345_678.0, "12.3 MB"),
            (2.5e9, "2.50 GB"),
        ];
        for (n, want) in table {
            assert_eq!(bytes(n), want, "{n} B");
        }
    }

    #[test]
    fn counts_group_thousands() {
        let table = [
            (0, "0"),
            (7, "7"),
            (999, "999"),
            (1_000, "1,000"),
            (123_456, "123,456"),
            (1_234_567, "1,234,567"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ];
        for (n, want) in table {
            assert_eq!(count(n), want);
        }
    }

    #[test]
    fn decimals_group_thousands() {
        let table = [
            (0.0, 1, "0.0"),
            (67_767.43, 1, "67,767.4"),
            (1_234.567, 2, "1,234.57"),
            (999.96, 1, "1,000.0"),
            (-1_234.5, 1, "-1,234.5"),
            (-0.01, 1, "0.0"),
            (1_868.0, 0, "1,868"),
        ];
        for (x, places, want) in table {
            assert_eq!(decimal(x, places), want, "{x}");
        }
        assert_eq!(warmup(0.0), "none");
        assert_eq!(warmup(2.0), "2.00 s");
    }

    #[test]
    fn rates_and_percentages() {
        let table = [
            (0.0, "0"),
            (0.5, "0.500"),
            (2.5, "2.50"),
            (99.94, "99.9"),
            (99.96, "100"),
            (12_345.6, "12,346"),
        ];
        for (r, want) in table {
            assert_eq!(rate(r), want, "{r}/s");
        }
        assert_eq!(percent(45.06), "45.1%");
        assert_eq!(percent(100.0), "100%");
        assert_eq!(percent(0.0), "0%");
    }

    #[test]
    fn changes_carry_a_sign() {
        let table = [
            (0.0, "0%"),
            (0.2, "+20.0%"),
            (-0.0512, "-5.12%"),
            (0.00001234, "+0.00123%"),
            (5.523, "+552%"),
            (12.345, "+1,230%"),
            (f64::INFINITY, "+∞%"),
            (f64::NEG_INFINITY, "-∞%"),
        ];
        for (f, want) in table {
            assert_eq!(change(f), want, "{f}");
        }
    }
}
