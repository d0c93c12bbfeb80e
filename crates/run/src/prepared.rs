//! A prepared run: plays on the engine at its own load or at a level, and is the one
//! implementation of the `Runs` seam that series drive.

use crate::result::{add_workload, to_result};
use crate::shard::ShardRun;
use crate::what::{UrlRequest, What};
use crate::{ensure_fds, Length, Level, LoadFlags, RunError, Runs, Sink};
use herd_engine::{Control, Hooks, Plan, Shard, Single, SystemClock};
use herd_http::h3::H3Transport;
use herd_http::{HttpTransport, Scheme, Target, TlsOptions};
use herd_result::{RunConfig, RunResult};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// What the engine played: its output, a workload's tally, a script's pipeline depth and the
/// watched server's readings.
type Played = (
    herd_engine::RunOutput,
    Option<herd_workload::Tally>,
    Option<usize>,
    Option<herd_result::Server>,
    Option<Faulted>,
);

/// A workload's faults as played, and the engine's instant of timeline second 0.
struct Faulted {
    log: crate::faults::Log,
    measure_start: std::time::SystemTime,
}

/// A checked run, ready to play (`RunSpec::prepare`).
pub struct Prepared {
    pub(crate) what: What,
    /// Warnings about the flags (a TLS flag on an http:// URL), kept in each result's
    /// `warnings`.
    pub(crate) notes: Vec<String>,
    pub(crate) watch: Option<crate::watch::Watch>,
    pub(crate) load: LoadFlags,
    pub(crate) level: Option<Level>,
    pub(crate) length: Option<Length>,
    pub(crate) insecure: bool,
    pub(crate) bind: Option<IpAddr>,
    /// `--cacert`, `--cert` and `--key`, read when the run was prepared.
    pub(crate) tls_files: Option<Arc<herd_http::TlsFiles>>,
    /// The forward proxy connections go through (`--proxy`, `HTTP_PROXY`...).
    pub(crate) proxy: Option<herd_http::Proxy>,
    pub(crate) http: crate::HttpFlags,
    /// The engine plays only this shard's share of the plan (`Plan::shard`), from its start
    /// instant.
    pub(crate) shard: Option<ShardRun>,
    /// How many runs this spec has begun: a series' `k`th run starts on the shard's `k`th
    /// instant.
    pub(crate) runs: AtomicU64,
    /// What the run is in the user's words (`--label KEY=VALUE`), kept in its config.
    pub(crate) labels: std::collections::BTreeMap<String, String>,
}

impl Prepared {
    /// The plan the run plays at its own level, its shard's stripe included.
    pub fn plan(&self) -> Plan {
        let mut plan = self.plan_at(self.level, self.length);
        plan.shard = self.stripe();
        plan
    }

    /// Files the run under the user's labels (`--label KEY=VALUE`): its config, and so every
    /// output and a store, carries them.
    pub fn set_labels(&mut self, labels: std::collections::BTreeMap<String, String>) {
        self.labels = labels;
    }

    /// The shard this run plays, when it is one.
    pub fn shard(&self) -> Option<&ShardRun> {
        self.shard.as_ref()
    }

    /// A replay's: what reading its logs found besides the arrivals.
    pub fn replay_read(&self) -> Option<&crate::ReplayRead> {
        match &self.what {
            What::Replay { replay, .. } => Some(&replay.read),
            _ => None,
        }
    }

    fn stripe(&self) -> Option<Shard> {
        self.shard.as_ref().map(|s| s.shard.clone())
    }

    /// How the run is described in its result at its own level.
    pub fn config(&self) -> RunConfig {
        self.config_of(
            &self.plan_at(self.level, self.length),
            self.level,
            self.length,
        )
    }

    /// The request body of a URL run (empty for files): part of a shard's plan hash.
    pub fn body(&self) -> &[u8] {
        match &self.what {
            What::Url(r) => &r.request.bytes,
            What::Script { request: r, .. } => r.body(),
            _ => &[],
        }
    }

    /// Plays the run at `level` (its own when `None`) and returns the full result: per-name
    /// stats, scenarios, checks and evaluated thresholds for files. Prints nothing; progress
    /// goes to `sink`.
    pub fn run(
        &self,
        level: Option<Level>,
        control: &Arc<Control>,
        sink: &mut dyn Sink,
    ) -> Result<RunResult, RunError> {
        self.run_at(level.or(self.level), self.length, control, sink)
    }

    fn run_at(
        &self,
        level: Option<Level>,
        length: Option<Length>,
        control: &Arc<Control>,
        sink: &mut dyn Sink,
    ) -> Result<RunResult, RunError> {
        self.check_at(level, length)?;
        // The result describes the whole plan; a shard plays its share of it.
        let config = self.config_of(&self.plan_at(level, length), level, length);
        let mut plan = self.plan_at(level, length);
        plan.shard = self.stripe();
        let fewer = match (&self.what, level) {
            (What::Workload { file, .. }, None) => format!(
                "lower `users:` (closed) or `max_connections:` (open) in {}",
                file.display()
            ),
            _ => "ask for fewer connections (-c)".to_owned(),
        };
        ensure_fds(plan.max_connections(), &fewer)?;
        // A shard waits for its start instant only now, every check made; one that starts late
        // (`--late skip`) plays the rest of its schedule.
        let shard = match &self.shard {
            Some(run) => {
                let at = run.instant(self.runs.fetch_add(1, Relaxed));
                let hash = crate::shard::run_hash(&self.what, &config, level, length);
                let started = crate::shard::wait(run, at, control, sink)?;
                if started.late {
                    plan.late = crate::shard::late_start(&plan, started.lag)?;
                }
                Some(crate::shard::header(run, at, hash, started))
            }
            None => None,
        };
        let labels = self.labels();
        // The requests log goes to this run's workers only: the engine is handed it with the
        // stop handle.
        let hooks = Hooks {
            control: Arc::clone(control),
            // A log that cannot be opened is the sink's to report (herd-live's `Sinks` keep it).
            requests_log: sink.requests_log(&labels).ok().flatten(),
        };
        let played = self.play(&mut plan, &config, labels, shard.as_ref(), &hooks, sink);
        // The tap's last holder: the writer ends its file once every holder let go.
        drop(hooks);
        let (out, tally, pipelined, server, faulted) = played?;
        sink.finished();
        let mut result = to_result(config.url.clone(), config, &plan, &out);
        if let Some(depth) = pipelined {
            result.config.pipeline = Some(depth as u64);
        }
        result.server = server;
        if let Some(header) = shard {
            crate::shard::stamp(&mut result, header, plan.late, plan.missed(), sink);
        }
        self.conclude(&out, tally, &mut result);
        result.warnings.extend(self.notes.iter().cloned());
        if let (Some(f), What::Workload { workload, .. }) = (faulted, &self.what) {
            let thresholds = &workload.thresholds;
            crate::faults::add_to(
                &mut result,
                f.log,
                &workload.faults,
                thresholds,
                f.measure_start,
            );
        }
        if let (What::Workload { workload, .. }, None) = (&self.what, level) {
            let own = workload.plan(plan.threads);
            let target = workload
                .retargeted_from
                .as_deref()
                .map(|own| (result.target.as_str(), own));
            let said = crate::overrides::said(&own, &plan, &self.load, target);
            result.set_overrides(said);
        }
        Ok(result)
    }

    /// Plays `plan` on the engine, the records told to `sink` with the watched server's
    /// readings joined to the second they came with; the engine's output, a workload's tally,
    /// a script's pipeline depth and the server's readings.
    fn play(
        &self,
        plan: &mut Plan,
        config: &RunConfig,
        labels: crate::Labels,
        shard: Option<&(herd_result::ShardHeader, Option<u64>)>,
        hooks: &Hooks,
        sink: &mut dyn Sink,
    ) -> Result<Played, RunError> {
        let options = TlsOptions {
            insecure: self.insecure,
            source: self.bind,
            files: self.tls_files.clone(),
        };
        // A script's threads are set up (setup, init, a first request()) before any load, and
        // before the server is watched: an error there stops the run with nothing sent.
        let mut scripted = match &self.what {
            What::Script { request, wrk, .. } => Some(crate::script::start(
                plan,
                request,
                wrk,
                &options,
                self.proxy.as_ref(),
            )?),
            _ => None,
        };
        let pipelined = scripted.as_mut().and_then(|t| t.pipeline(plan));
        let watcher = match &self.watch {
            Some(w) => Some(w.start(std::time::Instant::now() + plan.warmup)?),
            None => None,
        };
        let faults = self.start_faults(plan)?;
        let measure_start = std::cell::Cell::new(None);
        let mut start = Some(crate::RunStart {
            config: config.clone(),
            labels,
            measure_start: std::time::SystemTime::now(),
            shard: shard.map(|h| h.0.clone()),
            timeline_start_unix_s: shard.and_then(|h| h.1),
            run_id: String::new(),
            step: None,
        });
        let progress = |p: &herd_engine::Progress| {
            if let Some(mut s) = start.take() {
                s.measure_start = p.measure_start;
                measure_start.set(Some(p.measure_start));
                if let Some(d) = &faults {
                    d.origin(p.measure_start);
                }
                // A failing output is its own: `Sinks` reports it once and leaves it out.
                let _ = sink.start(&s);
            }
            sink.progress(p);
            let mut fresh = match (&watcher, p.closed.is_empty()) {
                (Some(w), false) => Some(crate::watch::fresh(w)).filter(|f| !f.is_empty()),
                _ => None,
            };
            for r in &p.closed {
                let _ = sink.record(r, fresh.take().as_ref());
            }
            self.tell_faults(faults.as_ref(), p.measure_start, sink);
        };
        let plan = &*plan;
        let out = match &self.what {
            What::Url(r) => self
                .play_url(plan, r, options, hooks, progress)
                .map(|out| (out, None)),
            What::Replay { target, replay, .. } => self
                .engine(
                    plan,
                    target,
                    options,
                    |_| replay.script.clone(),
                    hooks,
                    progress,
                )
                .map(|out| (out, None)),
            What::UrlFile { workload: w, .. } | What::Workload { workload: w, .. } => {
                let script = |_| w.script_in(plan.shard.as_ref());
                self.engine(plan, w.target(), options, script, hooks, progress)
                    .map(|out| {
                        let (out, tally) = out.split();
                        (out, Some(tally))
                    })
            }
            What::Script { .. } => {
                let threads = scripted.expect("a script's threads are started above");
                crate::script::play(plan, threads, hooks, progress)
                    .map(|out| (out, None))
                    .map_err(|e| RunError::Start(e.to_string()))
            }
        };
        let server = watcher.map(crate::watch::stop);
        // Every toxic still in force is removed here, whatever the engine's end.
        let faulted = faults.map(|d| Faulted {
            log: d.stop(),
            measure_start: measure_start
                .get()
                .unwrap_or_else(std::time::SystemTime::now),
        });
        let (mut out, tally) = out?;
        // The name was looked up once, before any run; each run's result says how long it took.
        if let Some(d) = self.what.target().lookup() {
            out.total.record_lookup(d);
        }
        Ok((out, tally, pipelined, server, faulted))
    }

    /// A URL's run: its one request, built once, again and again (a plain one, `Single`, or a
    /// gRPC call judged by its trailers); or a WebSocket's messages.
    fn play_url(
        &self,
        plan: &Plan,
        r: &UrlRequest,
        options: TlsOptions,
        hooks: &Hooks,
        progress: impl FnMut(&herd_engine::Progress),
    ) -> Result<herd_engine::RunOutput, RunError> {
        if let Some((_, ws)) = &r.ws {
            let text = ws.send.as_deref().unwrap_or_default();
            let seq = Arc::default();
            let script = |_| crate::ws::Messages::new(text, Arc::clone(&seq));
            return self.engine(plan, &r.target, options, script, hooks, progress);
        }
        let mut request = r.request.clone();
        if let (Some(p), Scheme::Http) = (&self.proxy, r.target.scheme()) {
            request.bytes = p.absolute_form(&request.bytes, &r.target).into();
            request.closing = request
                .closing
                .map(|c| p.absolute_form(&c, &r.target).into());
        }
        match &r.grpc {
            Some(call) => {
                let script = herd_grpc::GrpcScript::new(request, call);
                let script = |_| script.clone();
                self.engine(plan, &r.target, options, script, hooks, progress)
            }
            None => {
                let single = |_| Single(request.clone());
                self.engine(plan, &r.target, options, single, hooks, progress)
            }
        }
    }

    /// Tells `sink` of the faults added or removed since the last report.
    fn tell_faults(
        &self,
        faults: Option<&crate::faults::Driver>,
        measure_start: std::time::SystemTime,
        sink: &mut dyn Sink,
    ) {
        if let (Some(d), What::Workload { workload, .. }) = (faults, &self.what) {
            for n in d.notices() {
                sink.fault(&crate::faults::window_of(
                    &n,
                    &workload.faults,
                    measure_start,
                ));
            }
        }
    }

    /// A workload's faults, playing on their own thread from about the start of the
    /// measurement: at the file's own load only (`check_at` refuses them elsewhere).
    fn start_faults(&self, plan: &Plan) -> Result<Option<crate::faults::Driver>, RunError> {
        match (&self.what, self.shard.is_none()) {
            (What::Workload { workload, .. }, true) => {
                let origin = std::time::SystemTime::now() + plan.warmup;
                crate::faults::start(workload, origin).map_err(RunError::Start)
            }
            _ => Ok(None),
        }
    }

    /// Runs `plan` on the engine over HTTP/3 or the TCP transport (through the run's proxy),
    /// each thread's script made by `script`.
    fn engine<S: herd_engine::Script>(
        &self,
        plan: &Plan,
        target: &Target,
        options: TlsOptions,
        script: impl Fn(usize) -> S + Sync,
        hooks: &Hooks,
        progress: impl FnMut(&herd_engine::Progress),
    ) -> Result<herd_engine::RunOutput<S::Report>, RunError> {
        let start = |e: String| RunError::Start(e);
        let clock = Arc::new(SystemClock);
        let hooks = hooks.clone();
        if self.http.http3 {
            let transport = H3Transport::new(target, options).map_err(|e| start(e.to_string()))?;
            herd_engine::run(plan, clock, |_| transport.wire(), script, hooks, progress)
        } else {
            let transport = self.transport(target, options)?;
            herd_engine::run(plan, clock, |_| transport.wire(), script, hooks, progress)
        }
        .map_err(|e| start(e.to_string()))
    }

    /// What each kind of run adds to its result: a replay's production comparison, a script's
    /// done() output, a workload's names, scenarios, checks and evaluated thresholds.
    fn conclude(
        &self,
        out: &herd_engine::RunOutput,
        tally: Option<herd_workload::Tally>,
        result: &mut RunResult,
    ) {
        match &self.what {
            What::Url(r) => {
                if let Some(call) = &r.grpc {
                    result.grpc = herd_result::Grpc::of(&call.name(), &out.total);
                }
            }
            What::Replay { replay, .. } => replay.add_to(out, result),
            What::Script { wrk, file, .. } => crate::script::conclude(wrk, file, out, result),
            What::UrlFile { workload, file, .. } | What::Workload { workload, file } => {
                add_workload(workload, out, &tally.unwrap_or_default(), result);
                result.workload = Some(file.display().to_string());
                result.thresholds = workload
                    .thresholds
                    .iter()
                    .map(|t| t.evaluate(result))
                    .collect();
            }
        }
    }

    /// Every problem with the run as it will play, its shard included: what a shard's wait for
    /// its start instant must not be spent before finding.
    pub fn check(&self) -> Result<(), RunError> {
        self.check_at(self.level, self.length)
    }

    /// The transport to `target`, through the run's proxy when it has one.
    fn transport(&self, target: &Target, options: TlsOptions) -> Result<HttpTransport, RunError> {
        let protocol = match &self.what {
            // `--http2`: each connection's sockets are its streams (RFC 8441).
            What::Url(UrlRequest {
                ws: Some((ws, _)), ..
            }) => match self.http().protocol() {
                herd_http::Protocol::Http2(settings) => {
                    herd_http::Protocol::WebSocketH2(Arc::clone(ws), settings)
                }
                _ => herd_http::Protocol::WebSocket(Arc::clone(ws)),
            },
            // A workload of `ws:` steps: each user's messages on its socket, replies in order.
            What::Workload { .. } if target.websocket() && self.http().http2 => {
                return Err(RunError::Start(
                    "a workload's ws: steps open their sockets with HTTP/1.1's Upgrade: WebSockets \
                     over HTTP/2 (--http2, protocol: h2) are for a ws:// URL's --send for now; \
                     drop --http2 (or the file's protocol: h2)"
                        .into(),
                ))
            }
            What::Workload { .. } if target.websocket() => {
                herd_http::Protocol::WebSocket(Arc::new(herd_http::ws::WebSocket::new(
                    target,
                    &[],
                    herd_http::ws::Match::InOrder,
                )))
            }
            _ => self.http().protocol(),
        };
        let t = HttpTransport::new(target, options)
            .map_err(|e| RunError::Start(e.to_string()))?
            .speaking(protocol);
        Ok(match &self.proxy {
            Some(p) => t.through(p, target),
            None => t,
        })
    }
}

impl Runs for Prepared {
    fn check(&self, level: Level, length: Length) -> Result<(), RunError> {
        self.check_at(Some(level), Some(length))
    }

    fn run(
        &self,
        level: Level,
        length: Length,
        control: &Arc<Control>,
        sink: &mut dyn Sink,
    ) -> Result<RunResult, RunError> {
        self.run_at(Some(level), Some(length), control, sink)
    }

    fn rate_unit(&self) -> &'static str {
        match self.what {
            What::Workload { .. } => "iterations/s",
            _ => "req/s",
        }
    }

    fn timeout(&self) -> Duration {
        self.plan_at(self.level, self.length).timeout
    }

    fn labels(&self) -> crate::Labels {
        self.what.labels()
    }
}
