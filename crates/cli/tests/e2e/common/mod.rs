//! What the end-to-end tests share: a real nginx on a free loopback port, and the herd binary.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub fn herd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herd"))
}

/// Runs herd to the end (its own flags bound the run) and returns its output.
pub fn run_herd(args: &[&str]) -> Output {
    herd()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn herd")
}

/// A `herd` command line to run and read back (ripgrep's `TestCommand`): arguments, an optional
/// `--json` result file, and checks on what it printed and wrote.
#[derive(Clone)]
pub struct Herd {
    args: Vec<String>,
    json: Option<PathBuf>,
}

/// What a [`Herd`] run did.
pub struct Ran {
    pub out: Output,
    json: Option<PathBuf>,
}

impl Herd {
    pub fn new(args: &[&str]) -> Herd {
        Herd {
            args: args.iter().map(|a| a.to_string()).collect(),
            json: None,
        }
    }

    /// More arguments, after those given so far.
    pub fn args(mut self, more: &[&str]) -> Herd {
        self.args.extend(more.iter().map(|a| a.to_string()));
        self
    }

    /// `FLAG PATH`: a file herd writes or reads (`--tsv`, `--csv`, `-o`, ...).
    pub fn file(self, flag: &str, path: &Path) -> Herd {
        self.args(&[flag, path.to_str().unwrap()])
    }

    /// Also writes the result to `path` (`--json`), read back by [`Ran::json`].
    pub fn json(mut self, path: &Path) -> Herd {
        self.json = Some(path.to_owned());
        self
    }

    /// A sweep's steps as short as its test allows: `--step-duration D --cooldown 0s -t 1`.
    pub fn steps(self, duration: &str) -> Herd {
        self.args(&["--step-duration", duration, "--cooldown", "0s", "-t", "1"])
    }

    /// A capacity search's probes as short as its test allows: `--probe-duration D --cooldown 0s
    /// -t 1`.
    pub fn probes(self, duration: &str) -> Herd {
        self.args(&["--probe-duration", duration, "--cooldown", "0s", "-t", "1"])
    }

    fn command(&self) -> Command {
        let mut cmd = herd();
        cmd.args(&self.args);
        if let Some(j) = &self.json {
            cmd.arg("--json").arg(j);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    pub fn run(self) -> Ran {
        let out = self.command().output().expect("spawn herd");
        Ran {
            out,
            json: self.json,
        }
    }

    /// Starts herd, its stdout and stderr piped (for `wait_with_output`).
    pub fn spawn(self) -> Child {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn herd")
    }

    /// Starts herd and reads its stdout until a line satisfies `ready`; returns the child, the
    /// lines still to come and every line read so far. A reader thread does the reading, so the
    /// wait is bounded (60 s).
    pub fn spawn_until(
        self,
        ready: impl Fn(&str) -> bool,
    ) -> (Child, Receiver<String>, Vec<String>) {
        let mut child = self.spawn();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("no ready line within 60 s ({e}): {seen:?}")
                });
            seen.push(line);
            if ready(seen.last().unwrap()) {
                return (child, rx, seen);
            }
        }
    }
}

impl Ran {
    /// Asserts the exit code, showing what herd said when it differs.
    pub fn code(&self, want: i32) -> &Ran {
        assert_eq!(
            self.out.status.code(),
            Some(want),
            "stdout:\n{}\nstderr:\n{}",
            stdout(&self.out),
            stderr(&self.out)
        );
        self
    }

    pub fn stdout(&self) -> String {
        stdout(&self.out)
    }

    pub fn stderr(&self) -> String {
        stderr(&self.out)
    }

    /// The result file, checked against the result schema.
    pub fn json(&self) -> serde_json::Value {
        self.json_of("result.schema.json")
    }

    /// The `--json` file, checked against `schema/SCHEMA` (`sweep.schema.json`, ...).
    pub fn json_of(&self, schema: &str) -> serde_json::Value {
        let path = self
            .json
            .as_deref()
            .expect("the run was given a --json file");
        let r = read_json(path);
        assert_matches_schema(schema, &r);
        r
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("herd writes valid JSON")
}

/// Checks `doc` against `schema/NAME` (`result.schema.json`, `sweep.schema.json`,
/// `capacity.schema.json`); the run's schema is where the others' references to it resolve.
pub fn assert_matches_schema(name: &str, doc: &serde_json::Value) {
    let load = |file: &str| -> serde_json::Value {
        let path = format!("{}/../../schema/{file}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let run = jsonschema::Resource::from_contents(load("result.schema.json")).unwrap();
    let validator = jsonschema::draft202012::options()
        .with_resource("json-schema:///result.schema.json", run)
        .build(&load(name))
        .expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{name}: {}", errors.join("\n"));
}

/// `crates/report/tests/fixtures/NAME`: stored results, TSVs and logs.
pub fn fixture(name: &str) -> String {
    format!(
        "{}/../report/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The entry of `r`'s `checks` named `name`.
pub fn check<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {}", r["checks"]))
}

/// The mock server, in-process on a free port, with `routes` (none: its defaults).
pub fn mock(routes: &[&str]) -> herd_mock::Server {
    herd_mock::Server::start(herd_mock::Config {
        routes: routes
            .iter()
            .map(|r| herd_mock::Route::parse(r).unwrap())
            .collect(),
        ..herd_mock::Config::default()
    })
    .unwrap()
}

/// Tests that measure timing (sweep steps, capacity probes, the generator's verdict) take turns
/// here, so that they do not load each other's generator when the binary runs tests in
/// parallel (the one-line check runs them one at a time anyway).
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// `herd report RESULT -o RESULT.html`: the page it wrote.
pub fn html_report(result: &Path) -> String {
    let page = result.with_extension("html");
    let out = run_herd(&[
        "report",
        result.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::read_to_string(&page).unwrap()
}

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p =
            std::env::temp_dir().join(format!("herd-test-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A free port on 127.0.0.1 (bound, then released for a server that cannot take port 0).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts on `addr`, bounded.
pub fn wait_listening(addr: SocketAddr, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not start listening on {addr} within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn nginx_binary() -> PathBuf {
    for p in [
        "/usr/sbin/nginx",
        "/usr/local/sbin/nginx",
        "/usr/local/nginx/sbin/nginx",
    ] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("nginx is not installed: run `scripts/check` (it installs it) or `apt-get install -y nginx-light`");
}

/// A real nginx, one worker, on a free loopback port; stopped on drop.
pub struct Nginx {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: TempDir,
}

impl Nginx {
    /// `extra` goes inside the `server { }` block, before the default location.
    pub fn start(extra: &str) -> Nginx {
        Self::start_with(extra, "")
    }

    pub fn start_with(server_extra: &str, listen_extra: &str) -> Nginx {
        Self::start_configured("", server_extra, listen_extra)
    }

    /// `http_extra` goes inside the `http { }` block (log formats), `server_extra` inside the
    /// `server { }` block, `listen_extra` on its `listen` line. Relative paths in them are in
    /// the server's directory (its prefix, `dir`).
    pub fn start_configured(http_extra: &str, server_extra: &str, listen_extra: &str) -> Nginx {
        let dir = TempDir::new("nginx");
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let d = dir.0.display();
        let conf = format!(
            r#"
worker_processes 1;
daemon off;
master_process on;
user root;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
worker_rlimit_nofile 20000;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    {http_extra}
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port} backlog=4096 {listen_extra};
        {server_extra}
        location = /404 {{ return 404 "no such page\n"; }}
        location / {{ default_type text/plain; return 200 "hello from nginx\n"; }}
    }}
}}
"#
        );
        let conf_path = dir.path("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(nginx_binary())
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(&dir.0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn nginx");
        wait_listening(addr, "nginx");
        Nginx { child, addr, dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The master and its workers, for SIGSTOP / SIGCONT.
    pub fn pids(&self) -> Vec<i32> {
        let master = self.child.id() as i32;
        let mut pids = vec![master];
        if let Ok(children) =
            std::fs::read_to_string(format!("/proc/{master}/task/{master}/children"))
        {
            pids.extend(
                children
                    .split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
        pids
    }

    pub fn signal(&self, sig: i32) {
        for pid in self.pids() {
            // SAFETY: sending a signal to a process we started.
            unsafe {
                libc_kill(pid, sig);
            }
        }
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

pub const SIGINT: i32 = 2;
pub const SIGKILL: i32 = 9;
pub const SIGCONT: i32 = 18;
pub const SIGSTOP: i32 = 19;

pub fn kill(pid: u32, sig: i32) {
    // SAFETY: sending a signal to a process we started.
    unsafe {
        libc_kill(pid as i32, sig);
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let pids = self.pids();
        self.signal(SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
        // workers exit when the master goes; make sure no orphan keeps the port
        for pid in pids.into_iter().skip(1) {
            // SAFETY: our own nginx worker.
            unsafe {
                libc_kill(pid, SIGKILL);
            }
        }
    }
}

/// One plain HTTP/1.1 GET with a std socket, for checking servers by hand.
pub fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}
