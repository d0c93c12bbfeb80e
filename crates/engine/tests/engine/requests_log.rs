//! `--requests-log`'s engine side: a line for every measured request and for nothing else,
//! times consistent with the histograms, and the writer falling behind counted, not waited for.

use crate::common::{go_with, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::metrics::{ErrorKind, Verdict};
use herd_engine::{Control, Hooks, Load, Plan, RequestsLog};
use std::sync::Arc;
use std::time::Duration;

fn logged(
    plan: Plan,
    fake: &FakeServer,
) -> (
    herd_engine::RunOutput,
    Vec<herd_engine::requests_log::Line>,
    u64,
) {
    let (log, rx) = RequestsLog::new();
    let hooks = Hooks {
        control: Arc::new(Control::new()),
        requests_log: Some(Arc::clone(&log)),
    };
    // The receiver drains as the run goes, as the writer thread does.
    let drain = std::thread::spawn(move || rx.iter().flatten().collect::<Vec<_>>());
    let out = go_with(plan, fake, hooks);
    let lost = log.lost();
    drop(log);
    (out, drain.join().unwrap(), lost)
}

#[test]
fn requests_log_has_a_line_per_measured_request_and_none_for_the_warmup() {
    // On each connection the 3rd request is a 500 and the 5th is never answered; the rest
    // take 10 ms.
    let fake = FakeServer::new(|_, n| match n {
        3 => Reply::After(ms(10), 500),
        5 => Reply::Hang,
        _ => Reply::After(ms(10), 200),
    });
    let plan = Plan {
        load: Load::Open {
            rate: 200.0,
            max_connections: 20,
        },
        warmup: Duration::from_secs(1),
        duration: Some(Duration::from_secs(3)),
        timeout: ms(50),
        threads: 1,
        ..Plan::default()
    };
    let (out, lines, lost) = logged(plan, &fake);
    assert_eq!(lost, 0);
    let t = &out.total;
    assert_eq!(lines.len() as u64, t.completed + t.errors.total());
    let ok = lines.iter().filter(|l| l.result == Ok(Verdict::Ok)).count() as u64;
    assert_eq!(ok, t.ok);
    let failed: Vec<_> = lines
        .iter()
        .filter(|l| l.result == Ok(Verdict::Failed))
        .collect();
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|l| l.status == 500));
    let timeouts = lines
        .iter()
        .filter(|l| l.result == Err(ErrorKind::Timeout))
        .count() as u64;
    assert!(timeouts > 0);
    assert_eq!(timeouts, t.errors.total());
    for l in &lines {
        // The warm-up's requests are not measured: nothing before the measurement's start.
        assert!(l.intended_us < 3_100_000, "{l:?}");
        assert_eq!(
            l.intended_us + l.latency_us,
            l.sent_us.unwrap() + l.service_us.unwrap()
        );
        assert!(l.connection.is_some());
        if l.result == Ok(Verdict::Ok) {
            assert_eq!(l.status, 200);
            assert!((10_000..=10_100).contains(&l.service_us.unwrap()), "{l:?}");
        }
    }
    // At 200 a second, the requests are 5 ms apart on the schedule: the log says when.
    let mut intended: Vec<u64> = lines.iter().map(|l| l.intended_us).collect();
    intended.sort_unstable();
    assert_eq!(intended[0], 0);
    assert_eq!(intended[1], 5_000);
}

#[test]
fn a_run_without_the_log_is_untouched_by_one_kept_before() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(50),
        ..Plan::default()
    };
    let (out, lines, _) = logged(plan.clone(), &fake);
    assert_eq!(lines.len(), 50);
    assert_eq!(out.total.completed, 50);
}
