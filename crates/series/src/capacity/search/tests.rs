use super::*;
use herd_result::Summary;

fn cfg(slo: &str) -> SearchConfig {
    SearchConfig {
        slo: Slo::parse(slo).unwrap(),
        start: 50.0,
        max: 1e6,
        min: 1.0,
        precision: 0.05,
        max_probes: 30,
        probe: Duration::from_secs(5),
        min_requests: 500,
        longest: Duration::from_secs(60),
        users: false,
    }
}

/// A probe with requests enough for any SLO here.
fn plenty() -> Measured {
    Measured {
        requests: 1_000_000,
        latency_ms: Summary {
            count: 1_000_000,
            ..Summary::default()
        },
        ..Measured::default()
    }
}

/// A target that admits `limit` per second and fails the rest.
fn admits(limit: f64) -> impl FnMut(&Probe) -> Measured {
    move |p| Measured {
        goodput: p.level.min(limit),
        error_percent: (100.0 * (p.level - limit) / p.level).max(0.0),
        ..plenty()
    }
}

/// Drives the search against `target` to its end; returns the end and the probes' levels.
fn drive(cfg: SearchConfig, mut target: impl FnMut(&Probe) -> Measured) -> (Action, Vec<f64>) {
    let mut s = Search::new(cfg);
    let mut action = s.next(None);
    let mut levels = Vec::new();
    for _ in 0..100 {
        let Action::Probe(p) = &action else { break };
        levels.push(p.level);
        let m = target(p);
        action = s.next(Some(&m));
    }
    assert_eq!(levels.len(), s.history().len());
    (action, levels)
}

#[test]
fn finds_a_known_limit_within_the_precision() {
    // (limit, start): the answer holds the SLO and is within 5% of the true limit.
    let table = [
        (400.0, 50.0),
        (400.0, 10_000.0),
        (1640.0, 50.0),
        (7.0, 50.0),
        (123_456.0, 100.0),
    ];
    for (limit, start) in table {
        let c = SearchConfig {
            start,
            ..cfg("errors<1%")
        };
        let (end, levels) = drive(c, admits(limit));
        let Action::Done { level, ceiling } = end else {
            panic!("{limit}: {end:?} after {levels:?}")
        };
        // errors < 1% holds up to limit / 0.99.
        assert!(level <= limit / 0.99, "{limit}: {level} breaks the SLO");
        assert!(
            level >= limit * 0.95,
            "{limit}: {level} is too low ({levels:?})"
        );
        assert!(ceiling.unwrap() > level, "{limit}");
        assert!(levels.len() <= 25, "{limit}: {} probes", levels.len());
    }
}

#[test]
fn a_latency_slo_is_searched_the_same_way() {
    // Latency grows past 300 req/s.
    let target = |p: &Probe| Measured {
        latency_ms: Summary {
            count: 1_000_000,
            p99: if p.level <= 300.0 { 20.0 } else { p.level },
            ..Summary::default()
        },
        ..plenty()
    };
    let (end, _) = drive(cfg("p99<100ms"), target);
    let Action::Done { level, .. } = end else {
        panic!("{end:?}")
    };
    assert!((285.0..=300.0).contains(&level), "{level}");
}

#[test]
fn the_answer_is_confirmed_by_a_longer_probe_at_that_level() {
    let mut s = Search::new(cfg("errors<1%"));
    let mut target = admits(400.0);
    let mut action = s.next(None);
    while let Action::Probe(p) = &action {
        let m = target(p);
        action = s.next(Some(&m));
    }
    let Action::Done { level, .. } = action else {
        panic!("{action:?}")
    };
    let last = s.history().last().unwrap();
    assert_eq!(last.probe.purpose, Purpose::Confirm);
    assert_eq!(last.probe.level, level);
    let earlier = s.history().iter().find(|h| h.probe.level == level).unwrap();
    assert_eq!(last.probe.duration, earlier.probe.duration * 2);
}

#[test]
fn low_rates_probe_long_enough_for_enough_requests() {
    // (SLO, level, seconds): errors < 1% needs 1,000 requests, p95 200 (the floor of 500 wins).
    let table = [
        ("errors<1%", 10.0, 60.0), // 1,000 requests would take 100 s: capped at `longest`
        ("errors<1%", 50.0, 20.0),
        ("errors<1%", 100.0, 10.0),
        ("errors<1%", 10_000.0, 5.0),
        ("p95<1s", 10.0, 50.0),
        ("p95<1s", 50.0, 10.0),
    ];
    for (slo, level, secs) in table {
        let s = Search::new(cfg(slo));
        assert_eq!(
            s.duration_for(level, true),
            Duration::from_secs_f64(secs),
            "{slo} at {level}"
        );
        // Below a level that broke, a probe starts short: breaking again takes few requests.
        assert_eq!(s.duration_for(level, false), Duration::from_secs(5));
    }
}

#[test]
fn too_few_at_a_low_first_level_ramps_to_a_level_that_can_be_judged() {
    // `--users` probes of 5 requests: a slow server answers one request per second per user.
    let c = SearchConfig {
        start: 1.0,
        users: true,
        ..cfg("p99<2s")
    };
    let slow = |p: &Probe| Measured {
        requests: (p.duration.as_secs_f64() * p.level) as u64,
        latency_ms: Summary {
            count: (p.duration.as_secs_f64() * p.level) as u64,
            min: 900.0,
            p50: 1000.0,
            p99: 1000.0,
            max: 1000.0,
            ..Summary::default()
        },
        ..Measured::default()
    };
    let mut s = Search::new(c);
    let mut action = s.next(None);
    let mut lengths = Vec::new();
    while let Action::Probe(p) = &action {
        lengths.push((p.level, p.duration.as_secs()));
        let m = slow(p);
        action = s.next(Some(&m));
    }
    // 5 requests, then longer: 1 user is never judged on 5, 25 or 125 requests. Still too few
    // at the longest probe, with nothing broken yet: not "too few to judge" at 1 user (it once
    // gave up there), but 20 users for as long, whose 1,200 requests judge the SLO.
    assert_eq!(lengths[..3], [(1.0, 5), (1.0, 60), (20.0, 60)]);
    let third = &s.history()[2];
    assert!(third.held() && third.too_few.is_none(), "{third:?}");
    assert!(
        !matches!(action, Action::Undecided(Undecided::TooFewRequests { .. })),
        "{action:?}"
    );
}

#[test]
fn too_few_below_a_level_that_broke_is_left_undecided() {
    // Once a level broke, a level below it that cannot be judged even at the longest probe is
    // not skipped: the search says it cannot tell.
    let c = SearchConfig {
        start: 4.0,
        users: true,
        ..cfg("p99<2s")
    };
    let target = |p: &Probe| {
        let n = (p.duration.as_secs_f64() * p.level) as u64;
        let p99 = if p.level >= 4.0 { 5000.0 } else { 1000.0 };
        Measured {
            requests: n,
            latency_ms: Summary {
                count: n,
                p50: 1000.0,
                p99,
                max: p99,
                ..Summary::default()
            },
            ..Measured::default()
        }
    };
    let (end, _) = drive(c, target);
    assert!(
        matches!(end, Action::Undecided(Undecided::TooFewRequests { .. })),
        "{end:?}"
    );
}

#[test]
fn an_slo_no_rate_meets_ends_at_the_floor_on_enough_evidence() {
    // p99 < 1 us: every response is slower. Each probe breaks on the ten it needs, not 1,000.
    let target = |p: &Probe| {
        let n = (p.duration.as_secs_f64() * p.level) as u64;
        Measured {
            requests: n,
            latency_ms: Summary {
                count: n,
                min: 0.5,
                p50: 1.0,
                p99: 1.5,
                max: 2.0,
                ..Summary::default()
            },
            ..Measured::default()
        }
    };
    let (end, levels) = drive(cfg("p99<1us"), target);
    assert_eq!(
        end,
        Action::Done {
            level: 0.0,
            ceiling: Some(1.0)
        }
    );
    // Halving to the floor; the short probes at the lowest rates run again, longer, until ten
    // responses are in.
    assert_eq!(
        levels,
        vec![50.0, 25.0, 12.5, 6.25, 3.125, 1.5625, 1.5625, 1.0, 1.0]
    );
}

#[test]
fn breaking_at_the_floor_answers_zero() {
    let c = SearchConfig {
        start: 4.0,
        ..cfg("errors<1%")
    };
    let (end, levels) = drive(c, admits(0.0));
    assert_eq!(
        end,
        Action::Done {
            level: 0.0,
            ceiling: Some(1.0)
        }
    );
    assert_eq!(levels, vec![4.0, 2.0, 1.0]);
}

#[test]
fn never_breaking_up_to_the_maximum_is_no_answer() {
    let c = SearchConfig {
        max: 1000.0,
        ..cfg("errors<1%")
    };
    let (end, levels) = drive(c, admits(1e9));
    assert_eq!(
        end,
        Action::Undecided(Undecided::NeverBroke { at_least: 1000.0 })
    );
    assert_eq!(levels, vec![50.0, 100.0, 200.0, 400.0, 800.0, 1000.0]);
}

#[test]
fn a_generator_limited_probe_ends_without_a_number() {
    // herd cannot send more than 700/s; the target would take 5,000.
    let target = |p: &Probe| Measured {
        generator_limited: if p.level > 700.0 {
            vec!["send lag p99 80 ms".into()]
        } else {
            vec![]
        },
        ..plenty()
    };
    let (end, _) = drive(cfg("errors<1%"), target);
    assert_eq!(
        end,
        Action::Undecided(Undecided::GeneratorLimited {
            level: 800.0,
            reasons: vec!["send lag p99 80 ms".into()],
            at_least: Some(400.0)
        })
    );
}

#[test]
fn a_generator_hiccup_is_probed_again() {
    let mut limited_once = false;
    let target = move |p: &Probe| {
        let mut m = admits(400.0)(p);
        if p.level == 200.0 && !limited_once {
            limited_once = true;
            m.generator_limited = vec!["send lag p99 12 ms".into()];
        }
        m
    };
    let (end, levels) = drive(cfg("errors<1%"), target);
    assert!(matches!(end, Action::Done { .. }), "{end:?}");
    assert_eq!(&levels[..4], &[50.0, 100.0, 200.0, 200.0]);
}

#[test]
fn a_target_whose_capacity_flips_between_probes_is_too_noisy() {
    // Each level holds when first probed and breaks when probed again: whatever the search
    // confirms, the target contradicts.
    let mut seen = Vec::new();
    let target = move |p: &Probe| {
        let again = seen.contains(&p.level);
        seen.push(p.level);
        admits(if again { 1.0 } else { 400.0 })(p)
    };
    let (end, levels) = drive(cfg("errors<1%"), target);
    assert!(
        matches!(end, Action::Undecided(Undecided::Noisy { .. })),
        "{end:?} after {levels:?}"
    );
}

#[test]
fn one_contradiction_is_narrowed_again_below_it() {
    // The first confirmation is unlucky; the target is otherwise steady at 400.
    let mut confirms = 0;
    let mut s = Search::new(cfg("errors<1%"));
    let mut action = s.next(None);
    for _ in 0..100 {
        let Action::Probe(p) = &action else { break };
        let mut m = admits(400.0)(p);
        if p.purpose == Purpose::Confirm {
            confirms += 1;
            if confirms == 1 {
                m.error_percent = 5.0;
            }
        }
        action = s.next(Some(&m));
    }
    let Action::Done { level, ceiling } = action else {
        panic!("{action:?}")
    };
    assert_eq!(confirms, 2);
    assert!(level < ceiling.unwrap() && level >= 380.0 * 0.95, "{level}");
}

#[test]
fn the_probe_budget_is_respected() {
    let c = SearchConfig {
        max_probes: 5,
        ..cfg("errors<1%")
    };
    let (end, levels) = drive(c, admits(400.0));
    assert_eq!(levels.len(), 5);
    assert_eq!(
        end,
        Action::Undecided(Undecided::OutOfProbes {
            held: Some(400.0),
            broke: Some(800.0)
        })
    );
}

#[test]
fn users_are_whole_and_the_search_ends_one_apart() {
    let c = SearchConfig {
        start: 1.0,
        users: true,
        ..cfg("errors<1%")
    };
    // 37 users get answers, the 38th and later are refused.
    let target = |p: &Probe| Measured {
        error_percent: if p.level > 37.0 {
            100.0 * (p.level - 37.0) / p.level
        } else {
            0.0
        },
        ..plenty()
    };
    let (end, levels) = drive(c, target);
    assert!(levels.iter().all(|l| l.fract() == 0.0), "{levels:?}");
    assert_eq!(
        end,
        Action::Done {
            level: 37.0,
            ceiling: Some(38.0)
        }
    );
}

#[test]
fn the_end_is_sticky() {
    let c = SearchConfig {
        max_probes: 1,
        ..cfg("errors<1%")
    };
    let mut s = Search::new(c);
    let Action::Probe(p) = s.next(None) else {
        panic!()
    };
    let m = admits(10.0)(&p);
    let end = s.next(Some(&m));
    assert!(matches!(end, Action::Undecided(_)));
    assert_eq!(s.next(None), end);
}

#[test]
fn a_probes_verdict_says_herd_before_too_few_before_what_broke() {
    let j = |broke: &[&str], limited: &[&str], too_few: Option<Shortfall>| Judged {
        probe: Probe {
            level: 100.0,
            duration: Duration::from_secs(5),
            purpose: Purpose::Ramp,
        },
        broke: broke.iter().map(|s| s.to_string()).collect(),
        generator_limited: limited.iter().map(|s| s.to_string()).collect(),
        too_few,
    };
    let few = Some(Shortfall {
        have: 40,
        need: 2000,
    });
    let table = [
        (j(&["p99"], &["cpu"], few), "LIMITED: herd, not the target"),
        (j(&[], &[], few), "too few to judge: 40 of 2,000 requests"),
        (j(&[], &[], None), "held"),
        (
            j(&["p99 120ms > 100ms", "errors"], &[], None),
            "broke: p99 120ms > 100ms, errors",
        ),
    ];
    for (judged, want) in table {
        assert_eq!(judged.verdict(), want);
    }
}
