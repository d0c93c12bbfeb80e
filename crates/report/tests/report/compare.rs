use crate::fixtures::{self, CLOSED_ERRORS, OPEN, SLOW};
use herd_compare::{compare, per_second, Comparison, Judgement, Noise};
use herd_report::render_compare_text;
use herd_result::RunResult;

fn judge(base: &RunResult, new: &RunResult, threshold: f64) -> Comparison {
    compare(
        &[("base.json".into(), base), ("new.json".into(), new)],
        threshold,
    )
}

fn row<'a>(c: &'a Comparison, key: &str) -> &'a herd_compare::MetricRow {
    c.metrics.iter().find(|m| m.metric.key == key).unwrap()
}

fn text(c: &Comparison) -> String {
    let mut t = String::new();
    render_compare_text(c, &mut t).unwrap();
    t
}

#[test]
fn a_run_compared_with_itself_passes_with_zero_change() {
    for fixture in [OPEN, CLOSED_ERRORS] {
        let r = fixtures::run(fixture);
        let c = judge(&r, &r, 0.10);
        assert!(c.passed());
        for m in &c.metrics {
            let ch = m.changes[0].unwrap();
            assert_eq!(ch.fraction, 0.0, "{}", m.metric.label);
            assert_eq!(ch.judgement, Judgement::Unchanged, "{}", m.metric.label);
        }
        let t = text(&c);
        assert!(t.contains("\nPASSED: no key metric"), "{t}");
        assert!(!t.contains('+') && !t.contains("REGRESSED"), "{t}");
    }
}

#[test]
fn a_slower_server_is_a_regression_named_by_metric() {
    let c = judge(&fixtures::run(OPEN), &fixtures::run(SLOW), 0.10);
    assert!(!c.passed());
    let regressed: Vec<_> = c.regressions().into_iter().map(|r| r.metric).collect();
    assert_eq!(regressed, ["latency p50", "latency p90", "latency p99"]);
    let p99 = row(&c, "p99").changes[0].unwrap();
    assert!(
        matches!(p99.noise, Noise::PerSecond { p } if p < 0.001),
        "{p99:?}"
    );
    let rate = row(&c, "throughput").changes[0].unwrap().judgement;
    assert!(
        matches!(rate, Judgement::Unchanged | Judgement::WithinThreshold),
        "same rate: {rate:?}"
    );
    let t = text(&c);
    assert!(t.contains("REGRESSED: new.json: latency p50 +"), "{t}");
    // The other way round it is an improvement, and passes.
    let back = judge(&fixtures::run(SLOW), &fixtures::run(OPEN), 0.10);
    assert!(back.passed());
    assert_eq!(
        row(&back, "p50").changes[0].unwrap().judgement,
        Judgement::Improved
    );
}

#[test]
fn the_threshold_decides_what_counts() {
    let base = fixtures::run(OPEN);
    let slower = fixtures::slowed(&base, 1.2);
    let strict = judge(&base, &slower, 0.10);
    let p50 = row(&strict, "p50").changes[0].unwrap();
    assert!((p50.fraction - 0.2).abs() < 1e-9);
    assert_eq!(p50.judgement, Judgement::Regressed);
    assert!(!strict.passed());
    let lenient = judge(&base, &slower, 0.50);
    assert!(lenient.passed());
    assert_eq!(
        row(&lenient, "p50").changes[0].unwrap().judgement,
        Judgement::WithinThreshold
    );
}

#[test]
fn a_change_within_noise_does_not_fail() {
    // Per-second p99 that jumps around by far more than the 15% between the runs' means.
    let base = fixtures::run(OPEN);
    let mut noisy_base = base.clone();
    let mut noisy_new = base.clone();
    for (i, (a, b)) in noisy_base
        .timeline
        .iter_mut()
        .zip(&mut noisy_new.timeline)
        .enumerate()
    {
        a.p99_ms = if i % 2 == 0 { 2.0 } else { 20.0 };
        b.p99_ms = if i % 2 == 0 { 20.0 } else { 5.0 };
    }
    noisy_new.latency_ms.p99 = noisy_base.latency_ms.p99 * 1.15;
    let c = judge(&noisy_base, &noisy_new, 0.10);
    let p99 = row(&c, "p99").changes[0].unwrap();
    assert_eq!(p99.judgement, Judgement::WithinNoise, "{p99:?}");
    assert!(c.passed());
}

#[test]
fn new_errors_regress_the_error_rate() {
    let c = judge(&fixtures::run(OPEN), &fixtures::run(CLOSED_ERRORS), 0.10);
    let errors = row(&c, "error_rate").changes[0].unwrap();
    assert!(errors.fraction.is_infinite());
    assert_eq!(errors.judgement, Judgement::Regressed);
    assert!(text(&c).contains("error rate +∞%"));
}

#[test]
fn per_second_samples_cover_the_measurement_only() {
    let r = fixtures::run(OPEN);
    let rps = per_second("throughput", &r).unwrap();
    assert_eq!(rps.len(), r.duration_s.ceil() as usize);
    assert!(per_second("p95", &r).is_none(), "not in the timeline");
}

#[test]
fn per_name_rows_are_shown_but_do_not_gate() {
    let with_names = |p99: f64| {
        let mut doc = fixtures::value(OPEN);
        doc["by_name"] =
            serde_json::json!([fixtures::name_entry(&doc, "home", 10, 10, 1.0, 2.0, p99)]);
        herd_result::parse_json(&doc.to_string(), "n.json").unwrap()
    };
    let c = judge(&with_names(3.0), &with_names(30.0), 0.10);
    let home_p99 = c
        .names
        .iter()
        .find(|n| n.name == "home" && n.row.metric.key == "p99")
        .unwrap();
    assert_eq!(
        home_p99.row.changes[0].unwrap().judgement,
        Judgement::Regressed
    );
    assert!(c.passed(), "per-name rows do not gate");
    assert!(text(&c).contains("home p99"));
}

#[test]
fn three_runs_are_each_judged_against_the_first() {
    let (a, b, s) = (
        fixtures::run(OPEN),
        fixtures::run(OPEN),
        fixtures::run(SLOW),
    );
    let c = compare(&[("a".into(), &a), ("b".into(), &b), ("s".into(), &s)], 0.1);
    let runs: Vec<_> = c.regressions().into_iter().map(|r| r.run).collect();
    assert!(runs.iter().all(|r| r == "s"), "{runs:?}");
    let t = text(&c);
    assert!(
        t.contains("b against a") && t.contains("s against a"),
        "{t}"
    );
}
