//! A client of toxiproxy's HTTP API, as small as the three calls a run makes: list the proxies,
//! add a toxic, remove one. One blocking exchange per call (`Connection: close`), bounded in
//! time, on the faults' own thread: never the load's.

use herd_monitor::HttpUrl;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long one call may take. herd proxy answers within 2 s even under load; toxiproxy too.
const LIMIT: Duration = Duration::from_secs(5);
/// An API answer beyond this is not toxiproxy's.
const MAX_BYTES: usize = 8 << 20;

/// toxiproxy's default address, where its CLI and clients look first.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8474";

/// Where a proxy's API listens.
#[derive(Clone, Debug)]
pub struct Api {
    url: HttpUrl,
}

impl Api {
    /// `http://host:port`, as `$TOXIPROXY_URL` is written; a path is ignored.
    pub fn new(url: &str) -> Result<Api, String> {
        let mut url = HttpUrl::parse(url.trim_end_matches('/'))?;
        url.path = String::new();
        Ok(Api { url })
    }

    /// The proxies' names.
    pub fn proxies(&self) -> Result<Vec<String>, String> {
        let (status, body) = self.call("GET", "/proxies", None)?;
        if status != 200 {
            return Err(format!("GET /proxies answered {status}: {}", body.trim()));
        }
        match serde_json::from_str::<Value>(&body) {
            Ok(Value::Object(m)) => Ok(m.keys().cloned().collect()),
            _ => Err("GET /proxies did not answer toxiproxy's map of proxies".into()),
        }
    }

    /// Adds `toxic` (toxiproxy's JSON: name, type, stream, toxicity, attributes) to `proxy`.
    pub fn add(&self, proxy: &str, toxic: &Value) -> Result<(), String> {
        let path = format!("/proxies/{}/toxics", segment(proxy));
        let (status, body) = self.call("POST", &path, Some(&toxic.to_string()))?;
        match status {
            200 => Ok(()),
            _ => Err(format!("POST {path} answered {status}: {}", body.trim())),
        }
    }

    /// Removes the toxic `name` from `proxy`; one already gone is fine.
    pub fn remove(&self, proxy: &str, name: &str) -> Result<(), String> {
        let path = format!("/proxies/{}/toxics/{}", segment(proxy), segment(name));
        let (status, body) = self.call("DELETE", &path, None)?;
        match status {
            200 | 204 | 404 => Ok(()),
            _ => Err(format!("DELETE {path} answered {status}: {}", body.trim())),
        }
    }

    /// One exchange: the status and the body.
    fn call(&self, method: &str, path: &str, body: Option<&str>) -> Result<(u16, String), String> {
        let deadline = Instant::now() + LIMIT;
        let left = || {
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or_else(|| format!("no answer within {} s", LIMIT.as_secs()))
        };
        let io = |e: std::io::Error| format!("{method} {path}: {e}");
        let mut s = TcpStream::connect_timeout(&self.url.addr, left()?).map_err(io)?;
        s.set_write_timeout(Some(left()?)).map_err(io)?;
        let body = body.unwrap_or("");
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: herd/{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.url.authority,
            env!("CARGO_PKG_VERSION"),
            body.len()
        );
        s.write_all(request.as_bytes()).map_err(io)?;
        let mut raw = Vec::new();
        let mut buf = [0u8; 16 << 10];
        loop {
            s.set_read_timeout(Some(left()?)).map_err(io)?;
            let n = s.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
            if raw.len() > MAX_BYTES {
                return Err(format!("{method} {path}: the answer is over 8 MB"));
            }
        }
        parse(&raw).ok_or_else(|| format!("{method} {path}: not an HTTP answer"))
    }
}

/// A name as one segment of a path (toxiproxy's names are plain words; a space or slash is
/// escaped rather than sent as a path).
fn segment(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The status and body of a whole answer read to the end of the connection (no chunked
/// bodies: toxiproxy and herd proxy give a length).
fn parse(raw: &[u8]) -> Option<(u16, String)> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_names_are_read_as_toxiproxy_writes_them() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"db\":{}}";
        assert_eq!(parse(raw), Some((200, "{\"db\":{}}".into())));
        assert_eq!(parse(b"garbage"), None);
        assert_eq!(segment("my db/1"), "my%20db%2F1");
    }
}
