//! Every command that sends load takes the same outputs (`herd replay` and `herd sweep` as
//! `herd run`): the JSON written as a replay goes (a `kill -9` leaves what `herd report`
//! reads), its metrics endpoint scraped while it runs, and a sweep's file per step and metrics
//! labelled by step. The target is a real nginx, as users meet it.

use crate::common::{free_port, get, one_at_a_time, python, stdout, Herd, Nginx, TempDir};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// A combined log of `seconds` seconds, `per_second` GETs in each.
fn log_of(dir: &TempDir, seconds: u32, per_second: u32) -> PathBuf {
    let mut log = String::new();
    for s in 0..seconds {
        // 1,700,000,000 s after the epoch is 14 Nov 2023 22:13:20 UTC.
        let (m, sec) = (13 + (20 + s) / 60, (20 + s) % 60);
        let stamp = format!("14/Nov/2023:22:{m:02}:{sec:02} +0000");
        for i in 0..per_second {
            log.push_str(&format!(
                "127.0.0.1 - - [{stamp}] \"GET /items/{i} HTTP/1.1\" 200 12 \"-\" \"replay-test\"\n"
            ));
        }
    }
    let path = dir.path("access.log");
    std::fs::write(&path, log).unwrap();
    path
}

/// Calls `probe` every 50 ms until it says yes, while `child` runs (bounded: 60 s).
fn wait_until(child: &mut Child, what: &str, mut probe: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !probe() {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("herd ended, or 60 s passed, before {what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// The body of `/metrics` at `addr`, empty when nothing answers yet.
fn scrape(addr: SocketAddr) -> String {
    match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
        Ok(_) => get(addr, "/metrics"),
        Err(_) => String::new(),
    }
}

#[test]
fn a_replay_killed_mid_way_leaves_a_partial_result_that_report_reads() {
    let _turn = one_at_a_time();
    let nginx = Nginx::start("");
    let dir = TempDir::new("replay-killed");
    let log = log_of(&dir, 60, 20);
    let json = dir.path("replay.json");
    let url = nginx.url("/");
    let mut child = Herd::new(&["replay", log.to_str().unwrap(), "--target", &url, "-q"])
        .json(&json)
        .spawn();
    // The header and three closed seconds, written as the replay goes.
    wait_until(&mut child, "three seconds in the JSON", || {
        lines(&json) >= 4
    });
    child.kill().unwrap(); // SIGKILL: nothing of herd runs after it
    child.wait().unwrap();

    let report = Herd::new(&["report", json.to_str().unwrap()]).run();
    report.code(0);
    let text = report.stdout();
    assert!(text.contains("partial result"), "{text}");
    assert!(text.contains("INTERRUPTED"), "{text}");
    let sent: u64 = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["ok"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert!(sent > 0, "the seconds written hold the replay's answers");
}

#[test]
fn a_replays_metrics_are_scraped_while_it_runs() {
    let _turn = one_at_a_time();
    let nginx = Nginx::start("");
    let dir = TempDir::new("replay-metrics");
    let log = log_of(&dir, 60, 20);
    let url = nginx.url("/");
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let mut child = Herd::new(&["replay", log.to_str().unwrap(), "--target", &url, "-q"])
        .args(&["--metrics-listen", &metrics.to_string()])
        .spawn();
    let mut body = String::new();
    wait_until(&mut child, "a scrape with answered requests", || {
        body = scrape(metrics);
        body.lines().any(|l| {
            l.starts_with("herd_requests_total{")
                && l.contains("outcome=\"ok\"")
                && !l.ends_with(" 0")
        })
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(body.contains("herd_run_finished"), "{body}");
}

#[test]
fn a_sweep_writes_an_hlog_and_a_csv_per_step_and_labels_its_metrics_by_step() {
    let _turn = one_at_a_time();
    let nginx = Nginx::start("");
    let dir = TempDir::new("sweep-per-step");
    let url = nginx.url("/");
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let (hlog, csv) = (dir.path("x.hlog"), dir.path("x.csv"));
    let mut child = Herd::new(&["sweep", &url, "--rates", "50,100", "-q"])
        .steps("2s")
        .file("--hlog", &hlog)
        .file("--csv", &csv)
        .args(&["--metrics-listen", &metrics.to_string()])
        .spawn();
    // Each step's series on the endpoint while it runs, told apart by their step.
    let mut steps = [false, false];
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the sweep did not end within 60 s"
        );
        let body = scrape(metrics);
        for (i, seen) in steps.iter_mut().enumerate() {
            *seen |= body.contains(&format!("step=\"{}\"", i + 1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(steps, [true, true], "{}", stdout(&out));

    // A file per step, each read by its own tool; the sweep's table still at x.csv.
    for step in 1..=2 {
        let h = dir.path(&format!("x-{step}.hlog"));
        let read = python(
            "import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
r = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**6, 2))
total = 0
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    total += h.get_total_count()
print(total)",
            &[&h],
        );
        assert!(
            read.trim().parse::<u64>().unwrap() > 0,
            "{}: {read}",
            h.display()
        );
        let c = std::fs::read_to_string(dir.path(&format!("x-{step}.csv"))).unwrap();
        assert!(c.starts_with("t,requests,ok,"), "{c}");
        assert!(c.lines().count() >= 2, "a row per second: {c}");
    }
    assert!(!dir.path("x-3.hlog").exists());
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(
        !table.starts_with("t,requests,"),
        "the sweep's table: {table}"
    );
    assert!(table.lines().count() >= 3, "a row per step: {table}");
}
