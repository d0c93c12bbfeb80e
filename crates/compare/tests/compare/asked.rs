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

#[test]
fn compare_warns_when_runs_spoke_other_protocols_streams_or_pipelines() {
    let h1 = |r: &mut herd_result::RunResult, protocol: &str| {
        r.generator.protocols = vec![herd_result::ProtocolUse {
            protocol: protocol.into(),
            connections: 2,
            requests: 100,
            handshakes: None,
        }];
    };
    let mut base = run_at(200);
    h1(&mut base, "http/1.1");
    base.config.pipeline = Some(16);
    let mut h2 = run_at(200);
    h1(&mut h2, "h2c");
    h2.config.streams = Some(10);
    let c = compare(&[("a.json".into(), &base), ("b.json".into(), &h2)], 0.1);
    let said = c.warnings.join("\n");
    for what in [
        "b.json asked for protocol h2c, the base for protocol http/1.1",
        "b.json asked for 10 streams per connection, the base for no streams (HTTP/1.1)",
        "b.json asked for no pipelining, the base for a pipeline depth of 16",
    ] {
        assert!(said.contains(what), "{what:?} missing from:\n{said}");
    }
    // A result that does not say what it spoke is not called different.
    let mut quiet = run_at(200);
    quiet.config.pipeline = Some(16);
    let c = compare(&[("a".into(), &base), ("b".into(), &quiet)], 0.1);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}
