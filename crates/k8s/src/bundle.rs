//! A workload file and what it needs, gathered for the cluster: its data files (the secret ones
//! apart), the environment values its templates read, each within what a ConfigMap or Secret
//! holds; and the options of the Job, checked as the API server would.

use crate::manifest::{config_map, job, secret, Bundle};
use herd_workload::needs::{needs, DataFile};
use std::path::Path;
use std::time::SystemTime;

/// How the pods run the workload (`herd k8s render`'s flags).
pub struct Options {
    pub shards: u64,
    pub image: String,
    pub namespace: Option<String>,
    pub cpu: String,
    pub memory: String,
    /// The Job's name; `herd-` and the workload file's stem when not given.
    pub name: Option<String>,
    pub remote_write: Option<String>,
    pub otlp: Option<String>,
}

/// The manifests of a bundle, as YAML text.
pub struct Manifests {
    /// `00-secret.yaml`, when the workload has anything secret.
    pub secret: Option<String>,
    /// `00-configmap.yaml`
    pub config_map: String,
    /// `01-job.yaml`
    pub job: String,
}

impl Options {
    /// The Job's name for the workload `plan`.
    pub fn name(&self, plan: &Path) -> String {
        self.name.clone().unwrap_or_else(|| {
            let stem = plan.file_stem().and_then(|s| s.to_str()).unwrap_or("run");
            format!("herd-{}", dns_name(stem, 40))
        })
    }

    /// Everything the API server would refuse (the push URLs apart: see [`crate::check`]).
    pub fn problems(&self, plan: &Path) -> Vec<String> {
        let mut problems = Vec::new();
        if self.shards == 0 {
            problems.push("--shards must be at least 1".to_owned());
        }
        if self.shards > 100_000 {
            problems.push("--shards: an Indexed Job runs at most 100000 pods".to_owned());
        }
        let name = self.name(plan);
        if name.is_empty() || name.len() > 52 || dns_name(&name, 63) != name {
            problems.push(format!(
                "--name `{name}` is not a Kubernetes name: lowercase letters, digits and dashes, at most 52 characters"
            ));
        }
        if let Some(ns) = &self.namespace {
            problems.extend(crate::check::namespace(ns).err());
        }
        problems.extend(crate::check::cpu(&self.cpu).err());
        problems.extend(crate::check::memory(&self.memory).err());
        problems.extend(crate::check::image(&self.image).err());
        problems
    }
}

impl Bundle {
    /// The workload `file` (its `text`) with its data files, read from beside it, and the values
    /// of the environment variables it reads (`env`), for pods that start at `start`.
    pub fn from_workload(
        file: &Path,
        text: String,
        options: &Options,
        start: SystemTime,
        env: impl Fn(&str) -> String,
    ) -> Result<Bundle, String> {
        let base = file.parent().unwrap_or(Path::new("."));
        let file_name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("plan.yaml")
            .to_owned();
        let (data_files, env_names) = needs(&text);
        let mut files = vec![(key(&file_name), file_name.clone(), text)];
        let mut secret_files = Vec::new();
        for DataFile { path: data, secret } in data_files {
            if Path::new(&data).is_absolute() || data.split('/').any(|p| p == "..") {
                return Err(format!(
                    "{}: the data file `{data}` is outside the workload's folder: keep data files beside it so they travel with it",
                    file.display()
                ));
            }
            let content = std::fs::read_to_string(base.join(&data)).map_err(|e| {
                format!(
                    "cannot read the data file {}: {e}",
                    base.join(&data).display()
                )
            })?;
            let into = if secret {
                &mut secret_files
            } else {
                &mut files
            };
            into.push((key(&data), data, content));
        }
        let env: Vec<(String, String)> = env_names
            .into_iter()
            .map(|n| {
                let v = env(&n);
                (n, v)
            })
            .collect();
        let bundle = Bundle {
            name: options.name(file),
            namespace: options.namespace.clone(),
            image: options.image.clone(),
            shards: options.shards,
            cpu: options.cpu.clone(),
            memory: options.memory.clone(),
            start_at: humantime::format_rfc3339_seconds(start).to_string(),
            workload: file_name,
            files,
            secret_files,
            env,
            remote_write: options.remote_write.clone(),
            otlp: options.otlp.clone(),
        };
        bundle.fits()?;
        Ok(bundle)
    }

    /// A ConfigMap or a Secret holds at most 1 MiB.
    fn fits(&self) -> Result<(), String> {
        let sizes = [
            (
                "the workload and its data files",
                "ConfigMap",
                self.files.iter().map(|f| f.2.len()).sum::<usize>(),
            ),
            (
                "the secret data files and values",
                "Secret",
                self.secret_files.iter().map(|f| f.2.len()).sum::<usize>()
                    + self.env.iter().map(|e| e.1.len()).sum::<usize>(),
            ),
        ];
        for (what, kind, size) in sizes {
            if size > 900 * 1024 {
                return Err(format!(
                    "{what} are {} KiB: a {kind} holds at most 1 MiB; use smaller data files",
                    size / 1024
                ));
            }
        }
        Ok(())
    }

    pub fn manifests(&self) -> Manifests {
        Manifests {
            secret: secret(self),
            config_map: config_map(self),
            job: job(self),
        }
    }
}

/// A DNS-1123 name: lowercase letters, digits and dashes, at most `max` long.
pub fn dns_name(s: &str, max: usize) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(dns_name("Shop_Test.v2", 40), "shop-test-v2");
        assert_eq!(key("data/skus.csv"), "data_skus.csv");
    }
}
