//! `herd run`'s outputs besides the summary: each flag becomes a sink of the run's stream of
//! closed seconds (herd-live); every path is checked before the first request.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use herd_engine::{Control, Plan};
use herd_live::dashboard::Dashboard;
use herd_live::line::{Live, Planned};
use herd_live::Sinks;
use herd_result::{RequestsLogged, RunResult};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args, Debug, Default, Clone)]
pub struct OutputArgs {
    /// Write the per-second timeline as CSV to FILE, a row as each second closes
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub csv: Option<PathBuf>,
    /// Write an HdrHistogram interval log (one latency histogram per second, microseconds) to
    /// FILE, for HdrHistogram's log tools and the Python hdrhistogram package
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub hlog: Option<PathBuf>,
    /// Write one CSV line per measured request to FILE (intended and send times, latency,
    /// service time, status, bytes, error class, name, connection); FILE.csv.gz is gzip
    /// (readable up to a kill -9), FILE.csv plain. Off by default: it costs CPU per request
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
    /// Serve a live dashboard of the run: one page updated every second, at http://ADDR/
    /// [default: 127.0.0.1:5665; a port alone means 127.0.0.1; --dashboard=ADDR or --dashboard ADDR]
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
}

/// Every output file of `herd run`, checked before anything is sent.
pub fn check(a: &RunArgs) -> Result<(), Exit> {
    let o = &a.outputs;
    let problems: Vec<String> = [
        ("--json", a.json.as_deref()),
        ("--csv", o.csv.as_deref()),
        ("--hlog", o.hlog.as_deref()),
        ("--requests-log", o.requests_log.as_deref()),
        ("--junit", o.junit.as_deref()),
        ("--summary-md", o.summary_md.as_deref()),
        ("--record", o.record.as_deref()),
    ]
    .into_iter()
    .filter_map(|(flag, path)| crate::output::check_writable(flag, path?).err())
    .chain(otlp(o).err())
    .chain(
        o.requests_log
            .as_deref()
            .and_then(|p| herd_live::requests_log::compression(p).err()),
    )
    .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Exit::bad_input(format!(
            "{}\nnothing was sent",
            problems.join("\n")
        )))
    }
}

/// Where `--otlp` or the OpenTelemetry variables send the run's metrics, if anywhere.
fn otlp(o: &OutputArgs) -> Result<Option<herd_live::metrics::otlp::Target>, String> {
    herd_live::metrics::otlp::target(o.otlp.as_deref(), |name| std::env::var(name).ok())
}

/// The sinks `a` asks for: the live line always (quiet off a terminal), then each file;
/// `control` stops the run (the dashboard's button, with `--dashboard-control`).
pub fn sinks(a: &RunArgs, plan: &Plan, control: &Arc<Control>) -> Result<Sinks, Exit> {
    let mut sinks = Sinks::new();
    sinks.add(Live::new(a.quiet).planned(Planned {
        duration: plan.duration.or(plan.length()),
        requests: plan.requests,
        users: matches!(plan.load, herd_engine::Load::Closed { .. }),
    }));
    let o = &a.outputs;
    let bad = |e: herd_live::SinkError| Exit::bad_input(e.to_string());
    if let Some(p) = &a.json {
        sinks.add(herd_live::json::JsonStream::create(p).map_err(bad)?);
    }
    if let Some(p) = &o.csv {
        sinks.add(herd_live::csv::Csv::create(p));
    }
    if let Some(p) = &o.hlog {
        sinks.add(herd_live::hlog::Hlog::create(p));
    }
    if let Some(p) = &o.junit {
        sinks.add(herd_live::junit::Junit::create(p));
    }
    if let Some(p) = &o.summary_md {
        sinks.add(herd_live::markdown::Markdown::create(p));
    }
    if let Some(addr) = o.metrics_listen {
        let m = herd_live::metrics::Metrics::listen(addr, herd_live::metrics::GRACE).map_err(|e| {
            Exit::bad_input(format!(
                "--metrics-listen {addr}: cannot listen there: {}; pick another address or port\nnothing was sent",
                e.source
            ))
        })?;
        eprintln!("herd: metrics at http://{}/metrics", m.local_addr());
        sinks.add(m.skipped_by(crate::interrupt::signals));
    }
    if let Some(to) = &o.remote_write {
        sinks.add(herd_live::metrics::remote_write(to.clone()));
    }
    if let Some(t) = otlp(o).map_err(|e| Exit::bad_input(format!("{e}\nnothing was sent")))? {
        if t.from != herd_live::metrics::otlp::FLAG {
            // Not asked for on the command line: say where the numbers go, and why.
            eprintln!("herd: OTLP metrics to {} ({})", t.endpoint.url, t.from);
        }
        sinks.add(herd_live::metrics::otlp(t.endpoint));
    }
    if let Some(p) = &o.record {
        sinks.add(herd_live::dashboard::record::Recording::create(p));
    }
    if let Some(addr) = o.dashboard {
        sinks.add(dashboard(a, addr, control)?);
    }
    Ok(sinks)
}

/// The dashboard, listening already: a taken port stops the run before anything is sent.
fn dashboard(a: &RunArgs, addr: SocketAddr, control: &Arc<Control>) -> Result<Dashboard, Exit> {
    let report_hint = match &a.json {
        Some(p) => format!(
            "Save the final report with the link above, or make it later: herd report {} -o report.html",
            p.display()
        ),
        None => "Save the final report with the link above (with --json FILE, herd report FILE makes it again later)".to_owned(),
    };
    let d = Dashboard::listen(herd_live::dashboard::Options {
        addr,
        control: a.outputs.dashboard_control.then(|| Arc::clone(control)),
        report_hint,
    })
    .map_err(|e| {
        Exit::bad_input(format!(
            "--dashboard {addr}: cannot listen there: {}; pick another address or port (--dashboard=127.0.0.1:0 takes any free port)\nnothing was sent",
            e.source
        ))
    })?;
    eprintln!("herd: dashboard at {}", d.url());
    Ok(d)
}

/// The requests log's writer, started: the runs `control` starts send it their lines.
pub fn requests_log(
    a: &OutputArgs,
    labels: &herd_run::Labels,
    control: &Control,
) -> Result<Option<herd_live::requests_log::Writer>, Exit> {
    let Some(path) = &a.requests_log else {
        return Ok(None);
    };
    herd_live::requests_log::Writer::start(path, labels.names.clone(), control)
        .map(Some)
        .map_err(|e| Exit::bad_input(format!("cannot write {e}\nnothing was sent")))
}

/// Finishes the requests log after the run: what it holds, or why it could not be written.
pub fn finish_requests_log(
    writer: Option<herd_live::requests_log::Writer>,
    control: &Control,
) -> Option<Result<RequestsLogged, String>> {
    Some(
        writer?
            .finish(control)
            .map_err(|e| format!("cannot write {e}")),
    )
}

/// Says in `result` what the requests log holds; lines the writer could not keep up with are
/// a warning, never a silent loss. The error of a log that could not be written, for the end.
pub fn note_requests_log(
    logged: Option<Result<RequestsLogged, String>>,
    result: &mut RunResult,
) -> Option<Exit> {
    match logged? {
        Ok(logged) => {
            if logged.lost > 0 {
                result.warnings.push(format!(
                    "--requests-log {}: {} of {} requests have no line: the writer fell behind \
                     the load (the totals count them all)",
                    logged.path,
                    logged.lost,
                    logged.lost + logged.lines
                ));
            }
            result.requests_log = Some(logged);
            None
        }
        Err(e) => {
            result.warnings.push(e.clone());
            Some(Exit::bad_input(e))
        }
    }
}

/// Hands the result to every sink (the JSON first of all), prints the summary, and picks the
/// exit code. The files first: a summary that cannot be printed (`| head` closed the pipe) must
/// not cost the measurement.
pub fn finish(result: &RunResult, sinks: &mut Sinks) -> Result<i32, Exit> {
    let problems = sinks.finish(result);
    crate::run::print_summary(result);
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
