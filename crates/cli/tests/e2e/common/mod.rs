//! What the end-to-end tests share: the herd binary and its command lines (`herd`), a real nginx
//! on a free loopback port (`nginx`), the mock server, results read back and checked against
//! their schemas, temporary directories.
#![allow(dead_code)]

mod herd;
mod nginx;

pub use herd::*;
pub use herd_testkit::Caddy;
pub use nginx::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

/// `crates/result/tests/fixtures/NAME`: stored results, TSVs and logs.
pub fn fixture(name: &str) -> String {
    format!(
        "{}/../result/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The row of `r`'s `by_name` table named `name`.
pub fn named<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["by_name"]
        .as_array()
        .expect("by_name")
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {}", r["by_name"]))
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

/// A workload of two request names against `addr`, written as `dir/shop.yaml`: each iteration
/// of `browse` asks `home` (`/index`, checked for a 200) then `item` (`/items/1`). `load` is
/// the file's `load:` mapping, without its braces.
pub fn shop_workload(dir: &TempDir, addr: SocketAddr, load: &str) -> PathBuf {
    let file = dir.path("shop.yaml");
    let yaml = format!(
        r#"
target: http://{addr}
load: {{ {load} }}
scenarios:
  - name: browse
    steps:
      - get: /index
        name: home
        check: {{ status: 200 }}
      - get: /items/1
        name: item
"#
    );
    std::fs::write(&file, yaml).unwrap();
    file
}

/// How many requests named `name` the result `r` counts as ok.
pub fn name_ok(r: &serde_json::Value, name: &str) -> u64 {
    r["by_name"]
        .as_array()
        .expect("by_name")
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no request named {name}: {}", r["by_name"]))["totals"]["ok"]
        .as_u64()
        .unwrap()
}

/// Runs a Python snippet with `args` (Python reads herd's files with its own modules); its
/// stdout, or a panic with what it said.
pub fn python(code: &str, args: &[&Path]) -> String {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .expect("python3 runs (scripts/check installs it)");
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts a Python server of the tests (`python3 SCRIPT` with what `cmd` sets) that prints
/// `listening PORT` first; its process and port. When it does not start (a PyPI package
/// missing), the panic names `what` and how to install `packages` (prose) with `pip`.
pub fn python_server(
    cmd: &mut std::process::Command,
    what: &str,
    packages: &str,
    pip: &str,
) -> (std::process::Child, u16) {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port = first
        .strip_prefix("listening ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "{what} did not start ({first:?}): run `scripts/check` (it installs PyPI's \
                 {packages}) or `pip install {pip}`"
            )
        });
    (child, port)
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
        // The count keeps two tests of one tag apart when they start in the same nanosecond
        // (the `quiet` tests run in parallel); the clock, runs of earlier processes.
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!(
            "herd-test-{tag}-{}-{n}-{nanos}",
            std::process::id()
        ));
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

/// gRPC's 17 codes by name (grpc/doc/statuscodes.md), in code order.
pub const GRPC_CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];
