//! `herd k8s render`: the manifests are checked offline and strictly (unknown fields refused)
//! against the Kubernetes API schemas of two releases, with the `kubernetes-validate` package
//! (scripts/check installs it; this test installs it with pip if it is missing).

use crate::common::{refused, run_herd, stderr, stdout, TempDir};
use std::process::Command;

/// Kubernetes releases the manifests must be valid for: the first with per-index backoff on by
/// default (1.29) and the newest the validator knows.
const VERSIONS: [&str; 2] = ["1.29.0", "1.37.0"];

/// Asserts that the manifests `files` are valid, strictly, for each of [`VERSIONS`].
pub fn assert_valid(files: &[std::path::PathBuf]) {
    for v in VERSIONS {
        let o = validator()
            .args(["--strict", "-k", v])
            .args(files)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "Kubernetes {v}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

fn validator() -> Command {
    let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
    if !ok(Command::new("kubernetes-validate").arg("--version")) {
        let pip = |extra: &[&str]| {
            Command::new("python3")
                .args(["-m", "pip", "install", "-q", "kubernetes-validate"])
                .args(extra)
                .status()
                .is_ok_and(|s| s.success())
        };
        assert!(
            pip(&[]) || pip(&["--break-system-packages"]),
            "cannot install kubernetes-validate with pip: install it (pip install kubernetes-validate)"
        );
    }
    Command::new("kubernetes-validate")
}

fn workload(dir: &TempDir) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.path("data")).unwrap();
    let users: String = std::iter::once("name,password\n".to_owned())
        .chain((0..10).map(|i| format!("user{i},\"pw {i}: \\\"quoted\\\"\"\n")))
        .collect();
    std::fs::write(dir.path("data/users.csv"), users).unwrap();
    let file = dir.path("shop.yaml");
    std::fs::write(
        &file,
        "target: http://shop.example.test\n\
         load: { model: closed, stages: [{ duration: 30s, target: 10 }] }\n\
         data:\n  user: { csv: data/users.csv, pick: per-user }\n\
         scenarios:\n  - name: login\n    steps:\n      - get: /login?u={{user.name}}\n\
         thresholds: [\"p95 < 300ms\"]\n",
    )
    .unwrap();
    file
}

#[test]
fn rendered_manifests_are_valid_kubernetes_for_two_releases() {
    let dir = TempDir::new("k8s");
    let file = workload(&dir);
    let out = dir.path("manifests");
    let o = run_herd(&[
        "k8s",
        "render",
        file.to_str().unwrap(),
        "--shards",
        "8",
        "--image",
        "registry.example/herd:0.1",
        "--namespace",
        "load",
        "--cpu",
        "2",
        "--prometheus-remote-write",
        "http://prometheus.monitoring:9090/api/v1/write",
        "--otlp",
        "http://otel-collector.monitoring:4318",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("kubectl apply -f"), "{}", stdout(&o));
    let files = [out.join("00-configmap.yaml"), out.join("01-job.yaml")];
    assert_valid(&files);
    let job = std::fs::read_to_string(&files[1]).unwrap();
    for want in [
        "completionMode: Indexed",
        "completions: 8",
        "parallelism: 8",
        "backoffLimitPerIndex: 0",
        "podReplacementPolicy: Failed",
        "values: [7]",
        "topologyKey: kubernetes.io/hostname",
        "\"--shard-from-env\"",
        "\"JOB_COMPLETION_INDEX\"",
        "\"/plan/shop.yaml\"",
        "cpu: \"2\"",
        "runAsNonRoot: true",
        "path: \"data/users.csv\"",
        // Every pod pushes its series, labelled with its own shard.
        "\"--prometheus-remote-write\"\n            - \"http://prometheus.monitoring:9090/api/v1/write\"",
        "\"--otlp\"\n            - \"http://otel-collector.monitoring:4318\"",
    ] {
        assert!(job.contains(want), "{want} not in\n{job}");
    }
    assert_eq!(job.matches("cpu: \"2\"").count(), 2, "requests = limits");
    // Nothing cluster-wide: no roles, bindings or namespaces are created.
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains("ClusterRole") && !text.contains("kind: Namespace"));
    }
    let cm = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        cm.contains("\"data_users.csv\":") && cm.contains("pw 3"),
        "{cm}"
    );
}

#[test]
fn render_refuses_what_cannot_run_on_a_cluster() {
    let dir = TempDir::new("k8s-bad");
    let file = workload(&dir);
    let out = dir.path("m");
    let f = file.to_str().unwrap();
    for (args, want) in [
        (
            vec!["k8s", "render", f, "--shards", "0", "-o"],
            "at least 1",
        ),
        (
            vec!["k8s", "render", "http://x/", "--shards", "2", "-o"],
            "not a workload file",
        ),
        (
            vec![
                "k8s", "render", f, "--shards", "2", "--name", "Bad_Name", "-o",
            ],
            "not a Kubernetes name",
        ),
        (
            vec![
                "k8s",
                "render",
                f,
                "--shards",
                "2",
                "--namespace",
                "Bad_NS",
                "-o",
            ],
            "--namespace `Bad_NS` is not a Kubernetes namespace",
        ),
        (
            vec!["k8s", "render", f, "--shards", "2", "--cpu", "abc", "-o"],
            "--cpu `abc` is not a CPU quantity",
        ),
        (
            vec![
                "k8s",
                "render",
                f,
                "--shards",
                "2",
                "--prometheus-remote-write",
                "http://u:secret@prom:9090/api/v1/write",
                "-o",
            ],
            "credentials in the URL",
        ),
        (
            vec![
                "k8s",
                "render",
                f,
                "--shards",
                "2",
                "--prometheus-remote-write",
                "http://127.0.0.1:9090/api/v1/write",
                "-o",
            ],
            "each pod would push to itself",
        ),
        (
            vec![
                "k8s",
                "render",
                f,
                "--shards",
                "2",
                "--otlp",
                "http://u:secret@otel:4318",
                "-o",
            ],
            "--otlp http://***@otel:4318/v1/metrics: credentials in the URL",
        ),
        (
            vec![
                "k8s", "render", f, "--shards", "2", "--memory", "lots", "-o",
            ],
            "--memory `lots` is not a memory quantity",
        ),
        (
            vec![
                "k8s",
                "render",
                f,
                "--shards",
                "2",
                "--image",
                "bad image name!",
                "-o",
            ],
            "--image `bad image name!` is not an image reference",
        ),
    ] {
        let mut all = args.clone();
        all.push(out.to_str().unwrap());
        refused(&all, want);
    }
    assert!(
        !out.exists(),
        "nothing is written when the flags are refused"
    );
    // Every problem at once, not one per try.
    let all = refused(
        &[
            "k8s",
            "render",
            f,
            "--shards",
            "2",
            "--namespace",
            "Bad_NS",
            "--cpu",
            "abc",
            "--image",
            "bad image name!",
            "-o",
            out.to_str().unwrap(),
        ],
        "--namespace",
    );
    assert!(stderr(&all).contains("--cpu") && stderr(&all).contains("--image"));
}
