//! The shared start: an instance ready after it exits 7 unless told to skip, a late shard skips
//! what it missed and counts it, and bad shard flags are refused before anything is sent.

use crate::common::*;

#[test]
fn an_instance_ready_after_the_start_exits_7_unless_late_skip() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let past = ["run", &url, "-n", "5", "-t", "1", "-q", "--shard", "1/2"];
    let past = Herd::new(&past).args(&["--start-at", "2020-01-01T00:00:00Z"]);
    let ran = past.clone().run();
    let err = ran.code(7).stderr();
    assert!(err.contains("shard 1/2 was ready"), "{err}");
    assert!(err.contains("--late skip"), "{err}");
    let dir = TempDir::new("late");
    let json = dir.path("late.json");
    past.args(&["--late", "skip"])
        .file("--json", &json)
        .run()
        .code(0);
    assert_eq!(
        read_json(&json)["shard"]["instances"][0]["started_late"],
        true
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
    let ran = Herd::new(&["run", &url, "--rate", "200", "-d", "5s", "-t", "1", "-q"])
        .args(&["--shard", "0/1", "--start-at", &at, "--late", "skip"])
        .json(&json)
        .run();
    let text = ran.stdout();
    let r = ran.code(0).json();
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
    // What it missed is shown, and the rate is over the part played: about the 200 req/s
    // asked, not diluted over the seconds it missed (it read ~113 req/s and "0 dropped").
    assert!(
        text.contains(&format!(
            "missed {missed} arrivals before it was ready (--late skip)"
        )),
        "{text}"
    );
    let rps = r["throughput_rps"].as_f64().unwrap();
    assert!(rps > 170.0, "throughput {rps} over the window played");
    assert!(r["timeline"][0]["partial"] == true, "{}", r["timeline"][0]);
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
        refused(&all, want);
    }
}
