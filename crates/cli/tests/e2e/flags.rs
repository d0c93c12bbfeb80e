//! A flag is applied or refused, never dropped: each kind of run (URL, URL file, workload file,
//! log replay) has one table of the flags it takes (`herd_run::flags`), read by run, sweep,
//! capacity and replay alike.

use crate::common::*;

/// A workload file whose requests answer after 2 s, with its own 5 s deadline.
fn slow_workload(dir: &TempDir, url: &str) -> String {
    let path = dir.path("slow.yaml");
    std::fs::write(
        &path,
        format!(
            "target: {url}\ndefaults: {{ timeout: 5s }}\n\
             load: {{ model: closed, users: 1, iterations: 2 }}\n\
             scenarios:\n  - name: s\n    steps:\n      - get: /slow\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn timeout_flag_is_applied_to_a_workload_file() {
    let s = mock(&["/slow latency=2s"]);
    let url = format!("http://{}", s.local_addr());
    let dir = TempDir::new("flags-timeout");
    let file = slow_workload(&dir, &url);
    let ran = Herd::new(&["run", "-q", &file, "--timeout", "100ms"])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.json();
    assert_eq!(r["config"]["timeout_s"], 0.1, "{}", ran.stderr());
    assert_eq!(
        r["totals"]["errors"], 2,
        "both requests hit the flag's deadline"
    );
    assert_eq!(r["errors"]["timeout"], 2, "{}", r["errors"]);
}

#[test]
fn timeout_flag_is_applied_to_a_workload_file_in_a_sweep() {
    let s = mock(&["/slow latency=2s"]);
    let url = format!("http://{}", s.local_addr());
    let dir = TempDir::new("flags-sweep-timeout");
    let file = slow_workload(&dir, &url);
    let ran = Herd::new(&["sweep", "-q", &file, "-c", "1", "--timeout", "100ms"])
        .args(&["--num-conns", "2", "--no-stop"])
        .json(&dir.path("s.json"))
        .run();
    let r = ran.json_of("sweep.schema.json");
    assert_eq!(r["config"]["timeout_s"], 0.1, "{}", ran.stderr());
    let run = &r["steps"][0]["runs"][0];
    assert_eq!(
        run["config"]["timeout_s"], 0.1,
        "the step ran with it: {run}"
    );
    assert_eq!(run["errors"]["timeout"], 2, "{}", run["errors"]);
}

#[test]
fn load_flags_a_workload_file_sets_itself_are_refused_before_sending() {
    let s = mock(&["/*"]);
    let url = format!("http://{}", s.local_addr());
    let dir = TempDir::new("flags-refused");
    let file = slow_workload(&dir, &url);
    let out = refused(
        &["run", &file, "-c", "5", "-H", "A: b"],
        "-c/--connections cannot be combined with a workload file",
    );
    let err = stderr(&out);
    assert!(err.contains("`load:`"), "says where the load goes: {err}");
    assert!(
        err.contains("-H/--header cannot be combined with a workload file"),
        "every refused flag at once: {err}"
    );
    assert_eq!(s.stats().connections, 0, "nothing was sent");
}

/// A log replay is a run like the others: it watches the server when asked, and a bad watch
/// flag stops it before the first line is sent.
#[test]
fn a_replay_applies_watch_flags() {
    let s = mock(&["/*"]);
    let dir = TempDir::new("flags-replay");
    let log = dir.path("a.log");
    let line = |p: &str| {
        format!(
            "1.1.1.1 - - [24/Nov/2026:10:00:00 +0000] \"GET {p} HTTP/1.1\" 200 1 \"-\" \"ua\"\n"
        )
    };
    std::fs::write(&log, [line("/a"), line("/b")].concat()).unwrap();
    let (log, target) = (log.to_str().unwrap(), format!("http://{}/", s.local_addr()));
    let me = std::process::id().to_string();
    let ran = Herd::new(&["replay", log, "--target", &target, "-q", "--watch-pid", &me])
        .json(&dir.path("r.json"))
        .run();
    ran.code(0);
    let r = ran.json();
    assert_eq!(r["totals"]["ok"], 2, "{}", ran.stderr());
    assert_eq!(
        r["server"]["processes"][0]["pid"].as_u64(),
        Some(u64::from(std::process::id()))
    );
    refused(
        &["replay", log, "--target", &target, "--watch-pid", "4999999"],
        "no process has pid 4999999",
    );
    assert_eq!(s.stats().requests, 2, "the refused replay sent nothing");
}
