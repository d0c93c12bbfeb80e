//! `herd k8s render` and `herd k8s collect`'s flags, and the options of the bundle herd-k8s
//! makes of them.

use clap::{Args, Subcommand};
use herd_k8s::Options;
use std::path::PathBuf;

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
    #[command(after_help = crate::codes::HELP)]
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

impl RenderArgs {
    /// Every problem with the options and the URLs the pods push to (one they can reach, no
    /// password in it), the workload file aside.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = self.options().problems(&self.plan);
        if let Some(url) = &self.prometheus_remote_write {
            let shown = herd_live::metrics::remote_write::endpoint(url).map(|e| e.url);
            let checked = shown.and_then(|s| herd_k8s::check::remote_write(url, &s));
            problems.extend(checked.err());
        }
        if let Some(url) = &self.otlp {
            let t = herd_live::metrics::otlp::target(Some(url), |_| None);
            let shown = t.map(|t| t.expect("a flag is a target").endpoint.url);
            problems.extend(shown.and_then(|s| herd_k8s::check::otlp(url, &s)).err());
        }
        problems
    }

    /// The bundle's options as given.
    pub fn options(&self) -> Options {
        Options {
            shards: self.shards,
            image: self.image.clone(),
            namespace: self.namespace.clone(),
            cpu: self.cpu.clone(),
            memory: self.memory.clone(),
            name: self.name.clone(),
            remote_write: self.prometheus_remote_write.clone(),
            otlp: self.otlp.clone(),
        }
    }
}
