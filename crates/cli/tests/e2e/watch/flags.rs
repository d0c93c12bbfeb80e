//! Bad watch flags refused (exit 2) before any load.

use crate::common::*;

#[test]
fn bad_watch_flags_exit_2_before_any_load() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let closed = format!("http://127.0.0.1:{}/metrics", free_port());
    let cases: &[(&[&str], &str)] = &[
        (&["--watch-pid", "4999999"], "no process has pid 4999999"),
        (
            &["--watch-name", "no-such-server-herd"],
            "no process is named \"no-such-server-herd\"",
        ),
        (&["--watch-prometheus", &closed], "cannot connect"),
        (&["--watch-metric", "up"], "add --watch-prometheus"),
        (
            &[
                "--watch-prometheus",
                &closed,
                "--watch-metric",
                "up{a=~\"b\"}",
            ],
            "regular-expression",
        ),
    ];
    for (flags, want) in cases {
        let mut args = vec!["run", "-d", "1s"];
        args.extend_from_slice(flags);
        args.push(&url);
        let out = run_herd(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(want), "{flags:?}: {err}");
        assert!(stdout(&out).is_empty(), "{flags:?}");
    }
    assert_eq!(s.stats().requests, 0, "nothing was sent");
}

/// Sweep and capacity take `--watch-*` as run does: each step's result has the server's side,
/// and a bad flag stops the series before its first request.
#[test]
fn watch_flags_are_applied_by_sweep_and_capacity() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let me = std::process::id().to_string();
    let dir = TempDir::new("watch-series");
    let ran = Herd::new(&["sweep", "-q", &url, "-c", "1", "--num-conns", "20"])
        .args(&["--watch-pid", &me, "--cooldown", "0s"])
        .json(&dir.path("s.json"))
        .run();
    let r = ran.json_of("sweep.schema.json");
    let server = &r["steps"][0]["runs"][0]["server"];
    assert_eq!(
        server["processes"][0]["pid"].as_u64(),
        Some(u64::from(std::process::id())),
        "{}",
        ran.stderr()
    );
    let sent = s.stats().requests;
    refused(
        &["sweep", &url, "-c", "1", "--watch-pid", "4999999"],
        "no process has pid 4999999",
    );
    refused(
        &[
            "capacity",
            &url,
            "--slo",
            "p99 < 1s",
            "--watch-pid",
            "4999999",
        ],
        "no process has pid 4999999",
    );
    assert_eq!(s.stats().requests, sent, "the refused series sent nothing");
}
