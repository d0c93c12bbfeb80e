//! The run result: the public JSON contract, described for tools by
//! `schema/result.schema.json`. Add keys, never rename or remove them; a change in meaning is a
//! new `herd_version` that [`crate::read_json`] refuses.

use crate::histogram::Histograms;
use crate::summary::{SizeSummary, Summary, Totals};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything known about one `herd run`, as written to `--json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The herd that wrote the result, e.g. `"0.1.0"`.
    pub herd_version: String,
    /// The format's version within this herd series ([`crate::SCHEMA_VERSION`]); absent in
    /// files written before it existed, which read as 1.
    #[serde(default = "crate::first_schema_version")]
    pub schema_version: u32,
    pub kind: Kind,
    /// What was loaded: the URL of a plain run.
    pub target: String,
    pub config: RunConfig,
    /// When the measurement started (after any warm-up), RFC 3339 in UTC.
    pub started_at: String,
    /// Length of the measurement in seconds, warm-up excluded.
    pub duration_s: f64,
    /// The run was stopped early (Ctrl-C): the numbers cover only the part that ran.
    pub interrupted: bool,
    pub warmup: Warmup,
    pub totals: Totals,
    /// Completed responses per second of measurement.
    pub throughput_rps: f64,
    /// Responses by status code, e.g. `{"200": 1234}`.
    pub status: BTreeMap<String, u64>,
    /// What the reader must know before trusting the numbers, one sentence each: nothing
    /// answered, or every response had an error status (4xx/5xx).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Requests that got no valid response, by error class (only classes that occurred).
    pub errors: BTreeMap<String, u64>,
    /// The first message seen for each error class, when there was one.
    pub error_samples: BTreeMap<String, String>,
    /// From the intended send time to the end of the response: what a user waited. Every
    /// response, whatever its status; `count` is `totals.completed`.
    pub latency_ms: Summary,
    /// From the actual send to the end of the response: what the server took. Every response.
    pub service_time_ms: Summary,
    /// Connection set-up, one sample per connection opened.
    pub connect_ms: Summary,
    /// Each request's time by phase (TLS, blocked, waiting, receiving); absent in results
    /// written before phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::Phases>,
    /// From the intended send time to the failure, for requests that got no response (refused,
    /// reset, timed out, ...); `count` is `totals.errors`. Absent from results of herd before
    /// 0.1.x's fix, whose `latency_ms` mixed these in.
    #[serde(default)]
    pub time_to_error_ms: Summary,
    /// Response body sizes.
    pub response_bytes: SizeSummary,
    pub generator: Generator,
    /// One entry per second of measurement, quiet seconds included.
    pub timeline: Vec<TimelineEntry>,
    pub histograms: Histograms,
    /// Keys this herd does not model itself (sections added by later herd versions, or by
    /// features still being built), kept as they are so reports can show them and a result read
    /// and written back loses nothing.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The server under test, when watched (`--watch-pid`, `--watch-name`, `--watch-prometheus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::Server>,
    /// The workload file a `herd run FILE.yaml` ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// Workload runs: the top level's numbers for each request name, in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_name: Vec<crate::NameResult>,
    /// Workload runs: iterations of each scenario.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_scenario: Vec<crate::ScenarioResult>,
    /// Workload runs: passes and fails of each check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::CheckResult>,
    /// Workload runs: each threshold, its measured value and verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::ThresholdResult>,
    /// The absolute second (Unix time, UTC) timeline entry `t = 0` starts in: shards of one run
    /// line up on it. With `--start-at` it is the shared start instant exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_start_unix_s: Option<u64>,
    /// A run played as shards (`--shard I/N`), or merged from them (`herd merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::ShardHeader>,
    /// `--requests-log`: the file of one line per request, and what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_log: Option<RequestsLogged>,
    /// Responses read as event streams (Server-Sent Events): time to first event (token),
    /// the gaps between events, events and tokens per second; absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<crate::Streams>,
    /// gRPC calls (`herd grpc`): the method, its latency, the calls by `grpc-status` name;
    /// absent for HTTP runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::Grpc>,
    /// A WebSocket run's sockets apart from their messages: ping round trips, the server's
    /// closes by code, refused Upgrades by status; absent when they told nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<crate::Sockets>,
    /// A workload's `faults:`: each toxic as it was in force on the proxy, its own thresholds
    /// and the recovery after it (read by [`crate::fault`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::fault_window::FaultWindow>,
}

/// What `--requests-log` wrote: a line for each measured request, unless the writer fell
/// behind the load (then `lost` says how many lines are missing; the totals above count them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestsLogged {
    pub path: String,
    /// Lines written, the header not counted.
    pub lines: u64,
    /// Requests measured but not written.
    pub lost: u64,
}

/// What a result file describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Run,
    /// A `herd sweep`: [`crate::sweep::SweepResult`].
    Sweep,
    /// A `herd capacity` search: [`crate::capacity::CapacityResult`].
    Capacity,
}

/// The settings the run used, as the CLI resolved them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub url: String,
    pub method: String,
    pub model: Model,
    pub connections: u64,
    /// Arrivals per second (open model).
    pub rate: Option<f64>,
    pub duration_s: Option<f64>,
    /// A fixed number of requests, instead of or as well as a duration.
    pub requests: Option<u64>,
    pub warmup_s: f64,
    pub threads: u64,
    pub timeout_s: f64,
    /// Requests per connection before it is closed and reopened; `None` keeps connections alive.
    pub calls_per_conn: Option<u64>,
    /// HTTP/1.1 pipelining (`--pipeline K`): up to this many requests in flight on each
    /// connection; `None` sends one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u64>,
    /// HTTP/2: streams in flight at most on each connection (`--streams`, h2load's `-m`), so
    /// `connections` x `streams` requests at once; absent for HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u64>,
    /// The forward proxy the connections went through (`--proxy`, or the environment's), as
    /// `http://host:port`: never its credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<String>,
    /// Extra request headers as given, `"Name: value"`.
    pub headers: Vec<String>,
    /// Request body size.
    pub body_bytes: u64,
    /// `--show-secrets`: the headers and URL above are as given, credentials unmasked, on
    /// purpose; every output (the HTML page included) then shows them as they are.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secrets_shown: bool,
    /// Open model: how arrivals were spaced when not evenly (`--arrivals poisson|uniform`), and
    /// the seed that gives the same instants again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// What the run is, in the user's words (`--label KEY=VALUE`: branch, commit,
    /// environment): kept with the result so a store (`herd store add`) files it under them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// A random arrival process and its seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrivals {
    /// `poisson` or `uniform`.
    pub process: String,
    pub seed: u64,
}

/// What one exchange of a run is, in the words its outputs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// An HTTP request and its response (a gRPC call is one).
    Request,
    /// A WebSocket message and its reply: no status of its own (the `101` was the
    /// connection's Upgrade's).
    Message,
}

impl Exchange {
    /// `request`, `message`.
    pub fn noun(self) -> &'static str {
        match self {
            Exchange::Request => "request",
            Exchange::Message => "message",
        }
    }

    /// `req`, `msg`: `req/s`, `msg/s`.
    pub fn short(self) -> &'static str {
        match self {
            Exchange::Request => "req",
            Exchange::Message => "msg",
        }
    }
}

impl RunConfig {
    /// What one exchange of this run is: a `ws://` or `wss://` run's are messages.
    pub fn exchange(&self) -> Exchange {
        if self.url.starts_with("ws://") || self.url.starts_with("wss://") {
            Exchange::Message
        } else {
            Exchange::Request
        }
    }
}

/// How requests were issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// Each connection sends its next request when the previous one ends (wrk, ab).
    Closed,
    /// Requests arrive on a schedule whatever the server does (wrk2, vegeta).
    Open,
}

/// The key of what the command line changed of a workload file's load and target.
const OVERRIDES: &str = "overrides";

impl RunResult {
    /// What the command line changed of a workload file's `load:` and `target:`, one sentence
    /// each ("duration 12 s from the command line; the file says 10m").
    pub fn overrides(&self) -> Vec<String> {
        self.extra
            .get(OVERRIDES)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn set_overrides(&mut self, said: Vec<String>) {
        if said.is_empty() {
            self.extra.remove(OVERRIDES);
        } else {
            self.extra
                .insert(OVERRIDES.to_owned(), serde_json::Value::from(said));
        }
    }

    /// Adds `count` errors of `class` that no request carried (a script's `done()` or
    /// `request()` that raised): in the class's count and the totals alike, so that the
    /// errors a summary lists and the totals thresholds judge agree.
    pub fn add_errors(&mut self, class: &str, count: u64, sample: Option<&str>) {
        if count == 0 {
            return;
        }
        *self.errors.entry(class.to_owned()).or_default() += count;
        self.totals.errors += count;
        if let Some(s) = sample {
            self.error_samples
                .entry(class.to_owned())
                .or_insert_with(|| s.to_owned());
        }
    }
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Closed => "closed",
            Model::Open => "open",
        }
    }
}

/// The warm-up before measurement; its requests are not in any other number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    pub requests: u64,
    pub duration_s: f64,
}

/// How the load generator itself fared, and whether it could keep up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Generator {
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// CPU of the worker threads over the run, in percent of those threads (100 = all of them
    /// busy all the time).
    pub cpu_percent: f64,
    /// How late requests went out compared with their intended send time (open model), or how
    /// late the event loop woke (closed model), 99th percentile.
    pub send_lag_p99_ms: f64,
    pub verdict: GeneratorVerdict,
    /// Why the verdict is `generator-limited`; empty when `ok`.
    pub reasons: Vec<String>,
    /// What did not limit the run but may next time: herd's own local ports close to the
    /// range, or ports busy machine-wide (other programs, TIME_WAIT of earlier runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Worker threads.
    #[serde(default)]
    pub threads: u64,
    /// Which engine worker ran the load: "direct" (herd's readiness loop, for plain-HTTP runs in
    /// the closed model) or "async" (everything else).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// Connections opened over the run, and the most open at once.
    #[serde(default)]
    pub connections_opened: u64,
    #[serde(default)]
    pub peak_connections: u64,
    /// The protocols the connections spoke (ALPN's names: `http/1.1`, `h2`, `h3`), one row
    /// each, in name order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protocols: Vec<ProtocolUse>,
    /// What the TLS handshakes settled on: connections per version, cipher suite and ALPN
    /// protocol, most connections first; empty for plain http.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tls: Vec<TlsUse>,
    /// The most file descriptors open at once, and the process's limit.
    #[serde(default)]
    pub fds_peak: Option<u64>,
    #[serde(default)]
    pub fd_limit: Option<u64>,
    /// The most TCP sockets in the ephemeral port range at once (machine-wide, every program's,
    /// TIME_WAIT included), and its size. Pressure to know about, not herd's own use.
    #[serde(default)]
    pub ephemeral_ports_peak: Option<u64>,
    #[serde(default)]
    pub ephemeral_port_range: Option<u64>,
    /// HTTP/2 and HTTP/3: the server's limit on a connection's streams (SETTINGS_MAX_CONCURRENT_
    /// STREAMS, QUIC's stream credit) when it was below `config.streams`: the streams in flight
    /// on each connection followed it, as h2load's do; absent when `--streams` was within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_allowed: Option<u64>,
    /// How the event loops napped before blocking against a busy server (docs/run.md, HTTP/2);
    /// absent in results written before herd recorded it, and for runs shorter than a tenth of
    /// a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naps: Option<Naps>,
    /// One sample per second of the measurement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<GeneratorSample>,
    /// The machine that ran the load (host name, cores, CPU model and a hash of its machine
    /// id; shards merged: each machine's, `; ` between them), as a store files the run. Absent
    /// in results written before herd recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

/// How the event loops napped: each tenth of a second a loop decides whether its waits first
/// sleep a few microseconds on their own timer (so that what the server writes meanwhile is
/// read together, waking nobody), and for how long. A response that came during a nap was read
/// up to the nap later.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Naps {
    /// Tenths of a second the loops decided, all threads together.
    pub windows: u64,
    /// Of them, those whose waits napped.
    pub napping: u64,
    /// The longest nap, in microseconds.
    pub longest_us: u64,
}

impl Naps {
    /// Adds another run's (a shard's): the windows and the napping ones summed, the longest kept.
    pub fn add(&mut self, o: &Naps) {
        self.windows += o.windows;
        self.napping += o.napping;
        self.longest_us = self.longest_us.max(o.longest_us);
    }
}

/// The connections that spoke one protocol, and what they carried.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProtocolUse {
    pub protocol: String,
    /// Connections opened that spoke it.
    pub connections: u64,
    /// Requests handed to them (HTTP/2 and HTTP/3: streams), a request sent again on another
    /// connection counted on each.
    pub requests: u64,
    /// How the handshakes went, for protocols that tell (HTTP/3); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshakes: Option<Handshakes>,
}

/// A protocol's handshakes: full ones and those that resumed an earlier connection's TLS
/// session, and the connections that sent requests in 0-RTT.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Handshakes {
    pub full: HandshakeTimes,
    pub resumed: HandshakeTimes,
    /// Connections whose 0-RTT requests the server took.
    pub early_data_accepted: u64,
    /// Connections whose 0-RTT requests the server refused (sent again after the handshake).
    pub early_data_rejected: u64,
}

/// How many handshakes of a kind, and how long they took, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandshakeTimes {
    pub count: u64,
    pub mean_ms: f64,
    pub max_ms: f64,
    /// Their sum, in whole microseconds, so that shards merge exactly in any order.
    pub total_ms: f64,
}

/// The connections whose TLS handshakes settled on one version, cipher suite and ALPN protocol.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TlsUse {
    /// `TLSv1.2`, `TLSv1.3`.
    pub version: String,
    /// The IANA name, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: String,
    /// The protocol ALPN agreed on (`h2`, `http/1.1`); `None` when the server chose none.
    pub alpn: Option<String>,
    pub connections: u64,
}

impl TlsUse {
    /// Orders rows most connections first, then by name: one order whoever wrote them.
    pub fn sort(rows: &mut [TlsUse]) {
        rows.sort_by(|a, b| {
            b.connections.cmp(&a.connections).then_with(|| {
                (&a.version, &a.cipher, &a.alpn).cmp(&(&b.version, &b.cipher, &b.alpn))
            })
        });
    }
}

/// One second of the generator's own health.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratorSample {
    pub t: u64,
    /// CPU of each worker thread this second, percent of one core.
    pub cpu_percent: Vec<f64>,
    pub send_lag_p99_ms: f64,
    pub loop_delay_max_ms: f64,
    pub connections: u64,
    pub fds: Option<u64>,
    pub ephemeral_ports: Option<u64>,
}

/// Whether the numbers describe the target or the load generator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GeneratorVerdict {
    #[default]
    Ok,
    /// herd could not send as planned (CPU, send lag, file descriptors): the target was not the
    /// only bottleneck measured.
    GeneratorLimited,
}

/// What ended in one second of the measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// Seconds since the measurement started.
    pub t: u64,
    /// Requests that ended in this second: ok + failed + errors.
    pub requests: u64,
    pub ok: u64,
    pub failed: u64,
    pub errors: u64,
    /// Requests per second: a whole second's count; a partial one's over the part of it inside
    /// the run (at least a tenth of a second).
    pub rps: f64,
    /// Not a whole second of load (the drain after the schedule, the warm-up's edge, a second
    /// some shards of a merge did not run in whole): counted, but not a sample of any rate,
    /// comparison, chart or knee.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub bytes_received: u64,
    /// Responses by status class, `"2xx"` ... `"5xx"`, and `"other"` (only classes that occurred).
    pub status_class: BTreeMap<String, u64>,
    /// Errors by class (only classes that occurred).
    pub error_kinds: BTreeMap<String, u64>,
    /// Events read in the event streams (Server-Sent Events) that ended in this second, and
    /// their tokens; absent without event streams.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub events: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tokens: u64,
    /// Those streams' time to first event (token) and gaps between events (inter-token
    /// latency); absent without event streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<TimelineStreams>,
    /// gRPC calls that ended in this second by `grpc-status` name (`OK`, `UNAVAILABLE`, ...);
    /// absent without calls.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub grpc: BTreeMap<String, u64>,
    /// A WebSocket run's pongs, closes and refused Upgrades in this second; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws: Option<Box<crate::SocketsSecond>>,
    /// This second's latency histogram (microseconds, 2 significant digits), encoded as
    /// [`Histograms`]: `herd merge` adds them, so per-second percentiles of shards are exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<String>,
    /// The fault windows in force during part of this second: indices into the result's
    /// `faults` (the report's "fault 1" is index 0); absent outside every window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<usize>,
}

/// One second's event streams (those that ended in it): the time to first event (token) from
/// the intended and the actual send, and the gaps between events, as percentiles and as
/// histograms (microseconds, encoded as [`Histograms`]) that `herd merge` adds exactly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineStreams {
    pub streams: u64,
    pub ttft_p50_ms: f64,
    pub ttft_p99_ms: f64,
    pub ttft_sent_p50_ms: f64,
    pub ttft_sent_p99_ms: f64,
    pub itl_p50_ms: f64,
    pub itl_p99_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_histogram: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_sent_histogram: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_histogram: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
