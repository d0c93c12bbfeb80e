//! Timestamps as logs write them, turned into UTC seconds without a date library on the hot path:
//! the day number of the last date seen is cached, since a log repeats the same date for hours.

/// One instant from a log line: UTC microseconds since the Unix epoch, and the offset the log
/// wrote it with (so the daily profile is in the server's local hours).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    pub micros: i64,
    pub offset_min: i16,
}

impl Timestamp {
    pub fn secs(self) -> i64 {
        self.micros.div_euclid(1_000_000)
    }
    /// The hour of day (0..24) in the log's own time zone.
    pub fn local_hour(self) -> u8 {
        let local = self.secs() + i64::from(self.offset_min) * 60;
        (local.rem_euclid(86_400) / 3600) as u8
    }
    pub fn from_secs(secs: i64) -> Timestamp {
        Timestamp {
            micros: secs * 1_000_000,
            offset_min: 0,
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number: (year, month, day).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `2026-11-24T00:27:13Z` for a UTC second.
pub fn rfc3339(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u32::from(c - b'0'))?;
    }
    Some(n)
}

fn month(b: &[u8]) -> Option<u32> {
    const NAMES: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    NAMES.iter().position(|n| n[..] == *b).map(|i| i as u32 + 1)
}

/// `+0200`, `-0700`, `+02:00` or `Z` as minutes east of UTC.
fn offset(b: &[u8]) -> Option<i16> {
    if b == b"Z" || b.is_empty() {
        return Some(0);
    }
    let sign = match b[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest: Vec<u8> = b[1..].iter().copied().filter(|&c| c != b':').collect();
    if rest.len() != 4 {
        return None;
    }
    let h = digits(&rest[..2])? as i16;
    let m = digits(&rest[2..])? as i16;
    Some(sign * (h * 60 + m))
}

fn hms(b: &[u8]) -> Option<i64> {
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, s) = (digits(&b[..2])?, digits(&b[3..5])?, digits(&b[6..8])?);
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(i64::from(h * 3600 + m * 60 + s))
}

/// Parses timestamps, remembering the last date's day number.
#[derive(Default)]
pub struct Clock {
    last_date: [u8; 11],
    last_days: i64,
}

impl Clock {
    /// Apache's `%t` and nginx's `$time_local` without brackets: `10/Oct/2000:13:55:36 -0700`.
    pub fn apache(&mut self, b: &[u8]) -> Option<Timestamp> {
        // Apache's `%t` writes the brackets; nginx's formats put them around `$time_local`
        let b = b.strip_prefix(b"[").unwrap_or(b);
        let b = b.strip_suffix(b"]").unwrap_or(b);
        if b.len() < 20 || b[11] != b':' {
            return None;
        }
        let days = if b[..11] == self.last_date {
            self.last_days
        } else {
            let d = digits(&b[..2])?;
            let m = month(&b[3..6])?;
            let y = digits(&b[7..11])?;
            if b[2] != b'/' || b[6] != b'/' || d == 0 || d > 31 {
                return None;
            }
            let days = days_from_civil(i64::from(y), m, d);
            self.last_date.copy_from_slice(&b[..11]);
            self.last_days = days;
            days
        };
        let secs = hms(&b[12..20])?;
        let off = if b.len() > 21 { offset(&b[21..])? } else { 0 };
        let local = days * 86_400 + secs;
        Some(Timestamp {
            micros: (local - i64::from(off) * 60) * 1_000_000,
            offset_min: off,
        })
    }

    /// ISO 8601 / RFC 3339 (`$time_iso8601`, JSON logs): `2026-11-24T00:27:13+01:00`, fractions
    /// of a second allowed.
    pub fn iso8601(&mut self, b: &[u8]) -> Option<Timestamp> {
        if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
            return None;
        }
        let y = digits(&b[..4])?;
        let m = digits(&b[5..7])?;
        let d = digits(&b[8..10])?;
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        let secs = hms(&b[11..19])?;
        let mut i = 19;
        let mut micros: i64 = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let frac = &b[start..i];
            for k in 0..6 {
                micros = micros * 10 + frac.get(k).map_or(0, |c| i64::from(c - b'0'));
            }
        }
        let off = offset(&b[i..])?;
        let local = days_from_civil(i64::from(y), m, d) * 86_400 + secs;
        Some(Timestamp {
            micros: (local - i64::from(off) * 60) * 1_000_000 + micros,
            offset_min: off,
        })
    }

    /// Seconds since the epoch with an optional fraction: nginx's `$msec`, JSON `ts` fields.
    pub fn epoch(&mut self, b: &[u8]) -> Option<Timestamp> {
        let secs = seconds_us(b)?;
        Some(Timestamp {
            micros: secs as i64,
            offset_min: 0,
        })
    }
}

/// A duration in seconds with an optional fraction (`0.123`, `2`) as microseconds.
pub fn seconds_us(b: &[u8]) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', b) {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b""[..]),
    };
    let whole = if int.is_empty() {
        0
    } else {
        u64::from(digits(int)?)
    };
    let mut us: u64 = 0;
    for k in 0..6 {
        let c = frac.get(k).copied().unwrap_or(b'0');
        if !c.is_ascii_digit() {
            return None;
        }
        us = us * 10 + u64::from(c - b'0');
    }
    if frac.len() > 6 && !frac[6..].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(whole * 1_000_000 + us)
}

/// A non-negative integer (`%D`, `%b`, `$status`), `None` when not all digits.
pub fn integer(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(c - b'0');
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apache_time_is_utc_with_its_offset_kept() {
        let mut c = Clock::default();
        let t = c.apache(b"10/Oct/2000:13:55:36 -0700").unwrap();
        assert_eq!(t.secs(), 971_211_336);
        assert_eq!(t.offset_min, -420);
        assert_eq!(t.local_hour(), 13);
        // the cached date gives the same answer
        assert_eq!(
            c.apache(b"10/Oct/2000:13:55:37 -0700").unwrap().secs(),
            971_211_337
        );
        assert!(c.apache(b"10/Foo/2000:13:55:37 -0700").is_none());
    }

    #[test]
    fn iso_and_epoch_times() {
        let mut c = Clock::default();
        let t = c.iso8601(b"2000-10-10T13:55:36.250-07:00").unwrap();
        assert_eq!(t.micros, 971_211_336_250_000);
        assert_eq!(
            c.epoch(b"971211336.250").unwrap().micros,
            971_211_336_250_000
        );
        assert_eq!(rfc3339(971_211_336), "2000-10-10T20:55:36Z");
        assert_eq!(civil_from_days(days_from_civil(2026, 2, 28)), (2026, 2, 28));
    }

    #[test]
    fn seconds_parse_to_microseconds() {
        assert_eq!(seconds_us(b"0.123"), Some(123_000));
        assert_eq!(seconds_us(b"2"), Some(2_000_000));
        assert_eq!(seconds_us(b"-"), None);
        assert_eq!(integer(b"1234"), Some(1234));
    }
}
