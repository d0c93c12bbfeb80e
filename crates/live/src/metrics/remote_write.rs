//! `--prometheus-remote-write URL`: the same series as the endpoint, pushed every few seconds for
//! a generator nobody can scrape (a pod of a distributed run). Remote-write 1.0: a protobuf
//! `WriteRequest`, snappy block format, `X-Prometheus-Remote-Write-Version: 0.1.0` (k6's
//! output does the same). The latency goes as a histogram's bucket counters, never as an averaged
//! p99 gauge. A background thread pushes, so a slow receiver never holds up the run; the last
//! push, with the final counts, is made at the end.

use super::Exposition;
use crate::{Sink, SinkError, Start};
use herd_engine::Record;
use herd_result::RunResult;
use prost::Message;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const FLAG: &str = "--prometheus-remote-write";

/// How often the series are pushed while the run goes on.
pub const EVERY: Duration = Duration::from_secs(5);

#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// Where to push: a plain-HTTP URL, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Endpoint {
    pub url: String,
    host: String,
    port: u16,
    path: String,
}

impl Endpoint {
    /// `http://HOST[:PORT]/PATH`; anything else says why.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = match url.strip_prefix("http://") {
            Some(r) => r,
            None if url.starts_with("https://") => {
                return Err(format!(
                    "{FLAG} {url}: https is not supported yet; push to a local Prometheus or \
                     agent over http (e.g. http://127.0.0.1:9090/api/v1/write)"
                ))
            }
            None => {
                return Err(format!(
                    "{FLAG} {url}: give an http URL, e.g. http://127.0.0.1:9090/api/v1/write"
                ))
            }
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/api/v1/write"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => match p.parse() {
                Ok(p) => (h, p),
                Err(_) => return Err(format!("{FLAG} {url}: `{p}` is not a port")),
            },
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("{FLAG} {url}: the URL names no host"));
        }
        Ok(Endpoint {
            url: url.to_owned(),
            host: host.trim_matches(['[', ']']).to_owned(),
            port,
            path: path.to_owned(),
        })
    }
}

/// The series of `e` as one remote-write request body (protobuf, then snappy).
pub fn body(e: &Exposition, at: SystemTime) -> Vec<u8> {
    let timestamp = at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let base = e.base_labels();
    let mut timeseries = Vec::new();
    for f in e.families() {
        for p in f.points {
            let mut labels: Vec<Label> = [("__name__".to_owned(), p.name)]
                .into_iter()
                .chain([("job".to_owned(), "herd".to_owned())])
                .chain(base.iter().cloned())
                .chain(p.labels)
                .map(|(name, value)| Label { name, value })
                .collect();
            // Remote write wants labels sorted by name.
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            timeseries.push(TimeSeries {
                labels,
                samples: vec![Sample {
                    value: p.value,
                    timestamp,
                }],
            });
        }
    }
    let proto = WriteRequest { timeseries }.encode_to_vec();
    snap::raw::Encoder::new()
        .compress_vec(&proto)
        .unwrap_or_default()
}

/// One POST of `body`; the receiver's status line when it is not 2xx.
fn push(to: &Endpoint, body: &[u8]) -> std::io::Result<()> {
    let addr = (to.host.as_str(), to.port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("the host resolved to no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: herd/{}\r\nContent-Type: application/x-protobuf\r\n\
         Content-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        to.path,
        to.host,
        to.port,
        herd_result::HERD_VERSION,
        body.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut resp = Vec::new();
    let _ = s.take(64 * 1024).read_to_end(&mut resp);
    let text = String::from_utf8_lossy(&resp);
    let status = text.lines().next().unwrap_or("");
    match status.split_whitespace().nth(1) {
        Some(code) if code.starts_with('2') => Ok(()),
        _ => Err(std::io::Error::other(format!(
            "the receiver answered `{status}`{}",
            text.split_once("\r\n\r\n")
                .map(|(_, b)| format!(": {}", b.trim()))
                .unwrap_or_default()
        ))),
    }
}

pub struct RemoteWrite {
    to: Endpoint,
    state: Arc<Mutex<Exposition>>,
    stop: Arc<AtomicBool>,
    /// The last error of a push in the background.
    failed: Arc<Mutex<Option<String>>>,
    pusher: Option<JoinHandle<()>>,
}

impl RemoteWrite {
    pub fn new(to: Endpoint) -> Self {
        RemoteWrite {
            to,
            state: Arc::new(Mutex::new(Exposition::default())),
            stop: Arc::new(AtomicBool::new(false)),
            failed: Arc::new(Mutex::new(None)),
            pusher: None,
        }
    }

    fn err(&self, e: std::io::Error) -> SinkError {
        SinkError::new(FLAG, Path::new(&self.to.url), e)
    }
}

impl Sink for RemoteWrite {
    fn start(&mut self, start: &Start) -> Result<(), SinkError> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .start(start);
        let (to, state, stop, failed) = (
            self.to.clone(),
            Arc::clone(&self.state),
            Arc::clone(&self.stop),
            Arc::clone(&self.failed),
        );
        let pusher = std::thread::Builder::new()
            .name("herd-remote-write".into())
            .spawn(move || {
                let tick = Duration::from_millis(100);
                let mut waited = Duration::ZERO;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    waited += tick;
                    if waited < EVERY {
                        continue;
                    }
                    waited = Duration::ZERO;
                    let body = body(
                        &state.lock().unwrap_or_else(|e| e.into_inner()),
                        SystemTime::now(),
                    );
                    let result = push(&to, &body);
                    *failed.lock().unwrap_or_else(|e| e.into_inner()) =
                        result.err().map(|e| e.to_string());
                }
            })
            .map_err(|e| self.err(e))?;
        self.pusher = Some(pusher);
        Ok(())
    }

    fn record(&mut self, r: &Record) -> Result<(), SinkError> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).add(r);
        Ok(())
    }

    fn finish(&mut self, _result: &RunResult) -> Result<(), SinkError> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.pusher.take() {
            let _ = p.join();
        }
        let body = {
            let mut e = self.state.lock().unwrap_or_else(|e| e.into_inner());
            e.finished = true;
            body(&e, SystemTime::now())
        };
        push(&self.to, &body).map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_or_refused_with_the_fix() {
        let e = Endpoint::parse("http://127.0.0.1:9090/api/v1/write").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("127.0.0.1", 9090, "/api/v1/write")
        );
        let e = Endpoint::parse("http://prom").unwrap();
        assert_eq!((e.port, e.path.as_str()), (80, "/api/v1/write"));
        let e = Endpoint::parse("http://[::1]:9090/w").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("::1", 9090));
        assert!(Endpoint::parse("https://x/").unwrap_err().contains("https"));
        assert!(Endpoint::parse("prom:9090")
            .unwrap_err()
            .contains("http URL"));
    }

    #[test]
    fn the_body_is_snappy_framed_protobuf_with_sorted_labels() {
        let body = body(&Exposition::default(), UNIX_EPOCH + Duration::from_secs(2));
        let proto = snap::raw::Decoder::new().decompress_vec(&body).unwrap();
        let w = WriteRequest::decode(proto.as_slice()).unwrap();
        let first = &w.timeseries[0];
        assert_eq!(first.samples[0].timestamp, 2_000);
        let names: Vec<&str> = first.labels.iter().map(|l| l.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(names.contains(&"__name__"));
    }
}
