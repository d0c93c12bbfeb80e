//! `--watch-*`: the server's side of a run, for run, sweep, capacity and replay alike. The flags
//! become a `WatchPlan` in the `RunSpec`; herd-run checks it before any load is sent (a pid that
//! does not exist, an exporter that does not answer: exit 2) and watches beside the load.

use clap::Args;
use herd_monitor::{ProcessTarget, WatchPlan};

#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Watching the server")]
pub struct WatchArgs {
    /// Read this process from /proc each second: CPU %, memory (RSS), threads, open files,
    /// context switches (repeatable)
    #[arg(long = "watch-pid", value_name = "PID")]
    pub pids: Vec<u32>,

    /// The same for every process of this name, summed: nginx's master and workers (repeatable).
    /// Every user's processes of the name count; the summary says how many separate process
    /// trees matched, and --watch-parent narrows to one
    #[arg(long = "watch-name", value_name = "NAME")]
    pub names: Vec<String>,

    /// With --watch-name: count only processes in this pid's tree (the pid itself and its
    /// descendants), e.g. one nginx's master among several
    #[arg(long = "watch-parent", value_name = "PID", requires = "names")]
    pub parent: Option<u32>,

    /// Scrape this Prometheus endpoint each second, e.g. node_exporter's
    /// http://127.0.0.1:9100/metrics or the application's own (repeatable)
    #[arg(long = "watch-prometheus", value_name = "URL")]
    pub prometheus: Vec<String>,

    /// A series to keep from the endpoints: NAME or NAME{label="value"}; counters are kept as
    /// per-second rates (repeatable) [default: process_cpu_seconds_total,
    /// process_resident_memory_bytes, process_open_fds, node_load1, node_memory_MemAvailable_bytes,
    /// those the endpoint has]
    #[arg(long = "watch-metric", value_name = "SERIES")]
    pub metrics: Vec<String>,
}

impl WatchArgs {
    /// What to watch, as herd-run takes it.
    pub fn plan(&self) -> WatchPlan {
        let pids = self.pids.iter().map(|&p| ProcessTarget::Pid(p));
        let names = self.names.iter().map(|n| ProcessTarget::Name(n.clone()));
        WatchPlan {
            processes: pids.chain(names).collect(),
            parent: self.parent,
            exporters: self.prometheus.clone(),
            metrics: self.metrics.clone(),
            ..WatchPlan::default()
        }
    }
}
