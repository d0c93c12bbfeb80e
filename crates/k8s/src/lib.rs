//! herd on Kubernetes with nothing but an Indexed Job and `kubectl logs`: no operator, no
//! coordinator, nothing needing cluster-admin (`herd k8s render`, `herd k8s collect`).
//!
//! A workload file and the data files and environment values it reads become a [`Bundle`],
//! checked as the API server would check it (a ConfigMap's size, names, quantities, the image
//! reference), then [`Manifests`]: a ConfigMap, a Secret for what the workload marks secret, and
//! a Job whose pod `i` runs shard `i`. Each pod prints its result as a framed block;
//! [`merge_logs`] reads them back into one result.
//!
//! ```no_run
//! use herd_k8s::{Bundle, Options};
//! use std::path::Path;
//!
//! let options = Options {
//!     shards: 4,
//!     image: "herd:latest".into(),
//!     namespace: None,
//!     cpu: "1".into(),
//!     memory: "512Mi".into(),
//!     name: None,
//!     remote_write: None,
//!     otlp: None,
//! };
//! let plan = Path::new("shop.yaml");
//! assert!(options.problems(plan).is_empty());
//! let text = std::fs::read_to_string(plan).unwrap();
//! let start = std::time::SystemTime::now() + std::time::Duration::from_secs(120);
//! let bundle = Bundle::from_workload(plan, text, &options, start, |_| String::new()).unwrap();
//! let manifests = bundle.manifests();
//! print!("{}---\n{}", manifests.config_map, manifests.job);
//! ```

mod bundle;
pub mod check;
mod collect;
mod manifest;
mod write;

pub use bundle::{dns_name, Manifests, Options};
pub use collect::{merge_logs, pod_logs, saved_logs};
pub use manifest::Bundle;
pub use write::loopback_warning;
