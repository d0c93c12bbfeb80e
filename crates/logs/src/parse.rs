//! The hot path: a line matched against a format's parts with plain byte scans (memchr for the
//! next literal), no regex and no allocation. Quoted fields skip `\"` as Apache escapes them.

use crate::format::{Field, Part};
use crate::record::Record;
use crate::time::{integer, seconds_us, Clock};

/// Reads lines of one text format.
pub struct TextParser {
    parts: Vec<Part>,
    /// Common/Combined found by detection: a number after the format is a time taken (`%D`
    /// microseconds when whole, `$request_time` seconds with a fraction).
    tail_taken: bool,
    clock: Clock,
}

impl TextParser {
    pub fn new(parts: Vec<Part>, tail_taken: bool) -> TextParser {
        TextParser {
            parts,
            tail_taken,
            clock: Clock::default(),
        }
    }

    pub fn parse<'a>(&mut self, line: &'a [u8]) -> Result<Record<'a>, &'static str> {
        let mut r = Record::default();
        let mut have_time = false;
        let mut pos = 0;
        let mut request: Option<&'a [u8]> = None;
        let (mut path, mut query, mut path_query): (Option<&[u8]>, &[u8], Option<&[u8]>) =
            (None, b"", None);
        let n = self.parts.len();
        for k in 0..n {
            match &self.parts[k] {
                Part::Lit(lit) => {
                    if !line[pos..].starts_with(lit) {
                        return Err("the line does not follow the log format");
                    }
                    pos += lit.len();
                }
                Part::Field(f) => {
                    let end = match self.parts.get(k + 1) {
                        Some(Part::Lit(next)) => {
                            let quoted = k > 0
                                && matches!(&self.parts[k - 1], Part::Lit(p) if p.ends_with(b"\""))
                                && next[0] == b'"';
                            find(&line[pos..], next, quoted)
                                .ok_or("the line does not follow the log format")?
                                + pos
                        }
                        _ if self.tail_taken || k + 1 < n => {
                            memchr::memchr(b' ', &line[pos..]).map_or(line.len(), |e| e + pos)
                        }
                        _ => line.len(),
                    };
                    let v = &line[pos..end];
                    pos = end;
                    match f {
                        Field::Client => r.client = v,
                        Field::TimeApache => {
                            r.time = self
                                .clock
                                .apache(v)
                                .ok_or("the time is not like 10/Oct/2000:13:55:36 -0700")?;
                            have_time = true;
                        }
                        Field::TimeIso => {
                            r.time = self.clock.iso8601(v).ok_or("the time is not ISO 8601")?;
                            have_time = true;
                        }
                        Field::TimeEpoch => {
                            r.time = self
                                .clock
                                .epoch(v)
                                .ok_or("the time is not seconds since 1970")?;
                            have_time = true;
                        }
                        Field::Request => request = Some(v),
                        Field::Method => r.method = v,
                        Field::Path => path = Some(v),
                        Field::Query => query = v.strip_prefix(b"?").unwrap_or(v),
                        Field::PathQuery => path_query = Some(v),
                        Field::Status => {
                            r.status = integer(v)
                                .filter(|s| *s < 1000)
                                .ok_or("the status is not a number")?
                                as u16
                        }
                        Field::Bytes => {
                            r.bytes = if v == b"-" {
                                0
                            } else {
                                integer(v).ok_or("the size is not a number")?
                            }
                        }
                        Field::Referer => r.referer = v,
                        Field::UserAgent => r.user_agent = v,
                        Field::TakenUs => r.taken_us = integer(v),
                        Field::TakenMs => r.taken_us = integer(v).map(|ms| ms * 1000),
                        Field::TakenS => r.taken_us = seconds_us(v),
                        Field::Upstream => {
                            // `0.002, 0.004` when nginx tried two upstreams: their sum
                            if r.taken_us.is_none() {
                                r.taken_us = upstream_us(v);
                            }
                        }
                        Field::Skip => {}
                    }
                }
            }
        }
        if self.tail_taken && pos < line.len() {
            let rest = &line[pos..];
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            let tok = &rest[..memchr::memchr(b' ', rest).unwrap_or(rest.len())];
            r.taken_us = if tok.contains(&b'.') {
                seconds_us(tok)
            } else {
                integer(tok)
            };
        }
        if !have_time {
            return Err("the line has no time");
        }
        if let Some(req) = request {
            r.set_request(req)?;
        } else if let Some(pq) = path_query {
            r.set_target(pq);
        } else if let Some(p) = path {
            r.path = p;
            r.query = query;
        }
        if r.method.is_empty() {
            r.method = b"GET";
        }
        Ok(r)
    }
}

fn upstream_us(v: &[u8]) -> Option<u64> {
    let mut total = None;
    for part in v.split(|&c| c == b',' || c == b':') {
        let t = part.trim_ascii();
        if let Some(us) = seconds_us(t) {
            total = Some(total.unwrap_or(0) + us);
        }
    }
    total
}

/// Where `lit` starts in `hay`; in a quoted field a quote preceded by a backslash is text.
fn find(hay: &[u8], lit: &[u8], quoted: bool) -> Option<usize> {
    let first = lit[0];
    let mut from = 0;
    while let Some(i) = memchr::memchr(first, &hay[from..]) {
        let at = from + i;
        if hay[at..].starts_with(lit) && !(quoted && at > 0 && escaped(hay, at)) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Whether the byte at `at` is escaped by an odd run of backslashes before it.
fn escaped(hay: &[u8], at: usize) -> bool {
    hay[..at].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{apache, nginx, COMBINED, COMMON};

    #[test]
    fn combined_line_with_escaped_quote_in_the_user_agent() {
        let mut p = TextParser::new(apache(COMBINED).unwrap(), true);
        let line = br#"10.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /items/42?x=1 HTTP/1.0" 200 2326 "http://a/" "Mozilla \"X\" 5" 1234"#;
        let r = p.parse(line).unwrap();
        assert_eq!(r.client, b"10.0.0.1");
        assert_eq!(r.method, b"GET");
        assert_eq!(r.path, b"/items/42");
        assert_eq!(r.query, b"x=1");
        assert_eq!(r.status, 200);
        assert_eq!(r.bytes, 2326);
        assert_eq!(r.user_agent, br#"Mozilla \"X\" 5"#);
        assert_eq!(r.taken_us, Some(1234));
    }

    #[test]
    fn common_line_with_dash_size_and_seconds_tail() {
        let mut p = TextParser::new(apache(COMMON).unwrap(), true);
        let r = p
            .parse(br#"::1 - - [10/Oct/2000:13:55:36 +0000] "HEAD / HTTP/1.1" 304 - 0.004"#)
            .unwrap();
        assert_eq!(
            (r.method, r.bytes, r.taken_us),
            (&b"HEAD"[..], 0, Some(4000))
        );
    }

    #[test]
    fn garbage_is_a_bad_line_not_a_panic() {
        let mut p = TextParser::new(apache(COMBINED).unwrap(), true);
        for bad in [
            &b""[..],
            b"hello",
            b"1.2.3.4 - - [x] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"",
            b"\xff\xfe [",
            b"a - - [10/Oct/2000:13:55:36 +0000] \"-\" 400 0 \"-\" \"-\"",
        ] {
            assert!(p.parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn nginx_upstream_times_are_summed() {
        let mut p = TextParser::new(
            nginx("$remote_addr [$time_local] \"$request\" $status $upstream_response_time")
                .unwrap(),
            false,
        );
        let r = p
            .parse(br#"1.1.1.1 [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 502 0.002, 0.004"#)
            .unwrap();
        assert_eq!(r.taken_us, Some(6000));
    }
}
