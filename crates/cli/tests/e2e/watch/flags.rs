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
