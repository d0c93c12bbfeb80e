//! JSON lines: nginx `log_format ... escape=json '{...}'`, or any JSON object per line with a
//! field mapping (`--fields time=ts,path=url`). Slower than the text matcher (a JSON parse per
//! line) but JSON logs are the minority.

use crate::record::Record;
use crate::time::{integer, seconds_us, Clock, Timestamp};
use crate::LogError;
use serde_json::Value;

/// What herd needs, and the keys it looks for when no mapping names them (nginx variable names
/// first, then common logging-library names).
const ROLES: [(&str, &[&str]); 13] = [
    (
        "time",
        &[
            "time_local",
            "time_iso8601",
            "msec",
            "time",
            "timestamp",
            "ts",
            "@timestamp",
        ],
    ),
    (
        "client",
        &["remote_addr", "client", "ip", "client_ip", "remote_ip"],
    ),
    ("request", &["request"]),
    ("method", &["request_method", "method"]),
    ("uri", &["request_uri", "uri", "url", "path"]),
    ("query", &["args", "query_string", "query"]),
    ("status", &["status", "status_code", "code"]),
    (
        "bytes",
        &[
            "body_bytes_sent",
            "bytes_sent",
            "bytes",
            "size",
            "response_size",
        ],
    ),
    ("referer", &["http_referer", "referer", "referrer"]),
    (
        "user_agent",
        &["http_user_agent", "user_agent", "agent", "ua"],
    ),
    (
        "taken",
        &[
            "request_time",
            "upstream_response_time",
            "duration",
            "elapsed",
            "response_time",
        ],
    ),
    (
        "taken_ms",
        &[
            "duration_ms",
            "elapsed_ms",
            "response_time_ms",
            "latency_ms",
        ],
    ),
    (
        "taken_us",
        &["duration_us", "request_time_us", "latency_us"],
    ),
];

/// Reads JSON lines with a mapping from roles to keys.
pub struct JsonParser {
    keys: Vec<(usize, Vec<String>)>,
    clock: Clock,
    client: String,
    method: String,
    target: String,
    referer: String,
    user_agent: String,
}

impl JsonParser {
    /// `mapping`: `role=key` pairs separated by commas (roles: time, client, method, uri, query,
    /// request, status, bytes, referer, user_agent, taken (s), taken_ms, taken_us).
    pub fn new(mapping: Option<&str>) -> Result<JsonParser, LogError> {
        let mut keys: Vec<(usize, Vec<String>)> = ROLES
            .iter()
            .enumerate()
            .map(|(i, (_, names))| (i, names.iter().map(|s| s.to_string()).collect()))
            .collect();
        for pair in mapping
            .unwrap_or("")
            .split(',')
            .filter(|p| !p.trim().is_empty())
        {
            let Some((role, key)) = pair.split_once('=') else {
                return Err(LogError::Format(format!(
                    "--fields: `{pair}` is not ROLE=KEY (e.g. --fields time=ts,uri=url)"
                )));
            };
            let Some(i) = ROLES.iter().position(|(r, _)| *r == role.trim()) else {
                let roles: Vec<&str> = ROLES.iter().map(|(r, _)| *r).collect();
                return Err(LogError::Format(format!(
                    "--fields: no role `{role}` (roles: {})",
                    roles.join(", ")
                )));
            };
            keys[i].1 = vec![key.trim().to_owned()];
        }
        Ok(JsonParser {
            keys,
            clock: Clock::default(),
            client: String::new(),
            method: String::new(),
            target: String::new(),
            referer: String::new(),
            user_agent: String::new(),
        })
    }

    pub fn parse<'a>(&'a mut self, line: &[u8]) -> Result<Record<'a>, &'static str> {
        let v: serde_json::Map<String, Value> =
            serde_json::from_slice(line).map_err(|_| "the line is not a JSON object")?;
        let get = |role: usize| -> Option<&Value> {
            self.keys[role]
                .1
                .iter()
                .find_map(|k| v.get(k))
                .filter(|v| !v.is_null())
        };
        let text = |x: &Value| -> String {
            match x {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }
        };
        let time = get(0).ok_or("the line has no time field (map one with --fields time=KEY)")?;
        let time = match time {
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(0.0);
                // milliseconds since the epoch when too large to be seconds
                let us = if f > 1e11 { f * 1e3 } else { f * 1e6 };
                Some(Timestamp {
                    micros: us as i64,
                    offset_min: 0,
                })
            }
            Value::String(s) => {
                let b = s.as_bytes();
                self.clock
                    .apache(b)
                    .or_else(|| self.clock.iso8601(b))
                    .or_else(|| self.clock.epoch(b))
            }
            _ => None,
        }
        .ok_or("the time field is not a time")?;
        let num = |x: &Value| -> Option<u64> {
            match x {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => integer(s.as_bytes()),
                _ => None,
            }
        };
        let secs = |x: &Value| -> Option<u64> {
            match x {
                Value::Number(n) => n.as_f64().map(|f| (f * 1e6) as u64),
                Value::String(s) => seconds_us(s.split(',').next().unwrap_or("").trim().as_bytes()),
                _ => None,
            }
        };
        let status = get(6)
            .and_then(num)
            .filter(|s| *s < 1000)
            .ok_or("the line has no status")? as u16;
        let bytes = get(7).and_then(num).unwrap_or(0);
        let taken_us = get(10)
            .and_then(secs)
            .or_else(|| get(11).and_then(num).map(|ms| ms * 1000))
            .or_else(|| get(12).and_then(num));
        self.client = get(1).map(text).unwrap_or_default();
        self.referer = get(8).map(text).unwrap_or_default();
        self.user_agent = get(9).map(text).unwrap_or_default();
        self.method.clear();
        self.target.clear();
        if let Some(req) = get(2).map(text) {
            let mut parts = req.splitn(3, ' ');
            self.method = parts.next().unwrap_or("").to_owned();
            self.target = parts.next().unwrap_or("").to_owned();
        }
        if let Some(m) = get(3).map(text) {
            self.method = m;
        }
        if let Some(u) = get(4).map(text) {
            self.target = u;
            if let Some(q) = get(5)
                .map(text)
                .filter(|q| !q.is_empty() && !self.target.contains('?'))
            {
                self.target.push('?');
                self.target.push_str(q.trim_start_matches('?'));
            }
        }
        if self.target.is_empty() {
            return Err("the line has no request or uri field (map one with --fields uri=KEY)");
        }
        if self.method.is_empty() {
            self.method.push_str("GET");
        }
        let mut r = Record {
            time,
            client: self.client.as_bytes(),
            method: self.method.as_bytes(),
            status,
            bytes,
            referer: self.referer.as_bytes(),
            user_agent: self.user_agent.as_bytes(),
            taken_us,
            ..Record::default()
        };
        r.set_target(self.target.as_bytes());
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_escape_json_line() {
        let mut p = JsonParser::new(None).unwrap();
        let r = p
            .parse(br#"{"time_local":"10/Oct/2000:13:55:36 +0000","remote_addr":"1.2.3.4","request":"GET /a?b=1 HTTP/1.1","status":"200","body_bytes_sent":"12","request_time":"0.010","http_user_agent":"curl/8"}"#)
            .unwrap();
        assert_eq!(
            (r.path, r.query, r.status, r.bytes, r.taken_us),
            (&b"/a"[..], &b"b=1"[..], 200, 12, Some(10_000))
        );
        assert_eq!(r.user_agent, b"curl/8");
    }

    #[test]
    fn mapped_fields_and_epoch_millis() {
        let mut p = JsonParser::new(Some("time=when,uri=u,taken_ms=ms")).unwrap();
        let r = p
            .parse(br#"{"when":971186136000,"u":"/x","status":404,"ms":7}"#)
            .unwrap();
        assert_eq!(
            (r.time.secs(), r.status, r.taken_us),
            (971_186_136, 404, Some(7000))
        );
        assert!(JsonParser::new(Some("tiem=x")).is_err());
        assert!(p.parse(b"not json").is_err());
    }
}
