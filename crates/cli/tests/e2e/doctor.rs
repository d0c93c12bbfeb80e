//! `herd doctor` end to end: every check printed with its verdict, the target probed, and the
//! exit code following the FAILs. (The checks' thresholds are tested as tables in the crate.)

use crate::common::*;

const CHECKS: [&str; 6] = [
    "open files",
    "local ports",
    "tcp_tw_reuse",
    "somaxconn",
    "cpu ",
    "cpu scaling",
];

/// The verdict column of every check line.
fn verdicts(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| matches!(*w, "OK" | "WARN" | "FAIL"))
        .collect()
}

#[test]
fn doctor_checks_this_machine_and_a_target_that_answers() {
    let s = mock(&[]);
    let url = format!("http://{}/", s.local_addr());
    let out = run_herd(&["doctor", &url, "-c", "10"]);
    let text = stdout(&out);
    for name in CHECKS {
        assert!(text.contains(name), "no {name:?} line:\n{text}");
    }
    let target = text
        .lines()
        .find(|l| l.starts_with("  ") && l.contains("target "))
        .expect("a target line");
    assert!(target.trim_start().starts_with("OK"), "{target}");
    assert!(target.contains("connected in"), "{target}");
    let v = verdicts(&text);
    assert_eq!(v.len(), 7, "{text}");
    // Whatever this machine's settings, the exit code follows the FAILs, and every problem
    // comes with its fix.
    let fails = v.iter().filter(|w| **w == "FAIL").count();
    let want = if fails == 0 { 0 } else { 2 };
    assert_eq!(out.status.code(), Some(want), "{text}");
    let problems = v.iter().filter(|w| **w != "OK").count();
    assert_eq!(text.matches("fix: ").count(), problems, "{text}");
    assert!(text.contains(&format!("doctor: {fails} FAIL")), "{text}");
}

#[test]
fn doctor_fails_a_target_that_is_not_there() {
    let closed = format!("http://127.0.0.1:{}/", free_port());
    for (url, want) in [
        (closed.as_str(), "Connection refused"),
        ("http://no-such-host.invalid/", "no-such-host.invalid"),
    ] {
        let out = run_herd(&["doctor", url]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let target = text
            .lines()
            .find(|l| l.starts_with("  ") && l.contains("target "))
            .unwrap();
        assert!(target.trim_start().starts_with("FAIL"), "{target}");
        assert!(target.contains(want), "{target}");
    }
}

#[test]
fn doctor_refuses_impossible_plans() {
    for args in [
        &["doctor", "--rate", "0"][..],
        &["doctor", "-c", "0"],
        &["doctor", "--calls-per-conn", "0"],
    ] {
        let out = run_herd(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("herd: "), "{args:?}");
    }
}
