//! `herd k8s render` and `herd k8s collect`: a sharded run on Kubernetes with nothing but an
//! Indexed Job and `kubectl logs`. No operator, no coordinator, nothing needing cluster-admin.

use crate::exit::Exit;
use crate::k8s_manifest::{config_map, job, secret, Spec};
use clap::{Args, Subcommand};
pub use herd_workload::needs::{needs, DataFile};
use std::path::{Path, PathBuf};
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

/// A DNS-1123 name: lowercase letters, digits and dashes, at most `max` long.
fn dns_name(s: &str, max: usize) -> String {
    let mut out: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    out.truncate(max);
    out.trim_matches('-').to_owned()
}

/// A ConfigMap key for a path: keys allow `[-._a-zA-Z0-9]` only.
fn key(path: &str) -> String {
    path.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn render(a: &RenderArgs, now: SystemTime) -> Result<(), Exit> {
    let mut problems = Vec::new();
    if a.shards == 0 {
        problems.push("--shards must be at least 1".to_owned());
    }
    if a.shards > 100_000 {
        problems.push("--shards: an Indexed Job runs at most 100000 pods".to_owned());
    }
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
    let name = a.name.clone().unwrap_or_else(|| {
        let stem = a.plan.file_stem().and_then(|s| s.to_str()).unwrap_or("run");
        format!("herd-{}", dns_name(stem, 40))
    });
    if name.is_empty() || name.len() > 52 || dns_name(&name, 63) != name {
        problems.push(format!(
            "--name `{name}` is not a Kubernetes name: lowercase letters, digits and dashes, at most 52 characters"
        ));
    }
    if let Some(ns) = &a.namespace {
        problems.extend(crate::k8s_check::namespace(ns).err());
    }
    problems.extend(crate::k8s_check::cpu(&a.cpu).err());
    problems.extend(crate::k8s_check::memory(&a.memory).err());
    problems.extend(crate::k8s_check::image(&a.image).err());
    if let Some(url) = &a.prometheus_remote_write {
        problems.extend(crate::k8s_check::remote_write(url).err());
    }
    if let Some(url) = &a.otlp {
        problems.extend(crate::k8s_check::otlp(url).err());
    }
    if !problems.is_empty() {
        return Err(Exit::bad_input(problems.join("\n")));
    }
    let (file, text) = (w.expect("checked"), text.expect("checked"));
    // The plan must be valid before pods are scheduled to run it; but its target may be a name
    // only the cluster resolves (shop.default.svc), so that alone is not a problem here.
    match herd_workload::Workload::load(&file) {
        Ok(w) => warn_loopback(&w.target().to_string()),
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
    let base = file.parent().unwrap_or(Path::new("."));
    let file_name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("plan.yaml")
        .to_owned();
    let mut files = vec![(key(&file_name), file_name.clone(), text.clone())];
    let mut secret_files = Vec::new();
    let (data_files, env_names) = needs(&text);
    for DataFile { path: data, secret } in data_files {
        if Path::new(&data).is_absolute() || data.split('/').any(|p| p == "..") {
            return Err(Exit::bad_input(format!(
                "{}: the data file `{data}` is outside the workload's folder: keep data files beside it so they travel with it",
                file.display()
            )));
        }
        let content = std::fs::read_to_string(base.join(&data)).map_err(|e| {
            Exit::bad_input(format!(
                "cannot read the data file {}: {e}",
                base.join(&data).display()
            ))
        })?;
        let into = if secret {
            &mut secret_files
        } else {
            &mut files
        };
        into.push((key(&data), data, content));
    }
    // The values were checked to be set when the workload compiled above.
    let env: Vec<(String, String)> = env_names
        .into_iter()
        .map(|n| {
            let v = std::env::var(&n).unwrap_or_default();
            (n, v)
        })
        .collect();
    let sizes = [
        (
            "the workload and its data files",
            "ConfigMap",
            files.iter().map(|f| f.2.len()).sum::<usize>(),
        ),
        (
            "the secret data files and values",
            "Secret",
            secret_files.iter().map(|f| f.2.len()).sum::<usize>()
                + env.iter().map(|e| e.1.len()).sum::<usize>(),
        ),
    ];
    for (what, kind, size) in sizes {
        if size > 900 * 1024 {
            return Err(Exit::bad_input(format!(
                "{what} are {} KiB: a {kind} holds at most 1 MiB; use smaller data files",
                size / 1024
            )));
        }
    }
    let start = crate::shard_args::parse_start_at(&format!("+{}s", a.start_in.as_secs_f64()), now)
        .map_err(Exit::bad_input)?;
    let spec = Spec {
        name: name.clone(),
        namespace: a.namespace.clone(),
        image: a.image.clone(),
        shards: a.shards,
        cpu: a.cpu.clone(),
        memory: a.memory.clone(),
        start_at: humantime::format_rfc3339_seconds(start).to_string(),
        workload: file_name,
        files,
        secret_files,
        env,
        remote_write: a.prometheus_remote_write.clone(),
        otlp: a.otlp.clone(),
    };
    std::fs::create_dir_all(&a.output)
        .map_err(|e| Exit::bad_input(format!("cannot create {}: {e}", a.output.display())))?;
    let secret_path = a.output.join("00-secret.yaml");
    match secret(&spec) {
        Some(content) => write_private(&secret_path, &content)?,
        // A Secret left by an earlier render would be applied with these manifests.
        None => match std::fs::remove_file(&secret_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Exit::bad_input(format!(
                    "cannot remove the old {}: {e}",
                    secret_path.display()
                )))
            }
            _ => {}
        },
    }
    for (f, content) in [
        ("00-configmap.yaml", config_map(&spec)),
        ("01-job.yaml", job(&spec)),
    ] {
        let path = a.output.join(f);
        std::fs::write(&path, content)
            .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", path.display())))?;
    }
    if secret(&spec).is_some() {
        println!(
            "wrote {}: it holds credentials (readable by you only): keep it out of version control",
            secret_path.display()
        );
    }
    println!(
        "wrote {dir}/00-configmap.yaml and {dir}/01-job.yaml: Job {name}, {n} shards, starting at {start}\n\
         next: kubectl apply -f {dir}/   (now: the start is in {lead})\n\
         then: herd k8s collect {name}{ns} -o total.json",
        dir = a.output.display().to_string().trim_end_matches('/'),
        n = a.shards,
        start = spec.start_at,
        lead = humantime::format_duration(a.start_in),
        ns = a.namespace.as_ref().map(|n| format!(" --namespace {n}")).unwrap_or_default(),
    );
    Ok(())
}

/// On a cluster a target on 127.0.0.1 is each pod itself: the run would measure herd.
fn warn_loopback(target: &str) {
    if let Some(host) = crate::k8s_check::loopback_host(target) {
        eprintln!(
            "herd: warning: the target {host} is the local machine: on the cluster each pod would load itself, not your server; give the server's address as the pods see it (a Service name such as http://shop.default.svc:8080)"
        );
    }
}

/// A file only its owner can read: it holds credentials.
fn write_private(path: &Path, content: &str) -> Result<(), Exit> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |e: std::io::Error| Exit::bad_input(format!("cannot write {}: {e}", path.display()));
    // Removed first: an existing file would keep its wider permissions.
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(e)),
        _ => {}
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(content.as_bytes()))
        .map_err(fail)
}

/// Pod logs: (pod name, text), from kubectl or a folder of saved logs.
fn logs(a: &CollectArgs) -> Result<Vec<(String, String)>, Exit> {
    if let Some(dir) = &a.from_logs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Exit::bad_input(format!("cannot read {}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        entries.sort();
        return entries
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| Exit::bad_input(format!("cannot read {}: {e}", p.display())))?;
                Ok((p.display().to_string(), text))
            })
            .collect();
    }
    let ns: Vec<String> = a
        .namespace
        .iter()
        .flat_map(|n| ["--namespace".to_owned(), n.clone()])
        .collect();
    let kubectl = |args: &[&str]| -> Result<String, Exit> {
        let out = std::process::Command::new("kubectl")
            .args(args)
            .args(&ns)
            .output()
            .map_err(|e| {
                Exit::bad_input(format!(
                    "cannot run kubectl: {e} (install it, or pass --from-logs DIR)"
                ))
            })?;
        if !out.status.success() {
            return Err(Exit::bad_input(format!(
                "kubectl {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let selector = format!("job-name={}", a.job);
    let pods = kubectl(&["get", "pods", "-l", &selector, "-o", "name"])?;
    let pods: Vec<&str> = pods
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if pods.is_empty() {
        return Err(Exit::bad_input(format!(
            "no pods of Job {} found: check its name and --namespace (kubectl get jobs)",
            a.job
        )));
    }
    pods.iter()
        .map(|p| Ok((p.to_string(), kubectl(&["logs", p])?)))
        .collect()
}

fn collect(a: &CollectArgs) -> Result<i32, Exit> {
    crate::merge_cmd::check_output(a.output.as_deref())?;
    let mut merge = herd_result::merge::Merge::new();
    let mut found = 0;
    for (pod, text) in logs(a)? {
        let blocks = herd_result::frame::extract(&text);
        if blocks.is_empty() {
            eprintln!("herd: {pod}: no result in its log (it failed or started too late): its shard counts as missing");
        }
        for block in blocks {
            match block.map(|b| herd_result::parse_json(&String::from_utf8_lossy(&b), &pod)) {
                Ok(Ok(r)) => {
                    found += 1;
                    merge.add(&pod, r)
                }
                Ok(Err(e)) => eprintln!("herd: {pod}: {e}: its shard counts as missing"),
                Err(e) => eprintln!("herd: {pod}: {e}: its shard counts as missing"),
            }
        }
    }
    if found == 0 {
        return Err(Exit::bad_input(format!(
            "no results found in the logs of Job {}",
            a.job
        )));
    }
    let merged = merge.finish().map_err(|e| Exit::bad_input(e.to_string()))?;
    crate::store_cmd::keep_at(a.store.as_deref(), &merged)?;
    crate::merge_cmd::conclude(&merged, a.output.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(dns_name("Shop_Test.v2", 40), "shop-test-v2");
        assert_eq!(key("data/skus.csv"), "data_skus.csv");
    }
}
