//! `herd run --watch-*` end to end: the server's processes and a real Prometheus exporter watched
//! during a run, kept in the JSON and summarised; bad watch flags refused before any load.
//! Modules: `process` (--watch-pid, --watch-name, --watch-parent), `prometheus`, `flags`; here
//! the servers they watch.

use crate::common::{free_port, herd, wait_listening};
use serde_json::Value;
use std::net::SocketAddr;
use std::process::{Child, Stdio};

mod flags;
mod process;
mod prometheus;

/// `herd serve` as a child process, stopped on drop.
pub struct HerdServe {
    child: Child,
    addr: SocketAddr,
}

impl HerdServe {
    pub fn start() -> HerdServe {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = herd()
            .args(["serve", "--listen", &addr.to_string(), "-t", "1"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(addr, "herd serve");
        HerdServe { child, addr }
    }
}

impl Drop for HerdServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's node_exporter with the collectors these tests read; stopped on drop.
pub struct NodeExporter {
    child: Child,
    url: String,
}

impl NodeExporter {
    pub fn start() -> NodeExporter {
        let bin = "/usr/bin/prometheus-node-exporter";
        assert!(
            std::path::Path::new(bin).exists(),
            "node_exporter is not installed: run `scripts/check` (it installs it) or \
             `apt-get install -y prometheus-node-exporter`"
        );
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = std::process::Command::new(bin)
            .args([
                &format!("--web.listen-address={addr}"),
                "--collector.disable-defaults",
                "--collector.cpu",
                "--collector.loadavg",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(addr, "node_exporter");
        NodeExporter {
            child,
            url: format!("http://{addr}/metrics"),
        }
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn samples(p: &Value) -> &Vec<Value> {
    p["samples"].as_array().expect("samples")
}
