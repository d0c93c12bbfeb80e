//! What a run hands back: everything it measured ([`RunOutput`]), what the generator measured of
//! itself, and the live numbers of a run still going on ([`Progress`]).

use crate::health::HealthSample;
use crate::share::{ScriptSecond, SecondLoad};
use herd_metrics::{CompactHistogram, Second, Stats};
use std::time::{Duration, SystemTime};

use crate::generator::ThreadCpu;

/// How the event loops napped before blocking (`worker/nap.rs`, docs/run.md): each tenth of a
/// second a loop decides whether its waits nap, and for how long.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Naps {
    /// Tenths of a second decided, over all loops.
    pub windows: u64,
    /// Of them, those whose waits napped.
    pub napping: u64,
    /// The longest nap taken.
    pub longest: Duration,
}

impl Naps {
    /// A tenth of a second was decided: its waits nap `nap` (zero: they do not).
    pub fn saw(&mut self, nap: Duration) {
        self.windows += 1;
        if !nap.is_zero() {
            self.napping += 1;
            self.longest = self.longest.max(nap);
        }
    }

    /// Adds another loop's.
    pub fn add(&mut self, o: &Naps) {
        self.windows += o.windows;
        self.napping += o.napping;
        self.longest = self.longest.max(o.longest);
    }
}

/// What the generator measured of itself.
#[derive(Clone, Debug)]
pub struct GeneratorReport {
    pub threads: usize,
    pub cpu: ThreadCpu,
    /// CPU time over the worker threads' wall time, in percent of those threads.
    pub cpu_percent: f64,
    /// How late arrivals were handed out against the schedule (open model), in microseconds.
    pub send_lag: CompactHistogram,
    /// How late the event loops woke for their 10 ms ticks, in microseconds.
    pub loop_delay: CompactHistogram,
    pub connections_opened: u64,
    /// Of them, closed by the server first: their TIME_WAIT is the server's, not herd's.
    pub server_closed: u64,
    pub peak_connections: u64,
    /// Connections and requests per protocol the connections spoke.
    pub protocols: Vec<crate::ProtocolUse>,
    /// Connections per TLS version, cipher suite and ALPN protocol, in no set order.
    pub tls: Vec<crate::TlsUse>,
    /// One sample per second of the measurement.
    pub timeline: Vec<HealthSample>,
    /// The most file descriptors open at once, and the limit.
    pub fds_peak: Option<u64>,
    pub fd_limit: Option<u64>,
    /// The most ephemeral ports in use at once on this machine, and the size of the range.
    pub ports_peak: Option<u64>,
    pub port_range: Option<u64>,
    /// `Ok` when the run measured the server, else why herd itself was the limit.
    pub verdict: Result<(), Vec<String>>,
    /// The server's limit on a connection's streams (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS,
    /// HTTP/3's stream credit) when it was below `--streams`: the streams in flight on each
    /// connection followed it, as h2load's do.
    pub stream_limit: Option<usize>,
    /// How the loops napped before blocking.
    pub naps: Naps,
}

/// Everything a run measured; the report crate turns it into text and JSON. `R` is what the
/// scripts counted of their own ([`crate::Script::finish`]), merged over the workers.
#[derive(Debug)]
pub struct RunOutput<R = ()> {
    pub started_at: SystemTime,
    pub total: Stats,
    pub by_name: Vec<Stats>,
    pub timeline: Vec<Second>,
    pub scheduled: u64,
    pub dropped: u64,
    /// Outcomes of iterations intended during the warm-up (excluded from everything else).
    pub warmup_requests: u64,
    /// The measured window: from the end of the warm-up to the end of the schedule (stretched
    /// by answers that came in the drain after it), to the last outcome when a request count
    /// ended the run, or to the moment Ctrl-C came.
    pub duration: Duration,
    /// How much of the warm-up ran (all of it, unless Ctrl-C came first).
    pub warmup: Duration,
    pub interrupted: bool,
    pub generator: GeneratorReport,
    pub script: R,
}

impl<R> RunOutput<R> {
    /// The script's counts apart from the rest, which every kind of run reads alike.
    pub fn split(self) -> (RunOutput, R) {
        let RunOutput {
            started_at,
            total,
            by_name,
            timeline,
            scheduled,
            dropped,
            warmup_requests,
            duration,
            warmup,
            interrupted,
            generator,
            script,
        } = self;
        let out = RunOutput {
            started_at,
            total,
            by_name,
            timeline,
            scheduled,
            dropped,
            warmup_requests,
            duration,
            warmup,
            interrupted,
            generator,
            script: (),
        };
        (out, script)
    }
}

/// Live numbers for a progress line, handed out about once a second.
#[derive(Clone, Debug)]
pub struct Progress {
    /// When the measurement starts (instant 0 of the schedule plus the warm-up) on the wall
    /// clock: the engine's own instant, in the past for a late start, told with every report so
    /// an output learns it before the first second.
    pub measure_start: SystemTime,
    pub elapsed: Duration,
    /// Requests that ended so far (measured ones only).
    pub requests: u64,
    pub errors: u64,
    /// The last complete second.
    pub last: Option<Second>,
    /// The seconds closed since the last report, in order: the run's one stream of records.
    pub closed: Vec<Record>,
    /// Seconds the collector holds in memory: the last minutes ([`crate::KEPT_S`]); older ones
    /// wait on disk for the end of the run.
    pub held: usize,
}

/// One closed second of the measurement.
#[derive(Clone, Debug)]
pub struct Record {
    /// Every worker's outcomes of this second, merged (totals, statuses, error classes, the
    /// latency and service-time histograms, the same per request name).
    pub second: Second,
    /// Requests scheduled and dropped in this second, exchanges in flight at its end.
    pub load: SecondLoad,
    /// What the script counted in this second: iterations per scenario, checks.
    pub script: ScriptSecond,
    /// The generator's health in this second, when every worker reported it in time.
    pub health: Option<HealthSample>,
    /// What the plan asked for in this second: arrivals per second (open model) or active users
    /// (closed model).
    pub target: Option<f64>,
    /// The second lies wholly inside the measurement: not the warm-up's edge, not a drain, not
    /// the part of a second before Ctrl-C.
    pub whole: bool,
}

impl Record {
    pub fn index(&self) -> u64 {
        self.second.index
    }
}
