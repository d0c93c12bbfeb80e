//! Runs that asked different questions are compared, but not silently.

use super::drain::run_at;
use herd_compare::compare;

#[test]
fn compare_warns_when_runs_asked_for_different_rates_users_or_targets() {
    let base = run_at(200);
    let mut other = run_at(100);
    other.config.duration_s = Some(8.0);
    other.target = "http://127.0.0.1:9090/".into();
    let c = compare(&[("a.json".into(), &base), ("b.json".into(), &other)], 0.1);
    let said = c.warnings.join("\n");
    for what in [
        "b.json asked for 100 req/s, the base for 200 req/s",
        "8 s, the base for 4 s",
        "http://127.0.0.1:9090/, the base for http://127.0.0.1:8080/",
    ] {
        assert!(said.contains(what), "{what:?} missing from:\n{said}");
    }
    assert_eq!(c.warnings.len(), 3, "{said}");

    let same = compare(&[("a".into(), &base), ("b".into(), &run_at(200))], 0.1);
    assert!(same.warnings.is_empty(), "{:?}", same.warnings);
}
