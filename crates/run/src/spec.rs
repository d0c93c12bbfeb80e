//! What to run, as plain data: the CLI fills it from flags, a series from its own flags and a
//! level, a test by hand.

use crate::{Length, Level};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Everything a run needs to be checked and played.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub source: Source,
    pub load: LoadFlags,
    /// The level the run is checked at and played at when `Prepared::run` is given none. With
    /// a level, a workload file's own load (its stages, threads and warm-up) is replaced by the
    /// level and by `load`.
    pub level: Option<Level>,
    /// Replaces the run's duration or request count (a series' step length).
    pub length: Option<Length>,
    /// Do not verify TLS certificates.
    pub insecure: bool,
    /// The local address connections are made from.
    pub bind: Option<IpAddr>,
    /// Speak HTTP/3 over QUIC (UDP) instead of HTTP/1.1 over TCP; the URL must be https://.
    pub http3: bool,
}

/// Where the requests come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// One URL and the request flags.
    Url { url: String, request: RequestFlags },
    /// A siege URL file (`URL [POST data]` per line); the flags apply to every line (a line's
    /// own method and data win).
    UrlFile {
        path: PathBuf,
        request: RequestFlags,
    },
    /// A workload file: its scenarios, load and thresholds.
    Workload { path: PathBuf },
}

impl Source {
    /// A URL with default request flags (GET, no headers, no body).
    pub fn url(url: impl Into<String>) -> Source {
        Source::Url {
            url: url.into(),
            request: RequestFlags::default(),
        }
    }
}

/// The request flags of `herd run`, as given (headers as `Name: value` text).
#[derive(Clone, Debug, Default)]
pub struct RequestFlags {
    pub method: Option<String>,
    pub headers: Vec<String>,
    pub body: Option<String>,
    pub body_file: Option<PathBuf>,
}

impl RequestFlags {
    /// Whether any flag sets the request (a URL file then reads its lines with them).
    pub fn given(&self) -> bool {
        self.method.is_some()
            || !self.headers.is_empty()
            || self.body.is_some()
            || self.body_file.is_some()
    }
}

/// The load flags of `herd run`. A workload file takes its load from the file unless a level is
/// given; then `connections` is the open model's cap, `threads` and `warmup` apply.
#[derive(Clone, Debug)]
pub struct LoadFlags {
    /// Closed model: users; open model: the cap on connections.
    pub connections: Option<u64>,
    /// Open model: arrivals per second.
    pub rate: Option<f64>,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub calls_per_conn: Option<u64>,
    pub timeout: Duration,
    /// `None`: none for a URL, the file's for a workload.
    pub warmup: Option<Duration>,
    /// `None`: one per core (a workload file's own count wins over that default).
    pub threads: Option<usize>,
}

impl Default for LoadFlags {
    fn default() -> Self {
        LoadFlags {
            connections: None,
            rate: None,
            duration: None,
            requests: None,
            calls_per_conn: None,
            timeout: Duration::from_secs(10),
            warmup: None,
            threads: None,
        }
    }
}

impl LoadFlags {
    /// The flags with a level and a length in place of their own load and length.
    pub(crate) fn at(&self, level: Option<Level>, length: Option<Length>) -> LoadFlags {
        let mut f = self.clone();
        match level {
            Some(Level::Rate(rate)) => f.rate = Some(rate),
            Some(Level::Users(users)) => {
                f.rate = None;
                f.connections = Some(users);
            }
            None => {}
        }
        match length {
            Some(Length::Time(d)) => (f.duration, f.requests) = (Some(d), None),
            Some(Length::Requests(n)) => (f.duration, f.requests) = (None, Some(n)),
            None => {}
        }
        f
    }
}

impl RunSpec {
    /// A run of `source` with default flags, at its own load.
    pub fn new(source: Source) -> RunSpec {
        RunSpec {
            source,
            load: LoadFlags::default(),
            level: None,
            length: None,
            insecure: false,
            bind: None,
            http3: false,
        }
    }
}
