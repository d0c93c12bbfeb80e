//! `herd run FILE.yaml`, `herd run -f urls.txt` and `herd validate FILE`: a workload compiled by
//! `herd-workload` runs on the same engine as a plain URL; its result gains per-name stats,
//! scenarios, checks and thresholds.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use crate::run::{finish, prepare_run, to_result};
use crate::{interrupt, limits, progress::Live};
use clap::Args;
use herd_engine::{Control, Load, Plan, RunOutput};
use herd_http::{HttpTransport, TlsOptions};
use herd_report::{name_result, scenario_result, CheckResult, Model, RunConfig, RunResult};
use herd_workload::{UrlDefaults, Workload};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The workload file to check (nothing is sent)
    pub file: PathBuf,
}

/// The workload file named by `herd run`'s argument, if it names one rather than a URL.
pub fn workload_file(a: &RunArgs) -> Option<PathBuf> {
    workload_path(a.url.as_deref()?)
}

/// The workload file a target argument names, if it names one rather than a URL: no `://`, and
/// a `.yaml`/`.yml` name or an existing file (`herd run`, `herd sweep` and `herd capacity`).
pub fn workload_path(arg: &str) -> Option<PathBuf> {
    if arg.contains("://") {
        return None;
    }
    let p = Path::new(arg);
    let yaml = matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
    (yaml || p.is_file()).then(|| p.to_owned())
}

pub(crate) fn threads_default() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub(crate) fn compile(file: &Path) -> Result<Workload, Exit> {
    Workload::load(file).map_err(|d| {
        let n = d.problems.len();
        let problems = if n == 1 {
            "1 problem".to_owned()
        } else {
            format!("{n} problems")
        };
        Exit::bad_input(format!(
            "{}: {problems}, nothing was sent\n{d}",
            file.display()
        ))
    })
}

pub fn validate(a: &ValidateArgs) -> Result<i32, Exit> {
    let w = compile(&a.file)?;
    let plan = w.plan(threads_default());
    plan.validate()
        .map_err(|e| Exit::bad_input(format!("{}: {e}", a.file.display())))?;
    println!("{}: ok ({})", a.file.display(), w.describe());
    Ok(exit::OK)
}

/// `herd run FILE.yaml`: load settings come from the file; flags that would contradict it are
/// refused rather than silently ignored.
pub fn run_file(a: &RunArgs, file: &Path) -> Result<i32, Exit> {
    let mut clashes = Vec::new();
    let flags: [(&str, bool); 9] = [
        ("-c/--connections", a.connections.is_some()),
        ("--rate", a.rate.is_some()),
        ("-d/--duration", a.duration.is_some()),
        ("-n/--requests", a.requests.is_some()),
        ("--calls-per-conn", a.calls_per_conn.is_some()),
        ("-m/--method", a.method.is_some()),
        ("-H/--header", !a.headers.is_empty()),
        ("--body", a.body.is_some()),
        ("--body-file", a.body_file.is_some()),
    ];
    for (flag, given) in flags {
        if given {
            clashes.push(flag);
        }
    }
    if !clashes.is_empty() {
        return Err(Exit::bad_input(format!(
            "{} cannot be combined with a workload file: set the load, headers and bodies in {}",
            clashes.join(", "),
            file.display()
        )));
    }
    crate::run::check_outputs(a)?;
    let w = compile(file)?;
    let mut plan = w.plan(a.threads.unwrap_or_else(threads_default));
    plan.validate()
        .map_err(|e| Exit::bad_input(format!("{}: {e}", file.display())))?;
    let config = workload_config(&w, &plan);
    let shard = crate::shard_run::resolve(&a.shard)?;
    // The engine plays only this shard's share of the plan.
    plan.shard = shard.as_ref().map(|s| s.shard.clone());
    let control = Arc::new(Control::new());
    let hash = || crate::shard_run::workload_hash(file);
    let mut result = crate::shard_run::play(shard.as_ref(), hash, &control, |late| {
        plan.late = crate::shard_run::late_start(&plan, late)?;
        let result = execute(&w, &plan, config, a, Arc::clone(&control))?;
        Ok((result, plan.missed()))
    })?;
    result.workload = Some(file.display().to_string());
    conclude(&w, result, a)
}

/// How a workload's run is described in its result: the file's target, its plan's load.
pub(crate) fn workload_config(w: &Workload, plan: &Plan) -> RunConfig {
    RunConfig {
        url: w.target().to_string(),
        method: "workload".to_owned(),
        model: match plan.load {
            Load::Open { .. } => Model::Open,
            Load::Closed { .. } => Model::Closed,
        },
        connections: plan.max_connections(),
        rate: match plan.load {
            Load::Open { rate, .. } => Some(rate),
            Load::Closed { .. } => None,
        },
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        requests: plan.requests,
        warmup_s: plan.warmup.as_secs_f64(),
        threads: plan.effective_threads() as u64,
        timeout_s: plan.timeout.as_secs_f64(),
        calls_per_conn: None,
        headers: Vec::new(),
        body_bytes: 0,
    }
}

/// `herd run -f urls.txt`: the flags make the plan, the URL file the script. `-m`, `-H` and
/// `--body` apply to every line (a line's own method and data win), checked as for one URL.
pub fn run_urls(a: &RunArgs, urls: &Path) -> Result<i32, Exit> {
    crate::run::check_outputs(a)?;
    let read =
        |d: &UrlDefaults| Workload::url_file(urls, d).map_err(|d| Exit::bad_input(d.to_string()));
    let mut w = read(&UrlDefaults::default())?;
    let mut args = a.clone();
    args.url = Some(w.target().to_string());
    let mut prepared = prepare_run(&args)?;
    let flagged =
        a.method.is_some() || !a.headers.is_empty() || a.body.is_some() || a.body_file.is_some();
    if flagged {
        let spec = &prepared.spec;
        w = read(&UrlDefaults {
            method: Some(spec.method.clone()),
            headers: spec.headers.clone(),
            body: spec.body.clone(),
        })?;
    }
    prepared.plan.names = w.names().len();
    prepared.config.method = "url file".to_owned();
    let shard = crate::shard_run::resolve(&a.shard)?;
    prepared.plan.shard = shard.as_ref().map(|s| s.shard.clone());
    let control = Arc::new(Control::new());
    let body = std::fs::read(urls).unwrap_or_default();
    let hash = || Ok(crate::shard_run::config_hash(&prepared.config, &body));
    let mut result = crate::shard_run::play(shard.as_ref(), hash, &control, |late| {
        prepared.plan.late = crate::shard_run::late_start(&prepared.plan, late)?;
        let result = execute(
            &w,
            &prepared.plan,
            prepared.config.clone(),
            a,
            Arc::clone(&control),
        )?;
        Ok((result, prepared.plan.missed()))
    })?;
    result.workload = Some(urls.display().to_string());
    conclude(&w, result, a)
}

fn execute(
    w: &Workload,
    plan: &Plan,
    config: RunConfig,
    a: &RunArgs,
    control: Arc<Control>,
) -> Result<RunResult, Exit> {
    let watch = crate::watch::check(&a.watch)?;
    limits::ensure_fds(plan.max_connections())?;
    interrupt::cancel_on_signal(Arc::clone(&control));
    let mut live = Live::new(a.quiet).planned(crate::progress::Planned {
        duration: plan.duration.or(plan.length()),
        requests: plan.requests,
    });
    let watcher = crate::watch::start(watch, std::time::Instant::now() + plan.warmup)?;
    let options = TlsOptions {
        insecure: a.insecure,
        source: a.bind,
    };
    let result = run_plan(w, plan, config, options, control, &mut live);
    let server = crate::watch::stop(watcher);
    let mut result = result?;
    result.server = server;
    Ok(result)
}

/// Runs a workload's scripts under `plan` and returns the full result (per-name stats,
/// scenarios, checks); prints nothing but `live`. The tally starts from zero, so a workload
/// run again (a sweep's next step) counts only its own run.
pub(crate) fn run_plan(
    w: &Workload,
    plan: &Plan,
    config: RunConfig,
    options: TlsOptions,
    control: Arc<Control>,
    live: &mut Live,
) -> Result<RunResult, Exit> {
    limits::ensure_fds(plan.max_connections())?;
    let transport =
        HttpTransport::new(w.target(), options).map_err(|e| Exit::bad_input(e.to_string()))?;
    w.reset_tally();
    let out = herd_engine::run(
        plan,
        Arc::new(herd_engine::SystemClock),
        |_| transport.wire(),
        |_| w.script_in(plan.shard.as_ref()),
        control,
        |pr| live.update(pr),
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    live.clear();
    let mut result = to_result(config.url.clone(), config, plan, &out);
    add_workload(w, &out, &mut result);
    Ok(result)
}

/// Per-name stats, scenarios and checks from what the engine and the scripts counted.
pub(crate) fn add_workload(w: &Workload, out: &RunOutput, result: &mut RunResult) {
    let names = w.names();
    // With one name the engine keeps only totals: they are that name's stats.
    let by_name: Vec<_> = if out.by_name.is_empty() {
        names
            .iter()
            .map(|n| name_result(n, &out.total, out.duration))
            .collect()
    } else {
        names
            .iter()
            .zip(&out.by_name)
            .map(|(n, s)| name_result(n, s, out.duration))
            .collect()
    };
    result.by_name = by_name;
    let tally = w.tally();
    if !w.walks() {
        result.by_scenario = w
            .scenarios()
            .iter()
            .zip(&tally.scenarios)
            .map(|((name, weight), t)| scenario_result(name, *weight, t.iterations, &t.duration))
            .collect();
    }
    result.checks = w
        .checks()
        .iter()
        .zip(&tally.checks)
        .map(|(name, c)| CheckResult {
            name: name.clone(),
            passes: c.passes,
            fails: c.fails,
            sample: c.sample.clone(),
        })
        .collect();
}

/// Evaluates thresholds, prints and writes the result, and picks the exit code.
fn conclude(w: &Workload, mut result: RunResult, a: &RunArgs) -> Result<i32, Exit> {
    result.thresholds = w.thresholds.iter().map(|t| t.evaluate(&result)).collect();
    let code = finish(&result, a.json.as_deref())?;
    if result.shard.is_some() {
        crate::shard_run::print_frame(&result)?;
    }
    let sharded = result.shard.as_ref().filter(|h| h.count > 1);
    // A shard's thresholds judge a part of the load: herd merge judges the whole.
    let failed = sharded.is_none() && result.thresholds.iter().any(|t| !t.pass);
    Ok(if code == exit::OK && failed {
        exit::THRESHOLDS_FAILED
    } else {
        code
    })
}
