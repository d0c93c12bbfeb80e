//! `herd k8s render` with secrets: CSV files a workload marks `secret: true` and the values its
//! templates read with `env()` go into a Kubernetes Secret, never into the ConfigMap or the
//! Job's arguments; and a target on this machine is called out, as every pod would load itself.

use super::k8s::assert_valid;
use crate::common::{herd, stderr, stdout, TempDir};
use std::path::{Path, PathBuf};

const PASSWORD: &str = "pw-Zq81-private";
const TOKEN: &str = "tok-7f3e9a-private";

fn workload(dir: &TempDir, target: &str) -> PathBuf {
    let users: String = std::iter::once("name,password\n".to_owned())
        .chain((0..5).map(|i| format!("user{i},{PASSWORD}{i}\n")))
        .collect();
    std::fs::write(dir.path("users.csv"), users).unwrap();
    std::fs::write(dir.path("skus.csv"), "sku\nA1\nB2\n").unwrap();
    let file = dir.path("shop.yaml");
    std::fs::write(
        &file,
        format!(
            "target: {target}\n\
             load: {{ model: closed, users: 2, duration: 10s }}\n\
             defaults: {{ headers: {{ X-Api-Key: \"{{{{ env('SHOP_API_TOKEN') }}}}\" }} }}\n\
             data:\n  user: {{ csv: users.csv, secret: true }}\n  sku: {{ csv: skus.csv }}\n\
             scenarios:\n  - name: login\n    steps:\n      - post: /login\n        form: {{ u: \"{{{{user.name}}}}\", p: \"{{{{user.password}}}}\" }}\n      - get: /item/{{{{sku.sku}}}}\n"
        ),
    )
    .unwrap();
    file
}

fn render(file: &Path, out: &Path, token: Option<&str>) -> std::process::Output {
    let mut c = herd();
    c.args([
        "k8s",
        "render",
        file.to_str().unwrap(),
        "--shards",
        "3",
        "-o",
    ])
    .arg(out);
    match token {
        Some(t) => c.env("SHOP_API_TOKEN", t),
        None => c.env_remove("SHOP_API_TOKEN"),
    };
    c.output().unwrap()
}

#[test]
fn secret_data_and_env_values_go_into_a_secret_and_nowhere_else() {
    let dir = TempDir::new("k8s-secret");
    let file = workload(&dir, "http://shop.default.svc:8080");
    let out = dir.path("m");
    let o = render(&file, &out, Some(TOKEN));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("00-secret.yaml"), "{}", stdout(&o));
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let (secret, cm, job) = (
        read("00-secret.yaml"),
        read("00-configmap.yaml"),
        read("01-job.yaml"),
    );
    for (name, text) in [("ConfigMap", &cm), ("Job", &job)] {
        assert!(
            !text.contains(PASSWORD) && !text.contains(TOKEN),
            "the {name} holds a secret:\n{text}"
        );
    }
    assert!(cm.contains("\"skus.csv\": \"sku\\nA1\\nB2\\n\""), "{cm}");
    assert!(
        secret.contains("kind: Secret") && secret.contains(TOKEN),
        "{secret}"
    );
    assert!(secret.contains(&format!("{PASSWORD}3")), "{secret}");
    for want in [
        "secretKeyRef:",
        "name: \"SHOP_API_TOKEN\"",
        "key: \"env.SHOP_API_TOKEN\"",
        "- secret:",
        "path: \"users.csv\"",
        "path: \"skus.csv\"",
    ] {
        assert!(job.contains(want), "{want} not in\n{job}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(out.join("00-secret.yaml"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o077,
        0,
        "the Secret's file is readable by others: {mode:o}"
    );
    let files = ["00-secret.yaml", "00-configmap.yaml", "01-job.yaml"].map(|f| out.join(f));
    assert_valid(&files);

    // The same workload without the variable set: refused, as the run itself would be.
    let o = render(&file, &dir.path("m2"), None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("SHOP_API_TOKEN is not set"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_target_on_this_machine_is_called_out() {
    let dir = TempDir::new("k8s-loopback");
    let file = workload(&dir, "http://127.0.0.1:8080");
    let o = render(&file, &dir.path("m"), Some(TOKEN));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "127.0.0.1:8080 is the local machine: on the cluster each pod would load itself"
        ),
        "{}",
        stderr(&o)
    );
    let file = workload(&dir, "http://shop.default.svc:8080");
    let o = render(&file, &dir.path("m"), Some(TOKEN));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}
