//! `herd k8s render` and `herd k8s collect`: the flags, the files written and what is printed;
//! the bundle, the manifests and the merge of the pods' logs are herd-k8s's.

use crate::exit::Exit;
use clap::{Args, Subcommand};
use herd_k8s::{Bundle, Options};
use std::path::PathBuf;
use std::time::SystemTime;

#[derive(Args, Debug)]
pub struct K8sArgs {
    #[command(subcommand)]
    pub command: K8sCommand,
}

#[derive(Subcommand, Debug)]
pub enum K8sCommand {
    /// Write a ConfigMap, a Secret (if the plan has secrets) and an Indexed Job that run PLAN as
    /// N shards: `kubectl apply -f DIR/`
    Render(RenderArgs),
    /// Read each pod's result from `kubectl logs` (or saved logs) and merge them
    #[command(after_help = crate::exit::HELP)]
    Collect(CollectArgs),
}

#[derive(Args, Debug)]
pub struct RenderArgs {
    /// The workload file (shop.yaml); its CSV files go into the ConfigMap with it, those marked
    /// `secret: true` and the env('NAME') values it reads into a Secret
    pub plan: PathBuf,
    /// How many shards (pods), each on its own cores
    #[arg(long, value_name = "N")]
    pub shards: u64,
    /// The herd image the pods run (see the Dockerfile)
    #[arg(long, value_name = "IMG", default_value = "herd:latest")]
    pub image: String,
    /// The start instant is now plus this much: time to pull the image and schedule the pods
    /// (apply the manifests right away)
    #[arg(long = "start-in", value_name = "TIME", default_value = "120s", value_parser = crate::values::duration)]
    pub start_in: std::time::Duration,
    /// The namespace of the ConfigMap and the Job [default: kubectl's current one]
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// CPU of each pod, requested and limited alike so each shard owns its cores
    #[arg(long, value_name = "CORES", default_value = "1")]
    pub cpu: String,
    /// Memory of each pod, requested and limited alike
    #[arg(long, value_name = "BYTES", default_value = "512Mi")]
    pub memory: String,
    /// The Job's name [default: herd-PLAN, from the file name]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The folder to write the manifests to
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// Every pod pushes its series to this remote-write URL as the run goes (each labelled with
    /// its shard): the receiver's `/api/v1/write` address, one the pods can reach
    #[arg(long = "prometheus-remote-write", value_name = "URL")]
    pub prometheus_remote_write: Option<String>,
    /// Every pod pushes its series to this OTLP/HTTP receiver as the run goes (the resource
    /// names its shard): the collector's address the pods reach, e.g.
    /// `http://otel-collector.monitoring:4318`
    #[arg(long = "otlp", value_name = "URL")]
    pub otlp: Option<String>,
}

#[derive(Args, Debug)]
pub struct CollectArgs {
    /// The Job's name, as `herd k8s render` printed it
    pub job: String,
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Read saved pod logs from this folder (one file per pod) instead of running kubectl
    #[arg(long = "from-logs", value_name = "DIR")]
    pub from_logs: Option<PathBuf>,
    /// Write the merged result as JSON
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also keep the merged run in a store of runs: a SQLite file or postgres://...
    /// (default: $HERD_STORE; docs/history.md)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

pub fn cmd(a: &K8sArgs) -> Result<i32, Exit> {
    match &a.command {
        K8sCommand::Render(r) => render(r, SystemTime::now()).map(|()| crate::exit::OK),
        K8sCommand::Collect(c) => collect(c),
    }
}

fn render(a: &RenderArgs, now: SystemTime) -> Result<(), Exit> {
    let options = Options {
        shards: a.shards,
        image: a.image.clone(),
        namespace: a.namespace.clone(),
        cpu: a.cpu.clone(),
        memory: a.memory.clone(),
        name: a.name.clone(),
        remote_write: a.prometheus_remote_write.clone(),
        otlp: a.otlp.clone(),
    };
    let mut problems = Vec::new();
    let w = herd_run::workload_path(&a.plan.to_string_lossy());
    let text = match &w {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| problems.push(format!("cannot read {}: {e}", p.display())))
            .ok(),
        None => {
            problems.push(format!(
                "{} is not a workload file: herd k8s render runs workload files (shop.yaml), see docs/workload.md",
                a.plan.display()
            ));
            None
        }
    };
    problems.extend(options.problems(&a.plan));
    if let Some(url) = &a.prometheus_remote_write {
        let shown = herd_live::metrics::remote_write::endpoint(url).map(|e| e.url);
        problems.extend(
            shown
                .and_then(|s| herd_k8s::check::remote_write(url, &s))
                .err(),
        );
    }
    if let Some(url) = &a.otlp {
        let t = herd_live::metrics::otlp::target(Some(url), |_| None);
        let shown = t.map(|t| t.expect("a flag is a target").endpoint.url);
        problems.extend(shown.and_then(|s| herd_k8s::check::otlp(url, &s)).err());
    }
    if !problems.is_empty() {
        return Err(Exit::bad_input(problems.join("\n")));
    }
    let (file, text) = (w.expect("checked"), text.expect("checked"));
    // The plan must be valid before pods are scheduled to run it; but its target may be a name
    // only the cluster resolves (shop.default.svc), so that alone is not a problem here.
    match herd_workload::Workload::load(&file) {
        Ok(w) => {
            if let Some(warning) = herd_k8s::loopback_warning(&w.target().to_string()) {
                eprintln!("herd: {warning}");
            }
        }
        Err(d) => {
            let unresolved = |m: &str| m.starts_with("cannot resolve host");
            if d.problems.iter().all(|p| unresolved(&p.message)) {
                eprintln!(
                    "herd: note: the target does not resolve from here; the pods must resolve it"
                );
            } else {
                herd_run::compile_workload(&file)?;
            }
        }
    }
    let start = crate::shard_args::parse_start_at(&format!("+{}s", a.start_in.as_secs_f64()), now)
        .map_err(Exit::bad_input)?;
    // The values were checked to be set when the workload compiled above.
    let env = |n: &str| std::env::var(n).unwrap_or_default();
    let bundle =
        Bundle::from_workload(&file, text, &options, start, env).map_err(Exit::bad_input)?;
    write(a, &bundle)
}

/// The manifests into `-o DIR`, and what to do next.
fn write(a: &RenderArgs, bundle: &Bundle) -> Result<(), Exit> {
    let manifests = bundle.manifests();
    manifests.write_to(&a.output).map_err(Exit::bad_input)?;
    let secret = manifests.secret.is_some();
    print!(
        "{}",
        bundle.next_steps(&a.output, a.shards, a.start_in, secret)
    );
    Ok(())
}

fn collect(a: &CollectArgs) -> Result<i32, Exit> {
    crate::outputs::check_path("-o", a.output.as_deref())?;
    let logs = match &a.from_logs {
        Some(dir) => herd_k8s::saved_logs(dir),
        None => herd_k8s::pod_logs(&a.job, a.namespace.as_deref()),
    }
    .map_err(Exit::bad_input)?;
    let merged =
        herd_k8s::merge_logs(&a.job, logs, |w| eprintln!("herd: {w}")).map_err(Exit::bad_input)?;
    crate::store_cmd::keep_at(a.store.as_deref(), &merged)?;
    crate::merge_cmd::conclude(&merged, a.output.as_deref())
}
