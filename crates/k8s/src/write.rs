//! A bundle's manifests into a folder (`herd k8s render -o DIR`), the Secret readable by its
//! owner only, and what to do next.

use crate::{Bundle, Manifests};
use std::path::Path;
use std::time::Duration;

impl Manifests {
    /// `00-configmap.yaml`, `01-job.yaml` and, when the workload has anything secret,
    /// `00-secret.yaml` (mode 0600); a Secret left there by an earlier render is removed, or
    /// it would be applied with these manifests.
    pub fn write_to(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let secret_path = dir.join("00-secret.yaml");
        match &self.secret {
            Some(content) => write_private(&secret_path, content)?,
            None => match std::fs::remove_file(&secret_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!(
                        "cannot remove the old {}: {e}",
                        secret_path.display()
                    ))
                }
                _ => {}
            },
        }
        for (f, content) in [
            ("00-configmap.yaml", &self.config_map),
            ("01-job.yaml", &self.job),
        ] {
            let path = dir.join(f);
            std::fs::write(&path, content)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(())
    }
}

impl Bundle {
    /// What was written into `dir` and what to do next: apply now (the pods start `start_in`
    /// from the render), then collect.
    pub fn next_steps(&self, dir: &Path, shards: u64, start_in: Duration, secret: bool) -> String {
        let mut out = String::new();
        if secret {
            out.push_str(&format!(
                "wrote {}: it holds credentials (readable by you only): keep it out of version control\n",
                dir.join("00-secret.yaml").display()
            ));
        }
        out.push_str(&format!(
            "wrote {dir}/00-configmap.yaml and {dir}/01-job.yaml: Job {name}, {shards} shards, starting at {start}\n\
             next: kubectl apply -f {dir}/   (now: the start is in {lead})\n\
             then: herd k8s collect {name}{ns} -o total.json\n",
            dir = dir.display().to_string().trim_end_matches('/'),
            name = self.name,
            start = self.start_at,
            lead = humantime::format_duration(start_in),
            ns = self.namespace.as_ref().map(|n| format!(" --namespace {n}")).unwrap_or_default(),
        ));
        out
    }
}

/// A file only its owner can read: it holds credentials.
fn write_private(path: &Path, content: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
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

/// On a cluster a target on 127.0.0.1 is each pod itself: the run would measure herd.
pub fn loopback_warning(target: &str) -> Option<String> {
    crate::check::loopback_host(target).map(|host| format!(
        "warning: the target {host} is the local machine: on the cluster each pod would load itself, not your server; give the server's address as the pods see it (a Service name such as http://shop.default.svc:8080)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_secret_is_its_owners_alone_and_a_stale_one_goes() {
        let dir = tempfile::tempdir().unwrap();
        let with = Manifests {
            secret: Some("kind: Secret\n".into()),
            config_map: "kind: ConfigMap\n".into(),
            job: "kind: Job\n".into(),
        };
        with.write_to(dir.path()).unwrap();
        let secret = dir.path().join("00-secret.yaml");
        let mode = std::fs::metadata(&secret).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let without = Manifests {
            secret: None,
            ..with
        };
        without.write_to(dir.path()).unwrap();
        assert!(!secret.exists());
        assert!(dir.path().join("01-job.yaml").exists());
        assert!(loopback_warning("http://127.0.0.1:8080/").is_some());
        assert!(loopback_warning("http://shop.default.svc/").is_none());
    }
}
