//! Whether the server answered at all, and with what: a run where nothing answered measured no
//! server (the CLI exits non-zero), and one where every answer was an error status measured the
//! server's error page, which a CI job should not read as a pass without being told.

use crate::format::count;
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
            format!("all {} requests failed before a response", count(errors))
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
    let codes: Vec<String> = status
        .iter()
        .map(|(c, n)| format!("{c} x {}", count(*n)))
        .collect();
    vec![format!(
        "every response was an error status ({}): the numbers describe the server's error path; \
         check the URL, method, headers and body",
        codes.join(", ")
    )]
}

/// A proxy that answered 407 (Proxy Authentication Required) wants credentials: how to give
/// them. `proxy`: the proxy the run went through, if any.
pub fn proxy_warning(proxy: Option<&str>, status: &BTreeMap<String, u64>) -> Option<String> {
    let proxy = proxy?;
    let n = status.get("407").copied().filter(|n| *n > 0)?;
    Some(format!(
        "the proxy {proxy} answered 407 Proxy Authentication Required {} times: it needs \
         credentials: give them in its URL, --proxy http://USER:PASSWORD@HOST:PORT (or in \
         HTTP_PROXY / HTTPS_PROXY; percent-encode an @ or : in them)",
        count(n)
    ))
}

/// What the runs of one target in a series (a sweep's steps, a capacity search's probes) say of
/// the answers, as one run would say it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeriesAnswers {
    /// No run of the series got a response: it measured no server.
    pub nothing_answered: bool,
    /// Worded for the summary: `NOTHING LISTENS: ...` when every connection was refused, else
    /// the warnings of [`answer_warnings`] over every run added up.
    pub warnings: Vec<String>,
}

/// Adds up `runs` of the target `target` and judges their answers.
pub fn series_answers<'a>(
    target: &str,
    runs: impl IntoIterator<Item = &'a crate::RunResult>,
) -> SeriesAnswers {
    let (mut completed, mut errors, mut refused) = (0, 0, 0);
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    for r in runs {
        completed += r.totals.completed;
        errors += r.totals.errors;
        refused += r.errors.get("connect_refused").copied().unwrap_or(0);
        for (code, n) in &r.status {
            *status.entry(code.clone()).or_default() += n;
        }
    }
    let nothing = nothing_answered(completed);
    let warnings = if nothing && refused > 0 && refused == errors {
        vec![format!(
            "NOTHING LISTENS: every connection to {target} was refused; is the server running, \
             and are the host and port right?"
        )]
    } else {
        answer_warnings(completed, errors, &status)
            .into_iter()
            .map(|w| format!("WARNING: {target}: {w}"))
            .collect()
    };
    SeriesAnswers {
        nothing_answered: nothing,
        warnings,
    }
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
