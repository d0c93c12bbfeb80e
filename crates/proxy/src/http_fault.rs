//! herd's HTTP-aware toxic (type `http`, beyond toxiproxy): faults on the responses to
//! HTTP/1.1 requests chosen by method and path, on a proxy that otherwise works at TCP level.
//!
//! The connection's requests are followed as they go up (`RequestScan`: method, path, where
//! each one's body ends); each response coming down is matched with its request, in order, and
//! a fault the toxic draws for it is applied to that response only: answer a status instead
//! (503, 429 with `Retry-After`), delay its head or its body, cut its body after N bytes
//! (close or reset), or swallow it and close the connection for the first N requests of each
//! connection. A request still reaches the server; what changes is what the client gets back.
//! Bytes that do not parse as HTTP/1.1 (TLS, HTTP/2, another protocol) pass untouched.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::framing::Framing;
use crate::h2_follow::PREFACE;
use crate::request::{apply_choice, bad_attribute, pattern_matches, Req};

/// The attributes of an `http` toxic.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpFault {
    /// Only requests with this method ("" for any).
    pub method: String,
    /// Only these paths: exact, or a prefix ending in `*` ("" for any).
    pub path: String,
    /// Share of matching responses the fault hits.
    pub rate: f64,
    /// Answer this status instead of the server's response (0: keep the server's).
    pub status: u16,
    /// Seconds for a `Retry-After` header on that answer (0: none).
    pub retry_after: u64,
    /// Milliseconds before the response's head goes on.
    pub header_delay: i64,
    /// Milliseconds between the head and the body.
    pub body_delay: i64,
    /// Body bytes passed before the connection is closed (-1: off).
    pub truncate: i64,
    /// Body bytes passed before the connection is reset (-1: off).
    pub reset: i64,
    /// The first N matching requests of each connection get no answer: the connection closes.
    pub drop_first: u64,
}

impl Default for HttpFault {
    fn default() -> HttpFault {
        HttpFault {
            method: String::new(),
            path: String::new(),
            rate: 1.0,
            status: 0,
            retry_after: 0,
            header_delay: 0,
            body_delay: 0,
            truncate: -1,
            reset: -1,
            drop_first: 0,
        }
    }
}

impl HttpFault {
    pub fn apply(&mut self, attrs: &Map<String, Value>) -> Result<(), ApiError> {
        let bad = bad_attribute;
        for (k, v) in attrs {
            if apply_choice(k, v, &mut self.method, &mut self.path, &mut self.rate)? {
                continue;
            }
            let int = || {
                v.as_i64()
                    .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                    .ok_or_else(|| bad(k, "a whole number", v))
            };
            match k.as_str() {
                "status" => {
                    let s = int()?;
                    if s != 0 && !(100..=599).contains(&s) {
                        return Err(bad(k, "an HTTP status from 100 to 599 (0: none)", v));
                    }
                    self.status = s as u16;
                }
                "retry_after" => self.retry_after = int()?.max(0) as u64,
                "header_delay" => self.header_delay = int()?,
                "body_delay" => self.body_delay = int()?,
                "truncate" => self.truncate = int()?,
                "reset" => self.reset = int()?,
                "drop_first" => self.drop_first = int()?.max(0) as u64,
                _ => {}
            }
        }
        Ok(())
    }

    pub fn attributes(&self) -> Value {
        json!({
            "method": self.method, "path": self.path, "rate": self.rate,
            "status": self.status, "retry_after": self.retry_after,
            "header_delay": self.header_delay, "body_delay": self.body_delay,
            "truncate": self.truncate, "reset": self.reset, "drop_first": self.drop_first,
        })
    }

    fn matches(&self, req: &Req) -> bool {
        pattern_matches(&self.method, &self.path, req)
    }

    /// The response the proxy gives instead of the server's.
    fn answer(&self) -> Vec<u8> {
        let reason = match self.status {
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            504 => "Gateway Timeout",
            _ => "Fault",
        };
        let body = format!("{} {reason} (herd proxy)\n", self.status);
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n",
            self.status,
            body.len()
        );
        if self.retry_after > 0 {
            head.push_str(&format!("Retry-After: {}\r\n", self.retry_after));
        }
        head.push_str("\r\n");
        head.push_str(&body);
        head.into_bytes()
    }
}

/// Follows the requests going up a connection: each head parsed, each body skipped.
#[derive(Default)]
pub(crate) struct RequestScan {
    head: Vec<u8>,
    body: Option<Framing>,
    broken: bool,
    /// A request head was read: the connection is HTTP/1.1.
    started: bool,
}

impl RequestScan {
    /// The requests whose heads end in `bytes` (kept in `found` only when `keep`: with no
    /// `http` toxic, requests are followed but not copied). `Some(n)` when the connection
    /// opens with HTTP/2's preface instead (h2c): `n` of its bytes came before `bytes`.
    pub fn scan(&mut self, mut bytes: &[u8], keep: bool, found: &mut Vec<Req>) -> Option<usize> {
        while !self.broken && !bytes.is_empty() {
            if let Some(body) = &mut self.body {
                let Some((n, done)) = body.consume(bytes) else {
                    self.broken = true;
                    return None;
                };
                bytes = &bytes[n..];
                if done {
                    self.body = None;
                }
                continue;
            }
            let before = self.head.len();
            self.head.extend_from_slice(bytes);
            if !self.started {
                let n = self.head.len().min(PREFACE.len());
                if self.head[..n] == PREFACE[..n] {
                    if n < PREFACE.len() {
                        return None;
                    }
                    self.broken = true;
                    self.head = Vec::new();
                    return Some(before);
                }
            }
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(&self.head) {
                Ok(httparse::Status::Complete(len)) => {
                    self.started = true;
                    if keep {
                        found.push(Req {
                            method: req.method.unwrap_or("").to_string(),
                            path: req.path.unwrap_or("").to_string(),
                        });
                    }
                    let framing = Framing::of(req.headers, false);
                    bytes = &bytes[len - before..];
                    self.head.clear();
                    match framing {
                        Some(Framing::Length(0)) => {}
                        Some(f) => self.body = Some(f),
                        None => self.broken = true,
                    }
                }
                Ok(httparse::Status::Partial) if self.head.len() < 64 * 1024 => return None,
                _ => self.broken = true,
            }
        }
        None
    }
}

/// What the fault does to the response in hand.
#[derive(Clone, Copy, Debug, Default)]
struct Plan {
    swallow: bool,
    close_after: bool,
    body_due: Option<Instant>,
    /// Body bytes still passed before the cut, and whether the cut is a reset.
    cut: Option<(u64, bool)>,
}

/// Where the response side is.
enum Phase {
    Head(Vec<u8>),
    Body(Framing, Plan),
    /// Not HTTP/1.1 (or an upgrade): everything passes.
    Through,
    /// The fault ended the connection: nothing more passes.
    Done,
}

/// An `http` toxic's state on one connection.
pub(crate) struct ResponseTap {
    pub requests: VecDeque<Req>,
    phase: Phase,
    matched: u64,
}

/// What the tap asks the stage to do with some bytes.
pub(crate) enum Out {
    /// Pass these bytes, no earlier than the instant.
    Bytes(Vec<u8>, Option<Instant>),
    Close,
    Reset,
}

impl ResponseTap {
    pub fn new() -> ResponseTap {
        ResponseTap {
            requests: VecDeque::new(),
            phase: Phase::Head(Vec::new()),
            matched: 0,
        }
    }

    /// Follows `bytes` of the response stream, applying the fault; counts the responses hit.
    pub fn take(
        &mut self,
        fault: &HttpFault,
        rng: &mut SmallRng,
        now: Instant,
        mut bytes: &[u8],
        out: &mut Vec<Out>,
        hits: &mut u64,
    ) {
        while !bytes.is_empty() {
            match &mut self.phase {
                Phase::Done => return,
                Phase::Through => {
                    out.push(Out::Bytes(bytes.to_vec(), None));
                    return;
                }
                Phase::Head(buf) => {
                    let before = buf.len();
                    buf.extend_from_slice(bytes);
                    let mut headers = [httparse::EMPTY_HEADER; 64];
                    let mut resp = httparse::Response::new(&mut headers);
                    let (len, code, framing) = match resp.parse(buf) {
                        Ok(httparse::Status::Complete(len)) => {
                            let code = resp.code.unwrap_or(0);
                            (len, code, Framing::of(resp.headers, true))
                        }
                        Ok(httparse::Status::Partial) if buf.len() < 64 * 1024 => return,
                        _ => {
                            let all = std::mem::take(buf);
                            self.phase = Phase::Through;
                            out.push(Out::Bytes(all, None));
                            return;
                        }
                    };
                    let head = buf[..len].to_vec();
                    bytes = &bytes[len - before..];
                    self.head(fault, rng, now, head, code, framing, out, hits);
                }
                Phase::Body(framing, plan) => {
                    let Some((n, done)) = framing.consume(bytes) else {
                        self.phase = Phase::Through;
                        continue;
                    };
                    let (body, rest) = bytes.split_at(n);
                    bytes = rest;
                    let plan = *plan;
                    let ended = body_bytes(plan, body, out);
                    if ended {
                        self.phase = Phase::Done;
                        return;
                    }
                    if let Phase::Body(_, p) = &mut self.phase {
                        if let Some((left, _)) = &mut p.cut {
                            *left -= (body.len() as u64).min(*left);
                        }
                    }
                    if done {
                        self.phase = Phase::Head(Vec::new());
                        if plan.close_after {
                            out.push(Out::Close);
                            self.phase = Phase::Done;
                            return;
                        }
                    }
                }
            }
        }
    }

    /// A response's head: which request it answers, whether the fault hits it, and how.
    #[allow(clippy::too_many_arguments)]
    fn head(
        &mut self,
        fault: &HttpFault,
        rng: &mut SmallRng,
        now: Instant,
        head: Vec<u8>,
        code: u16,
        framing: Option<Framing>,
        out: &mut Vec<Out>,
        hits: &mut u64,
    ) {
        if code == 101 {
            out.push(Out::Bytes(head, None));
            self.phase = Phase::Through;
            return;
        }
        if (100..200).contains(&code) {
            out.push(Out::Bytes(head, None));
            self.phase = Phase::Head(Vec::new());
            return;
        }
        let req = self.requests.pop_front();
        let no_body =
            code == 204 || code == 304 || req.as_ref().is_some_and(|r| r.method == "HEAD");
        let framing = if no_body {
            Framing::Length(0)
        } else {
            match framing {
                Some(f) => f,
                None => {
                    out.push(Out::Bytes(head, None));
                    self.phase = Phase::Through;
                    return;
                }
            }
        };
        let hit = match &req {
            Some(r) if fault.matches(r) => {
                self.matched += 1;
                self.matched <= fault.drop_first || rng.gen::<f64>() < fault.rate
            }
            _ => false,
        };
        let mut plan = Plan::default();
        if hit {
            *hits += 1;
            let head_due = (fault.header_delay > 0).then(|| now + ms(fault.header_delay));
            if self.matched <= fault.drop_first {
                plan.swallow = true;
                plan.close_after = true;
            } else if fault.status != 0 {
                plan.swallow = true;
                out.push(Out::Bytes(fault.answer(), head_due));
            } else {
                out.push(Out::Bytes(head, head_due));
                let from = head_due.unwrap_or(now);
                plan.body_due = (fault.body_delay > 0).then(|| from + ms(fault.body_delay));
                if fault.reset >= 0 {
                    plan.cut = Some((fault.reset as u64, true));
                } else if fault.truncate >= 0 {
                    plan.cut = Some((fault.truncate as u64, false));
                }
            }
        } else {
            out.push(Out::Bytes(head, None));
        }
        if let (Framing::Length(0), Some((0, reset))) = (&framing, plan.cut) {
            out.push(if reset { Out::Reset } else { Out::Close });
            self.phase = Phase::Done;
            return;
        }
        if matches!(framing, Framing::Length(0)) {
            if plan.close_after {
                out.push(Out::Close);
                self.phase = Phase::Done;
            } else {
                self.phase = Phase::Head(Vec::new());
            }
            return;
        }
        self.phase = Phase::Body(framing, plan);
    }
}

/// Passes (or swallows) body bytes under a plan; true when the plan's cut ended the stream.
fn body_bytes(plan: Plan, body: &[u8], out: &mut Vec<Out>) -> bool {
    if plan.swallow {
        return false;
    }
    match plan.cut {
        Some((left, reset)) if (body.len() as u64) >= left => {
            if left > 0 {
                out.push(Out::Bytes(body[..left as usize].to_vec(), plan.body_due));
            }
            out.push(if reset { Out::Reset } else { Out::Close });
            true
        }
        _ => {
            out.push(Out::Bytes(body.to_vec(), plan.body_due));
            false
        }
    }
}

fn ms(n: i64) -> Duration {
    Duration::from_millis(n.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn fault(attrs: Value) -> HttpFault {
        let mut f = HttpFault::default();
        f.apply(attrs.as_object().unwrap()).unwrap();
        f
    }

    fn run(f: &HttpFault, reqs: &[(&str, &str)], stream: &[u8]) -> (Vec<Out>, u64) {
        let mut tap = ResponseTap::new();
        for (m, p) in reqs {
            tap.requests.push_back(Req {
                method: m.to_string(),
                path: p.to_string(),
            });
        }
        let mut rng = SmallRng::seed_from_u64(1);
        let (mut out, mut hits) = (Vec::new(), 0);
        for b in stream.chunks(7) {
            tap.take(f, &mut rng, Instant::now(), b, &mut out, &mut hits);
        }
        (out, hits)
    }

    fn text(out: &[Out]) -> String {
        out.iter()
            .map(|o| match o {
                Out::Bytes(b, _) => String::from_utf8_lossy(b).into_owned(),
                Out::Close => "<close>".into(),
                Out::Reset => "<reset>".into(),
            })
            .collect()
    }

    const TWO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";

    #[test]
    fn a_status_replaces_only_the_matching_response() {
        let f = fault(json!({"path": "/api/*", "status": 429, "retry_after": 3}));
        let (out, hits) = run(&f, &[("GET", "/"), ("GET", "/api/x")], TWO);
        let t = text(&out);
        assert!(
            t.starts_with("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
            "{t}"
        );
        assert!(t.ends_with("HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nContent-Length: 35\r\nRetry-After: 3\r\n\r\n429 Too Many Requests (herd proxy)\n"), "{t}");
        assert_eq!(hits, 1);
    }

    #[test]
    fn truncate_passes_n_body_bytes_then_closes() {
        let f = fault(json!({"method": "get", "truncate": 2}));
        let (out, _) = run(&f, &[("GET", "/")], TWO);
        assert_eq!(
            text(&out),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe<close>"
        );
        let f = fault(json!({"reset": 0}));
        let (out, _) = run(&f, &[("GET", "/")], TWO);
        assert_eq!(
            text(&out),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n<reset>"
        );
    }

    #[test]
    fn drop_first_swallows_the_first_responses_and_closes() {
        let f = fault(json!({"drop_first": 1}));
        let (out, hits) = run(&f, &[("GET", "/"), ("GET", "/")], TWO);
        assert_eq!((text(&out).as_str(), hits), ("<close>", 1));
    }

    #[test]
    fn requests_are_followed_through_their_bodies() {
        let mut scan = RequestScan::default();
        let mut found = Vec::new();
        let stream = b"POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nGET GET /b HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nHEAD /d HTTP/1.1\r\n\r\n";
        for b in stream.chunks(5) {
            scan.scan(b, true, &mut found);
        }
        let paths: Vec<_> = found
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        assert_eq!(paths, ["POST /a", "GET /b", "POST /c", "HEAD /d"]);
    }

    #[test]
    fn what_is_not_http_passes_untouched() {
        let f = fault(json!({"status": 503}));
        let (out, hits) = run(&f, &[("GET", "/")], b"\x16\x03\x01 not http at all");
        assert_eq!(
            (text(&out).as_str(), hits),
            ("\u{16}\u{3}\u{1} not http at all", 0)
        );
    }
}
