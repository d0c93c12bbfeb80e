//! The outputs every command that sends load shares (`run`, `replay`, `sweep`, `capacity`,
//! `demo`, a shard): one set of flags turned into herd-live's plain-data `OutputSpec`, whose
//! `Outputs` make each run's sinks; the end of a run, the summary and the exit code.

use crate::exit::{self, Exit};
use herd_live::{OutputSpec, Outputs, Sink, Sinks};
use herd_result::RunResult;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args, Debug, Default, Clone)]
pub struct OutputArgs {
    /// Write the result as JSON to FILE: a run's each second as it closes, the full result at
    /// the end (also on Ctrl-C; a run killed mid-way leaves a partial result herd report reads);
    /// a sweep's or capacity search's every run, rewritten after each step or probe
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub json: Option<PathBuf>,
    /// No live panel on the terminal
    #[arg(short = 'q', long, help_heading = "Outputs")]
    pub quiet: bool,
    /// Write the per-second timeline as CSV to FILE, a row as each second closes (sweep,
    /// capacity: a file per run, x.csv -> x-1.csv, x-2.csv...; a sweep's table goes to FILE)
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub csv: Option<PathBuf>,
    /// Write an HdrHistogram interval log (one latency histogram per second, microseconds) to
    /// FILE, for HdrHistogram's log tools and the Python hdrhistogram package (sweep, capacity:
    /// a file per run, x.hlog -> x-1.hlog, x-2.hlog...)
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub hlog: Option<PathBuf>,
    /// Write one CSV line per measured request to FILE (intended and send times, latency,
    /// service time, status, bytes, error class, name, connection); FILE.csv.gz is gzip
    /// (readable up to a kill -9), FILE.csv plain; sweep, capacity: a file per run, r.csv.gz ->
    /// r-1.csv.gz, r-2.csv.gz... Off by default: it costs CPU per request
    #[arg(long = "requests-log", value_name = "FILE", help_heading = "Outputs")]
    pub requests_log: Option<PathBuf>,
    /// Write the thresholds and checks as JUnit XML test cases to FILE at the end (a failed
    /// threshold is a failed case), for CI test reports
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary to FILE at the end, for CI job pages ($GITHUB_STEP_SUMMARY)
    #[arg(long = "summary-md", value_name = "FILE", help_heading = "Outputs")]
    pub summary_md: Option<PathBuf>,
    /// Serve the run's metrics for Prometheus at http://ADDR/metrics while it runs (a port alone
    /// means 127.0.0.1); after the summary it waits up to 10 s for a last scrape, and says so
    /// (Ctrl-C skips the wait)
    #[arg(long = "metrics-listen", value_name = "ADDR", value_parser = crate::serve::parse_listen, help_heading = "Outputs")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Push the same series to a Prometheus remote-write receiver every 5 s and at the end
    /// (remote write 1.0), e.g. http://127.0.0.1:9090/api/v1/write
    #[arg(long = "prometheus-remote-write", value_name = "URL", value_parser = herd_live::metrics::remote_write::endpoint, help_heading = "Outputs")]
    pub remote_write: Option<herd_live::metrics::Endpoint>,
    /// Push the same series as OpenTelemetry metrics (OTLP/HTTP protobuf, cumulative; latency as
    /// a histogram in seconds) to a collector every 5 s and at the end, e.g.
    /// http://127.0.0.1:4318 (/v1/metrics is added when the URL has no path). Without the flag,
    /// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT turns it on;
    /// OTEL_EXPORTER_OTLP_HEADERS adds headers
    #[arg(long = "otlp", value_name = "URL", help_heading = "Outputs")]
    pub otlp: Option<String>,
    /// Serve a live dashboard of the run (of a sweep or capacity search: the run going on, and a
    /// table of the levels growing level by level): one page updated every second, at http://ADDR/
    /// [default: 127.0.0.1:5665; a port alone means 127.0.0.1; --dashboard=ADDR or
    /// --dashboard ADDR]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = herd_live::dashboard::DEFAULT_ADDR, value_parser = crate::serve::parse_listen, help_heading = "Outputs")]
    pub dashboard: Option<std::net::SocketAddr>,
    /// Let the dashboard's page stop the run, as Ctrl-C does (summary and files kept); on an
    /// address other than loopback a stop needs the token in the address herd prints
    #[arg(
        long = "dashboard-control",
        requires = "dashboard",
        help_heading = "Outputs"
    )]
    pub dashboard_control: bool,
    /// Record the dashboard's events (each second as it closes, then the result) as NDJSON to
    /// FILE; `herd report FILE -o page.html` makes the dashboard's page of it afterwards
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub record: Option<PathBuf>,

    /// `--store` and `--label`: the run kept in a store of runs (a series: each of its runs).
    #[command(flatten)]
    pub keep: crate::store_cmd::StoreFlags,
}

impl OutputArgs {
    /// The outputs the flags ask for, as plain data; the OpenTelemetry variables turn OTLP on
    /// without the flag.
    pub fn spec(&self) -> Result<OutputSpec, String> {
        let otlp = herd_live::metrics::otlp::target(self.otlp.as_deref(), |name| {
            std::env::var(name).ok()
        })?;
        Ok(OutputSpec {
            quiet: self.quiet,
            json: self.json.clone(),
            csv: self.csv.clone(),
            hlog: self.hlog.clone(),
            requests_log: self.requests_log.clone(),
            junit: self.junit.clone(),
            summary_md: self.summary_md.clone(),
            metrics_listen: self.metrics_listen,
            remote_write: self.remote_write.clone(),
            otlp,
            dashboard: self.dashboard,
            dashboard_control: self.dashboard_control,
            record: self.record.clone(),
            interrupts: Some(crate::interrupt::signals),
        })
    }

    /// Every problem with the outputs (paths, the OTLP target, the store and the labels),
    /// before anything is sent.
    pub fn check(&self, series: bool, sharded: bool) -> Vec<String> {
        let mut problems = match self.spec() {
            Ok(spec) => spec.check(series),
            Err(e) => vec![e],
        };
        problems.extend(self.keep.problems(sharded));
        problems
    }

    /// The outputs, checked and listening: the run stops before anything is sent otherwise.
    pub fn open(
        &self,
        control: &Arc<herd_engine::Control>,
        series: Option<herd_live::dashboard::Levels>,
    ) -> Result<Outputs, Exit> {
        let spec = self
            .spec()
            .map_err(|e| Exit::bad_input(format!("{e}\nnothing was sent")))?;
        Outputs::open(&spec, control, series).map_err(Exit::bad_input)
    }
}

/// A prepared run whose outputs can all be written, filed under the labels given; otherwise
/// every problem of both at once.
pub fn prepared(
    prepared: Result<herd_run::Prepared, herd_run::RunError>,
    outputs: &OutputArgs,
) -> Result<herd_run::Prepared, Exit> {
    let sharded = prepared.as_ref().is_ok_and(|p| p.shard().is_some());
    let mut problems = outputs.check(false, sharded);
    if !problems.is_empty() {
        problems.push("nothing was sent".to_owned());
    }
    match prepared {
        Ok(mut p) if problems.is_empty() => {
            p.set_labels(crate::store_cmd::labels(&outputs.keep)?);
            Ok(p)
        }
        Ok(_) => Err(Exit::bad_input(problems.join("\n"))),
        Err(e) if problems.is_empty() => Err(Exit::from(e)),
        Err(e) => {
            let first = Exit::from(e).message;
            Err(Exit::bad_input(format!("{first}\n{}", problems.join("\n"))))
        }
    }
}

/// Writes `text` to `path`, or says why it cannot.
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), Exit> {
    std::fs::write(path, text)
        .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", path.display())))
}

/// Refuses an output path given to `flag` that cannot be written, before any work is done (the
/// one check every command's outputs get).
pub fn check_path(flag: &str, path: Option<&std::path::Path>) -> Result<(), Exit> {
    match path {
        Some(p) => herd_live::paths::check_writable(flag, p).map_err(Exit::bad_input),
        None => Ok(()),
    }
}

/// The one end of every run: hands the result to every sink (the JSON first of all), prints
/// the summary, lets the listening outputs linger, and picks the exit code from how the run
/// ended. The files first: a summary that cannot be printed (`| head` closed the pipe) must not
/// cost the measurement.
pub fn finish(result: &mut RunResult, sinks: &mut Sinks) -> Result<i32, Exit> {
    let problems = sinks.end(result);
    print!("{}", herd_report::output::run_summary(result));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    sinks.linger();
    if !problems.is_empty() {
        let lines: Vec<String> = problems
            .iter()
            .map(|e| format!("cannot write {e}"))
            .collect();
        return Err(Exit::bad_input(lines.join("\n")));
    }
    Ok(exit::code(herd_run::conclude(result)))
}
