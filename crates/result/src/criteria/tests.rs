use super::*;
use crate::capacity::{measured, Slo};
use crate::summary::Totals;
use crate::sweep::StopRule;
use crate::workload::NameResult;
use crate::{RunResult, Summary};

#[test]
fn the_one_grammar_reads_what_people_write() {
    use Metric::{Errors, Latency, Rps};
    let table: &[(&str, Option<&str>, Metric, Op, f64)] = &[
        ("p95 < 300ms", None, Latency(Stat::P95), Op::Lt, 300.0),
        ("p99.9 <= 1.5s", None, Latency(Stat::P999), Op::Le, 1500.0),
        ("p999<2s", None, Latency(Stat::P999), Op::Lt, 2000.0),
        ("mean<800us", None, Latency(Stat::Mean), Op::Lt, 0.8),
        ("P99 < 1m", None, Latency(Stat::P99), Op::Lt, 60_000.0),
        ("errors < 1%", None, Errors, Op::Lt, 1.0),
        ("error-rate<0.5%", None, Errors, Op::Lt, 0.5),
        ("rps >= 100", None, Rps, Op::Ge, 100.0),
        (
            "cart: p99 < 500ms",
            Some("cart"),
            Latency(Stat::P99),
            Op::Lt,
            500.0,
        ),
        (
            "item page: p99 < 500ms",
            Some("item page"),
            Latency(Stat::P99),
            Op::Lt,
            500.0,
        ),
        (
            "GET /a:b: min > 1ms",
            Some("GET /a:b"),
            Latency(Stat::Min),
            Op::Gt,
            1.0,
        ),
    ];
    for &(text, name, metric, op, value) in table {
        let c = Criterion::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            (c.name.as_deref(), c.metric, c.op, c.value, c.text.as_str()),
            (name, metric, op, value, text.trim()),
            "{text}"
        );
    }
    let both = Criteria::parse("p99 < 100ms, errors < 1%").unwrap();
    let and = Criteria::parse("p99 < 100ms and errors < 1%").unwrap();
    assert_eq!(both.items.len(), 2);
    let texts = |c: &Criteria| c.items.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    assert_eq!(
        texts(&both),
        texts(&and),
        "`,` and ` and ` separate terms alike"
    );
    assert_eq!((both.items[1].column, and.items[1].column), (14, 17));
}

#[test]
fn every_mistake_is_reported_with_its_column() {
    let table: &[(&str, usize, &str)] = &[
        ("p95 300ms", 1, "has no comparison"),
        ("p96 < 1s", 1, "`p96` is not a metric"),
        ("p95 < fast", 7, "`fast` is not a duration"),
        ("p95 < 100", 7, "bare number has no unit"),
        ("errors < 1", 10, "`1` is not a percentage"),
        ("rps > lots", 7, "`lots` is not a rate"),
        (": p95 < 1s", 1, "empty request name"),
        ("", 1, "no criteria"),
    ];
    for &(text, column, want) in table {
        let d = Criteria::parse(text).unwrap_err();
        assert_eq!(d.len(), 1, "{text}: {d:?}");
        assert!(d[0].message.contains(want), "{text}: {}", d[0]);
        assert_eq!(d[0].column, column, "{text}: {}", d[0]);
    }
    // every problem at once, each at its own column
    let d = Criteria::parse("p99 < 100, errors < 1%, p98 < 1s").unwrap_err();
    let columns: Vec<usize> = d.iter().map(|d| d.column).collect();
    assert_eq!(columns, vec![7, 25], "{d:?}");
}

fn result(ok: u64, failed: u64, errors: u64, dropped: u64) -> RunResult {
    let mut r = crate::fixture::empty_run(1);
    r.totals = Totals {
        scheduled: ok + failed + errors + dropped,
        sent: ok + failed + errors,
        completed: ok + failed,
        ok,
        failed,
        errors,
        dropped,
        ..Totals::default()
    };
    r.latency_ms = Summary {
        count: ok + failed,
        p99: 80.0,
        ..Summary::default()
    };
    r.duration_s = 1.0;
    r.throughput_rps = (ok + failed) as f64;
    r.by_name.clear();
    r
}

#[test]
fn thresholds_the_slo_and_the_stop_rule_count_errors_alike() {
    // 2 failed, 3 transport errors and 5 arrivals never sent out of 100 scheduled: 10%
    let r = result(90, 2, 3, 5);
    assert!((error_percent(&r) - 10.0).abs() < 1e-9);
    for (text, pass) in [("errors < 10%", false), ("errors <= 10%", true)] {
        let threshold = Criterion::parse(text).unwrap().evaluate(&r);
        assert!((threshold.value - 10.0).abs() < 1e-9, "{threshold:?}");
        let slo = Slo::parse(text).unwrap().check(&measured(&r));
        let stop = StopRule::parse(text).unwrap();
        let row = crate::sweep::row_of(&r);
        assert_eq!(threshold.pass, pass, "threshold {text}");
        assert_eq!(slo.is_empty(), pass, "slo {text}: {slo:?}");
        assert_eq!(
            stop.breach(&row, &measured(&r)).is_none(),
            pass,
            "stop {text}"
        );
    }
    for (text, pass) in [("p99 < 80ms", false), ("p99 <= 80ms", true)] {
        let threshold = Criterion::parse(text).unwrap().evaluate(&r);
        let slo = Slo::parse(text).unwrap().check(&measured(&r));
        let stop = StopRule::parse(text).unwrap();
        let row = crate::sweep::row_of(&r);
        assert_eq!(threshold.pass, pass, "threshold {text}");
        assert_eq!(slo.is_empty(), pass, "slo {text}: {slo:?}");
        assert_eq!(
            stop.breach(&row, &measured(&r)).is_none(),
            pass,
            "stop {text}"
        );
    }
}

#[test]
fn per_name_criteria_and_nothing_measured() {
    let mut r = result(990, 5, 5, 0);
    r.by_name.push(NameResult {
        name: "cart".into(),
        totals: r.totals.clone(),
        throughput_rps: 10.0,
        status: Default::default(),
        errors: Default::default(),
        latency_ms: Summary {
            count: 10,
            p99: 700.0,
            ..Summary::default()
        },
        service_time_ms: Summary::default(),
        time_to_error_ms: Summary::default(),
        response_bytes: Default::default(),
        connect_ms: None,
        phases: None,
        histograms: None,
        streams: None,
    });
    let eval = |s: &str| Criterion::parse(s).unwrap().evaluate(&r);
    assert!(!eval("errors < 1%").pass, "1% is not below 1%");
    assert!(eval("errors <= 1%").pass);
    assert!(eval("rps > 40").pass);
    let cart = eval("cart: p99 < 500ms");
    assert_eq!(
        (cart.value, cart.pass, cart.unit.as_str()),
        (700.0, false, "ms")
    );
    assert!(eval("nope: p99 < 500ms").note.is_some());
    let empty = result(0, 0, 0, 0);
    assert!(!Criterion::parse("p95 < 1s").unwrap().evaluate(&empty).pass);
    // every request timed out: latency (of responses) has no samples, which is no pass
    let t = Criterion::parse("p95 < 1s")
        .unwrap()
        .evaluate(&result(0, 0, 20, 0));
    assert!(
        !t.pass && t.note.as_deref().unwrap().contains("no responses"),
        "{t:?}"
    );
}

#[test]
fn the_stop_rule_reads_ttft_and_itl_as_the_slo_does() {
    let stop = StopRule::parse("ttft p99 < 500ms, itl p99 <= 50ms, errors < 5%").unwrap();
    assert_eq!(stop.max_error_percent, Some(5.0));
    assert_eq!(stop.max_p99_ms, None);
    let slo = Slo::parse("ttft p99 < 500ms, itl p99 <= 50ms").unwrap();
    assert_eq!(stop.streams, slo.objectives, "one reader of the objectives");
    let r = result(100, 0, 0, 0);
    let row = crate::sweep::row_of(&r);
    let mut m = measured(&r);
    m.ttft_ms = Summary {
        count: 10,
        p99: 620.0,
        ..Summary::default()
    };
    m.itl_ms = Summary {
        count: 90,
        p99: 50.0,
        ..Summary::default()
    };
    assert_eq!(
        stop.breach(&row, &m).as_deref(),
        Some("ttft p99 620 ms >= 500 ms")
    );
    m.ttft_ms.p99 = 499.0;
    assert_eq!(stop.breach(&row, &m), None);
    // The rest of what an SLO takes but a step's row does not carry is refused, by column.
    let e = StopRule::parse("p95 < 1s, ttft p99 > 2s").unwrap_err();
    assert!(
        e.starts_with("column 1: `p95 < 1s`: the stop rule takes"),
        "{e}"
    );
    assert!(
        e.contains("column 11: `ttft p99 > 2s` is not an upper limit"),
        "{e}"
    );
}
