use super::*;
use crate::{build_run, write_json, Generator, GeneratorVerdict, Model, RunInput, ThresholdResult};
use herd_metrics::{Outcome, Second, Stats, Verdict};
use std::time::{Duration, SystemTime};

const START: u64 = 1_800_000_000;

/// A shard's result from real metrics: a request of `ms` ends in second `ms % 3`.
fn shard(index: u64, count: u64, latencies_ms: &[u64]) -> RunResult {
    let mut stats = Stats::default();
    stats.record_lookup(Duration::from_micros(400 + 100 * index));
    let mut seconds: Vec<Second> = (0..3).map(Second::new).collect();
    for (k, &ms) in latencies_ms.iter().enumerate() {
        let _ = k;
        let mut o = Outcome::completed(
            0,
            Duration::from_millis(ms),
            Duration::from_millis(ms / 2 + 1),
            if ms > 500 { 503 } else { 200 },
            if ms > 500 {
                Verdict::Failed
            } else {
                Verdict::Ok
            },
        );
        // Each response an event stream: its first event at ms / 2, two gaps of ms.
        o.stream = Some(Box::new(herd_metrics::StreamOutcome {
            first: Some(Duration::from_millis(ms / 2 + 1)),
            first_sent: Some(Duration::from_millis(ms / 3 + 1)),
            gaps: vec![(ms * 1_000) as u32; 2],
            events: 3,
            duration: Duration::from_millis(2 * ms),
            tokens: 3,
        }));
        stats.record(&o);
        seconds[(ms % 3) as usize].record(&o);
    }
    let config = crate::RunConfig {
        url: "http://127.0.0.1:8080/".into(),
        method: "GET".into(),
        model: Model::Open,
        connections: 10,
        rate: Some(100.0),
        duration_s: Some(3.0),
        requests: None,
        warmup_s: 0.0,
        threads: 2,
        timeout_s: 10.0,
        calls_per_conn: None,
        pipeline: None,
        streams: None,
        proxy: None,
        headers: vec![],
        body_bytes: 0,
        secrets_shown: false,
        labels: Default::default(),
        arrivals: None,
    };
    let mut r = build_run(RunInput {
        target: config.url.clone(),
        config,
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(START),
        duration: Duration::from_secs(3),
        offered: None,
        interrupted: false,
        stats: &stats,
        timeline: &seconds,
        dropped: index,
        warmup_requests: 0,
        warmup_duration: Duration::ZERO,
        generator: Generator {
            cpu_user_s: 0.1 * (index + 1) as f64,
            cpu_sys_s: 0.3,
            cpu_percent: 33.3 + index as f64,
            threads: 2,
            protocols: vec![h3_row(index)],
            ..Generator::default()
        },
    });
    r.thresholds = vec![crate::Criterion::parse("p99 < 20ms").unwrap().evaluate(&r)];
    r.shard = Some(ShardHeader {
        plan_hash: "ab".repeat(32),
        count,
        start_at: Some("2027-01-15T08:00:00Z".into()),
        instances: vec![ShardInstance {
            index,
            host: format!("gen-{index}"),
            herd_version: crate::HERD_VERSION.into(),
            start_lag_ms: 0.25 * index as f64,
            clock_synchronised: Some(true),
            clock_max_error_ms: Some(1.5),
            started_late: false,
            missed: 0,
        }],
        missing: vec![],
    });
    r
}

/// Shard `index`'s HTTP/3 connections: one full handshake of 3 ms, `index` resumed ones of
/// 1, 2... ms (means that do not divide evenly), and as many in 0-RTT.
fn h3_row(index: u64) -> crate::ProtocolUse {
    let resumed: Vec<f64> = (1..=index).map(|k| k as f64 + 0.001 * k as f64).collect();
    let total: f64 = resumed.iter().sum();
    crate::ProtocolUse {
        protocol: "h3".into(),
        connections: 1 + index,
        requests: 10,
        handshakes: Some(crate::Handshakes {
            full: crate::HandshakeTimes {
                count: 1,
                mean_ms: 3.0,
                max_ms: 3.0,
                total_ms: 3.0,
            },
            resumed: crate::HandshakeTimes {
                count: index,
                mean_ms: total / index.max(1) as f64,
                max_ms: resumed.last().copied().unwrap_or(0.0),
                total_ms: total,
            },
            early_data_accepted: index,
            early_data_rejected: 0,
        }),
    }
}

fn three() -> Vec<RunResult> {
    vec![
        shard(0, 3, &[5, 7, 9, 11, 13]),
        shard(1, 3, &[6, 8, 800, 12]),
        shard(2, 3, &[4, 10, 15, 16, 17, 18]),
    ]
}

fn named(rs: &[RunResult]) -> Vec<(String, RunResult)> {
    rs.iter()
        .enumerate()
        .map(|(i, r)| (format!("shard-{i}.json"), r.clone()))
        .collect()
}

fn bytes(r: &RunResult) -> Vec<u8> {
    let mut out = Vec::new();
    write_json(r, &mut out).unwrap();
    out
}

#[test]
fn merged_histograms_equal_recording_everything_in_one() {
    let merged = merge(named(&three())).unwrap();
    let all: Vec<u64> = [5, 7, 9, 11, 13, 6, 8, 800, 12, 4, 10, 15, 16, 17, 18].to_vec();
    let single = shard(0, 1, &all);
    assert_eq!(merged.latency_ms, single.latency_ms);
    assert_eq!(merged.service_time_ms, single.service_time_ms);
    assert_eq!(merged.histograms.latency, single.histograms.latency);
    assert_eq!(merged.totals.completed, 15);
    assert_eq!(merged.totals.dropped, 3, "0 + 1 + 2: counters add");
    assert_eq!(merged.status["503"], 1);
    assert_eq!(merged.timeline.len(), 3);
    for (m, s) in merged.timeline.iter().zip(&single.timeline) {
        assert_eq!(
            (m.t, m.requests, m.p50_ms, m.p99_ms, m.max_ms),
            (s.t, s.requests, s.p50_ms, s.p99_ms, s.max_ms)
        );
        assert_eq!(m.latency_histogram, s.latency_histogram);
        // Each second's streams too: their time to first event and gaps, to the byte.
        assert!(m.streams.is_some(), "t = {}", m.t);
        assert_eq!(m.streams, s.streams, "t = {}", m.t);
    }
    assert_eq!(merged.streams, single.streams);
    let h = merged.shard.as_ref().unwrap();
    assert!(!h.is_partial());
    assert_eq!(h.label(), "0,1,2/3");
    assert_eq!(merged.config.threads, 6);
    let h = merged.generator.protocols[0].handshakes.as_ref().unwrap();
    assert_eq!(
        (h.full.count, h.resumed.count, h.early_data_accepted),
        (3, 3, 3)
    );
    // 1.001 + (1.001 + 2.002) over 3: the mean of all resumed handshakes, not of the means.
    assert_eq!(h.resumed.total_ms, 4.004);
    assert!((h.resumed.mean_ms - 4.004 / 3.0).abs() < 1e-6, "{h:?}");
    assert_eq!(h.resumed.max_ms, 2.002);
    assert!((merged.generator.cpu_user_s - 0.6).abs() < 1e-12);
}

#[test]
fn merge_is_commutative_and_associative_to_the_byte() {
    let [a, b, c]: [RunResult; 3] = three().try_into().unwrap();
    let all = bytes(&merge(named(&[a.clone(), b.clone(), c.clone()])).unwrap());
    let rev = bytes(&merge(named(&[c.clone(), b.clone(), a.clone()])).unwrap());
    let ab = merge(named(&[a.clone(), b.clone()])).unwrap();
    assert!(ab.shard.as_ref().unwrap().is_partial());
    let ab_c = bytes(&merge(named(&[ab, c.clone()])).unwrap());
    let cb = merge(named(&[c.clone(), b.clone()])).unwrap();
    let a_cb = bytes(&merge(named(&[cb, a.clone()])).unwrap());
    let ca = merge(named(&[c, a])).unwrap();
    let ca_b = bytes(&merge(named(&[b, ca])).unwrap());
    assert_eq!(all, rev);
    assert_eq!(all, ab_c);
    assert_eq!(all, a_cb);
    assert_eq!(all, ca_b);
}

#[test]
fn thresholds_are_judged_on_the_merged_numbers_not_averaged() {
    // sharding.md's worked example: A all 10 ms; B 98% at 10 ms and 2% at 1 s. Averaged p99s
    // would say 505 ms; the true p99 of the 20 000 is 10 ms.
    let a = shard(0, 2, &[10; 10_000]);
    let mut slow = vec![10; 9_800];
    slow.extend([1_000; 200]);
    let b = shard(1, 2, &slow);
    assert!(!b.thresholds[0].pass, "shard B alone fails p99 < 20ms");
    let m = merge(named(&[a, b])).unwrap();
    assert!(
        (m.latency_ms.p99 - 10.0).abs() < 0.01,
        "{}",
        m.latency_ms.p99
    );
    assert!(m.latency_ms.p999 > 900.0);
    let t: &ThresholdResult = &m.thresholds[0];
    assert!(t.pass && (t.value - m.latency_ms.p99).abs() < 1e-9, "{t:?}");
}

#[test]
fn a_missing_shard_makes_a_partial_result_never_scaled_up() {
    let rs = three();
    let m = merge(named(&[rs[0].clone(), rs[2].clone()])).unwrap();
    let h = m.shard.as_ref().unwrap();
    assert_eq!(h.missing, vec![1]);
    assert_eq!(m.totals.completed, 11, "5 + 6, nothing added for shard 1");
    let said = partial_run(&m).unwrap();
    assert!(
        said.starts_with("partial result: shard 1/3 missing"),
        "{said}"
    );
    assert!(partial_run(&merge(named(&three())).unwrap()).is_none());
}

#[test]
fn merge_files_names_every_file_that_cannot_take_part() {
    let dir = std::env::temp_dir().join(format!("herd-merge-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = dir.join("shard-0.json");
    crate::write_json_file(&three()[0], &run).unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let files = [
        run.clone(),
        fixtures.join("capacity-open.json"),
        dir.join("gone.json"),
    ];
    let Err(e) = merge_files(&files) else {
        panic!("a capacity search and a missing file merged");
    };
    assert!(e.starts_with("nothing merged:\n"), "{e}");
    assert!(e.contains("capacity-open.json is a capacity search"), "{e}");
    assert!(e.contains("gone.json"), "{e}");
    let mixed = [run, fixtures.join("sweep-open.json")];
    let Err(e) = merge_files(&mixed) else {
        panic!("a run merged with a sweep");
    };
    assert!(
        e.contains("a sweep's shards merge only with each other"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shards_without_a_shared_start_are_merged_with_a_warning_and_their_span() {
    let mut rs = three();
    for (i, r) in rs.iter_mut().enumerate() {
        r.shard.as_mut().unwrap().start_at = None;
        // Started by hand, a minute apart: their 3 s never overlapped.
        r.timeline_start_unix_s = r.timeline_start_unix_s.map(|s| s + 60 * i as u64);
    }
    let m = merge(named(&rs)).unwrap();
    let w = m.warnings.join("\n");
    assert!(
        w.contains("the shards had no shared start (--start-at)"),
        "{w}"
    );
    assert!(w.contains("(123 s), all at once for 0 s of it"), "{w}");
    // With --start-at, no such warning.
    let m = merge(named(&three())).unwrap();
    assert!(
        !m.warnings.iter().any(|w| w.contains("no shared start")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn a_generator_limited_shard_limits_the_whole_naming_it() {
    let mut rs = three();
    rs[1].generator.verdict = GeneratorVerdict::GeneratorLimited;
    rs[1].generator.reasons = vec!["send lag p99 80 ms > 50 ms".into()];
    let m = merge(named(&rs)).unwrap();
    assert_eq!(m.generator.verdict, GeneratorVerdict::GeneratorLimited);
    assert_eq!(
        m.generator.reasons,
        vec!["shard 1/3: send lag p99 80 ms > 50 ms".to_owned()]
    );
}

#[test]
fn shards_naps_add_up_and_the_longest_is_kept() {
    let mut rs = three();
    for (r, (windows, napping, longest_us)) in
        rs.iter_mut().zip([(30, 20, 50), (30, 0, 0), (28, 28, 21)])
    {
        r.generator.naps = Some(crate::Naps {
            windows,
            napping,
            longest_us,
        });
    }
    let m = merge(named(&rs)).unwrap();
    assert_eq!(
        m.generator.naps,
        Some(crate::Naps {
            windows: 88,
            napping: 48,
            longest_us: 50
        })
    );
}

#[test]
fn foreign_duplicate_and_other_plan_files_are_refused_by_name() {
    let rs = three();
    let mut other = rs[2].clone();
    other.shard.as_mut().unwrap().plan_hash = "cd".repeat(32);
    let mut foreign = rs[1].clone();
    foreign.shard = None;
    let e = merge(vec![
        ("a.json".into(), rs[0].clone()),
        ("b.json".into(), rs[1].clone()),
        ("again.json".into(), rs[1].clone()),
        ("other.json".into(), other),
        ("plain.json".into(), foreign),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("shard 1/3 is in both b.json and again.json"),
        "{e}"
    );
    assert!(
        e.contains("other.json is from a different plan than a.json"),
        "{e}"
    );
    assert!(e.contains("plain.json is not a shard's result"), "{e}");
    let mut old = rs[0].clone();
    old.timeline[0].latency_histogram = None;
    let e = merge(named(&[old])).unwrap_err().to_string();
    assert!(e.contains("older herd"), "{e}");
    assert!(merge(Vec::new())
        .unwrap_err()
        .to_string()
        .contains("no results"));
}

#[test]
fn shard_and_merged_results_satisfy_the_schema() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/result.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let rs = three();
    let merged = merge(named(&rs[..2])).unwrap();
    for r in [&rs[0], &merged] {
        let json: serde_json::Value = serde_json::from_slice(&bytes(r)).unwrap();
        let errs: Vec<String> = v
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errs.is_empty(), "{errs:#?}");
    }
}

/// A workload shard: two request names, a scenario and a check, from real metrics.
fn workload_shard(index: u64, cart_ms: &[u64]) -> RunResult {
    let mut r = shard(index, 2, cart_ms);
    let mut cart = Stats::default();
    for (k, &ms) in cart_ms.iter().enumerate() {
        let d = Duration::from_millis(ms);
        let mut o = Outcome::completed(0, d, d, 200, Verdict::Ok);
        // Every third request opens a connection (5 ms, 3 of them TLS).
        if k % 3 == 0 {
            o.connect = Some(Duration::from_millis(5 + ms % 7));
            o.phases.tls = Some(Duration::from_millis(3 + ms % 5));
        }
        o.phases.waiting = Some(d / 2);
        o.phases.receiving = Some(Duration::from_micros(100 + ms));
        cart.record(&o);
    }
    let mut home = Stats::default();
    home.record(&Outcome::completed(
        0,
        Duration::from_millis(3),
        Duration::from_millis(2),
        200,
        Verdict::Ok,
    ));
    let d = Duration::from_secs(3);
    r.by_name = vec![
        crate::name_result("home", &home, d),
        crate::name_result("cart", &cart, d),
    ];
    let mut iters = herd_metrics::new_histogram();
    iters.record(1_000 * (index + 1)).unwrap();
    r.by_scenario = vec![crate::scenario_result("buy", 1, 1, &(&iters).into())];
    r.checks = vec![crate::CheckResult {
        name: "cart: status 200".into(),
        passes: 10,
        fails: index,
        sample: (index > 0).then(|| format!("got 50{index}")),
    }];
    r
}

#[test]
fn names_scenarios_and_checks_merge_exactly() {
    let (a, b) = (
        workload_shard(0, &[10, 20, 30]),
        workload_shard(1, &[40, 50, 900]),
    );
    let m = merge(named(&[a, b])).unwrap();
    let all = workload_shard(0, &[10, 20, 30, 40, 50, 900]);
    let cart = &m.by_name[1];
    assert_eq!(cart.name, "cart");
    assert_eq!(
        cart.latency_ms, all.by_name[1].latency_ms,
        "percentiles from the added histograms"
    );
    assert_eq!(
        (&cart.connect_ms, &cart.phases),
        (&all.by_name[1].connect_ms, &all.by_name[1].phases),
        "each name's connect and phases merge as if recorded in one run"
    );
    let phases = cart.phases.as_ref().unwrap();
    assert_eq!((phases.tls_ms.count, phases.waiting_ms.count), (2, 6));
    assert_eq!(phases.dns_ms, None, "a name has no lookup of its own");
    assert_eq!(
        m.phases.as_ref().unwrap().dns_ms.as_ref().map(|s| s.count),
        Some(2),
        "one lookup per shard"
    );
    assert_eq!(cart.totals.completed, 6);
    assert_eq!(m.by_name[0].totals.completed, 2);
    assert_eq!(m.by_scenario[0].iterations, 2);
    assert_eq!(m.by_scenario[0].duration_ms.count, 2);
    assert_eq!((m.checks[0].passes, m.checks[0].fails), (20, 1));
    assert_eq!(m.checks[0].sample.as_deref(), Some("got 501"));
    let mut other = workload_shard(1, &[1]);
    other.by_name.swap(0, 1);
    let e = merge(named(&[workload_shard(0, &[1]), other]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("request names differ"), "{e}");
}

/// A sweep of two steps whose runs are `steps`' shards.
fn sweep_of(steps: Vec<RunResult>, levels: &[f64]) -> crate::sweep::SweepResult {
    use crate::sweep::{SweepConfig, SweepResult, SweepStep, SweepTarget};
    SweepResult {
        herd_version: crate::HERD_VERSION.to_owned(),
        schema_version: crate::SCHEMA_VERSION,
        kind: Kind::Sweep,
        model: Model::Open,
        targets: vec![SweepTarget {
            name: "127.0.0.1:8080".into(),
            url: "http://127.0.0.1:8080/".into(),
            named: false,
        }],
        config: SweepConfig {
            levels: levels.to_vec(),
            step_duration_s: Some(3.0),
            requests_per_step: None,
            calls_per_conn: None,
            timeout_s: 10.0,
            cooldown_s: 0.0,
            stop: crate::sweep::StopRule::default(),
        },
        steps: steps
            .into_iter()
            .zip(levels)
            .map(|(r, &level)| SweepStep {
                level,
                runs: vec![r],
            })
            .collect(),
        stopped_early: None,
        interrupted: false,
    }
}

#[test]
fn sweeps_merge_step_by_step_as_their_runs_do() {
    let (a, b) = (shard(0, 2, &[3, 4, 5]), shard(1, 2, &[6, 700]));
    let one = sweep_of(vec![a.clone(), a.clone()], &[100.0, 200.0]);
    let other = sweep_of(vec![b.clone(), b.clone()], &[100.0, 200.0]);
    let merged = merge_sweeps(vec![("a".into(), one.clone()), ("b".into(), other)]).unwrap();
    let run = merge(named(&[a, b.clone()])).unwrap();
    assert_eq!(merged.steps.len(), 2);
    for step in &merged.steps {
        assert_eq!(
            bytes(&step.runs[0]),
            bytes(&run),
            "each step merges as a run's shards"
        );
    }
    assert_eq!(merged.stopped_early, None);
    // A shard interrupted after one step: the merge ends there and says so.
    let short = sweep_of(vec![b.clone()], &[100.0, 200.0]);
    let merged = merge_sweeps(vec![("a".into(), one.clone()), ("b".into(), short)]).unwrap();
    assert_eq!(merged.steps.len(), 1);
    assert!(merged
        .stopped_early
        .unwrap()
        .contains("only 1 of the steps"));
    // Another sweep's levels are refused, named.
    let foreign = sweep_of(vec![b], &[300.0]);
    let e = merge_sweeps(vec![("a".into(), one), ("c.json".into(), foreign)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("c.json is not a shard of the same sweep"),
        "{e}"
    );
}
