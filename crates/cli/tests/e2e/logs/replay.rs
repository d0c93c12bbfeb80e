//! `herd replay`: a dry run's schedule, and replays against nginx that follow the log's
//! per-second shape, skip what is not idempotent, compare production's time taken, and loop.

use crate::common::*;
use std::path::Path;

#[test]
fn replay_dry_run_spreads_seconds_and_counts_skipped_methods() {
    let dir = TempDir::new("replay");
    let log = dir.path("a.log");
    let line = |s: u32, m: &str, p: &str| {
        format!("1.1.1.1 - - [24/Nov/2026:10:00:{s:02} +0000] \"{m} {p} HTTP/1.1\" 200 1 \"-\" \"ua\"\n")
    };
    let mut text = String::new();
    for _ in 0..4 {
        text.push_str(&line(0, "GET", "/a"));
    }
    text.push_str(&line(0, "POST", "/cart"));
    text.push_str(&line(2, "GET", "/b"));
    text.push_str(&line(2, "GET", "/static/x.css"));
    std::fs::write(&log, text).unwrap();
    let out = run_herd(&[
        "replay",
        log.to_str().unwrap(),
        "--dry-run",
        "--speed",
        "2",
        "--exclude",
        "\\.css$",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let o = stdout(&out);
    assert!(o.contains("would send 5 requests"), "{o}");
    assert!(
        o.contains("1 by method (POST 1)") && o.contains("1 by --include/--exclude"),
        "{o}"
    );
    // four requests spread over the first second, halved by --speed 2
    assert!(o.contains("     0.375 s  GET /a"), "{o}");
    assert!(o.contains("     1.000 s  GET /b"), "{o}");
    // without --dry-run it needs somewhere to send them, and says so
    let out = run_herd(&["replay", log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--target"), "{}", stderr(&out));
    // a target where nothing listens: nothing answered (exit 6), not a pass
    let out = run_herd(&[
        "replay",
        log.to_str().unwrap(),
        "--target",
        "http://127.0.0.1:9",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
}

/// `herd replay LOG --target NGINX EXTRA -q --json JSON`, which must exit 0.
fn replay(log: &Path, nginx: &Nginx, extra: &[&str], json: &Path) -> Ran {
    let ran = Herd::new(&["replay", log.to_str().unwrap(), "--target", &nginx.url("/")])
        .args(extra)
        .args(&["-q"])
        .json(json)
        .run();
    ran.code(0);
    ran
}

/// A combined log with a known per-second shape (a burst in the 4th second), each second's
/// requests at whole-second times (as nginx's `$time_local` writes them), and one POST a second.
fn shaped_log(dir: &TempDir, counts: &[usize]) -> std::path::PathBuf {
    let mut log = String::new();
    for (s, &c) in counts.iter().enumerate() {
        // 1,700,000,000 s after the epoch is 14 Nov 2023 22:13:20 UTC.
        let stamp = format!("14/Nov/2023:22:13:{:02} +0000", 20 + s);
        for i in 0..c {
            log.push_str(&format!(
                "127.0.0.1 - - [{stamp}] \"GET /items/{i} HTTP/1.1\" 200 12 \"-\" \"replay-test\"\n"
            ));
        }
        log.push_str(&format!(
            "127.0.0.1 - - [{stamp}] \"POST /cart HTTP/1.1\" 200 12 \"-\" \"replay-test\"\n"
        ));
    }
    let path = dir.path("shaped.log");
    std::fs::write(&path, log).unwrap();
    path
}

#[test]
fn a_replay_follows_the_logs_per_second_shape_and_skips_what_is_not_idempotent() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("replay");
    let counts = [10, 50, 5, 100, 20];
    let log = shaped_log(&dir, &counts);
    let json = dir.path("replay.json");
    let out = replay(&log, &nginx, &[], &json);
    let text = out.stdout();
    assert!(text.contains("skipped 5 by method"), "{text}");
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    assert_eq!(r["totals"]["ok"], 185, "every GET once");
    let per_sec: Vec<u64> = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(per_sec.len(), counts.len(), "{per_sec:?}");
    for (got, want) in per_sec.iter().zip(counts) {
        // an answer can land just past its second's end on a busy machine
        assert!(
            got.abs_diff(want as u64) <= 3,
            "{per_sec:?} against {counts:?}"
        );
    }
    assert_eq!(r["by_name"][0]["name"], "GET /items/{id}");

    // Twice as fast: the same requests in half the time.
    replay(&log, &nginx, &["--speed", "2"], &json);
    let r = read_json(&json);
    assert_eq!(r["totals"]["ok"], 185);
    assert_eq!(
        r["timeline"].as_array().unwrap().len(),
        3,
        "4.x s of log in 2.x s"
    );
}

#[test]
fn a_replay_puts_productions_time_taken_beside_its_own_and_can_loop() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("replay-taken");
    let log = shaped_log(&dir, &[20, 20]);
    // the same log with nginx's $request_time after each line: 5 ms in production
    let timed = dir.path("timed.log");
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("\"replay-test\"\n", "\"replay-test\" 0.005\n");
    std::fs::write(&timed, text).unwrap();
    let json = dir.path("r.json");
    let out = replay(&timed, &nginx, &[], &json);
    assert!(
        out.stdout().contains("production against now"),
        "{}",
        out.stdout()
    );
    let r = read_json(&json);
    let row = &r["replay"]["production_vs_now"][0];
    assert_eq!(row["name"], "GET /items/{id}");
    assert_eq!(row["production_ms"]["count"], 40);
    let p50 = row["production_ms"]["p50"].as_f64().unwrap();
    assert!(
        (p50 - 5.0).abs() < 0.01,
        "5 ms within the histogram's precision: {p50}"
    );
    assert_eq!(row["now_ms"]["count"], 40);

    // --loop: the two seconds of log again and again for 5 s
    replay(&log, &nginx, &["--loop", "-d", "5s"], &json);
    let r = read_json(&json);
    let ok = r["totals"]["ok"].as_u64().unwrap();
    assert!((95..=105).contains(&ok), "about 20 a second for 5 s: {ok}");
}

#[test]
fn a_replay_takes_runs_load_flags_and_refuses_those_its_log_decides() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("replay-load-flags");
    let log = shaped_log(&dir, &[2, 2]);
    let log = log.to_str().unwrap();
    let url = nginx.url("/");
    // `herd run`'s flags, refused with the reason: the log decides the requests and their times.
    let out = run_herd(&[
        "replay", log, "--target", &url, "-n", "5", "--warmup", "1s", "-q",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("-n/--requests, --warmup cannot be combined with a log replay")
            && err.contains("the log says which requests are sent and when"),
        "{err}"
    );
    // A log that cannot be read and an output that cannot be written: told together.
    let missing = dir.path("missing.log");
    let json = dir.path("no-such-dir/r.json");
    let out = run_herd(&[
        "replay",
        missing.to_str().unwrap(),
        "--target",
        &url,
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cannot read") && err.contains("missing.log"),
        "{err}"
    );
    assert!(
        err.contains("no-such-dir") && err.contains("nothing was sent"),
        "{err}"
    );
    // The load flags it shares with `herd run` apply: -c caps the connections, -t the threads.
    let json = dir.path("r.json");
    replay(Path::new(log), &nginx, &["-c", "3", "-t", "2"], &json);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["config"]["threads"], 2, "{}", r["config"]);
    assert_eq!(r["config"]["connections"], 3, "{}", r["config"]);
}
