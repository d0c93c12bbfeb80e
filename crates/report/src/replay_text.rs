//! The lines `herd replay` adds to the summary: production against now, per request type.

use herd_result::RunResult;

/// The lines `herd replay` adds to the summary: production against now, per request type.
pub fn render_replay_comparison(result: &RunResult) -> Option<String> {
    let rows = result
        .extra
        .get("replay")?
        .get("production_vs_now")?
        .as_array()?;
    let mut s = String::from(
        "  production against now (the log's time taken; this run's service time), ms:\n",
    );
    s.push_str(&format!(
        "    {:<32} {:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}   {:>8}\n",
        "type", "was p50", "p95", "max", "now p50", "p95", "max", "p95"
    ));
    for r in rows {
        let f = |k: &str, q: &str| r[k][q].as_f64().unwrap_or(0.0);
        s.push_str(&format!(
            "    {:<32} {:>8.2} {:>8.2} {:>8.2}   {:>8.2} {:>8.2} {:>8.2}   {:>8}\n",
            r["name"].as_str().unwrap_or(""),
            f("production_ms", "p50"),
            f("production_ms", "p95"),
            f("production_ms", "max"),
            f("now_ms", "p50"),
            f("now_ms", "p95"),
            f("now_ms", "max"),
            change_text(&r["p95_change"])
        ));
    }
    Some(s)
}

/// `+12%`, or `from 0` where there is no ratio.
pub fn change_text(v: &serde_json::Value) -> String {
    v.as_f64()
        .map_or("from 0".to_owned(), |c| format!("{:+.0}%", c * 100.0))
}

#[cfg(test)]
mod change_tests {
    use super::*;

    /// The changes herd-run's `p95_change` gives for 0 -> 230, 0 -> 0, 100 -> 150, 200 -> 100.
    #[test]
    fn a_p95_rising_from_zero_is_not_shown_as_unchanged() {
        let json = |c: Option<f64>| serde_json::json!(c);
        assert_eq!(change_text(&json(None)), "from 0");
        assert_eq!(change_text(&json(Some(0.0))), "+0%");
        assert_eq!(change_text(&json(Some(0.5))), "+50%");
        assert_eq!(change_text(&json(Some(-0.5))), "-50%");
    }
}
