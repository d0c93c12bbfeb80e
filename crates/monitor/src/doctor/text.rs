//! `herd doctor`'s words: the load it checks for, each check with its fix, the tally.

use super::{Check, Load, Status};
use herd_result::format::{count, rate};

/// The first line: the load planned and the target.
pub fn heading(load: &Load, url: Option<&str>) -> String {
    let plural =
        |n: u64, noun: &str| format!("{} {noun}{}", count(n), if n == 1 { "" } else { "s" });
    let mut s = plural(load.connections, "connection");
    if let Some(r) = load.rate {
        s.push_str(&format!(" at {} req/s", rate(r)));
    }
    match load.calls_per_conn {
        Some(k) => s.push_str(&format!(", {} per connection", plural(k, "request"))),
        None => s.push_str(", kept alive"),
    }
    let target = url.unwrap_or("not given (checked as a remote server)");
    format!("herd doctor: this machine as a load generator for {s}; target {target}")
}

/// Each check on a line, its fix under it, and the tally; whether any failed.
pub fn checks_text(checks: &[Check]) -> (String, bool) {
    let mut out = String::new();
    for c in checks {
        out.push_str(&format!(
            "  {:<5} {:<13} {}\n",
            c.status.label(),
            c.name,
            c.value
        ));
        if let Some(fix) = &c.fix {
            out.push_str(&format!("  {:<5} {:<13} fix: {fix}\n", "", ""));
        }
    }
    let n = |s: Status| checks.iter().filter(|c| c.status == s).count();
    out.push_str(&format!(
        "doctor: {} FAIL, {} WARN, {} OK\n",
        n(Status::Fail),
        n(Status::Warn),
        n(Status::Ok)
    ));
    (out, n(Status::Fail) > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heading_says_the_load_in_words() {
        let load = Load {
            connections: 1000,
            rate: Some(5000.0),
            calls_per_conn: Some(1),
            spare_fds: 64,
        };
        let h = heading(&load, None);
        assert!(
            h.contains("1,000 connections at 5,000 req/s, 1 request per connection"),
            "{h}"
        );
        assert!(
            h.ends_with("target not given (checked as a remote server)"),
            "{h}"
        );
        let kept = Load {
            connections: 1,
            rate: None,
            calls_per_conn: None,
            ..load
        };
        assert!(heading(&kept, Some("http://x/"))
            .contains("1 connection, kept alive; target http://x/"));
    }
}
