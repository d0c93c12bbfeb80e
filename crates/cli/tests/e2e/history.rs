//! Results over time end to end: `herd run --store --label`, `herd store add`, `herd history
//! ls|show|trend|detect|baseline`, `herd compare --baseline`, against the mock server, in
//! SQLite and in a PostgreSQL cluster the test starts.

use crate::common::*;
use herd_result::{decode_histogram, encode_histogram, summarize_us, RunResult};
use std::path::{Path, PathBuf};

/// The mock on `port`, answering after normal(`mean_ms`, 1 ms).
fn mock_at(port: u16, mean_ms: u32) -> herd_mock::Server {
    herd_mock::Server::start(herd_mock::Config {
        listen: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        routes: vec![
            herd_mock::Route::parse(&format!("/* latency=normal:{mean_ms}ms:1ms")).unwrap(),
        ],
        ..herd_mock::Config::default()
    })
    .unwrap()
}

fn read_run(path: &Path) -> RunResult {
    herd_result::parse_json(&std::fs::read_to_string(path).unwrap(), "run").unwrap()
}

fn scaled(text: &str, factor: f64) -> (String, hdrhistogram::Histogram<u64>) {
    let h = decode_histogram(text).unwrap();
    let mut out = hdrhistogram::Histogram::<u64>::new_from(&h);
    for v in h.iter_recorded() {
        let x = ((v.value_iterated_to() as f64) * factor).round().max(1.0) as u64;
        out.record_n(x, v.count_at_value()).unwrap();
    }
    (encode_histogram(&out), out)
}

/// Run `i` of a series made from a real run: started `i` hours later, labelled
/// `commit=cNN`, every latency multiplied by `factor`.
fn variant(base: &RunResult, i: usize, factor: f64) -> RunResult {
    let mut r = base.clone();
    let (text, h) = scaled(&r.histograms.latency, factor);
    r.histograms.latency = text;
    r.latency_ms = summarize_us(&h);
    for e in &mut r.timeline {
        e.p50_ms *= factor;
        e.p90_ms *= factor;
        e.p99_ms *= factor;
        e.max_ms *= factor;
        e.latency_histogram = e.latency_histogram.as_ref().map(|t| scaled(t, factor).0);
    }
    let start = r.timeline_start_unix_s.unwrap() + 3600 * i as u64;
    r.timeline_start_unix_s = Some(start);
    r.started_at = time::OffsetDateTime::from_unix_timestamp(start as i64)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    r.config.labels.insert("commit".into(), format!("c{i:02}"));
    r
}

/// A seeded wobble in [-j, j].
fn wobble(i: usize, j: f64) -> f64 {
    let x = ((i as u64 * 2_654_435_761) % 1000) as f64 / 999.0;
    (2.0 * x - 1.0) * j
}

fn write_run(dir: &TempDir, name: &str, r: &RunResult) -> PathBuf {
    let p = dir.path(name);
    let mut buf = Vec::new();
    herd_result::write_json(r, &mut buf).unwrap();
    std::fs::write(&p, buf).unwrap();
    p
}

/// `herd run` of the mock on `port`: closed, 4 connections, 2 s, stored with `labels`.
fn real_run(port: u16, store: &str, labels: &[&str], json: &Path) -> Ran {
    let url = format!("http://127.0.0.1:{port}/");
    let mut cmd = Herd::new(&[
        "run", &url, "-c", "4", "-d", "2s", "-t", "1", "-q", "--store", store,
    ]);
    for l in labels {
        cmd = cmd.args(&["--label", l]);
    }
    cmd.file("--json", json).run()
}

/// The bars, in SQLite: 40 runs (3 real `herd run --store` runs against the mock, 37 made
/// from the middle one's histograms and stored with `herd store add`), p99 20% higher from run 26
/// on: `history detect` names run 26 (±1) and nothing else; `compare --baseline --last 10`
/// passes a run of the same population and catches a halved rate (exit 3).
#[test]
fn history_names_the_run_that_raised_p99_and_compare_against_the_last_ten_gates() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("history");
    let db = dir.path("runs.db");
    let store = db.to_str().unwrap();
    let port = free_port();
    let server = mock_at(port, 10);
    for i in 1..=3 {
        let json = dir.path(&format!("r{i}.json"));
        let commit = format!("commit=r{i}");
        let ran = real_run(port, store, &["branch=main", &commit], &json);
        ran.code(0);
        assert!(
            ran.stderr().contains(&format!("stored as run #{i} in")),
            "{}",
            ran.stderr()
        );
        assert_eq!(
            read_run(&json).config.labels["commit"],
            format!("r{i}"),
            "labels in the JSON"
        );
    }
    let first = read_run(&dir.path("r1.json"));
    // The made runs come from the real run whose p99 is the middle one, so the three real
    // runs' p99s lie around the made runs' level: a real run that a busy machine made slow is
    // not a step of its own (made from a slow r1, the made runs read +12.9% at run #4).
    let mut real: Vec<RunResult> = (1..=3)
        .map(|i| read_run(&dir.path(&format!("r{i}.json"))))
        .collect();
    real.sort_by(|a, b| a.latency_ms.p99.total_cmp(&b.latency_ms.p99));
    let base = real.swap_remove(1);
    let files: Vec<PathBuf> = (3..40)
        .map(|i| {
            let level = if i + 1 >= 26 { 1.2 } else { 1.0 };
            write_run(
                &dir,
                &format!("s{i}.json"),
                &variant(&base, i, level * (1.0 + wobble(i, 0.02))),
            )
        })
        .collect();
    let mut add = vec!["store", "add", "--store", store];
    add.extend(files.iter().map(|p| p.to_str().unwrap()));
    let out = run_herd(&add);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).matches("stored as run #").count(),
        37,
        "{}",
        stdout(&out)
    );

    let ls = dir.path("ls.json");
    let out = run_herd(&[
        "history",
        "ls",
        "--store",
        store,
        "--label",
        "branch=main",
        "--json",
        ls.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("40 runs"), "{}", stdout(&out));
    assert_eq!(read_json(&ls).as_array().unwrap().len(), 40);

    let found = dir.path("detect.json");
    let out = run_herd(&[
        "history",
        "detect",
        "--store",
        store,
        "--metric",
        "p99",
        "--json",
        found.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = read_json(&found);
    let changes = d["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{}", stdout(&out));
    let id = changes[0]["run"]["id"].as_i64().unwrap();
    assert!((25..=27).contains(&id), "run #{id}: {}", stdout(&out));
    assert!(
        stdout(&out).contains("commit=c"),
        "names its commit: {}",
        stdout(&out)
    );

    let page = dir.path("trend.html");
    let out = run_herd(&[
        "history",
        "trend",
        "--store",
        store,
        "--metric",
        "p99,throughput",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("id=\"run-40\""),
        "a chart and the runs"
    );
    // Each point of the chart (2 metrics x 40 runs) and each run's id in the table opens the
    // run's own report, written beside the page.
    let table = html
        .find("<table class=\"runs\"")
        .expect("the table of runs");
    let (chart, rows) = html.split_at(table);
    assert_eq!(chart.matches("<a href=\"trend-runs/run-").count(), 80);
    assert_eq!(rows.matches("<a href=\"trend-runs/run-").count(), 40);
    for id in [1, 26, 40] {
        let href = format!("<a href=\"trend-runs/run-{id}.html\"><circle");
        assert!(chart.contains(&href), "point of run #{id}");
        let report = std::fs::read_to_string(dir.path(&format!("trend-runs/run-{id}.html")))
            .expect("the run's report beside the page");
        assert!(
            report.contains("<svg") && report.contains(&format!("127.0.0.1:{port}")),
            "run #{id}'s own report"
        );
    }

    let shown = dir.path("show.json");
    let out = run_herd(&[
        "history",
        "show",
        "1",
        "--store",
        store,
        "--json",
        shown.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("latency    min"),
        "as herd report shows it: {}",
        stdout(&out)
    );
    assert_eq!(read_run(&shown), first, "the run read back is its own JSON");

    // A new run from the same population passes against the last ten (runs 31-40)...
    let same = write_run(&dir, "same.json", &variant(&base, 41, 1.2));
    let out = run_herd(&[
        "compare",
        "--baseline",
        "branch=main",
        "--last",
        "10",
        "--store",
        store,
        same.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("last 10"), "{}", stdout(&out));
    // ...and a server twice as slow (half the rate from the same 4 connections) fails.
    drop(server);
    let _slow = mock_at(port, 20);
    let slow = dir.path("slow.json");
    real_run(port, store, &["branch=dev"], &slow).code(0);
    let out = run_herd(&[
        "compare",
        "--baseline",
        "branch=main",
        "--last",
        "10",
        "--store",
        store,
        slow.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// `count` results made from one real run, each its own (started an hour after the last).
fn many(dir: &TempDir, count: usize) -> Vec<PathBuf> {
    let port = free_port();
    let _server = mock_at(port, 2);
    let first = dir.path("first.json");
    let url = format!("http://127.0.0.1:{port}/");
    Herd::new(&[
        "run",
        &url,
        "-c",
        "2",
        "-d",
        "1s",
        "-t",
        "1",
        "-q",
        "--label",
        "branch=main",
    ])
    .file("--json", &first)
    .run()
    .code(0);
    let base = read_run(&first);
    (0..count)
        .map(|i| {
            write_run(
                dir,
                &format!("m{i:03}.json"),
                &variant(&base, i, 1.0 + wobble(i, 0.05)),
            )
        })
        .collect()
}

/// 8 `herd store add` processes at once, 50 runs each.
fn eight_writers(store: &str, files: &[PathBuf]) {
    let children: Vec<_> = files
        .chunks(50)
        .map(|chunk| {
            let mut args = vec!["store", "add", "--store", store];
            args.extend(chunk.iter().map(|p| p.to_str().unwrap()));
            Herd::new(&args).spawn()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

/// What `history ls` and `history trend` answer, without the ids (which depend on the order
/// the writers happened to commit in).
fn answers(store: &str, dir: &TempDir, tag: &str) -> (serde_json::Value, serde_json::Value) {
    let ls = dir.path(&format!("{tag}-ls.json"));
    let trend = dir.path(&format!("{tag}-trend.json"));
    let out = run_herd(&[
        "history",
        "ls",
        "--store",
        store,
        "--label",
        "branch=main",
        "--json",
        ls.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_herd(&[
        "history",
        "trend",
        "--store",
        store,
        "--last",
        "20",
        "--metric",
        "p99,max",
        "--json",
        trend.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut ls = read_json(&ls);
    for r in ls.as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("id");
    }
    let trend = read_json(&trend);
    let values: Vec<serde_json::Value> = trend["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["points"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["value"].clone())
                .collect()
        })
        .collect();
    (ls, serde_json::Value::Array(values))
}

/// The bar: 8 processes storing 50 runs each at once lose none, in SQLite and in PostgreSQL,
/// and both give the same answers; a `herd store add` killed (SIGKILL) mid-way leaves the
/// store readable, and adding again completes it.
#[test]
fn eight_processes_store_400_runs_in_sqlite_and_postgres_with_the_same_answers() {
    let dir = TempDir::new("history-writers");
    let files = many(&dir, 400);
    let db = dir.path("runs.db");
    let lite = db.to_str().unwrap();
    eight_writers(lite, &files);
    let (ls, trend) = answers(lite, &dir, "sqlite");
    assert_eq!(ls.as_array().unwrap().len(), 400);
    match herd_testkit::Postgres::start() {
        Some(pg) => {
            eight_writers(&pg.url, &files);
            assert_eq!(
                answers(&pg.url, &dir, "pg"),
                (ls, trend),
                "PostgreSQL answers as SQLite"
            );
        }
        None => eprintln!("SKIPPED the PostgreSQL half: PostgreSQL is not installed"),
    }

    let killed = dir.path("killed.db");
    let at = killed.to_str().unwrap();
    let mut args = vec!["store", "add", "--store", at];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    let mut child = Herd::new(&args).spawn();
    let mut first = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("stored as run #1"), "{first}");
    child.kill().unwrap();
    child.wait().unwrap();
    let out = run_herd(&["history", "ls", "--store", at]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "readable after SIGKILL: {}",
        stderr(&out)
    );
    let out = run_herd(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_herd(&["history", "ls", "--store", at]);
    assert!(stdout(&out).contains("400 runs"), "{}", stdout(&out));
}

/// Shards are merged before they are stored: `herd store add` of a run's two shard files
/// stores one run, the one `herd merge` writes; `herd k8s collect --store` stores the merged
/// run; `--store` on a shard is refused.
#[test]
fn store_add_and_k8s_collect_store_a_runs_shards_merged_into_one_run() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let dir = TempDir::new("history-shards");
    let load = ["--rate", "100", "-d", "1s", "--label", "branch=main"];
    let shards: Vec<PathBuf> = (0..2)
        .map(|i| dir.path(&format!("shard-{i}.json")))
        .collect();
    let children: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(i, json)| crate::shard::spawn_shard(&url, &load, Some((i as u64, 2)), json))
        .collect();
    let logs = dir.path("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::write(logs.join(format!("pod-{i}.log")), stderr(&o)).unwrap();
    }
    // herd k8s collect --store keeps the merged run.
    let collected = dir.path("collected.db");
    let o = run_herd(&[
        "k8s",
        "collect",
        "herd-test",
        "--from-logs",
        logs.to_str().unwrap(),
        "--store",
        collected.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("stored as run #1"), "{}", stderr(&o));
    let db = dir.path("runs.db");
    let store = db.to_str().unwrap();
    let out = run_herd(&[
        "store",
        "add",
        "--store",
        store,
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).matches("stored as run #").count(),
        1,
        "{}",
        stdout(&out)
    );
    let merged = dir.path("merged.json");
    let o = run_herd(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let shown = dir.path("shown.json");
    let o = run_herd(&[
        "history",
        "show",
        "1",
        "--store",
        store,
        "--json",
        shown.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (a, b) = (read_run(&merged), read_run(&shown));
    assert_eq!(a.latency_ms, b.latency_ms);
    assert_eq!(a.histograms.latency, b.histograms.latency);
    assert_eq!(b.config.labels["branch"], "main");

    let refused = Herd::new(&["run", &url, "-d", "1s", "--shard", "0/2", "--store", store]).run();
    refused.code(2);
    assert!(
        refused.stderr().contains("a shard is a part of"),
        "{}",
        refused.stderr()
    );
}

/// A combined log of `seconds` seconds, `per_second` GETs in each.
fn access_log(dir: &TempDir, seconds: u32, per_second: u32) -> PathBuf {
    let mut log = String::new();
    for s in 0..seconds {
        let stamp = format!("14/Nov/2023:22:13:{:02} +0000", 20 + s);
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

/// The stored runs whose label `cmd` is `tag`, as `herd history ls --json` lists them.
fn stored(store: &str, dir: &TempDir, tag: &str) -> Vec<serde_json::Value> {
    let ls = dir.path(&format!("ls-{tag}.json"));
    let label = format!("cmd={tag}");
    let out = run_herd(&[
        "history",
        "ls",
        "--store",
        store,
        "--label",
        &label,
        "--json",
        ls.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    read_json(&ls).as_array().unwrap().clone()
}

/// `--store` and `--label` (and `HERD_STORE`) on every command that sends load, not only `herd
/// run`: a sweep keeps each step as a run labelled with its step and level, a capacity search
/// each probe, a replay and the demo their run; each appears in `herd history ls`.
#[test]
fn every_command_that_sends_load_keeps_its_runs_in_the_store() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("history-every");
    let db = dir.path("runs.db");
    let store = db.to_str().unwrap();
    let keep = ["-q", "--store", store, "--label", "branch=main"];

    let sweep = dir.path("sweep.json");
    Herd::new(&["sweep", &url, "--rates", "20,40", "--label", "cmd=sweep"])
        .args(&keep)
        .steps("1s")
        .json(&sweep)
        .run()
        .code(0);
    let steps = stored(store, &dir, "sweep");
    assert_eq!(steps.len(), 2, "a run per step: {steps:?}");
    for (k, (run, level)) in steps.iter().zip(["20", "40"]).enumerate() {
        let labels = &run["labels"];
        assert_eq!(labels["series"], "sweep");
        assert_eq!(labels["step"], (k + 1).to_string());
        assert_eq!(labels["level"], level);
        assert_eq!(labels["branch"], "main");
    }
    // The sweep's JSON carries the same labels on each of its runs.
    let s = read_json(&sweep);
    assert_eq!(s["steps"][1]["runs"][0]["config"]["labels"]["level"], "40");

    let capacity = dir.path("capacity.json");
    let ran = Herd::new(&[
        "capacity",
        &url,
        "--slo",
        "errors<1%",
        "--label",
        "cmd=capacity",
    ])
    .args(&["--start", "500", "--max", "1000", "--max-probes", "2"])
    .args(&keep)
    .probes("1s")
    .json(&capacity)
    .run();
    assert_ne!(ran.out.status.code(), Some(2), "{}", ran.stderr());
    let probes = read_json(&capacity)["probes"].as_array().unwrap().len();
    let kept = stored(store, &dir, "capacity");
    assert!(probes >= 1);
    assert_eq!(kept.len(), probes, "a run per probe");
    assert_eq!(kept[0]["labels"]["series"], "capacity");
    assert_eq!(kept[0]["labels"]["level"], "500");

    // $HERD_STORE stands for --store.
    let log = access_log(&dir, 2, 5);
    Herd::new(&["replay", log.to_str().unwrap(), "--target", &url, "-q"])
        .args(&["--label", "cmd=replay"])
        .env("HERD_STORE", store)
        .run()
        .code(0);
    assert_eq!(stored(store, &dir, "replay").len(), 1);

    let demo = Herd::new(&["demo", "-d", "1s", "--rate", "50", "--label", "cmd=demo"])
        .args(&keep)
        .run();
    demo.code(0);
    assert!(
        demo.stderr().contains("stored as run #"),
        "{}",
        demo.stderr()
    );
    let kept = stored(store, &dir, "demo");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["labels"]["branch"], "main");
}

/// The machine a stored run is filed under is the one that ran its load, as its JSON
/// records it, not the one that stores it: `herd store add` of a result from another machine
/// keeps that machine; a result from before herd recorded it is `not recorded`.
#[test]
fn a_stored_run_names_the_machine_that_ran_its_load() {
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("history-machine");
    let json = dir.path("here.json");
    Herd::new(&["run", &url, "-d", "1s", "-c", "2", "-q"])
        .json(&json)
        .run()
        .code(0);
    let here = read_run(&json);
    let ours = here
        .generator
        .machine
        .clone()
        .expect("the run records its machine");
    assert!(ours.contains(" #"), "{ours}");

    let mut there = here.clone();
    there.generator.machine = Some("loadgen-7 64x AMD EPYC 9654 #0badf00d".to_owned());
    there.started_at = "2026-01-02T03:04:05Z".to_owned();
    let mut old = here.clone();
    old.generator.machine = None;
    old.started_at = "2026-01-03T03:04:05Z".to_owned();
    let db = dir.path("runs.db");
    let store = db.to_str().unwrap();
    let files = [
        json.clone(),
        write_run(&dir, "there.json", &there),
        write_run(&dir, "old.json", &old),
    ];
    let mut add = vec!["store", "add", "--store", store];
    add.extend(files.iter().map(|p| p.to_str().unwrap()));
    let out = run_herd(&add);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ls = dir.path("ls.json");
    let out = run_herd(&[
        "history",
        "ls",
        "--store",
        store,
        "--json",
        ls.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let machines: Vec<String> = read_json(&ls)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["machine"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        machines,
        [
            "loadgen-7 64x AMD EPYC 9654 #0badf00d",
            "not recorded",
            ours.as_str(),
        ]
    );
}
