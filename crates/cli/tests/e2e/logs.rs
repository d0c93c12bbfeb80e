//! `herd logs`, `herd model`, `herd replay --dry-run` on logs a real nginx wrote while driven
//! with a known mix, and `herd logs --against` on a real run's result and nginx's log of it.

use crate::common::*;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

const TIMED: &str = r#"log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time';"#;
const MSEC: &str =
    r#"log_format msec '$msec $remote_addr "$request" $status $body_bytes_sent $request_time';"#;
const JSON: &str = r#"log_format js escape=json '{"time_iso8601":"$time_iso8601","remote_addr":"$remote_addr","request":"$request","status":"$status","body_bytes_sent":"$body_bytes_sent","request_time":"$request_time","http_user_agent":"$http_user_agent"}';"#;

/// nginx with the three log formats in its http block, each to its own file in its directory.
fn nginx_logging() -> Nginx {
    Nginx::start_configured(
        &format!("{TIMED}\n    {MSEC}\n    {JSON}"),
        "access_log timed.log timed;\n        \
         access_log msec.log msec;\n        \
         access_log json.log js;",
        "",
    )
}

/// One GET on its own connection, read to the end (nginx has logged it when it closes).
fn get_once(addr: SocketAddr, path: &str, agent: &str) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {agent}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    assert!(
        out.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

/// 200 requests: half item pages (ids 1..37), 30% searches, 20% the home page.
fn drive_known_mix(addr: SocketAddr) {
    for i in 0..200 {
        let path = match i % 10 {
            0..=4 => format!("/items/{}", i % 37 + 1),
            5..=7 => format!("/search?q=term{i}"),
            _ => "/".to_owned(),
        };
        get_once(addr, &path, &format!("agent-{}", i % 4));
    }
}

fn share(r: &serde_json::Value, name: &str) -> f64 {
    r["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .map_or(0.0, |t| t["share"].as_f64().unwrap())
}

fn logs_schema_check(doc: &serde_json::Value) {
    let path = format!(
        "{}/../../schema/logs.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn nginx_log_with_request_time_gives_back_the_mix_it_was_driven_with() {
    let nginx = nginx_logging();
    drive_known_mix(nginx.addr);
    let logs = nginx.dir.0.clone();
    let out_dir = TempDir::new("logs-out");
    let json = out_dir.path("logs.json");
    let html = out_dir.path("logs.html");
    let timed = logs.join("timed.log");
    let out = run_herd(&[
        "logs",
        timed.to_str().unwrap(),
        "--format",
        &format!("nginx:{TIMED}"),
        "--json",
        json.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("GET /items/{id}"), "{text}");
    let r = read_json(&json);
    logs_schema_check(&r);
    assert_eq!(r["input"]["records"], 200);
    assert_eq!(r["input"]["bad_lines"], 0);
    assert_eq!(share(&r, "GET /items/{id}"), 50.0);
    assert_eq!(share(&r, "GET /search?q={q}"), 30.0);
    assert_eq!(share(&r, "GET /"), 20.0);
    assert_eq!(r["time_taken_ms"]["count"], 200);
    assert_eq!(r["types"][0]["ids"]["distinct"], 37);
    assert_eq!(r["status_classes"]["2xx"], 200);
    assert_eq!(r["clients"]["distinct"], 4);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("GET /items/{id}"));
    // `herd report` draws the same page from the JSON
    assert_eq!(html_report(&json), page);

    // the same requests from the JSON log (format told by its lines) and the $msec one
    for (file, format) in [
        ("json.log", "auto".to_owned()),
        ("msec.log", format!("nginx:{MSEC}")),
    ] {
        let j = out_dir.path(&format!("{file}.json"));
        let out = run_herd(&[
            "logs",
            logs.join(file).to_str().unwrap(),
            "--format",
            &format,
            "--json",
            j.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let r = read_json(&j);
        assert_eq!(r["input"]["records"], 200, "{file}");
        assert_eq!(share(&r, "GET /items/{id}"), 50.0, "{file}");
        assert_eq!(share(&r, "GET /search?q={q}"), 30.0, "{file}");
    }

    // and the model from it passes `herd validate`
    let yaml = out_dir.path("workload.yaml");
    let out = run_herd(&[
        "model",
        timed.to_str().unwrap(),
        "--format",
        &format!("nginx:{TIMED}"),
        "-o",
        yaml.to_str().unwrap(),
        "--target",
        &nginx.url(""),
        "--scale",
        "2x",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let w = std::fs::read_to_string(&yaml).unwrap();
    assert!(
        w.contains("weight: 5000") && w.contains("weight: 3000") && w.contains("weight: 2000"),
        "{w}"
    );
    let out = run_herd(&["validate", yaml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{w}", stderr(&out));
    // ... and the model runs against the system the log came from.
    let short = out_dir.path("short.yaml");
    let out = run_herd(&[
        "model",
        timed.to_str().unwrap(),
        "--format",
        &format!("nginx:{TIMED}"),
        "-o",
        short.to_str().unwrap(),
        "--target",
        &nginx.url(""),
        "--duration",
        "2s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ran = Herd::new(&["run", short.to_str().unwrap(), "-q"])
        .json(&out_dir.path("model-run.json"))
        .run();
    let r = ran.json();
    assert!(r["totals"]["ok"].as_u64().unwrap() > 0, "{}", ran.stdout());
    assert_eq!(r["totals"]["errors"], 0, "{}", ran.stdout());
}

#[test]
fn against_a_run_nginx_logged_agrees_and_a_foreign_log_is_flagged() {
    let nginx = nginx_logging();
    let dir = TempDir::new("against");
    let result = dir.path("r.json");
    let out = run_herd(&[
        "run",
        "-c",
        "2",
        "-n",
        "300",
        "-t",
        "1",
        "--json",
        result.to_str().unwrap(),
        &nginx.url("/items/7"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let msec = nginx.dir.path("msec.log");
    let cmp = dir.path("cmp.json");
    let out = run_herd(&[
        "logs",
        "--against",
        result.to_str().unwrap(),
        msec.to_str().unwrap(),
        "--format",
        &format!("nginx:{MSEC}"),
        "--json",
        cmp.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("agree"), "{}", stdout(&out));
    let c = read_json(&cmp);
    assert_eq!(c["herd_requests"], 300);
    assert_eq!(c["logged"], 300);

    // a log that lost a third of the run's lines is flagged, exit 3
    let text = std::fs::read_to_string(&msec).unwrap();
    let kept: String = text
        .lines()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let lossy = dir.path("lossy.log");
    std::fs::write(&lossy, kept).unwrap();
    let out = run_herd(&[
        "logs",
        "--against",
        result.to_str().unwrap(),
        lossy.to_str().unwrap(),
        "--format",
        &format!("nginx:{MSEC}"),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("FLAG lost: herd counted 300 requests, the server logged 200"),
        "{}",
        stdout(&out)
    );
}

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

#[test]
fn bad_input_is_a_clear_message() {
    let dir = TempDir::new("logs-bad");
    let log = dir.path("garbage.log");
    std::fs::write(&log, "not a log\nat all\n").unwrap();
    let out = run_herd(&["logs", log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not one of the 2 lines"),
        "{}",
        stderr(&out)
    );
    let out = run_herd(&["logs", dir.path("missing.log").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let out = run_herd(&["logs", log.to_str().unwrap(), "--format", "weird"]);
    assert!(
        stderr(&out).contains("is not a log format"),
        "{}",
        stderr(&out)
    );
    let _ = Path::new("");
}

/// A seeded Combined log: 40,000 requests over 400 s from 100 clients, 60% item pages with
/// Zipf(1.1) ids over 2,000 items, 25% searches, 15% the home page.
fn synthetic_log(path: &Path) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let weights: Vec<f64> = (1..=2000).map(|k| (k as f64).powf(-1.1)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::new();
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cdf.push(acc);
    }
    let mut out = String::new();
    for i in 0..40_000u32 {
        let sec = i / 100;
        let u = uniform();
        let p = if u < 0.6 {
            let v = uniform();
            format!("/items/{}", cdf.partition_point(|c| *c < v) + 1)
        } else if u < 0.85 {
            format!("/search?q=w{}", i % 997)
        } else {
            "/".to_owned()
        };
        out.push_str(&format!(
            "10.1.0.{} - - [24/Nov/2026:10:{:02}:{:02} +0000] \"GET {p} HTTP/1.1\" 200 512 \"-\" \"ua\" {}\n",
            i % 100,
            sec / 60,
            sec % 60,
            2000 + i % 1000
        ));
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn model_recovers_a_known_mix_and_zipf_exponent_and_validates() {
    let dir = TempDir::new("model");
    let log = dir.path("synthetic.log");
    synthetic_log(&log);
    let yaml = dir.path("w.yaml");
    let out = run_herd(&[
        "model",
        log.to_str().unwrap(),
        "-o",
        yaml.to_str().unwrap(),
        "--scale",
        "2x",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let w = std::fs::read_to_string(&yaml).unwrap();
    let weight = |name: &str| -> f64 {
        let at = w
            .find(&format!("- name: '{name}'"))
            .unwrap_or_else(|| panic!("no scenario {name}:\n{w}"));
        let rest = &w[at..];
        let n = rest
            .split("weight: ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        n.parse::<f64>().unwrap() / 100.0
    };
    assert!((weight("GET /items/{id}") - 60.0).abs() < 2.0, "{w}");
    assert!((weight("GET /search?q={q}") - 25.0).abs() < 2.0, "{w}");
    assert!((weight("GET /") - 15.0).abs() < 2.0, "{w}");
    let s: f64 = w
        .split("zipf: { n: ")
        .nth(1)
        .and_then(|r| r.split("s: ").nth(1))
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((s - 1.1).abs() < 0.05, "fitted s = {s}\n{w}");
    // the peak second (100 requests) times --scale 2x
    assert!(w.contains("= 200 req/s (peak second x 2 --scale)"), "{w}");
    let out = run_herd(&["validate", yaml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{w}", stderr(&out));
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
