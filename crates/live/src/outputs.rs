//! Every output of a run from one plain-data description (ripgrep's low and high arguments):
//! the CLI turns its flags into an [`OutputSpec`]; [`Outputs::open`] checks every path and
//! opens what listens (a taken port stops the command before anything is sent); then
//! [`Outputs::for_run`] builds the [`Sinks`] of each run. A command of one run (`run`,
//! `replay`, `demo`, a shard) asks once; a series (`sweep`, `capacity`) asks once per run and
//! gets its files numbered (`x.hlog` -> `x-1.hlog`, `x-2.hlog`...), its metrics labelled by
//! step, and its dashboard as the series' page.

use crate::dashboard::recording::Recording;
use crate::dashboard::{Dashboard, LevelRow, Levels, SeriesLive};
use crate::line::{Live, Planned};
use crate::metrics::{otlp, Endpoint, Metrics};
use crate::paths::{check_writable, numbered};
use crate::requests_log::RequestsLogSink;
use crate::{RunStart, Sink, SinkError, Sinks};
use herd_engine::Control;
use herd_result::RunResult;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a command writes and serves besides its summary, as plain data.
#[derive(Clone, Debug, Default)]
pub struct OutputSpec {
    /// No live panel on the terminal.
    pub quiet: bool,
    /// The result as JSON, written as the run goes (a series': its result at the end).
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub hlog: Option<PathBuf>,
    pub requests_log: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub summary_md: Option<PathBuf>,
    pub metrics_listen: Option<SocketAddr>,
    pub remote_write: Option<Endpoint>,
    /// The OTLP collector, from `--otlp` or the OpenTelemetry variables.
    pub otlp: Option<otlp::Target>,
    pub dashboard: Option<SocketAddr>,
    /// The dashboard's page may stop the run.
    pub dashboard_control: bool,
    /// The dashboard's events as NDJSON.
    pub record: Option<PathBuf>,
    /// How many Ctrl-Cs the process has had: one more ends the wait for a last scrape.
    pub interrupts: Option<fn() -> u64>,
}

impl OutputSpec {
    /// Every path that cannot be written, one message each naming the flag, the path and the
    /// fix. A series' files per run are checked as its first run's (`x-1.hlog`).
    pub fn check(&self, series: bool) -> Vec<String> {
        let per_run = |p: &Path| if series { numbered(p, 1) } else { p.to_owned() };
        let mut paths: Vec<(&str, PathBuf)> = Vec::new();
        if let Some(p) = &self.json {
            paths.push(("--json", p.clone()));
        }
        for (flag, p) in [
            ("--csv", &self.csv),
            ("--hlog", &self.hlog),
            ("--requests-log", &self.requests_log),
            ("--junit", &self.junit),
            ("--summary-md", &self.summary_md),
        ] {
            if let Some(p) = p {
                paths.push((flag, per_run(p)));
            }
        }
        if let Some(p) = &self.record {
            paths.push(("--record", p.clone()));
        }
        paths
            .iter()
            .filter_map(|(flag, p)| check_writable(flag, p).err())
            .chain(
                (self.requests_log.as_deref())
                    .and_then(|p| crate::requests_log::compression(p).err()),
            )
            .collect()
    }
}

/// What listens for the whole command, and the spec each run's sinks are made from.
pub struct Outputs {
    spec: OutputSpec,
    /// A run's own: its dashboard, taken by its one run.
    dashboard: Option<Dashboard>,
    metrics: Option<Metrics>,
    /// A series' page and recording.
    series: Option<SeriesLive>,
    /// The run id a series' runs share.
    run_id: String,
}

impl Outputs {
    /// Checks every path and opens what listens: the dashboard and the metrics endpoint (their
    /// addresses said on standard error), a series' page and recording when `series` describes
    /// one. `control` is what the dashboard's stop button stops. Every problem at once, each
    /// ending in "nothing was sent".
    pub fn open(
        spec: &OutputSpec,
        control: &Arc<Control>,
        series: Option<Levels>,
    ) -> Result<Outputs, String> {
        let problems = spec.check(series.is_some());
        if !problems.is_empty() {
            return Err(format!("{}\nnothing was sent", problems.join("\n")));
        }
        let metrics = match spec.metrics_listen {
            Some(addr) => {
                let m = Metrics::listen(addr, crate::metrics::GRACE).map_err(|e| {
                    format!(
                        "--metrics-listen {addr}: cannot listen there: {}; pick another address or port\nnothing was sent",
                        e.source
                    )
                })?;
                eprintln!("herd: metrics at http://{}/metrics", m.local_addr());
                Some(match spec.interrupts {
                    Some(count) => m.skipped_by(count),
                    None => m,
                })
            }
            None => None,
        };
        if let Some(t) = &spec.otlp {
            if t.from != otlp::FLAG {
                // Not asked for on the command line: say where the numbers go, and why.
                eprintln!("herd: OTLP metrics to {} ({})", t.endpoint.url, t.from);
            }
        }
        let board = match spec.dashboard {
            Some(addr) => Some(dashboard(spec, addr, control)?),
            None => None,
        };
        let (dashboard, series) = match series {
            Some(levels) if board.is_some() || spec.record.is_some() => {
                let record = spec.record.as_deref().map(Recording::create);
                let live = SeriesLive::start(board, record, levels)
                    .map_err(|e| format!("{e}\nnothing was sent"))?;
                (None, Some(live))
            }
            _ => (board, None),
        };
        if let Some(url) = dashboard
            .as_ref()
            .map(Dashboard::url)
            .or_else(|| series.as_ref().and_then(SeriesLive::url))
        {
            eprintln!("herd: dashboard at {url}");
        }
        Ok(Outputs {
            spec: spec.clone(),
            dashboard,
            metrics,
            series,
            run_id: RunStart::new_run_id(),
        })
    }

    /// The sinks of the next run: the live panel, then each output the spec asks for. A single
    /// run's files are the paths given; a series' are numbered by run, from 1.
    pub fn for_run(&mut self, planned: Planned) -> Sinks {
        self.sinks(planned, None)
    }

    /// The sinks of run `n` (from 1) of a series: files numbered, metrics labelled by step.
    pub fn for_step(&mut self, n: usize) -> Sinks {
        self.sinks(Planned::default(), Some(n))
    }

    fn sinks(&mut self, planned: Planned, step: Option<usize>) -> Sinks {
        let spec = &self.spec;
        let file = |p: &PathBuf| match step {
            Some(n) => numbered(p, n),
            None => p.clone(),
        };
        let mut sinks = match step {
            Some(n) => Sinks::of_step(self.run_id.clone(), n),
            None => Sinks::new(),
        };
        sinks.add(Live::new(spec.quiet).planned(planned));
        if let (Some(p), None) = (&spec.json, step) {
            sinks.add(crate::json::JsonStream::create(p));
        }
        if let Some(p) = &spec.csv {
            sinks.add(crate::csv::Csv::create(&file(p)));
        }
        if let Some(p) = &spec.hlog {
            sinks.add(crate::hlog::Hlog::create(&file(p)));
        }
        if let Some(p) = &spec.requests_log {
            sinks.add(RequestsLogSink::create(&file(p)));
        }
        if let Some(p) = &spec.junit {
            sinks.add(crate::junit::Junit::create(&file(p)));
        }
        if let Some(p) = &spec.summary_md {
            sinks.add(crate::markdown::Markdown::create(&file(p)));
        }
        match (&self.metrics, step) {
            (Some(m), Some(_)) => sinks.add(m.step()),
            (Some(_), None) => sinks.add(self.metrics.take().expect("the endpoint")),
            (None, _) => {}
        }
        if let Some(to) = &spec.remote_write {
            sinks.add(crate::metrics::remote_write(to.clone()));
        }
        if let Some(t) = &spec.otlp {
            sinks.add(crate::metrics::otlp(t.endpoint.clone()));
        }
        match &self.series {
            Some(s) => sinks.add(s.step()),
            None => {
                if let (Some(p), None) = (&spec.record, step) {
                    sinks.add(Recording::create(p));
                }
                if let Some(d) = self.dashboard.take() {
                    sinks.add(d);
                }
            }
        }
        if step.is_none() {
            sinks.add(ShardFrame);
        }
        sinks
    }

    /// A level of the series finished: a row of its page's table.
    pub fn level(&self, row: impl FnOnce() -> LevelRow) {
        if let Some(s) = &self.series {
            s.level(row());
        }
    }

    /// The series ended: its page offers `report` (made only when there is a page), its
    /// metrics are final. A recording that could not be written is said, not fatal.
    pub fn end_series(&self, report: impl FnOnce() -> String, interrupted: bool) {
        if let Some(m) = &self.metrics {
            m.end();
        }
        if let Some(live) = &self.series {
            if let Some(e) = live.finish(report(), interrupted) {
                eprintln!("herd: {e}");
            }
        }
    }

    /// After a series' results are written and shown: the page and the endpoint wait a moment
    /// for their readers.
    pub fn linger(&self) {
        if let Some(s) = &self.series {
            s.linger();
        }
        if let Some(m) = &self.metrics {
            m.await_last_scrape();
        }
    }
}

/// The dashboard, listening already: a taken port stops the command before anything is sent.
fn dashboard(
    spec: &OutputSpec,
    addr: SocketAddr,
    control: &Arc<Control>,
) -> Result<Dashboard, String> {
    let report_hint = match &spec.json {
        Some(p) => format!(
            "Save the final report with the link above, or make it later: herd report {} -o report.html",
            p.display()
        ),
        None => "Save the final report with the link above (with --json FILE, herd report FILE makes it again later)".to_owned(),
    };
    Dashboard::listen(crate::dashboard::Options {
        addr,
        control: spec.dashboard_control.then(|| Arc::clone(control)),
        report_hint,
    })
    .map_err(|e| {
        format!(
            "--dashboard {addr}: cannot listen there: {}; pick another address or port (--dashboard=127.0.0.1:0 takes any free port)\nnothing was sent",
            e.source
        )
    })
}

/// A shard's result as one framed block on standard error, for `kubectl logs` (which shows
/// both streams) and `herd k8s collect`; standard output keeps what a person reads. A shard
/// given no share says so: it sent nothing, and the merge counts it.
struct ShardFrame;

impl Sink for ShardFrame {
    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        let Some(h) = &result.shard else {
            return Ok(());
        };
        if herd_run::conclude(result) == herd_run::Conclusion::NoShare {
            eprintln!(
                "herd: shard {} has no share of this run (fewer users or requests than shards): it sent nothing, and herd merge counts it",
                h.label()
            );
        }
        let mut json = Vec::new();
        herd_result::write_json(result, &mut json)
            .map_err(|e| SinkError::new("--shard", Path::new("stderr"), e))?;
        eprint!("{}", herd_result::frame::frame(&json, &h.label()));
        Ok(())
    }
}
