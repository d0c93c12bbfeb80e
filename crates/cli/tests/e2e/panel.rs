//! The live panel on a terminal (through a pseudo-terminal, util-linux's `script`): it draws
//! the rate against the plan, p50 and p99 and a sparkline while the run goes on, then leaves
//! the summary alone; off a terminal nothing but the summary is printed.

use crate::common::{mock, one_at_a_time, run_herd, stderr, stdout};
use std::process::{Command, Stdio};

#[test]
fn on_a_terminal_the_panel_draws_and_off_it_only_the_summary_is_printed() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let args = [
        "run", &url, "-d", "3s", "--rate", "50", "-c", "2", "-t", "1",
    ];
    let line = std::iter::once(env!("CARGO_BIN_EXE_herd"))
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux's script");
    let tty = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{tty}");
    assert!(
        tty.contains("req/s   plan 50.0 (") && tty.contains("(last second)"),
        "{tty}"
    );
    assert!(tty.contains("req/s, the last "), "{tty}");
    assert!(tty.contains("p99 "), "{tty}");
    assert!(tty.chars().any(|c| ('▁'..='█').contains(&c)), "{tty}");
    // The panel is cleared before the summary, which comes once and whole.
    let summary = tty.rfind("\x1b[J").expect("the panel cleared");
    assert_eq!(tty.matches("herd run http://").count(), 1, "{tty}");
    assert!(tty[summary..].contains("herd run http://"), "{tty}");

    let piped = run_herd(&args);
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert_eq!(stderr(&piped), "", "nothing but the summary off a terminal");
    let text = stdout(&piped);
    assert!(
        text.starts_with("herd run http://") && !text.contains('\x1b'),
        "{text}"
    );
}
