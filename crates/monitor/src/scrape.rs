//! One plain HTTP GET of a metrics page, bounded in time and size. Exporters are scraped over
//! plain HTTP, usually on the same machine or a private network; a blocking std socket on the
//! watcher's own thread is all it takes.

use std::fmt;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// node_exporter writes about 100 KB; a page beyond this is not a metrics page.
const MAX_BYTES: usize = 32 << 20;

/// An `http://host[:port][/path]` URL, its host resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// As given, for messages and the result.
    pub url: String,
    pub authority: String,
    pub path: String,
    pub addr: SocketAddr,
}

impl HttpUrl {
    /// Parses and resolves. With no path, `/metrics`, where every exporter serves.
    pub fn parse(url: &str) -> Result<HttpUrl, String> {
        let rest = match url.split_once("://") {
            Some(("http", rest)) => rest,
            Some(("https", _)) => {
                return Err(format!(
                    "{url}: only http:// is scraped; exporters serve plain HTTP (node_exporter on :9100)"
                ))
            }
            _ => {
                return Err(format!(
                    "{url}: write the full URL, e.g. http://127.0.0.1:9100/metrics"
                ))
            }
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/metrics"),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(format!(
                "{url}: expected a host, e.g. http://127.0.0.1:9100/metrics"
            ));
        }
        let (host, port) = split_host_port(authority)
            .ok_or_else(|| format!("{url}: the port is not a number from 1 to 65535"))?;
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("{url}: cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("{url}: {host} has no address"))?;
        Ok(HttpUrl {
            url: url.to_owned(),
            authority: authority.to_owned(),
            path: path.to_owned(),
            addr,
        })
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_host_port(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after.strip_prefix(':') {
            Some(p) => (host, Some(p)),
            None if after.is_empty() => (host, None),
            None => return None,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p.parse::<u16>().ok().filter(|&p| p > 0)?,
        None => 80,
    };
    Some((host, port))
}

/// Why a scrape got no metrics page.
#[derive(Debug)]
pub enum ScrapeError {
    Connect(std::io::Error),
    Io(std::io::Error),
    Timeout(Duration),
    Http(String),
}

impl fmt::Display for ScrapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScrapeError::Connect(e) => write!(f, "cannot connect: {e}"),
            ScrapeError::Io(e) => write!(f, "the exchange failed: {e}"),
            ScrapeError::Timeout(d) => write!(f, "no full answer within {} ms", d.as_millis()),
            ScrapeError::Http(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ScrapeError {}

/// GETs the page; the whole exchange, connect included, ends within `timeout`.
pub fn fetch(url: &HttpUrl, timeout: Duration) -> Result<String, ScrapeError> {
    let deadline = Instant::now() + timeout;
    let remaining = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(ScrapeError::Timeout(timeout))
    };
    let mut s = TcpStream::connect_timeout(&url.addr, remaining()?).map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            ScrapeError::Timeout(timeout)
        } else {
            ScrapeError::Connect(e)
        }
    })?;
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            ScrapeError::Timeout(timeout)
        }
        _ => ScrapeError::Io(e),
    };
    s.set_write_timeout(Some(remaining()?)).map_err(io)?;
    // No Accept-Encoding: the page comes uncompressed. The text format is asked for by name, so
    // an exporter that also speaks OpenMetrics or protobuf answers in the one parsed here.
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/plain;version=0.0.4\r\nUser-Agent: herd/{}\r\nConnection: close\r\n\r\n",
        url.path,
        url.authority,
        env!("CARGO_PKG_VERSION")
    );
    s.write_all(request.as_bytes()).map_err(io)?;
    let mut raw = Vec::with_capacity(64 << 10);
    let mut buf = [0u8; 64 << 10];
    loop {
        s.set_read_timeout(Some(remaining()?)).map_err(io)?;
        let n = s.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > MAX_BYTES {
            return Err(ScrapeError::Http(format!(
                "the page is larger than {} MB: not a metrics page",
                MAX_BYTES >> 20
            )));
        }
        if complete(&raw) {
            break;
        }
    }
    decode(&raw)
}

/// Whether a response with a Content-Length has all its body (so a server that keeps the
/// connection open anyway does not cost a timeout).
fn complete(raw: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(raw) {
        Ok(httparse::Status::Complete(head)) => {
            content_length(resp.headers).is_some_and(|n| raw.len() - head >= n)
        }
        _ => false,
    }
}

fn content_length(headers: &[httparse::Header<'_>]) -> Option<usize> {
    header(headers, "content-length")?.trim().parse().ok()
}

fn header<'h>(headers: &'h [httparse::Header<'_>], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .and_then(|h| std::str::from_utf8(h.value).ok())
}

/// The body of a whole response read to the end of the connection.
fn decode(raw: &[u8]) -> Result<String, ScrapeError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    let head = match resp.parse(raw) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(ScrapeError::Http(
                "the connection closed before a full HTTP response head".into(),
            ))
        }
        Err(e) => return Err(ScrapeError::Http(format!("not an HTTP response: {e}"))),
    };
    let code = resp.code.unwrap_or(0);
    if code != 200 {
        return Err(ScrapeError::Http(format!(
            "HTTP {code} {}",
            resp.reason.unwrap_or("")
        )));
    }
    if let Some(enc) = header(resp.headers, "content-encoding") {
        if !enc.eq_ignore_ascii_case("identity") {
            return Err(ScrapeError::Http(format!(
                "the page came {enc}-encoded, though none was asked for"
            )));
        }
    }
    let body = &raw[head..];
    let chunked = header(resp.headers, "transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        dechunk(body)?
    } else {
        match content_length(resp.headers) {
            Some(n) if body.len() < n => {
                return Err(ScrapeError::Http(format!(
                    "the page ended after {} of {n} bytes",
                    body.len()
                )))
            }
            Some(n) => body[..n].to_vec(),
            None => body.to_vec(),
        }
    };
    String::from_utf8(body).map_err(|_| ScrapeError::Http("the page is not UTF-8 text".into()))
}

/// `Transfer-Encoding: chunked`, read whole (RFC 9112 section 7.1); trailers are ignored.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, ScrapeError> {
    let bad = || ScrapeError::Http("malformed chunked body".into());
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let size_text = std::str::from_utf8(&body[..line_end]).map_err(|_| bad())?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad())?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size + 2 || &body[size..size + 2] != b"\r\n" {
            return Err(bad());
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_people_give() {
        let table = [
            (
                "http://127.0.0.1:9100/metrics",
                "127.0.0.1:9100",
                "/metrics",
                9100,
            ),
            ("http://127.0.0.1:9100", "127.0.0.1:9100", "/metrics", 9100),
            ("http://127.0.0.1:9100/", "127.0.0.1:9100", "/", 9100),
            (
                "http://localhost/stats?format=prom",
                "localhost",
                "/stats?format=prom",
                80,
            ),
            ("http://[::1]:9100/metrics", "[::1]:9100", "/metrics", 9100),
        ];
        for (url, authority, path, port) in table {
            let u = HttpUrl::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!((u.authority.as_str(), u.path.as_str()), (authority, path));
            assert_eq!(u.addr.port(), port, "{url}");
        }
        let bad = [
            ("127.0.0.1:9100/metrics", "full URL"),
            ("https://127.0.0.1:9100/metrics", "only http://"),
            ("http:///metrics", "expected a host"),
            ("http://127.0.0.1:99999/", "port"),
            ("http://127.0.0.1:0/", "port"),
            ("http://no-such-host.invalid:9100/", "cannot resolve"),
        ];
        for (url, want) in bad {
            let e = HttpUrl::parse(url).unwrap_err();
            assert!(e.contains(want), "{url}: {e}");
        }
    }

    #[test]
    fn responses_decode_by_length_chunks_or_end_of_connection() {
        let table: [(&[u8], &str); 4] = [
            (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nup 1", "up 1"),
            (b"HTTP/1.0 200 OK\r\n\r\nup 1\nx 2\n", "up 1\nx 2\n"),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nup \r\n1;ext=1\r\n1\r\n0\r\n\r\n",
                "up 1",
            ),
            (
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nup 1",
                "up",
            ),
        ];
        for (raw, want) in table {
            assert_eq!(decode(raw).unwrap(), want);
        }
        assert!(complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nup 1"
        ));
        assert!(!complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nup 1"
        ));
        assert!(!complete(b"HTTP/1.1 200 OK\r\n\r\nup 1"));
    }

    #[test]
    fn failed_responses_say_why() {
        let table: [(&[u8], &str); 6] = [
            (b"HTTP/1.1 404 Not Found\r\n\r\n", "HTTP 404 Not Found"),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nup",
                "ended after 2 of 10",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n\x1f\x8b",
                "gzip",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "chunked",
            ),
            (b"HTTP/1.1 200 OK\r\nContent-Le", "before a full"),
            (b"SSH-2.0-OpenSSH_9.2\r\n", "not an HTTP response"),
        ];
        for (raw, want) in table {
            let e = decode(raw).unwrap_err().to_string();
            assert!(e.contains(want), "{:?}: {e}", String::from_utf8_lossy(raw));
        }
    }
}
