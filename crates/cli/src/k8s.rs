//! `herd k8s render` and `herd k8s collect`: the files written and what is printed;
//! the bundle, the manifests and the merge of the pods' logs are herd-k8s's.

use crate::exit::Exit;
use herd_args::k8s::{CollectArgs, K8sArgs, K8sCommand, RenderArgs};
use herd_k8s::Bundle;
use std::time::SystemTime;

pub fn cmd(a: &K8sArgs) -> Result<i32, Exit> {
    match &a.command {
        K8sCommand::Render(r) => render(r, SystemTime::now()).map(|()| crate::exit::OK),
        K8sCommand::Collect(c) => collect(c),
    }
}

fn render(a: &RenderArgs, now: SystemTime) -> Result<(), Exit> {
    let options = a.options();
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
    problems.extend(a.problems());
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
    let start = herd_run::parse_start_at(&format!("+{}s", a.start_in.as_secs_f64()), now)
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
