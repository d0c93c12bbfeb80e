use std::fmt;

use crate::latency::{Delay, Latency};

/// The default body text; a route's body is the first `size` bytes of this line repeated.
pub const HELLO: &str = "hello from herd serve\n";

/// Largest body a route may have; bodies are kept in memory, serialized once.
pub const MAX_BODY: usize = 64 << 20;

/// Headers the server writes itself: a route setting them would break framing.
const MANAGED_HEADERS: [&str; 3] = ["content-length", "transfer-encoding", "connection"];

/// One rule of the mock: which requests it matches and how it answers them.
///
/// Routes are tried in order and the first whose path (and method, when set) matches wins.
/// Build one with [`Route::new`] and struct update syntax, or parse a `--route` spec with
/// [`Route::parse`]; [`Display`](fmt::Display) writes the spec back.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Exact path (`/health`), or a prefix when it ends in `*` (`/api/*`, `/*`). The query string
    /// of a request is ignored for matching.
    pub path: String,
    /// Only this method matches (`GET`, `POST`, ...); `None` matches any.
    pub method: Option<String>,
    /// Delay before answering, drawn per request.
    pub latency: Latency,
    /// Body length in bytes: the first `size` bytes of [`HELLO`] repeated.
    pub size: usize,
    /// Status code of a normal answer, 200..=599. 204 and 304 are sent without a body.
    pub status: u16,
    /// Share of requests (0.0..=1.0) that fail: they get `fault`, or a 500 when there is none.
    /// A fault only fires on this share, so set 1.0 for "every request"; [`Route::parse`] does
    /// that when `fault=` is given without `error-rate=`. Failing requests are delayed by
    /// `latency` like the others: a slow timeout is as real as a fast one.
    pub error_rate: f64,
    /// What a failing request gets instead of a 500.
    pub fault: Option<Fault>,
    /// Extra response headers, in order. `Content-Type: text/plain` is added unless set here.
    pub headers: Vec<(String, String)>,
    /// Answer with the request itself (head bytes as received, then the decoded body) instead
    /// of the `size` filler: lets tests see exactly what a client sent.
    pub echo: bool,
    /// Answer 401 unless the request proves who it is (`auth=hmac:KEY`).
    pub auth: Option<Auth>,
    /// HTTP/2: after answering this many of this route's requests, a connection sends GOAWAY
    /// naming the last one and closes once its open streams are done, as nginx does after
    /// `keepalive_requests`. Streams the client opened past it are left unprocessed.
    pub goaway_after: Option<u32>,
    /// HTTP/2: the SETTINGS_MAX_CONCURRENT_STREAMS every connection announces, the smallest of
    /// any route's (SETTINGS come before any request, so the limit is the server's).
    pub max_streams: Option<u32>,
    /// HTTP/1.1: a connection that has answered this many requests closes (FIN) when the next
    /// one for this route arrives, without answering it and without having said
    /// `Connection: close`: what a client meets through tinyproxy, or when a server's
    /// keep-alive timeout races its request.
    pub close_after: Option<u32>,
    /// Answer with Server-Sent Events (`sse`) or an LLM's streamed chat completion (`sse=llm`)
    /// instead of the `size` filler.
    pub events: Option<crate::Events>,
    /// gRPC: the route matches gRPC calls (`content-type: application/grpc`) to its path
    /// (`/herd.echo.Echo/*`, `/helloworld.Greeter/SayHello`) and no other request; its
    /// latency delays each answer, and its failing share gets `grpc_status`, or its fault.
    pub grpc: bool,
    /// gRPC: the status codes (1..=16, or 0) failing calls end with, taken in turn;
    /// `INTERNAL` when empty and no fault is set.
    pub grpc_status: Vec<u8>,
}

/// What a route wants to see before it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer JWT`, the JWT signed with HS256 (HMAC-SHA256) under this key, its
    /// `exp` (if any) not past.
    Hs256Jwt { key: String },
}

/// A way to fail that is not an HTTP error status: what a broken network or server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Abort the connection with a TCP RST (SO_LINGER 0, then close): the client's read fails
    /// with "connection reset".
    Reset,
    /// Close the connection (FIN) without answering: the client reads end-of-file.
    Close,
    /// Keep the connection open and never answer: the client's timeout has to fire.
    Stall,
    /// Answer with bytes that are not HTTP, then close.
    Garbage,
    /// Send the headers with the full `Content-Length` but only half the body, then close.
    /// A route with fewer than 2 body bytes declares 2 and sends 1, so the fault stays visible.
    Truncate,
    /// HTTP/2: reset the stream with REFUSED_STREAM, as a server past its limits does. Over
    /// HTTP/1.1, which has no such word, the same as `reset`.
    Refuse,
}

impl Fault {
    pub const ALL: [Fault; 6] = [
        Fault::Reset,
        Fault::Close,
        Fault::Stall,
        Fault::Garbage,
        Fault::Truncate,
        Fault::Refuse,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::Reset => "reset",
            Fault::Close => "close",
            Fault::Stall => "stall",
            Fault::Garbage => "garbage",
            Fault::Truncate => "truncate",
            Fault::Refuse => "refuse",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Route {
    /// A route answering `path` with 200 and [`HELLO`], no delay, no errors.
    pub fn new(path: impl Into<String>) -> Route {
        Route {
            path: path.into(),
            method: None,
            latency: Latency::None,
            size: HELLO.len(),
            status: 200,
            error_rate: 0.0,
            fault: None,
            headers: Vec::new(),
            echo: false,
            auth: None,
            goaway_after: None,
            max_streams: None,
            close_after: None,
            events: None,
            grpc: false,
            grpc_status: Vec::new(),
        }
    }

    /// Checks every field and compiles the latency; the error names the field and the rule.
    pub(crate) fn check(&self) -> Result<Delay, String> {
        check_path(&self.path)?;
        if let Some(method) = &self.method {
            if !is_token(method) {
                return Err(format!("method '{method}' is not an HTTP method name"));
            }
        }
        if !(200..=599).contains(&self.status) {
            return Err(format!("status {} is outside 200..=599", self.status));
        }
        if !(0.0..=1.0).contains(&self.error_rate) {
            return Err(format!("error rate {} is outside 0..=1", self.error_rate));
        }
        if self.size > MAX_BODY {
            return Err(format!(
                "size {} is above the {} MiB limit",
                self.size,
                MAX_BODY >> 20
            ));
        }
        for (name, value) in &self.headers {
            if !is_token(name) {
                return Err(format!(
                    "header name '{name}' is not a valid HTTP header name"
                ));
            }
            if MANAGED_HEADERS.iter().any(|m| name.eq_ignore_ascii_case(m)) {
                return Err(format!(
                    "header '{name}' is set by the server and cannot be overridden"
                ));
            }
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(format!(
                    "header '{name}' has a line break or NUL in its value"
                ));
            }
        }
        if [self.goaway_after, self.max_streams, self.close_after].contains(&Some(0)) {
            return Err(
                "goaway-after, max-streams and close-after take a count of at least 1".into(),
            );
        }
        if let Some(Auth::Hs256Jwt { key }) = &self.auth {
            if key.is_empty() {
                return Err("auth=hmac: needs a key, e.g. auth=hmac:s3cret".into());
            }
        }
        if !self.grpc_status.is_empty() && !self.grpc {
            return Err("grpc-status is for gRPC routes: add grpc".into());
        }
        if let Some(code) = self.grpc_status.iter().find(|c| **c > 16) {
            return Err(format!("grpc-status {code} is not a gRPC status (0..16)"));
        }
        if self.grpc && (self.echo || self.events.is_some() || self.auth.is_some()) {
            return Err(
                "a grpc route answers with herd serve's gRPC services: echo, sse and auth are for HTTP routes".into(),
            );
        }
        if let Some(events) = &self.events {
            if events.count == 0 {
                return Err("tokens takes a count of at least 1".into());
            }
            events.compile()?;
        }
        self.latency.compile()
    }
}

/// The routes used when a [`Config`](crate::Config) has none: `/echo` answers with the request
/// itself (see [`Route::echo`]), and `/*` answers everything else with 200 and [`HELLO`].
pub fn default_routes() -> Vec<Route> {
    vec![
        Route {
            echo: true,
            ..Route::new("/echo")
        },
        Route::new("/*"),
    ]
}

fn check_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err(format!("path '{path}' must start with '/'"));
    }
    if let Some(star) = path.find('*') {
        if star != path.len() - 1 {
            return Err(format!(
                "path '{path}' may only have '*' at the end (as in /api/*)"
            ));
        }
    }
    if path
        .bytes()
        .any(|b| b <= b' ' || b == 0x7f || b == b'?' || b == b'#')
    {
        return Err(format!(
            "path '{path}' has a space, control character, '?' or '#'"
        ));
    }
    Ok(())
}

/// RFC 9110 `token`: the characters allowed in methods and header names.
pub(crate) fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}
