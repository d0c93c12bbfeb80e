//! The server's processes watched during a run: by pid, by name (master and workers, how many
//! trees matched), narrowed by --watch-parent.

use super::{samples, HerdServe};
use crate::common::*;
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn watch_pid_samples_a_herd_serve_process_every_second() {
    let server = HerdServe::start();
    let pid = server.child.id().to_string();
    let dir = TempDir::new("watch-pid");
    let json = dir.path("r.json");
    let url = format!("http://{}/", server.addr);
    // A fixed, modest rate: flat out against this fast server, herd's own CPU would be the
    // limit and the run (rightly) judged generator-limited, which is not what this test is about.
    let out = run_herd(&[
        "run",
        "-q",
        "--rate",
        "1000",
        "-c",
        "4",
        "-t",
        "1",
        "-d",
        "3s",
        "--watch-pid",
        &pid,
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    assert!(
        r["totals"]["ok"].as_u64().unwrap() >= 1000,
        "{}",
        r["totals"]
    );
    let p = &r["server"]["processes"][0];
    assert_eq!(p["pid"].to_string(), pid);
    assert!(p.get("name").is_none());
    let s = samples(p);
    // One reading per whole second of the 3 s run (a reading more than half a second late on a
    // busy machine skips a tick), and one when the run ends.
    assert!(s.len() >= 2, "{p}");
    let cpu: f64 = s.iter().map(|x| x["cpu_percent"].as_f64().unwrap()).sum();
    assert!(cpu > 0.0, "herd serve answered thousands of requests: {p}");
    assert!(s.iter().all(|x| x["rss_bytes"].as_u64().unwrap() > 0));
    assert!(s.iter().all(|x| x["fds"].as_u64().unwrap() >= 4), "{p}");
    let ts: Vec<f64> = s.iter().map(|x| x["t"].as_f64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "{ts:?}");
    assert!(ts[0] > 0.0 && ts[ts.len() - 1] < 6.0, "{ts:?}");
    let text = stdout(&out);
    assert!(text.contains(&format!("server     pid {pid}, ")), "{text}");
    assert!(text.contains("cpu mean") && text.contains("rss "), "{text}");
}

#[test]
fn watch_name_counts_nginx_master_and_worker() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("watch-name");
    let json = dir.path("r.json");
    let out = run_herd(&[
        "run",
        "-q",
        "--rate",
        "1000",
        // Room for a stall of the shared test machine: the test watches nginx, it does not
        // judge the generator.
        "-c",
        "50",
        "-t",
        "1",
        "-d",
        "2s",
        "--watch-name",
        "nginx",
        "--json",
        json.to_str().unwrap(),
        &nginx.url("/"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let p = &r["server"]["processes"][0];
    assert_eq!(p["name"], "nginx");
    // Other nginx processes on this machine may be counted too; ours must be.
    let pids: Vec<i64> = p["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    for ours in nginx.pids() {
        assert!(pids.contains(&(ours as i64)), "{ours} not in {pids:?}");
    }
    let s = samples(p);
    assert!(!s.is_empty(), "{p}");
    assert!(
        s.iter().all(|x| x["processes"].as_u64().unwrap() >= 2),
        "{p}"
    );
    assert!(stdout(&out).contains("server     nginx (pids "));
}

/// Pids of processes whose `comm` is `name` right now.
fn pids_named(name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

fn as_pids(v: &Value) -> Vec<u32> {
    let mut p: Vec<u32> = v
        .as_array()
        .map(|a| a.iter().map(|x| x.as_u64().unwrap() as u32).collect())
        .unwrap_or_default();
    p.sort_unstable();
    p
}

#[test]
fn watch_name_says_how_many_process_trees_matched_and_watch_parent_narrows_to_one() {
    // Two unrelated "servers" of one name, unique to this test: tree A is a parent with a child
    // (as nginx's master and worker), tree B a lone process.
    let dir = TempDir::new("trees");
    let name = format!("htree{}", std::process::id() % 1_000_000);
    let exe = dir.path(&name);
    std::fs::copy("/bin/sleep", &exe).unwrap();
    let exe = exe.to_str().unwrap().to_owned();
    let mut a = std::process::Command::new("sh")
        .args(["-c", &format!("{exe} 30 & exec {exe} 30")])
        .spawn()
        .unwrap();
    let mut b = std::process::Command::new(&exe).arg("30").spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids_named(&name).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the three processes never started"
        );
        std::thread::yield_now();
    }
    let all = pids_named(&name);
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let run = |extra: &[&str]| {
        let json = dir.path("r.json");
        let mut args = vec![
            "run",
            "-n",
            "5",
            "-c",
            "1",
            "-t",
            "1",
            "--watch-name",
            &name,
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.push(&url);
        let out = run_herd(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let r = read_json(&json);
        assert_matches_schema("result.schema.json", &r);
        (stdout(&out), r["server"]["processes"][0].clone())
    };

    let (text, p) = run(&[]);
    let (ra, rb) = (a.id(), b.id());
    assert_eq!(as_pids(&p["trees"]), {
        let mut t = vec![ra, rb];
        t.sort_unstable();
        t
    });
    assert!(
        text.contains(&format!("WARNING: {name} matched 2 separate process trees")),
        "{text}"
    );
    assert!(text.contains("--watch-parent PID"), "{text}");

    let parent = ra.to_string();
    let (text, p) = run(&["--watch-parent", &parent]);
    let in_a: Vec<u32> = all.iter().copied().filter(|&p| p != rb).collect();
    assert_eq!(
        as_pids(&p["pids"]),
        in_a,
        "tree A: the parent and its child"
    );
    assert_eq!(as_pids(&p["trees"]), vec![ra]);
    assert_eq!(p["parent"], ra);
    assert!(!text.contains("separate process trees"), "{text}");
    assert!(text.contains(&format!("in the tree of pid {ra}")), "{text}");

    let out = run_herd(&[
        "run",
        "-n",
        "5",
        "--watch-name",
        &name,
        "--watch-parent",
        &std::process::id().to_string(),
        &url,
    ]);
    // The test process is the parent of both trees: everything is in its tree.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A tree without the name is refused before any load.
    let mut other = std::process::Command::new("/bin/sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let out = run_herd(&[
        "run",
        "-n",
        "5",
        "--watch-name",
        &name,
        "--watch-parent",
        &other.id().to_string(),
        &url,
    ]);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("in the tree of pid"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s.stats().requests, 15, "the refused run sent nothing");

    for pid in all {
        kill(pid, libc::SIGKILL);
    }
    let _ = a.wait();
    let _ = b.wait();
}
