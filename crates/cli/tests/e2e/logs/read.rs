//! `herd logs` on the logs a real nginx wrote while driven with a known mix, `herd logs
//! --against` a run's result, and bad input refused with a clear message.

use super::{drive_known_mix, nginx_logging, share, MSEC, TIMED};
use crate::common::*;
use std::path::Path;

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
    assert_matches_schema("logs.schema.json", &r);
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
    // A model of the timed log, for the nginx it came from, written to `to`.
    let model = |to: &Path, extra: &[&str]| {
        let format = format!("nginx:{TIMED}");
        let target = nginx.url("");
        let mut args = vec!["model", timed.to_str().unwrap(), "--format", &format];
        args.extend(["-o", to.to_str().unwrap(), "--target", &target]);
        args.extend(extra);
        run_herd(&args)
    };
    let out = model(&yaml, &["--scale", "2x"]);
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
    let out = model(&short, &["--duration", "2s"]);
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
    // A URL run's one type is its method and path, herd's count beside the log's (not `herd 0`).
    let types = c["by_type"].as_array().unwrap();
    assert_eq!(types.len(), 1, "{types:?}");
    assert_eq!(types[0]["name"], "GET /items/7");
    assert_eq!(
        (types[0]["herd"].as_u64(), types[0]["logged"].as_u64()),
        (Some(300), Some(300))
    );

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
}

/// `herd logs` and `herd model` checked their outputs by a rule of their own, whose message named
/// no flag and no fix: now by the one check every command's outputs get.
#[test]
fn an_output_in_a_missing_directory_is_refused_as_every_command_refuses_it() {
    let dir = TempDir::new("logs-out-missing");
    let log = dir.path("access.log");
    std::fs::write(
        &log,
        "127.0.0.1 - - [24/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"x\"\n",
    )
    .unwrap();
    let log = log.to_str().unwrap();
    for (command, flag, file) in [
        ("logs", "--json", "nowhere/logs.json"),
        ("logs", "-o", "nowhere/logs.html"),
        ("model", "-o", "nowhere/shop.yaml"),
    ] {
        let path = dir.path(file);
        let ran = Herd::new(&[command, log]).file(flag, &path).run();
        ran.refused_path(&path);
        assert!(
            ran.stderr().contains(flag),
            "{command} {flag}: {}",
            ran.stderr()
        );
    }
}
