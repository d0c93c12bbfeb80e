use super::*;

fn pt(level: f64, p99_ms: f64, error_percent: f64, errored: u64) -> Point {
    Point {
        level,
        good: level,
        p99_ms,
        error_percent,
        errored,
    }
}

#[test]
fn latency_rises_where_p99_passes_three_times_its_lowest_and_stays() {
    // (p99 at each level 1, 5, 10, 100, 500, 1000; the level it rose from)
    let table: [(&[f64], Option<f64>); 6] = [
        (&[20.0, 21.0, 22.0, 25.0, 7700.0, 7400.0], Some(500.0)), // seed 004 shape
        (&[20.0, 21.0, 22.0, 25.0, 30.0, 40.0], None),            // within 3x
        (&[20.0, 90.0, 22.0, 25.0, 30.0, 40.0], None),            // one spike is not a rise
        (&[20.0, 21.0, 90.0, 95.0, 30.0, 80.0], Some(1000.0)),    // only the last stays up
        (&[0.1, 0.2, 0.4, 0.5, 0.6, 0.7], None),                  // 7x, but under 1 ms more
        (&[40.0, 10.0, 12.0, 35.0, 50.0, 60.0], Some(100.0)),     // lowest need not be first
    ];
    let levels = [1.0, 5.0, 10.0, 100.0, 500.0, 1000.0];
    for (p99s, want) in table {
        let points: Vec<Point> = levels
            .iter()
            .zip(p99s)
            .map(|(&l, &p)| pt(l, p, 0.0, 0))
            .collect();
        let got = latency_rise(&points).map(|(_, r)| r.level);
        assert_eq!(got, want, "{p99s:?}");
    }
}

#[test]
fn a_full_listen_queue_is_named_from_the_first_step_that_shows_it() {
    let b = Backlog {
        retried: 135,
        connects: 10_000,
        at: vec![(1.0, 120), (3.0, 15)],
    };
    assert_eq!(
        backlog_clause(Some((500.0, &b)), "users"),
        "connects cluster at the SYN retransmission times (1 s, 3 s) from 500 users: the \
         server's listen queue overflowed (its backlog, not its speed)"
    );
    assert_eq!(backlog_clause(None, "users"), "");
}

#[test]
fn errors_start_at_half_a_percent_and_ten_requests() {
    // (error percent, errored requests) per level 1, 5, 10, 100; the level errors start at.
    type Case<'a> = (&'a [(f64, u64)], Option<f64>);
    let table: [Case; 5] = [
        (&[(0.0, 0), (0.0, 0), (1.2, 60), (2.0, 200)], Some(10.0)),
        (&[(0.0, 0), (0.0, 0), (0.0, 0), (2.0, 1)], None), // one arrival unsent at the end
        (&[(0.0, 0), (0.3, 30), (0.0, 0), (0.0, 0)], None), // under 0.5%
        (&[(0.6, 12), (0.0, 0), (0.0, 0), (0.0, 0)], Some(1.0)),
        (&[(0.0, 0), (0.0, 0), (0.0, 0), (0.0, 0)], None),
    ];
    for (errors, want) in table {
        let points: Vec<Point> = [1.0, 5.0, 10.0, 100.0]
            .iter()
            .zip(errors)
            .map(|(&l, &(e, n))| pt(l, 1.0, e, n))
            .collect();
        assert_eq!(
            errors_start(&points).map(|(p, _)| p.level),
            want,
            "{errors:?}"
        );
    }
}

#[test]
fn each_clause_says_what_the_numbers_show_and_how_sure() {
    let open = |s| throughput_clause(Some(s), "req/s asked", true);
    let closed = |s| throughput_clause(Some(s), "users", false);
    let table: [(String, &str); 7] = [
        (
            closed(Shape::Knee {
                below: 40.0,
                at: 60.0,
                throughput: 990.0,
            }),
            "saturates between 40 and 60 users: from 60 good replies are within 10% of their best \
             (990 req/s)",
        ),
        (
            closed(Shape::Rising {
                top: 50.0,
                throughput: 340.0,
            }),
            "no saturation up to 50 users: good replies still rising at the top level (340 req/s); \
             the knee, if any, lies above the levels tried",
        ),
        (
            closed(Shape::FlatFromFirst {
                first: 1.0,
                at_first: 950.0,
                throughput: 1000.0,
            }),
            "saturated from the first level: at 1 user good replies (950 req/s) were already \
             within 10% of their best (1,000 req/s); the knee lies at or below 1 user",
        ),
        (
            open(Shape::Rising {
                top: 150.0,
                throughput: 149.0,
            }),
            "no saturation up to 150 req/s asked: good replies kept up with every rate asked \
             (within 10%), 149 req/s at the top",
        ),
        (
            open(Shape::Knee {
                below: 200.0,
                at: 300.0,
                throughput: 220.0,
            }),
            "saturates between 200 and 300 req/s asked: good replies kept up (within 10%) to 200 \
             and fell behind at 300, topping out near 220 req/s",
        ),
        (
            open(Shape::FlatFromFirst {
                first: 20.0,
                at_first: 0.0,
                throughput: 0.0,
            }),
            "saturated from the first level: good replies fell more than 10% behind already at 20 \
             req/s asked (0 req/s), and never rose above 0 req/s; the knee lies at or below 20 \
             req/s asked",
        ),
        (
            open(Shape::Single {
                level: 20.0,
                throughput: 19.0,
            }),
            "one level only (20 req/s asked: 19.0 good replies/s): no curve to read a knee from",
        ),
    ];
    for (got, want) in table {
        assert_eq!(got, want);
    }
    let points = [
        pt(1.0, 21.4, 0.0, 0),
        pt(5.0, 22.0, 0.0, 0),
        pt(500.0, 7700.0, 1.2, 60),
        pt(1000.0, 7400.0, 2.0, 200),
    ];
    assert_eq!(
        latency_clause(&points, "users"),
        "p99 rises past 3x its lowest (21.4 ms at 1 user) from 500 users (7.70 s)"
    );
    assert_eq!(
        errors_clause(&points, "users"),
        "errors from 500 users (1.20%, up to 2.00%)"
    );
    let calm = [pt(50.0, 1.0, 0.0, 0), pt(100.0, 1.5, 2.0, 1)];
    assert_eq!(
        latency_clause(&calm, "req/s"),
        "p99 stays within 3x its lowest (1.00 ms to 1.50 ms)"
    );
    assert_eq!(
        errors_clause(&calm, "req/s"),
        "errors under 0.5% (or under 10 requests) at every level"
    );
    assert_eq!(errors_clause(&calm[..1], "req/s"), "no errors");
}
