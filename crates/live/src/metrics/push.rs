//! What the pushed outputs share (`--prometheus-remote-write`, `--otlp`): where to push, one
//! POST, and a thread that pushes the cumulative series every few seconds, then once more at the
//! end with the final counts. Every push carries everything so far, so a lost one costs nothing
//! the next does not carry: a receiver that is down is warned about once, counted, and told at
//! the end; it never stops the run. Credentials in a URL go in an `Authorization` header and
//! never into a message (the URL is shown as `http://***@host/...`).

use base64::Engine;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where to push: a plain-HTTP URL, parsed, and the headers every push carries.
#[derive(Clone, PartialEq)]
pub struct Endpoint {
    /// The URL as it may be shown: credentials replaced by `***`.
    pub url: String,
    host: String,
    port: u16,
    path: String,
    headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Endpoint {
    // The headers may hold a token: never in a debug print either.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Endpoint({})", self.url)
    }
}

impl Endpoint {
    /// `http://[USER:PASSWORD@]HOST[:PORT][/PATH]`, `default_path` when it names none; a refusal
    /// names `flag` and says how to fix it (`example` is a URL that would do).
    pub fn parse(
        flag: &str,
        url: &str,
        default_path: &str,
        example: &str,
    ) -> Result<Endpoint, String> {
        let mut parsed = url::Url::parse(url);
        if let Ok(u) = &mut parsed {
            // Shown as it is pushed to.
            if u.path() == "/" && !default_path.is_empty() && u.scheme() == "http" {
                let (path, query) = default_path.split_once('?').unwrap_or((default_path, ""));
                u.set_path(path);
                if !query.is_empty() {
                    u.set_query(Some(query));
                }
            }
        }
        let shown = match &parsed {
            Ok(u) => redact(u),
            // Unparsed: whatever sits before an `@` may be a password.
            Err(_) => match url.rsplit_once('@') {
                Some((before, host)) => match before.split_once("://") {
                    Some((scheme, _)) => format!("{scheme}://***@{host}"),
                    None => format!("***@{host}"),
                },
                None => url.to_owned(),
            },
        };
        let u = parsed.map_err(|e| format!("{flag} {shown}: {e}; give a URL like {example}"))?;
        match u.scheme() {
            "http" => {}
            "https" => {
                return Err(format!(
                    "{flag} {shown}: https is not supported yet; push to a local agent or \
                     collector over http (e.g. {example})"
                ))
            }
            _ => return Err(format!("{flag} {shown}: give an http URL, e.g. {example}")),
        }
        let host = match u.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(h) => h.to_string(),
            None => return Err(format!("{flag} {shown}: the URL names no host")),
        };
        let mut path = match u.path() {
            "" => "/".to_owned(),
            p => p.to_owned(),
        };
        if let Some(q) = u.query() {
            path = format!("{path}?{q}");
        }
        let mut headers = Vec::new();
        if !u.username().is_empty() || u.password().is_some() {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            let pair = format!(
                "{}:{}",
                decode(u.username()),
                decode(u.password().unwrap_or(""))
            );
            let token = base64::engine::general_purpose::STANDARD.encode(pair);
            headers.push(("Authorization".to_owned(), format!("Basic {token}")));
        }
        Ok(Endpoint {
            url: shown,
            host,
            port: u.port_or_known_default().unwrap_or(80),
            path,
            headers,
        })
    }

    /// Also sends `name: value` with every push (a later one of the same name wins).
    pub fn header(mut self, name: &str, value: &str) -> Endpoint {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Whether a push carries a header `name`.
    pub fn has_header(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    #[cfg(test)]
    pub(super) fn parts(&self) -> (&str, u16, &str) {
        (&self.host, self.port, &self.path)
    }

    /// One POST of `body`: the answer's body when the receiver took it (2xx), else its status
    /// line.
    pub fn post(&self, content_type: &str, body: &[u8]) -> std::io::Result<Vec<u8>> {
        let addr = (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other("the host resolved to no address"))?;
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.set_write_timeout(Some(Duration::from_secs(10)))?;
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {host}:{}\r\nUser-Agent: herd/{}\r\nContent-Type: {content_type}\r\n",
            self.path,
            self.port,
            herd_result::HERD_VERSION,
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ));
        s.write_all(head.as_bytes())?;
        s.write_all(body)?;
        let mut resp = Vec::new();
        let _ = s.take(64 * 1024).read_to_end(&mut resp);
        let text = String::from_utf8_lossy(&resp);
        let status = text.lines().next().unwrap_or("");
        match status.split_whitespace().nth(1) {
            Some(code) if code.starts_with('2') => Ok(resp
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(Vec::new(), |i| resp[i + 4..].to_vec())),
            // A 4xx other than 408 and 429 says the same body will never be taken: the OTLP
            // spec's list of what not to retry.
            Some(code) if code.starts_with('4') && code != "408" && code != "429" => {
                Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("the receiver answered `{status}`"),
                ))
            }
            _ => Err(std::io::Error::other(format!(
                "the receiver answered `{status}`{}",
                text.split_once("\r\n\r\n")
                    .map(|(_, b)| b.trim())
                    .filter(|b| !b.is_empty() && b.is_ascii())
                    .map(|b| format!(": {}", b.chars().take(200).collect::<String>()))
                    .unwrap_or_default()
            ))),
        }
    }
}

/// The URL with whatever credentials it holds replaced by `***`.
fn redact(u: &url::Url) -> String {
    if u.username().is_empty() && u.password().is_none() {
        return u.to_string();
    }
    let mut shown = u.clone();
    let _ = shown.set_password(None);
    let _ = shown.set_username("***");
    shown.to_string()
}

/// What a receiver takes, and what its 2xx answer may still complain about (OTLP's partial
/// success: points it rejected).
#[derive(Clone, Copy)]
pub struct Format {
    pub content_type: &'static str,
    pub complaint: fn(&[u8]) -> Option<String>,
}

/// How pushes went: the first failure is warned about as it happens, the count at the end.
#[derive(Debug, Default)]
struct Tally {
    pushes: u32,
    failed: u32,
    last_error: Option<String>,
    /// The warning about the first failure, until the sink hands it on.
    note: Option<String>,
}

/// Pushes `body()` to an endpoint every `every` on a thread of its own, so a slow receiver
/// never holds up the run; [`Pusher::finish`] makes the last push.
pub struct Pusher {
    flag: &'static str,
    to: Endpoint,
    format: Format,
    stop: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
    thread: Option<JoinHandle<()>>,
}

/// Past this many failures in a row the pushes space out, doubling up to [`MAX_GAP`].
const MAX_GAP: Duration = Duration::from_secs(60);

impl Pusher {
    pub fn start(
        flag: &'static str,
        to: Endpoint,
        format: Format,
        every: Duration,
        body: impl Fn() -> Vec<u8> + Send + 'static,
    ) -> std::io::Result<Pusher> {
        let stop = Arc::new(AtomicBool::new(false));
        let tally = Arc::new(Mutex::new(Tally::default()));
        let (t_to, t_stop, t_tally) = (to.clone(), Arc::clone(&stop), Arc::clone(&tally));
        let thread = std::thread::Builder::new()
            .name("herd-push".into())
            .spawn(move || {
                let tick = Duration::from_millis(100);
                let mut gap = every;
                let mut next = Instant::now() + gap;
                while !t_stop.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    if Instant::now() < next {
                        continue;
                    }
                    let ok = matches!(
                        attempt(flag, &t_to, format, &body(), &t_tally),
                        Attempt::Delivered
                    );
                    // A receiver that is down is not asked again every few seconds all run.
                    gap = if ok { every } else { (gap * 2).min(MAX_GAP) };
                    next = Instant::now() + gap;
                }
            })?;
        Ok(Pusher {
            flag,
            to,
            format,
            stop,
            tally,
            thread: Some(thread),
        })
    }

    /// Stops the thread and pushes `body`, the final counts, trying a few times within about
    /// five seconds; then says on standard error how many pushes failed, if any did.
    pub fn finish(&mut self, body: Vec<u8>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut pause = Duration::from_millis(500);
        let delivered = loop {
            let retry = match attempt(self.flag, &self.to, self.format, &body, &self.tally) {
                Attempt::Delivered => break true,
                Attempt::Failed { retry } => retry,
            };
            if !retry || Instant::now() + pause > deadline {
                break false;
            }
            std::thread::sleep(pause);
            pause *= 2;
        };
        let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        // The panel is gone by now: straight to standard error.
        if let Some(note) = t.note.take() {
            eprintln!("{note}");
        }
        if t.failed > 0 {
            eprintln!(
                "herd: {} {}: {} of {} pushes failed (last: {}); {}",
                self.flag,
                self.to.url,
                t.failed,
                t.pushes,
                t.last_error.as_deref().unwrap_or("?"),
                if delivered {
                    "the last one, with the final counts, arrived"
                } else {
                    "the final counts did not arrive: the summary and the result files have them"
                },
            );
        }
    }
}

impl Pusher {
    /// The warning about the first failed push, once.
    pub fn note(&self) -> Option<String> {
        self.tally
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note
            .take()
    }
}

enum Attempt {
    Delivered,
    /// `retry`: the same body might be taken if sent again.
    Failed {
        retry: bool,
    },
}

/// One push, tallied; the first failure becomes a note for the user.
fn attempt(
    flag: &str,
    to: &Endpoint,
    format: Format,
    body: &[u8],
    tally: &Mutex<Tally>,
) -> Attempt {
    let result =
        to.post(format.content_type, body)
            .and_then(|answer| match (format.complaint)(&answer) {
                None => Ok(()),
                Some(c) => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, c)),
            });
    let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
    t.pushes += 1;
    match result {
        Ok(()) => Attempt::Delivered,
        Err(e) => {
            if t.failed == 0 {
                t.note = Some(format!(
                    "herd: {flag} {}: a push failed: {e}; the run goes on, and the next pushes \
                     carry everything so far",
                    to.url
                ));
            }
            t.failed += 1;
            t.last_error = Some(e.to_string());
            Attempt::Failed {
                retry: e.kind() != std::io::ErrorKind::InvalidData,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EX: &str = "http://127.0.0.1:4318/v1/metrics";

    #[test]
    fn urls_are_read_or_refused_with_the_fix() {
        let e = Endpoint::parse("--otlp", "http://127.0.0.1:4318", "/v1/metrics", EX).unwrap();
        assert_eq!(e.parts(), ("127.0.0.1", 4318, "/v1/metrics"));
        let e = Endpoint::parse("--otlp", "http://c/otlp/v1/metrics?a=1", "/x", EX).unwrap();
        assert_eq!(e.parts(), ("c", 80, "/otlp/v1/metrics?a=1"));
        let e = Endpoint::parse("--otlp", "http://[::1]:9/w", "/x", EX).unwrap();
        assert_eq!(e.parts(), ("::1", 9, "/w"));
        let refused = |u: &str| Endpoint::parse("--otlp", u, "/x", EX).unwrap_err();
        assert!(refused("https://x/").contains("https is not supported"));
        assert!(refused("ftp://x/").contains("give an http URL"));
        assert!(refused("collector:4318").contains("give an http URL"));
        assert!(refused("http://x:port/").contains(EX));
    }

    #[test]
    fn credentials_become_a_header_and_never_show() {
        let e =
            Endpoint::parse("--otlp", "http://ann:s%3Acret@c:4318/", "/v1/metrics", EX).unwrap();
        assert_eq!(e.url, "http://***@c:4318/v1/metrics");
        assert!(!format!("{e:?}").contains("cret"));
        let auth = &e.headers[0].1;
        let token = auth.strip_prefix("Basic ").unwrap();
        let pair = base64::engine::general_purpose::STANDARD
            .decode(token)
            .unwrap();
        assert_eq!(pair, b"ann:s:cret");
        let err = Endpoint::parse("--otlp", "http://ann:secret@c:bad/", "/", EX).unwrap_err();
        assert!(err.starts_with("--otlp http://***@c:bad/: "), "{err}");
    }
}
