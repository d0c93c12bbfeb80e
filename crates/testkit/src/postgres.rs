//! A throwaway PostgreSQL cluster (Debian's postgresql package) for tests of herd's store:
//! initdb and pg_ctl under a temporary directory, on 127.0.0.1 and a free port.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A PostgreSQL cluster in a temporary directory on 127.0.0.1 and a free port, stopped when
/// dropped. As root, it runs as the `postgres` user (initdb refuses root).
pub struct Postgres {
    _dir: tempfile::TempDir,
    data: PathBuf,
    bin: PathBuf,
    pub url: String,
}

fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    found.sort();
    found.pop()
}

fn as_owner(bin: &Path, tool: &str, args: &[&str]) -> Command {
    let root = root();
    let mut c = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    };
    c.args(args);
    c
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Postgres {
    /// A new cluster, or `None` (said on stderr) when PostgreSQL is not installed.
    pub fn start() -> Option<Postgres> {
        let Some(bin) = bin_dir() else {
            eprintln!("SKIPPED: PostgreSQL's binaries (initdb, pg_ctl) are not installed: apt-get install postgresql");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        if root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
        let out = as_owner(
            &bin,
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        )
        .output()
        .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50",
            dir.path().display()
        );
        let log = dir.path().join("log");
        let out = as_owner(
            &bin,
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &opts,
                "-w",
                "start",
            ],
        )
        .output()
        .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(Postgres {
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            _dir: dir,
            data,
            bin,
        })
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = as_owner(
            &self.bin,
            "pg_ctl",
            &["-D", self.data.to_str().unwrap(), "-m", "immediate", "stop"],
        )
        .output();
    }
}
