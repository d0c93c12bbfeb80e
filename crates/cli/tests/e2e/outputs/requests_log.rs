//! `--requests-log`: a line per request the result counts, read by Python's own `gzip` and
//! `csv` modules; a `kill -9` mid-run leaves a file whose every readable line is whole.

use crate::common::{kill, mock, one_at_a_time, python, read_json, refused, Herd, TempDir};

const SIGTERM: i32 = 15;
use std::path::Path;
use std::time::{Duration, Instant};

/// What Python's `csv` reads in the log: its lines as JSON, after checking the header.
const READ: &str = r#"
import csv, gzip, io, json, sys
p = sys.argv[1]
f = gzip.open(p, "rt", newline="") if p.endswith(".gz") else open(p, newline="")
r = csv.DictReader(f)
assert r.fieldnames == ["intended_us", "sent_us", "latency_us", "service_us", "status",
    "bytes_in", "bytes_out", "error", "name", "connection"], r.fieldnames
print(json.dumps(list(r)))
"#;

/// The log's lines, as Python's `csv` reads them.
pub(crate) fn lines(path: &Path) -> Vec<serde_json::Value> {
    serde_json::from_str::<Vec<serde_json::Value>>(&python(READ, &[path])).unwrap()
}

fn count(lines: &[serde_json::Value], key: &str, value: &str) -> u64 {
    lines.iter().filter(|l| l[key] == value).count() as u64
}

#[test]
fn the_requests_log_has_a_line_for_each_request_the_result_counts_and_says_why_one_failed() {
    let _turn = one_at_a_time();
    let server = mock(&["/broken status=503", "/stuck fault=stall", "/*"]);
    let dir = TempDir::new("reqlog");
    let (json, log, file) = (
        dir.path("r.json"),
        dir.path("r.csv.gz"),
        dir.path("shop.yaml"),
    );
    let yaml = format!(
        r#"
target: http://{}
defaults: {{ timeout: 200ms }}
load: {{ model: open, rate: 40, max_connections: 8, duration: 2s }}
scenarios:
  - name: browse
    steps:
      - get: /index
        name: home
      - get: /broken
        name: broken
      - get: /stuck
        name: stuck
"#,
        server.local_addr()
    );
    std::fs::write(&file, yaml).unwrap();
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1", "-q"])
        .json(&json)
        .file("--requests-log", &log)
        .run();
    let r = ran.json_of("result.schema.json");
    let t = &r["totals"];
    let counted = t["completed"].as_u64().unwrap() + t["errors"].as_u64().unwrap();
    let got = lines(&log);
    assert!(counted >= 60, "{t}");
    assert_eq!(got.len() as u64, counted, "a line per request counted: {t}");
    assert_eq!(r["requests_log"]["lines"], counted);
    assert_eq!(r["requests_log"]["lost"], 0);
    for (status, n) in r["status"].as_object().unwrap() {
        assert_eq!(
            count(&got, "status", status),
            n.as_u64().unwrap(),
            "{status}"
        );
    }
    let timeouts = r["errors"]["timeout"].as_u64().unwrap();
    assert!(timeouts > 0, "{}", r["errors"]);
    assert_eq!(count(&got, "error", "timeout"), timeouts);
    assert_eq!(
        count(&got, "error", "failed"),
        t["failed"].as_u64().unwrap()
    );
    for l in &got {
        match l["name"].as_str().unwrap() {
            "home" => assert_eq!(l["status"], "200", "{l}"),
            "broken" => assert_eq!(
                (&l["status"], &l["error"]),
                (&"503".into(), &"failed".into())
            ),
            "stuck" => {
                assert_eq!(
                    (&l["status"], &l["error"]),
                    (&"0".into(), &"timeout".into())
                );
                let latency: u64 = l["latency_us"].as_str().unwrap().parse().unwrap();
                assert!(latency >= 200_000, "{l}");
            }
            other => panic!("unexpected name {other}: {l}"),
        }
        assert!(!l["connection"].as_str().unwrap().is_empty(), "{l}");
    }
}

#[test]
fn a_plain_requests_log_of_a_url_run_names_nothing_and_counts_every_request() {
    let server = mock(&[]);
    let dir = TempDir::new("reqlog-plain");
    let (json, log) = (dir.path("r.json"), dir.path("r.csv"));
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["run", &url, "-n", "500", "-c", "4", "-t", "2", "-q"])
        .json(&json)
        .file("--requests-log", &log)
        .run();
    ran.code(0);
    let got = lines(&log);
    assert_eq!(got.len(), 500);
    assert!(got.iter().all(|l| l["name"] == "" && l["status"] == "200"));
    // Four connections over two threads, each named once in the run.
    let mut conns: Vec<&str> = got
        .iter()
        .map(|l| l["connection"].as_str().unwrap())
        .collect();
    conns.sort_unstable();
    conns.dedup();
    assert_eq!(conns, ["0", "1", "2", "3"]);
}

#[test]
fn a_requests_log_herd_cannot_write_is_refused_before_anything_is_sent() {
    let dir = TempDir::new("reqlog-refused");
    let log = dir.path("r.csv.zst");
    refused(
        &[
            "run",
            "http://127.0.0.1:9/",
            "--requests-log",
            log.to_str().unwrap(),
        ],
        "name it .csv.gz",
    );
    let missing = dir.path("no/such/dir/r.csv.gz");
    refused(
        &[
            "run",
            "http://127.0.0.1:9/",
            "--requests-log",
            missing.to_str().unwrap(),
        ],
        "does not exist",
    );
}

/// Every gzip member whole in the file, decoded; a member cut by the kill is left out, as
/// `zcat` stops there.
const MEMBERS: &str = r#"
import sys, zlib
data = open(sys.argv[1], "rb").read()
text, whole = b"", 0
while data:
    d = zlib.decompressobj(31)
    out = d.decompress(data)
    if not d.eof:
        break
    text += out
    whole += 1
    data = d.unused_data
lines = text.decode().split("\n")
assert lines[-1] == "", "the text ends with a whole line"
for l in lines[1:-1]:
    f = l.split(",")
    assert len(f) == 10, l
    int(f[0]); int(f[2]); int(f[4])
print(whole, len(lines) - 2)
"#;

/// Waits (bounded) until the gzip log at `log` holds the header's member and two seconds of
/// lines or more, as read by `MEMBERS`.
fn wait_for_members(log: &Path, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let members = python(MEMBERS, &[log]);
        let (whole, n) = members.trim().split_once(' ').unwrap();
        if whole.parse::<u32>().unwrap() >= 3 && n.parse::<u32>().unwrap() >= 500 {
            break;
        }
        assert!(
            Instant::now() < deadline && child.try_wait().unwrap().is_none(),
            "the log did not grow: {members}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_requests_log_killed_mid_run_leaves_whole_lines_to_read() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("reqlog-killed");
    let log = dir.path("r.csv.gz");
    let url = format!("http://{}/", server.local_addr());
    let mut child = Herd::new(&["run", &url, "-d", "60s", "--rate", "500", "-t", "1", "-q"])
        .file("--requests-log", &log)
        .spawn();
    wait_for_members(&log, &mut child);
    child.kill().unwrap(); // SIGKILL: nothing of herd runs after it
    child.wait().unwrap();
    let after = python(MEMBERS, &[&log]);
    let n: u32 = after.trim().split_once(' ').unwrap().1.parse().unwrap();
    assert!(n >= 500, "{after}");
}

#[test]
fn a_requests_log_stopped_by_sigterm_is_finished_with_every_request_the_result_counts() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("reqlog-term");
    let (json, log) = (dir.path("r.json"), dir.path("r.csv.gz"));
    let url = format!("http://{}/", server.local_addr());
    let mut child = Herd::new(&["run", &url, "-d", "60s", "--rate", "500", "-t", "2", "-q"])
        .json(&json)
        .file("--requests-log", &log)
        .spawn();
    wait_for_members(&log, &mut child);
    kill(child.id(), SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = read_json(&json);
    assert_eq!(r["interrupted"], true);
    let t = &r["totals"];
    let counted = t["completed"].as_u64().unwrap() + t["errors"].as_u64().unwrap();
    // Python's gzip reads it to its end: the last member is whole.
    assert_eq!(lines(&log).len() as u64, counted);
    assert_eq!(r["requests_log"]["lines"], counted);
}

#[test]
fn a_sweep_writes_a_requests_log_per_step_each_named_in_its_run() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("reqlog-sweep");
    let (json, log) = (dir.path("s.json"), dir.path("s.csv.gz"));
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&[
        "sweep",
        &url,
        "--rates",
        "50,100",
        "--step-duration",
        "1s",
        "-q",
    ])
    .args(&["--no-stop", "-t", "1"])
    .json(&json)
    .file("--requests-log", &log)
    .run();
    let r = ran.json_of("sweep.schema.json");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for (i, step) in steps.iter().enumerate() {
        let run = &step["runs"][0];
        let file = dir.path(&format!("s-{}.csv.gz", i + 1));
        assert_eq!(run["requests_log"]["path"], file.display().to_string());
        let t = &run["totals"];
        let counted = t["completed"].as_u64().unwrap() + t["errors"].as_u64().unwrap();
        assert!(counted >= 40, "{t}");
        assert_eq!(lines(&file).len() as u64, counted);
    }
}
