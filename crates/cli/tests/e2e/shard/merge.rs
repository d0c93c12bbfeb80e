//! Shard results merged: exactly, in any order, read back like a run, collected from pods'
//! logs; duplicates and foreign files refused by name; a killed shard's merge is partial.

use super::spawn_shard;
use crate::common::*;

/// Two shards of one open-model run, started together; their outputs and JSON files.
fn two_shards(dir: &TempDir, url: &str) -> [(String, std::path::PathBuf); 2] {
    let children: Vec<_> = (0..2)
        .map(|i| {
            let json = dir.path(&format!("shard-{i}.json"));
            let child = Herd::new(&["run", url, "--rate", "100", "-d", "1s", "-t", "1", "-q"])
                .args(&["--shard", &format!("{i}/2"), "--start-at", "+2s"])
                .file("--json", &json)
                .spawn();
            (child, json)
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|(c, json)| {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            assert!(!stdout(&o).contains("HERD RESULT"), "stdout is for people");
            (stderr(&o), json)
        })
        .collect();
    outs.try_into().unwrap()
}

#[test]
fn shard_results_merge_exactly_in_any_order_and_read_back_like_a_run() {
    let s = mock(&[]);
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
    assert!(crate::common::html_report(&total).contains("<svg"));
    let o = run_herd(&["compare", j0.to_str().unwrap(), total.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", stderr(&o));
    assert!(stdout(&o).contains("latency"), "{}", stdout(&o));

    // herd k8s collect reads the same results back from the logs (the framed blocks).
    let logs = dir.path("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("pod-0.log"), &out0).unwrap();
    std::fs::write(logs.join("pod-1.log"), &out1).unwrap();
    let collect = |to: &std::path::Path| {
        let (from, to) = (logs.to_str().unwrap(), to.to_str().unwrap());
        run_herd(&["k8s", "collect", "herd-test", "--from-logs", from, "-o", to])
    };
    let collected = dir.path("collected.json");
    let o = collect(&collected);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&total).unwrap(),
        std::fs::read(&collected).unwrap()
    );

    // One pod's log without its result: the merge is partial and says which shard is missing.
    std::fs::write(logs.join("pod-1.log"), "herd: killed\n").unwrap();
    let partial = dir.path("partial.json");
    let o = collect(&partial);
    // Not the whole load: never exit 0, which a CI job would read as a pass.
    assert_eq!(o.status.code(), Some(9), "{}", stderr(&o));
    assert!(crate::common::html_report(&partial).contains("PARTIAL: SHARDS MISSING"));
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
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("refuse");
    let (plain, shard) = (dir.path("plain.json"), dir.path("s.json"));
    let twenty = ["run", &url, "-n", "20", "-c", "2", "-t", "1", "-q"];
    Herd::new(&twenty).file("--json", &plain).run().code(0);
    Herd::new(&twenty)
        .args(&["--shard", "0/3"])
        .file("--json", &shard)
        .run()
        .code(0);
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
    assert_eq!(o.status.code(), Some(9), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shard 1/3, 2/3 missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_shard_killed_mid_run_leaves_a_partial_merge_that_names_it() {
    let nginx = crate::common::Nginx::start("");
    let url = nginx.url("/");
    let dir = TempDir::new("killed-shard");
    let (j0, j1) = (dir.path("s0.json"), dir.path("s1.json"));
    let short = spawn_shard(&url, &["--rate", "200", "-d", "1s"], Some((0, 2)), &j0);
    let mut long = spawn_shard(&url, &["--rate", "200", "-d", "60s"], Some((1, 2)), &j1);
    // Shard 0 ending means the shared start has passed: shard 1 is mid-run.
    let o = short.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    long.kill().unwrap();
    long.wait().unwrap();
    // What it closed before the kill is on disk, as a partial result (docs/outputs.md).
    let o = run_herd(&["report", j1.to_str().unwrap()]);
    assert!(stdout(&o).contains("partial result"), "{}", stderr(&o));
    let total = dir.path("total.json");
    let o = run_herd(&["merge", j0.to_str().unwrap(), "-o", total.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(text.contains("PARTIAL"), "{text}");
    assert_eq!(
        o.status.code(),
        Some(9),
        "a partial merge never exits 0: {text}"
    );
    let m = read_json(&total);
    assert_eq!(
        m["shard"]["missing"],
        serde_json::json!([1]),
        "{}",
        m["shard"]
    );
    assert_eq!(
        m["totals"]["scheduled"], 100,
        "shard 0's half, never scaled up"
    );
}
