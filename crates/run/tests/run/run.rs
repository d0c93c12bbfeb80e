//! herd-run end to end: a spec is checked with every problem at once, and a prepared URL run
//! against the mock server (in-process, port 0) returns the counts it was asked for.

use herd_engine::Control;
use herd_mock::{Config, Route, Server};
use herd_run::{
    conclude, Conclusion, Length, Level, LoadFlags, RequestFlags, RunError, RunSpec, Runs, Sink,
    Source,
};
use std::sync::Arc;
use std::time::Duration;

fn problems(spec: &RunSpec) -> Vec<String> {
    match spec.prepare() {
        Err(RunError::Invalid(p)) => p,
        Err(e) => panic!("not a bad-input error: {e}"),
        Ok(_) => panic!("the spec was accepted"),
    }
}

#[test]
fn prepare_reports_every_problem_at_once() {
    let spec = RunSpec {
        load: LoadFlags {
            rate: Some(0.0),
            ..LoadFlags::default()
        },
        request: RequestFlags {
            headers: vec!["no colon".to_owned()],
            body_file: Some("/no/such/body.json".into()),
            ..RequestFlags::default()
        },
        ..RunSpec::new(Source::url("localhost:8080"))
    };
    let p = problems(&spec);
    assert_eq!(p.len(), 4, "{p:#?}");
    assert!(p[1].contains("header `no colon`"), "{p:#?}");
    assert!(p[2].contains("/no/such/body.json"), "{p:#?}");
    assert!(p[3].contains("rate must be a positive number"), "{p:#?}");
}

#[test]
fn a_missing_url_file_does_not_hide_the_flags_problems() {
    let spec = RunSpec {
        request: RequestFlags {
            headers: vec!["no colon".to_owned()],
            ..RequestFlags::default()
        },
        ..RunSpec::new(Source::UrlFile {
            path: "/no/such/urls.txt".into(),
        })
    };
    let p = problems(&spec);
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(p[0].contains("/no/such/urls.txt"), "{p:#?}");
    assert!(p[1].contains("header `no colon`"), "{p:#?}");
}

/// Counts what the run reported, to show the sink is told.
#[derive(Default)]
struct Seen {
    finished: bool,
}

impl Sink for Seen {
    fn finished(&mut self) {
        self.finished = true;
    }
}

#[test]
fn a_prepared_url_run_at_a_level_returns_the_counts_asked_for() {
    let server = Server::start(Config::default()).expect("the mock server starts");
    let url = format!("http://{}/", server.local_addr());
    let spec = RunSpec {
        load: LoadFlags {
            requests: Some(40),
            threads: Some(1),
            timeout: Some(Duration::from_secs(5)),
            ..LoadFlags::default()
        },
        ..RunSpec::new(Source::url(url.clone()))
    };
    let prepared = spec.prepare().expect("a valid spec");
    let control = Arc::new(Control::new());
    let mut seen = Seen::default();
    let result = prepared
        .run(Some(Level::Users(3)), &control, &mut seen)
        .expect("the run plays");
    assert!(seen.finished);
    assert_eq!(result.totals.completed, 40);
    assert_eq!(result.totals.ok, 40);
    assert_eq!(result.totals.errors, 0);
    assert_eq!(result.config.connections, 3);
    assert_eq!(result.config.url, url);
    assert_eq!(conclude(&result), Conclusion::Ok);

    // The same prepared run as a series drives it: another level and length.
    let result = Runs::run(
        &prepared,
        Level::Rate(500.0),
        Length::Requests(25),
        &control,
        &mut (),
    )
    .expect("the run plays");
    assert_eq!(result.totals.completed, 25);
    assert_eq!(result.config.rate, Some(500.0));
    assert_eq!(prepared.rate_unit(), "req/s");
    server.shutdown();
    the_conclusion_ranks_how_a_run_ended(result);
}

/// A run of `n` requests by 3 users with `method` against a mock that closes every connection
/// under its second request, without a word (tinyproxy's manners): the result and what the
/// server saw.
fn closed_under(method: &str, n: u64) -> (herd_result::RunResult, herd_mock::ServerStats) {
    let server = Server::start(Config {
        routes: vec![Route::parse("/* close-after=1").unwrap()],
        ..Config::default()
    })
    .expect("the mock server starts");
    let spec = RunSpec {
        load: LoadFlags {
            requests: Some(n),
            threads: Some(1),
            timeout: Some(Duration::from_secs(5)),
            ..LoadFlags::default()
        },
        request: RequestFlags {
            method: Some(method.to_owned()),
            ..RequestFlags::default()
        },
        ..RunSpec::new(Source::url(format!("http://{}/", server.local_addr())))
    };
    let result = spec
        .prepare()
        .expect("a valid spec")
        .run(Some(Level::Users(3)), &Arc::new(Control::new()), &mut ())
        .expect("the run plays");
    (result, server.shutdown())
}

#[test]
fn a_get_closed_under_on_a_reused_connection_goes_once_more_counted_once() {
    let (result, seen) = closed_under("GET", 30);
    assert_eq!(result.totals.completed, 30);
    assert_eq!(result.totals.ok, 30);
    assert_eq!(result.totals.errors, 0);
    // Each user's first request opened its connection; each of the 27 others met the close
    // on the reused connection and went once more on a new one.
    assert_eq!(seen.requests, 57);
    assert_eq!(seen.connections, 30);
}

#[test]
fn a_post_closed_under_on_a_reused_connection_is_an_error_not_sent_twice() {
    // The server may have acted on a POST before it closed: it is counted, not repeated.
    let (result, seen) = closed_under("POST", 30);
    assert_eq!(result.totals.ok, 15);
    assert_eq!(result.totals.errors, 15);
    assert_eq!(seen.requests, 30);
}

/// One rule for every kind of run: interrupted, then nothing answered, then generator-limited,
/// then a failed threshold.
fn the_conclusion_ranks_how_a_run_ended(mut r: herd_result::RunResult) {
    r.thresholds.push(herd_result::ThresholdResult {
        expression: "p99 < 1ms".to_owned(),
        value: 2.0,
        unit: "ms".to_owned(),
        pass: false,
        note: None,
    });
    assert_eq!(conclude(&r), Conclusion::ThresholdsFailed);
    r.generator.verdict = herd_result::GeneratorVerdict::GeneratorLimited;
    assert_eq!(conclude(&r), Conclusion::GeneratorLimited);
    r.totals.completed = 0;
    assert_eq!(conclude(&r), Conclusion::NothingAnswered);
    r.interrupted = true;
    assert_eq!(conclude(&r), Conclusion::Interrupted);
}
