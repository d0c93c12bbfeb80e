//! What to run, as plain data: the CLI fills it from flags, a series from its own flags and a
//! level, a test by hand.

use crate::{Length, Level, LoadFlags};
use herd_monitor::WatchPlan;
use std::net::IpAddr;
use std::path::PathBuf;

/// Everything a run needs to be checked and played.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub source: Source,
    /// The request flags: a URL's request, a URL file's defaults; a workload file refuses them.
    pub request: RequestFlags,
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
    /// The server's processes and Prometheus endpoints to watch beside the load (`--watch-*`).
    pub watch: WatchPlan,
    /// HTTP/1.1 or HTTP/2, and HTTP/2's streams and windows.
    pub http: crate::HttpFlags,
    /// Where connections go and the TLS identity they present (curl's flags). A shard may
    /// be given its own: routes are not part of the plan its shards share.
    pub connect: ConnectFlags,
    /// The share of the run this instance plays and when it starts (`--shard I/N`,
    /// `--start-at`); `None` plays the whole run now.
    pub shard: Option<crate::shard::ShardRun>,
}

/// curl's connection flags, as given: `--resolve`, `--connect-to` (checked when the run is
/// prepared) and the TLS files.
#[derive(Clone, Debug, Default)]
pub struct ConnectFlags {
    /// `HOST:PORT:ADDR`
    pub resolve: Vec<String>,
    /// `HOST:PORT:ADDR:PORT`
    pub connect_to: Vec<String>,
    /// `--proxy URL`; `None` reads `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`.
    pub proxy: Option<String>,
    /// A client certificate (PEM, its chain after it) for servers that ask for one.
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM); the certificate file when absent.
    pub key: Option<PathBuf>,
    /// CA certificates (PEM) the server's certificate is checked against, in place of
    /// Mozilla's roots.
    pub cacert: Option<PathBuf>,
}

impl ConnectFlags {
    /// The forward proxy for `target`: the flag's, else the environment's.
    pub(crate) fn proxy(
        &self,
        target: &herd_http::Target,
    ) -> Result<Option<herd_http::Proxy>, String> {
        match &self.proxy {
            Some(url) => herd_http::Proxy::parse(url).map(Some),
            None => herd_http::Proxy::from_env(target),
        }
        .map_err(|e| e.to_string())
    }

    /// The TLS files read, when any is given; a file that cannot be used is a problem.
    pub(crate) fn tls_files(
        &self,
        problems: &mut Vec<String>,
    ) -> Option<std::sync::Arc<herd_http::TlsFiles>> {
        if self.cacert.is_none() && self.cert.is_none() {
            return None;
        }
        herd_http::TlsFiles::read(
            self.cacert.as_deref(),
            self.cert.as_deref(),
            self.key.as_deref(),
        )
        .map(std::sync::Arc::new)
        .map_err(|e| problems.push(e.to_string()))
        .ok()
    }

    /// The routes, every bad one a problem.
    pub fn routes(&self, problems: &mut Vec<String>) -> Vec<herd_http::Route> {
        let resolve = self.resolve.iter().map(|s| herd_http::Route::resolve(s));
        let connect = self
            .connect_to
            .iter()
            .map(|s| herd_http::Route::connect_to(s));
        resolve
            .chain(connect)
            .filter_map(|r| r.map_err(|e| problems.push(e.to_string())).ok())
            .collect()
    }
}

/// Where the requests come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// One URL, sent with the request flags.
    Url { url: String },
    /// A siege URL file (`URL [POST data]` per line); the request flags apply to every line (a
    /// line's own method and data win).
    UrlFile { path: PathBuf },
    /// A workload file: its scenarios, load and thresholds; `target` (`--target`) sends its
    /// requests to another host than its own `target:`.
    Workload {
        path: PathBuf,
        target: Option<String>,
    },
    /// A web server's logs sent to `url` with their recorded timing (or at `--rate`), read
    /// when the run is prepared.
    Replay {
        url: String,
        logs: Box<crate::ReplayLogs>,
    },
    /// One URL driven by a wrk Lua script (`-s script.lua URL -- args`): the flags fill the
    /// script's `wrk` table, `args` go to its `init`.
    Script {
        url: String,
        script: PathBuf,
        args: Vec<String>,
    },
}

impl Source {
    /// A URL (with default request flags: GET, no headers, no body).
    pub fn url(url: impl Into<String>) -> Source {
        Source::Url { url: url.into() }
    }
}

/// The request flags of `herd run`, as given (headers as `Name: value` text).
#[derive(Clone, Debug, Default)]
pub struct RequestFlags {
    pub method: Option<String>,
    pub headers: Vec<String>,
    pub body: Option<String>,
    pub body_file: Option<PathBuf>,
    /// curl's `-F` fields: a `multipart/form-data` body (`name=value`, `name=@file`).
    pub form: Vec<String>,
    /// Which headers the result shows masked (`--redact`, `--show-secrets`).
    pub redact: herd_result::redact::Redaction,
    /// `--sse llm`: an event-stream response is read as an LLM's tokens.
    pub llm: bool,
    /// `--send`, `--message-rate`, `--match`: a `ws://` URL's messages.
    pub ws: crate::ws::WsFlags,
    /// `herd grpc`: the URL's request is this gRPC call (ghz's flags), sent over HTTP/2 and
    /// judged by its trailers.
    pub grpc: Option<Box<herd_grpc::CallSpec>>,
}

impl RequestFlags {
    /// Whether any flag sets the request (a URL file then reads its lines with them).
    pub fn given(&self) -> bool {
        self.method.is_some()
            || !self.headers.is_empty()
            || self.body.is_some()
            || self.body_file.is_some()
            || !self.form.is_empty()
    }
}

impl RunSpec {
    /// A run of `source` with default flags, at its own load.
    pub fn new(source: Source) -> RunSpec {
        RunSpec {
            source,
            request: RequestFlags::default(),
            load: LoadFlags::default(),
            level: None,
            length: None,
            insecure: false,
            bind: None,
            watch: WatchPlan::default(),
            connect: ConnectFlags::default(),
            http: crate::HttpFlags::default(),
            shard: None,
        }
    }
}
