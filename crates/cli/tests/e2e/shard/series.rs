//! Every kind of run takes `--shard` the same way: a sweep's shards (each step on a shared
//! instant) and a log replay's shards (each with its own `--connect-to`) merge into exactly the
//! single run's counts; a capacity search refuses to be sharded.

use crate::common::*;

/// `herd sweep URL --rates 100,200` as one run or as shard `i` of 2 (from its own loopback
/// address, on a shared start instant).
fn sweep(url: &str, shard: Option<(u32, &str)>, json: &std::path::Path) -> std::process::Child {
    let mut h = Herd::new(&["sweep", url, "--rates", "100,200", "-q"]).steps("1s");
    if let Some((i, at)) = shard {
        h = h.args(&[
            "--shard",
            &format!("{i}/2"),
            "--start-at",
            at,
            "--bind",
            &format!("127.0.0.{}", i + 2),
        ]);
    }
    h.file("--json", json).spawn()
}

fn step_totals(sweep: &serde_json::Value, k: &str) -> Vec<u64> {
    let steps = sweep["steps"].as_array().unwrap();
    steps
        .iter()
        .map(|s| s["runs"][0]["totals"][k].as_u64().unwrap())
        .collect()
}

#[test]
fn two_shards_of_a_sweep_merge_into_the_single_sweeps_counts() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("sweep-shards");
    let single = dir.path("single.json");
    let o = sweep(&url, None, &single).wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let shards = [dir.path("s0.json"), dir.path("s1.json")];
    // One instant for both, as `herd k8s render` or a shell loop would give them.
    let at = humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3),
    )
    .to_string();
    let children: Vec<_> = (0..2)
        .map(|i| sweep(&url, Some((i, &at)), &shards[i as usize]))
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let parts: Vec<_> = shards.iter().map(|s| read_json(s)).collect();
    for p in &parts {
        // Each shard sent its half of every step, not the whole level.
        assert_eq!(step_totals(p, "scheduled"), [50, 100], "{}", p["steps"]);
    }
    // Step k of every shard started on the same instant: the second a slot (1 s step, 3 s
    // for the drain and to spare) after the first.
    let starts = |p: &serde_json::Value| -> Vec<String> {
        let steps = p["steps"].as_array().unwrap();
        steps
            .iter()
            .map(|s| {
                s["runs"][0]["shard"]["start_at"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(starts(&parts[0]), starts(&parts[1]));
    assert_eq!(starts(&parts[0])[0], at);
    let merged = dir.path("merged.json");
    let (a, b) = (shards[0].to_str().unwrap(), shards[1].to_str().unwrap());
    let o = run_herd(&["merge", a, b, "-o", merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("200"),
        "the merged table: {}",
        stdout(&o)
    );
    let (m, one) = (read_json(&merged), read_json(&single));
    assert_eq!(m["kind"], "sweep");
    for k in ["scheduled", "sent", "completed", "ok"] {
        assert_eq!(
            step_totals(&m, k),
            step_totals(&one, k),
            "{k}: merged vs single"
        );
    }
    assert_eq!(step_totals(&m, "scheduled"), [100, 200]);
    let served = server.stats().requests;
    assert_eq!(
        served, 600,
        "the server saw the single sweep and both shards' halves"
    );
    // herd report reads the merged sweep like any other.
    let page = dir.path("merged.html");
    let o = run_herd(&[
        "report",
        merged.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn replay_shards_each_with_its_own_connect_to_add_up_to_the_log() {
    let (a, b) = (mock(&[]), mock(&[]));
    let dir = TempDir::new("replay-shards");
    let log = dir.path("access.log");
    let mut text = String::new();
    for i in 0..90 {
        // 30 lines in each of three seconds.
        let stamp = format!("14/Nov/2023:22:13:{:02} +0000", 20 + i / 30);
        text.push_str(&format!(
            "10.0.0.1 - - [{stamp}] \"GET /items/{i} HTTP/1.1\" 200 12 \"-\" \"replay-test\"\n"
        ));
    }
    std::fs::write(&log, text).unwrap();
    let at = humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() + std::time::Duration::from_secs(2),
    )
    .to_string();
    // The URL names the site; each shard's own --connect-to sends its share to its own server,
    // as shards in two data centres would each reach the site's nearest address.
    let jsons = [dir.path("r0.json"), dir.path("r1.json")];
    let children: Vec<_> = [&a, &b]
        .iter()
        .enumerate()
        .map(|(i, server)| {
            let route = format!("shop.test:80:{}", server.local_addr());
            Herd::new(&[
                "replay",
                log.to_str().unwrap(),
                "--target",
                "http://shop.test/",
            ])
            .args(&["--shard", &format!("{i}/2"), "--start-at", &at, "-q"])
            .args(&["--connect-to", &route])
            .file("--json", &jsons[i])
            .spawn()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let (r0, r1) = (read_json(&jsons[0]), read_json(&jsons[1]));
    assert_eq!(r0["totals"]["completed"], 45, "{}", r0["totals"]);
    assert_eq!(r1["totals"]["completed"], 45, "{}", r1["totals"]);
    assert_eq!(
        a.stats().requests,
        45,
        "shard 0 reached its own server only"
    );
    assert_eq!(
        b.stats().requests,
        45,
        "shard 1 reached its own server only"
    );
    let merged = dir.path("merged.json");
    let (p0, p1) = (jsons[0].to_str().unwrap(), jsons[1].to_str().unwrap());
    let o = run_herd(&["merge", p0, p1, "-o", merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = read_json(&merged);
    assert_eq!(m["totals"]["scheduled"], 90);
    assert_eq!(m["totals"]["completed"], 90);
}

#[test]
fn a_capacity_search_and_a_sweeps_stop_rule_refuse_shards() {
    let url = "http://127.0.0.1:9/";
    let o = refused(
        &["capacity", url, "--slo", "p99 < 100ms", "--shard", "0/2"],
        "herd capacity cannot be sharded",
    );
    assert!(stderr(&o).contains("herd sweep"), "{}", stderr(&o));
    refused(
        &[
            "sweep", url, "--rates", "10,20", "--shard", "0/2", "--stop", "p99 < 1s",
        ],
        "a sharded sweep runs every level",
    );
    refused(
        &[
            "sweep",
            url,
            "--rates",
            "10",
            "--num-conns",
            "10",
            "--shard",
            "0/2",
            "--start-at",
            "+5s",
        ],
        "give --step-duration",
    );
}
