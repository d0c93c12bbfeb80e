//! Whether the server answered at all, and with what: a run where nothing answered measured no
//! server (the CLI exits non-zero), and one where every answer was an error status measured the
//! server's error page, which a CI job should not read as a pass without being told.

use std::collections::BTreeMap;

/// No request got a response: every one failed before it (refused, reset, timed out), or none
/// was sent.
pub fn nothing_answered(completed: u64) -> bool {
    completed == 0
}

/// The run's warnings about the answers, worded for the summary and kept in the JSON's
/// `warnings`: nothing answered, or every response had an error status.
pub fn answer_warnings(completed: u64, errors: u64, status: &BTreeMap<String, u64>) -> Vec<String> {
    if nothing_answered(completed) {
        let why = if errors == 0 {
            "no request was sent".to_owned()
        } else {
            format!("all {errors} requests failed before a response")
        };
        return vec![format!(
            "nothing answered: {why}; this run measured no server"
        )];
    }
    let error_statuses: u64 = status
        .iter()
        .filter(|(code, _)| code.parse::<u16>().is_ok_and(|c| c >= 400))
        .map(|(_, n)| n)
        .sum();
    if error_statuses < completed {
        return Vec::new();
    }
    let codes: Vec<String> = status.iter().map(|(c, n)| format!("{c} x {n}")).collect();
    vec![format!(
        "every response was an error status ({}): the numbers describe the server's error path; \
         check the URL, method, headers and body",
        codes.join(", ")
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(c, n)| (c.to_string(), *n)).collect()
    }

    #[test]
    fn only_a_run_without_answers_or_with_only_error_answers_warns() {
        assert!(answer_warnings(10, 0, &status(&[("200", 10)])).is_empty());
        assert!(answer_warnings(10, 0, &status(&[("200", 1), ("500", 9)])).is_empty());
        let w = answer_warnings(10, 0, &status(&[("404", 4), ("500", 6)]));
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("every response was an error status (404 x 4, 500 x 6)"));
        let w = answer_warnings(0, 20, &BTreeMap::new());
        assert!(
            w[0].contains("all 20 requests failed before a response"),
            "{w:?}"
        );
        let w = answer_warnings(0, 0, &BTreeMap::new());
        assert!(w[0].contains("no request was sent"), "{w:?}");
    }
}
