//! A run killed with SIGKILL mid-way leaves every second it closed, read as a partial result.

use crate::common::{mock, one_at_a_time, shop_workload, Herd, TempDir};
use std::time::{Duration, Instant};

/// Waits (bounded) until `path` holds `lines` lines: the header and the seconds after it.
fn wait_for_lines(path: &std::path::Path, lines: usize, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let have = std::fs::read_to_string(path).map_or(0, |t| t.lines().count());
        if have >= lines {
            return;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("{} had {have} lines, waited for {lines}", path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_run_killed_mid_way_leaves_a_partial_result_report_and_compare_read() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("killed");
    let json = dir.path("soak.json");
    let url = format!("http://{}/", server.local_addr());
    let mut child = Herd::new(&["run", &url, "-d", "60s", "-c", "2", "-t", "1", "-q"])
        .json(&json)
        .spawn();
    // The header and three closed seconds.
    wait_for_lines(&json, 4, &mut child);
    child.kill().unwrap(); // SIGKILL: nothing of herd runs after it
    child.wait().unwrap();

    let report = Herd::new(&["report", json.to_str().unwrap()]).run();
    report.code(0);
    let text = report.stdout();
    assert!(text.contains("partial result"), "{text}");
    assert!(text.contains("INTERRUPTED"), "{text}");
    // What every second carried is reported, not invented zeros: CPU, bytes out, response
    // size and status codes (they read 0%, 0 B/s out, 0 B and none).
    for invented in ["cpu 0%", " 0 B/s out", "mean 0 B", "not recorded out"] {
        assert!(!text.contains(invented), "{invented:?} in:\n{text}");
    }
    assert!(text.contains("200: "), "{text}");
    assert!(text.contains("user and sys not recorded"), "{text}");
    // The seconds written are all there, with their requests.
    let lines = std::fs::read_to_string(&json).unwrap();
    let seconds = lines.lines().count() - 1;
    assert!(seconds >= 3, "{lines}");
    let compare = Herd::new(&["compare", json.to_str().unwrap(), json.to_str().unwrap()]).run();
    assert!(
        compare.out.status.code() != Some(2),
        "compare reads the partial result: {}",
        compare.stderr()
    );
    assert!(
        compare.stdout().contains("throughput"),
        "{}",
        compare.stdout()
    );
    // Beside each run: how much of it the comparison has.
    assert!(
        compare
            .stdout()
            .contains(&format!("partial ({seconds} of 60 seconds)")),
        "{}",
        compare.stdout()
    );
    // A file from a herd whose seconds did not carry the response size: compare called it
    // "improved -100%"; a figure one side lacks is not judged.
    let old = dir.path("old.json");
    let stripped: Vec<String> = lines
        .lines()
        .enumerate()
        // A line the kill cut short is left out, as the reader leaves it.
        .filter_map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).ok()?;
            if i > 0 {
                for key in ["bytes_sent", "body_bytes", "status"] {
                    v.as_object_mut().unwrap().remove(key);
                }
            }
            Some(v.to_string())
        })
        .collect();
    std::fs::write(&old, stripped.join("\n") + "\n").unwrap();
    let compare = Herd::new(&["compare", json.to_str().unwrap(), old.to_str().unwrap()]).run();
    let size = compare
        .stdout()
        .lines()
        .find(|l| l.trim_start().starts_with("response size"))
        .unwrap_or_else(|| panic!("{}", compare.stdout()))
        .to_owned();
    assert!(size.contains("not recorded"), "{size}");
    assert!(!size.contains("improved") && !size.contains('%'), "{size}");
    let report = Herd::new(&["report", old.to_str().unwrap()]).run();
    assert!(
        report.stdout().contains("size not recorded"),
        "{}",
        report.stdout()
    );
}

#[test]
fn shards_killed_mid_way_merge_as_a_partial_result_of_the_seconds_they_had() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("killed-shards");
    let url = format!("http://{}/", server.local_addr());
    let files = [dir.path("s0.json"), dir.path("s1.json")];
    let mut children: Vec<_> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Herd::new(&["run", &url, "--rate", "100", "-d", "60s", "-t", "1", "-q"])
                .args(&["--shard", &format!("{i}/2"), "--start-at", "+1s"])
                .json(f)
                .spawn()
        })
        .collect();
    for (f, c) in files.iter().zip(&mut children) {
        wait_for_lines(f, 4, c);
    }
    for c in &mut children {
        c.kill().unwrap();
        c.wait().unwrap();
    }
    let written: u64 = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines()
                .skip(1)
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .map(|v| v["ok"].as_u64().unwrap() + v["failed"].as_u64().unwrap())
                .collect::<Vec<_>>()
        })
        .sum();
    let merged = dir.path("merged.json");
    let mut args = vec!["merge", "-o", merged.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let ran = Herd::new(&args).run();
    assert!(ran.stdout().contains("partial result"), "{}", ran.stdout());
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(m["interrupted"], true);
    assert_eq!(m["shard"]["count"], 2);
    assert_eq!(m["totals"]["completed"].as_u64().unwrap(), written);
}

/// The stream's seconds carry what a workload counts (per request name, scenario and check, and
/// the load), and a killed workload run's partial result keeps them.
#[test]
fn a_killed_workload_run_keeps_its_seconds_per_name_scenario_and_check() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("killed-workload");
    let json = dir.path("shop.json");
    let file = shop_workload(
        &dir,
        server.local_addr(),
        "model: open, rate: 50, max_connections: 4, duration: 60s",
    );
    let mut child = Herd::new(&["run", file.to_str().unwrap(), "-t", "1", "-q"])
        .json(&json)
        .spawn();
    wait_for_lines(&json, 4, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();

    let text = std::fs::read_to_string(&json).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let (mut home, mut checks, mut iterations, mut ended) = (0, 0, 0, 0);
    for l in &lines {
        for n in l["by_name"].as_array().unwrap() {
            if n["name"] == "home" {
                home += n["ok"].as_u64().unwrap();
            }
        }
        for c in l["checks"].as_array().unwrap() {
            assert_eq!(c["name"], "home: status 200");
            checks += c["passes"].as_u64().unwrap();
        }
        for s in l["scenarios"].as_array().unwrap() {
            assert_eq!(s["name"], "browse");
            iterations += s["iterations"].as_u64().unwrap();
        }
        ended += l["requests"].as_u64().unwrap();
        assert!(l["scheduled"].as_u64().unwrap() >= l["requests"].as_u64().unwrap());
        assert!(l["service_histogram"].is_string(), "{l}");
    }
    // 50 iterations a second of two requests each, for three seconds or more.
    assert!(home >= 100 && iterations >= 100, "{home} {iterations}");
    // One check per home request; a worker hands its checks over at the tick that closes a
    // second, up to 10 ms after the responses' own second ended, so the last second written
    // may hold a check or two whose response falls in the next.
    assert!(
        checks.abs_diff(home) <= 2,
        "{checks} checks, {home} home requests"
    );
    assert!(
        ended >= 2 * home - 2,
        "{ended} requests, {home} of them home"
    );

    let report = Herd::new(&["report", json.to_str().unwrap()]).run();
    report.code(0);
    let out = report.stdout();
    assert!(out.contains("partial result"), "{out}");
    assert!(
        out.contains("home: status 200"),
        "the check is reported: {out}"
    );
}

/// Waits (bounded) until `path` holds a whole result whose `key` lists `n` entries.
fn wait_for_entries(path: &std::path::Path, key: &str, n: usize) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let read = std::fs::read(path).ok();
        let value = read.and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        if let Some(v) = value.filter(|v| v[key].as_array().is_some_and(|a| a.len() >= n)) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "{} has no {n} {key} after 30 s",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_sweep_or_capacity_search_killed_mid_way_leaves_the_steps_it_ran_for_report() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("killed-series");
    let series = [
        (
            "sweep.json",
            "steps",
            "sweep.schema.json",
            vec!["sweep", &url, "--rates", "50,100,150"],
        ),
        (
            "capacity.json",
            "probes",
            "capacity.schema.json",
            vec!["capacity", &url, "--slo", "errors<5%", "--start", "500"],
        ),
    ];
    for (file, key, schema, args) in series {
        let json = dir.path(file);
        // After the first step herd sits in a ten-minute cooldown: the kill comes mid-series.
        let mut child = Herd::new(&args)
            .args(&["--cooldown", "10m", "-t", "1", "-q"])
            .args(if key == "steps" {
                &["--step-duration", "500ms"]
            } else {
                &["--probe-duration", "500ms"]
            })
            .json(&json)
            .spawn();
        let written = wait_for_entries(&json, key, 1);
        child.kill().unwrap(); // SIGKILL: nothing of herd runs after it
        child.wait().unwrap();
        crate::common::assert_matches_schema(schema, &written);
        assert_eq!(
            written["interrupted"], true,
            "{file}: later steps did not run"
        );
        // A series' report is a page: herd report reads the file the kill left.
        let page = dir.path(&format!("{key}.html"));
        let report = Herd::new(&["report", json.to_str().unwrap()])
            .file("-o", &page)
            .run();
        report.code(0);
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(
            html.to_lowercase().contains("interrupted"),
            "{file}: {html}"
        );
    }
    server.shutdown();
}
