//! The output flags every command that sends load shares (`run`, `replay`, `sweep`, `capacity`,
//! `demo`, `grpc`, a shard), and the plain-data `OutputSpec` herd-live builds the outputs from.

use herd_live::OutputSpec;
use std::path::PathBuf;

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
    pub keep: crate::store::StoreFlags,
}

impl OutputArgs {
    /// The outputs the flags ask for, as plain data; the OpenTelemetry variables (`env`'s
    /// values) turn OTLP on without the flag. Nothing tells them of interrupts yet.
    pub fn spec(&self, env: impl Fn(&str) -> Option<String>) -> Result<OutputSpec, String> {
        let otlp = herd_live::metrics::otlp::target(self.otlp.as_deref(), env)?;
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
            interrupts: None,
        })
    }
}
