//! Shards end to end: `herd run --shard I/N --start-at`, `herd merge`, `herd k8s render` and
//! `herd k8s collect`, against the mock server.
//!
//! Each shard plays its stripe of the plan (crates/engine/tests/segment.rs proves the arithmetic;
//! the tests at the end run the split against nginx and a server that refuses shared logins).

use crate::common::{
    assert_matches_schema, herd, mock, read_json, run_herd, stderr, stdout, TempDir,
};
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
fn an_instance_ready_after_the_start_exits_7_unless_late_skip() {
    let s = mock(&[]);
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

/// Starts `herd run` for shard `i` of `n` (or the whole plan) of an open-model plan against
/// `url`, from its own loopback address, writing `json`.
fn spawn_shard(
    url: &str,
    load: &[&str],
    shard: Option<(u64, u64)>,
    json: &std::path::Path,
) -> std::process::Child {
    let mut cmd = herd();
    cmd.args(["run", url, "-t", "1", "-q"]).args(load);
    if let Some((i, n)) = shard {
        cmd.args(["--shard", &format!("{i}/{n}"), "--start-at", "+2s"])
            .args(["--bind", &format!("127.0.0.{}", i + 2)]);
    }
    cmd.arg("--json")
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn four_shards_on_one_machine_send_exactly_the_single_runs_schedule() {
    let nginx = crate::common::Nginx::start("");
    let url = nginx.url("/");
    let dir = TempDir::new("four-shards");
    let load = ["--rate", "2000", "-d", "3s", "-c", "200"];
    let single = dir.path("single.json");
    let o = spawn_shard(&url, &load, None, &single)
        .wait_with_output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let jsons: Vec<_> = (0..4)
        .map(|i| dir.path(&format!("shard-{i}.json")))
        .collect();
    let children: Vec<_> = (0..4)
        .map(|i| spawn_shard(&url, &load, Some((i, 4)), &jsons[i as usize]))
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let one = read_json(&single);
    let parts: Vec<_> = jsons.iter().map(|j| read_json(j)).collect();
    // Each shard sent its own quarter of the arrivals, not the whole plan.
    for p in &parts {
        assert_eq!(p["totals"]["scheduled"], 1500, "{}", p["totals"]);
    }
    let total = dir.path("total.json");
    let back = dir.path("back.json");
    let paths: Vec<&str> = jsons.iter().map(|j| j.to_str().unwrap()).collect();
    let reversed: Vec<&str> = paths.iter().rev().copied().collect();
    for (order, out) in [(&paths, &total), (&reversed, &back)] {
        let mut args = vec!["merge"];
        args.extend(order.iter());
        args.extend(["-o", out.to_str().unwrap()]);
        let o = run_herd(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read(&total).unwrap(),
        std::fs::read(&back).unwrap()
    );
    let m = read_json(&total);
    for k in ["scheduled", "sent", "completed", "ok"] {
        assert_eq!(m["totals"][k], one["totals"][k], "{k}: merged vs single");
    }
    assert_eq!(m["totals"]["scheduled"], 6000);
    assert_eq!(m["latency_ms"]["count"], one["latency_ms"]["count"]);
    // The same server at the same rate: the medians agree within loopback jitter (the merged
    // percentiles are recomputed from the added histograms; merge's own tests prove that exact).
    let (a, b) = (
        m["latency_ms"]["p50"].as_f64().unwrap(),
        one["latency_ms"]["p50"].as_f64().unwrap(),
    );
    assert!(
        (a - b).abs() <= 1.0 + 0.5 * b,
        "p50: merged {a} ms, single {b} ms"
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
    assert!(!j1.exists(), "a killed shard writes nothing");
    let total = dir.path("total.json");
    let o = run_herd(&["merge", j0.to_str().unwrap(), "-o", total.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(text.contains("PARTIAL"), "{text}");
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

/// Logins seen and refused by [`login_server`].
#[derive(Default)]
struct Logins {
    active: std::collections::HashSet<String>,
    seen: std::collections::BTreeSet<String>,
    refused: u64,
}

/// A server that refuses (409) a second concurrent login of the same user: `POST /login` and
/// `POST /logout` with a form body `user=NAME`.
fn login_server() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::Mutex<Logins>>,
) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let state = std::sync::Arc::new(std::sync::Mutex::new(Logins::default()));
    let shared = std::sync::Arc::clone(&state);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let state = std::sync::Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match conn.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&pending[..end]).to_string();
                    let len = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if pending.len() < end + 4 + len {
                        match conn.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    }
                    let body =
                        String::from_utf8_lossy(&pending[end + 4..end + 4 + len]).to_string();
                    pending.drain(..end + 4 + len);
                    let user = body.strip_prefix("user=").unwrap_or_default().to_owned();
                    let mut s = state.lock().unwrap();
                    let code = if head.starts_with("POST /login") {
                        if s.active.insert(user.clone()) {
                            s.seen.insert(user);
                            200
                        } else {
                            s.refused += 1;
                            409
                        }
                    } else {
                        s.active.remove(&user);
                        200
                    };
                    drop(s);
                    let reply = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
                    if conn.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, state)
}

#[test]
fn shards_never_log_in_as_the_same_user() {
    let (addr, logins) = login_server();
    let dir = TempDir::new("shard-logins");
    let users: String = (0..10).map(|i| format!("user{i}\n")).collect();
    std::fs::write(dir.path("users.csv"), format!("user\n{users}")).unwrap();
    let plan = dir.path("logins.yaml");
    std::fs::write(
        &plan,
        format!(
            "target: http://{addr}
load: {{ model: closed, users: 10, duration: 2s }}
data: {{ users: {{ csv: users.csv, pick: per-user }} }}
scenarios:
  - name: session
    steps:
      - post: /login
        form: {{ user: \"{{{{users.user}}}}\" }}
      - think: 20ms
      - post: /logout
        form: {{ user: \"{{{{users.user}}}}\" }}
"
        ),
    )
    .unwrap();
    let plan = plan.to_str().unwrap().to_owned();
    let children: Vec<_> = (0..3)
        .map(|i| {
            herd()
                .args([
                    "run",
                    &plan,
                    "-q",
                    "--shard",
                    &format!("{i}/3"),
                    "--start-at",
                    "+2s",
                ])
                .args(["--bind", &format!("127.0.0.{}", i + 2)])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let l = logins.lock().unwrap();
    assert_eq!(l.refused, 0, "two shards logged in as the same user");
    assert_eq!(
        l.seen.len(),
        10,
        "every user played, by one shard each: {:?}",
        l.seen
    );
}

#[test]
fn a_late_shard_skips_what_it_missed_and_counts_it() {
    let nginx = crate::common::Nginx::start("");
    let url = nginx.url("/");
    let dir = TempDir::new("late-skip");
    let json = dir.path("late.json");
    // The shared start was two seconds ago (RFC 3339 in whole seconds: 2 to 3 s late).
    let start = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
    let at = humantime::format_rfc3339_seconds(start).to_string();
    let o = run_herd(&[
        "run",
        &url,
        "--rate",
        "200",
        "-d",
        "5s",
        "-t",
        "1",
        "-q",
        "--shard",
        "0/1",
        "--start-at",
        &at,
        "--late",
        "skip",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_json(&json);
    let i = &r["shard"]["instances"][0];
    assert_eq!(i["started_late"], true);
    let missed = i["missed"].as_u64().unwrap();
    let scheduled = r["totals"]["scheduled"].as_u64().unwrap();
    assert!((400..=600).contains(&missed), "missed {missed}");
    assert_eq!(
        missed + scheduled,
        1_000,
        "every arrival of the plan is missed or scheduled"
    );
    assert_eq!(
        r["totals"]["dropped"], 0,
        "missed arrivals are not sent in a burst"
    );
}
