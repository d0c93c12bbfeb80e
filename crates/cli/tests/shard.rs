//! Shards end to end: `herd run --shard I/N --start-at`, `herd merge`, `herd k8s render` and
//! `herd k8s collect`, against the mock server.
//!
//! Until the engine applies the stripe (see the TODO in cli/src/shard_run.rs), each shard plays
//! the whole plan: these tests check the header, the framing, the start, the merge and the
//! manifests, not the split of the load (crates/engine/tests/segment.rs proves the split).

mod common;

use common::{assert_matches_schema, herd, read_json, run_herd, stderr, stdout, TempDir};
use herd_mock::{Config, Server};
use std::process::Stdio;

/// Two shards of one open-model run, started together; their outputs and JSON files.
fn two_shards(dir: &TempDir, url: &str) -> [(String, std::path::PathBuf); 2] {
    let children: Vec<_> = (0..2)
        .map(|i| {
            let json = dir.path(&format!("shard-{i}.json"));
            let child = herd()
                .args(["run", url, "--rate", "100", "-d", "1s", "-t", "1", "-q"])
                .args(["--shard", &format!("{i}/2"), "--start-at", "+2s", "--json"])
                .arg(&json)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, json)
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|(c, json)| {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            (stdout(&o), json)
        })
        .collect();
    outs.try_into().unwrap()
}

#[test]
fn shard_results_merge_exactly_in_any_order_and_read_back_like_a_run() {
    let s = Server::start(Config::default()).unwrap();
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("shards");
    let [(out0, j0), (out1, j1)] = two_shards(&dir, &url);
    assert!(out0.contains("-----BEGIN HERD RESULT 0/2-----"), "{out0}");
    assert!(out1.contains("-----END HERD RESULT-----"), "{out1}");
    let (r0, r1) = (read_json(&j0), read_json(&j1));
    assert_matches_schema("result.schema.json", &r0);
    assert_eq!(r0["shard"]["plan_hash"], r1["shard"]["plan_hash"]);
    assert_eq!(r0["shard"]["start_at"], r1["shard"]["start_at"]);
    assert_eq!(r0["timeline_start_unix_s"], r1["timeline_start_unix_s"]);
    assert_eq!(r1["shard"]["instances"][0]["index"], 1);

    let total = dir.path("total.json");
    let again = dir.path("again.json");
    let o = run_herd(&[
        "merge",
        j0.to_str().unwrap(),
        j1.to_str().unwrap(),
        "-o",
        total.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("shards     2 of 2"), "{}", stdout(&o));
    let o = run_herd(&[
        "merge",
        j1.to_str().unwrap(),
        j0.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&total).unwrap(),
        std::fs::read(&again).unwrap(),
        "merge(a,b) == merge(b,a)"
    );
    let m = read_json(&total);
    assert_matches_schema("result.schema.json", &m);
    let sum = |k: &str| r0["totals"][k].as_u64().unwrap() + r1["totals"][k].as_u64().unwrap();
    for k in ["scheduled", "sent", "completed", "ok", "errors"] {
        assert_eq!(m["totals"][k].as_u64().unwrap(), sum(k), "{k}");
    }
    assert_eq!(m["latency_ms"]["count"].as_u64().unwrap(), sum("completed"));

    // The merged file is a run like any other.
    let o = run_herd(&["report", total.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(common::html_report(&total).contains("<svg"));
    let o = run_herd(&["compare", j0.to_str().unwrap(), total.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", stderr(&o));
    assert!(stdout(&o).contains("latency"), "{}", stdout(&o));

    // herd k8s collect reads the same results back from the logs (the framed blocks).
    let logs = dir.path("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("pod-0.log"), &out0).unwrap();
    std::fs::write(logs.join("pod-1.log"), &out1).unwrap();
    let collected = dir.path("collected.json");
    let o = run_herd(&[
        "k8s",
        "collect",
        "herd-test",
        "--from-logs",
        logs.to_str().unwrap(),
        "-o",
        collected.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&total).unwrap(),
        std::fs::read(&collected).unwrap()
    );

    // One pod's log without its result: the merge is partial and says which shard is missing.
    std::fs::write(logs.join("pod-1.log"), "herd: killed\n").unwrap();
    let partial = dir.path("partial.json");
    let o = run_herd(&[
        "k8s",
        "collect",
        "herd-test",
        "--from-logs",
        logs.to_str().unwrap(),
        "-o",
        partial.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(common::html_report(&partial).contains("PARTIAL: SHARDS MISSING"));
    assert!(
        stderr(&o).contains("partial result: shard 1/2 missing"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("PARTIAL: shard 1/2 missing"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn merge_refuses_duplicates_and_foreign_files_by_name() {
    let s = Server::start(Config::default()).unwrap();
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("refuse");
    let plain = dir.path("plain.json");
    let o = run_herd(&[
        "run",
        &url,
        "-n",
        "20",
        "-c",
        "2",
        "-t",
        "1",
        "-q",
        "--json",
        plain.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let shard = dir.path("s.json");
    let o = run_herd(&[
        "run",
        &url,
        "-n",
        "20",
        "-c",
        "2",
        "-t",
        "1",
        "-q",
        "--shard",
        "0/3",
        "--json",
        shard.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (p, s) = (plain.to_str().unwrap(), shard.to_str().unwrap());
    let o = run_herd(&["merge", s, s, p]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("shard 0/3 is in both {s} and {s}")),
        "{e}"
    );
    assert!(e.contains(&format!("{p} is not a shard's result")), "{e}");
    let o = run_herd(&["merge", s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shard 1/3, 2/3 missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_instance_ready_after_the_start_exits_6_unless_late_skip() {
    let s = Server::start(Config::default()).unwrap();
    let url = format!("http://{}/", s.local_addr());
    let o = run_herd(&[
        "run",
        &url,
        "-n",
        "5",
        "-t",
        "1",
        "-q",
        "--shard",
        "1/2",
        "--start-at",
        "2020-01-01T00:00:00Z",
    ]);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert!(stderr(&o).contains("shard 1/2 was ready"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--late skip"), "{}", stderr(&o));
    let dir = TempDir::new("late");
    let json = dir.path("late.json");
    let o = run_herd(&[
        "run",
        &url,
        "-n",
        "5",
        "-t",
        "1",
        "-q",
        "--shard",
        "1/2",
        "--start-at",
        "2020-01-01T00:00:00Z",
        "--late",
        "skip",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        read_json(&json)["shard"]["instances"][0]["started_late"],
        true
    );
}

#[test]
fn bad_shard_flags_are_refused_before_anything_is_sent() {
    for (args, want) in [
        (vec!["--shard", "4/4"], "numbered 0 to 3"),
        (
            vec!["--shard-from-env", "HERD_TEST_NO_SUCH_VAR", "--shards", "3"],
            "HERD_TEST_NO_SUCH_VAR is not set",
        ),
        (vec!["--start-at", "tomorrow"], "RFC 3339"),
        (vec!["--late", "skip"], "--late needs --start-at"),
    ] {
        let mut all = vec!["run", "http://127.0.0.1:9/", "-n", "1"];
        all.extend(&args);
        let o = run_herd(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}
