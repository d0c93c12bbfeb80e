//! herd's workload language: a YAML file of scenarios, test data, load stages and thresholds,
//! compiled to the engine's plain-data [`Plan`] and a [`Script`](herd_engine::Script) that
//! plays the virtual users (docs/workload.md).
//!
//! The pipeline is file -> YAML tree with positions -> typed drafts -> [`Diagnostics`] (every
//! problem at once, `file:line:col: message (hint)`) or a [`Workload`]. What can be done before
//! the run is: templates are split into literal pieces and holes once, requests without holes
//! are serialized once, and responses are kept only by steps that read them (extraction, body
//! checks, cookies, redirects).
//!
//! ```no_run
//! use herd_workload::Workload;
//! let w = Workload::load("shop.yaml".as_ref()).unwrap_or_else(|d| panic!("{d}"));
//! let plan = w.plan(2);
//! println!("{} request names, {:?}", w.names().len(), plan.stages);
//! // engine::run(&plan, |_| transport.clone(), |_| w.script(), control, |_| {})
//! ```

mod compile;
mod cookie;
mod data;
mod diag;
mod expr;
#[cfg(test)]
mod expr_tests;
mod extract;
mod fault;
mod func;
mod grpc_call;
mod hole;
mod judge;
mod load;
mod lua;
mod multipart;
pub mod needs;
mod program;
mod read;
mod redirect;
mod resolve;
mod script;
mod sockets;
mod step;
mod tally;
mod template;
mod think;
mod urls;
mod ws_step;
pub mod yaml;

pub use diag::{did_you_mean, Diag, Diagnostics, Pos};
pub use extract::JsonPath;
pub use fault::Fault;
pub use load::{profile, LoadPlan};
pub use script::WorkloadScript;
pub use tally::{CheckTally, ScenarioTally, Tally};
pub use urls::UrlDefaults;

use herd_engine::{Load, Plan};
use herd_http::Target;
use herd_result::Criterion;
use program::Program;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A compiled workload: what to run and how to report it.
pub struct Workload {
    program: Arc<Program>,
    /// `None` for a URL file, whose load comes from flags.
    pub load: Option<LoadPlan>,
    pub timeout: Duration,
    /// `defaults: event_timeout`: the longest wait for an event stream's next event.
    pub event_timeout: Option<Duration>,
    pub thresholds: Vec<Criterion>,
    pub file: PathBuf,
    /// `protocol: h2`: the file asks for HTTP/2 (`--http2` does too).
    pub http2: bool,
    /// The file's own `target:` when the command line gave another (`--target`).
    pub retargeted_from: Option<String>,
    /// `faults:`: toxics the run adds to a fault proxy and removes, on its timeline.
    pub faults: Vec<Fault>,
    /// `proxy_api:`: where the fault proxy's API listens (`$TOXIPROXY_URL` wins).
    pub proxy_api: Option<String>,
}

impl Workload {
    fn new(
        program: Program,
        load: Option<LoadPlan>,
        timeout: Duration,
        thresholds: Vec<Criterion>,
        file: &Path,
    ) -> Workload {
        Workload {
            program: Arc::new(program),
            load,
            timeout,
            event_timeout: None,
            thresholds,
            file: file.to_owned(),
            http2: false,
            retargeted_from: None,
            faults: Vec::new(),
            proxy_api: None,
        }
    }

    /// Reads and compiles a workload file; CSV paths are relative to its folder.
    pub fn load(path: &Path) -> Result<Workload, Diagnostics> {
        Workload::load_at(path, None)
    }

    /// [`Workload::load`] with its requests sent to `target` instead of the file's `target:`
    /// (Artillery's `--target`): the same scenarios against another host.
    pub fn load_at(path: &Path, target: Option<&str>) -> Result<Workload, Diagnostics> {
        let src = std::fs::read_to_string(path).map_err(|e| {
            Diagnostics::new(
                path,
                vec![Diag::new(
                    Pos { line: 1, col: 1 },
                    format!("cannot read the workload file: {e}"),
                )],
            )
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Workload::compile_at(&src, path, base, target)
    }

    /// Compiles workload text; `file` names it in messages, `base` resolves CSV paths.
    pub fn compile(src: &str, file: &Path, base: &Path) -> Result<Workload, Diagnostics> {
        Workload::compile_at(src, file, base, None)
    }

    fn compile_at(
        src: &str,
        file: &Path,
        base: &Path,
        target: Option<&str>,
    ) -> Result<Workload, Diagnostics> {
        let c = compile::compile(src, file, base, target)?;
        let mut w = Workload::new(c.program, Some(c.load), c.timeout, c.thresholds, file);
        w.http2 = c.http2;
        w.event_timeout = c.event_timeout;
        w.retargeted_from = c.retargeted_from;
        w.faults = c.faults;
        w.proxy_api = c.proxy_api;
        Ok(w)
    }

    /// Reads a siege URL file (`URL [POST data]` per line): one scenario per URL, walked in
    /// order by every user. The load comes from flags.
    pub fn url_file(path: &Path, defaults: &UrlDefaults) -> Result<Workload, Diagnostics> {
        let program = urls::read(path, defaults)?;
        Ok(Workload::new(
            program,
            None,
            Duration::from_secs(10),
            Vec::new(),
            path,
        ))
    }

    /// The engine plan of the file's load; `threads` is used when the file does not say.
    /// Panics for a URL file, which has no load of its own.
    pub fn plan(&self, threads: usize) -> Plan {
        let l = self.load.as_ref().expect("a workload file has a load");
        Plan {
            load: l.load.clone(),
            duration: l.duration,
            requests: l.iterations,
            warmup: l.warmup,
            threads: l.threads.unwrap_or(threads),
            timeout: self.timeout,
            event_timeout: self.event_timeout,
            calls_per_conn: None,
            connections: None,
            pipeline: 1,
            names: self.program.names.len(),
            stages: l.stages.clone(),
            shard: None,
            late: std::time::Duration::ZERO,
            arrivals: None,
            arrivals_period: None,
            process: l.process,
            seed: self.program.seed,
            in_turn: false,
        }
    }

    /// The data sources that give each user its own row (`pick: per-user`), with their row
    /// counts: user `u` of the whole run keeps row `u mod rows`, so with more users than rows,
    /// users (and shards) share rows.
    pub fn per_user_rows(&self) -> Vec<(&str, u64)> {
        use data::{Kind, Pick};
        self.program
            .sources
            .iter()
            .filter_map(|s| match &s.kind {
                Kind::Table {
                    rows,
                    pick: Pick::PerUser,
                    ..
                } => Some((s.name.as_str(), rows.len() as u64)),
                Kind::Values {
                    values,
                    pick: Pick::PerUser,
                } => Some((s.name.as_str(), values.len() as u64)),
                _ => None,
            })
            .collect()
    }

    /// The script for one worker thread.
    pub fn script(&self) -> WorkloadScript {
        self.script_in(None)
    }

    /// The script for one worker thread of `shard` of a run (`Plan::shard`).
    pub fn script_in(&self, shard: Option<&herd_engine::segment::Shard>) -> WorkloadScript {
        WorkloadScript::new(Arc::clone(&self.program), shard.cloned())
    }

    /// Its users open WebSockets beside their HTTP requests (`ws: { connect: PATH }` steps in
    /// an http:// or https:// target's workload): HTTP/1.1's Upgrade, on connections of their
    /// own.
    pub fn sockets(&self) -> bool {
        self.program.sockets
    }

    pub fn target(&self) -> &Target {
        &self.program.target
    }

    /// Request names; `RunOutput::by_name` follows this order.
    pub fn names(&self) -> &[String] {
        &self.program.names
    }

    /// Scenario names and weights.
    pub fn scenarios(&self) -> Vec<(&str, u64)> {
        self.program
            .scenarios
            .iter()
            .map(|s| (s.name.as_str(), s.weight))
            .collect()
    }

    pub fn checks(&self) -> &[String] {
        &self.program.checks
    }

    /// Whether users walk the scenarios in order (a URL file) rather than by weight.
    pub fn walks(&self) -> bool {
        self.program.walk
    }

    /// A one-line description for `herd validate`.
    pub fn describe(&self) -> String {
        let p = &self.program;
        let n = |k: u64, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
        let load = match &self.load {
            None => String::new(),
            Some(l) => {
                let what = match l.load {
                    Load::Closed { users } => format!("closed model, up to {}", n(users, "user")),
                    Load::Open { rate, .. } => format!("open model, up to {rate} iterations/s"),
                };
                let len = match (Plan::length(&self.plan(1)), l.iterations) {
                    (Some(d), _) => format!(", {}", humantime::format_duration(d)),
                    (None, Some(n)) => format!(", {n} iterations"),
                    _ => String::new(),
                };
                format!("; {what}{len}")
            }
        };
        format!(
            "{}, {}, {}, {}{load}",
            n(p.scenarios.len() as u64, "scenario"),
            n(p.names.len() as u64, "request name"),
            n(p.checks.len() as u64, "check"),
            n(self.thresholds.len() as u64, "threshold")
        )
    }
}
