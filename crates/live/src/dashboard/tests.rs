//! The view grown from events, as a table of what the page says: before the start, while the
//! run goes on (totals added up, the plan's target drawn, the last half hour only), at the end,
//! and the same page again from a recording.

use super::event::{Event, SecondEvent};
use super::html::fragment;
use super::view::{View, WINDOW};
use herd_result::stream::{StreamHeader, StreamLine};
use herd_result::RunResult;

fn run() -> RunResult {
    let json = include_str!("../../../result/tests/fixtures/run-open.json");
    herd_result::parse_json(json, "run-open.json").unwrap()
}

/// The run's start, then `n` seconds each like the fixture's first, asking for 300 req/s.
fn events(r: &RunResult, n: u64) -> Vec<Event> {
    let header = StreamHeader::new(r.target.clone(), r.config.clone(), std::time::UNIX_EPOCH);
    let mut all = vec![Event::Start(header)];
    for t in 0..n {
        let mut second = r.timeline[0].clone();
        second.t = t;
        let mut line = StreamLine {
            second,
            generator: None,
            scheduled: 0,
            dropped: 1,
            in_flight: 2,
            service_histogram: None,
            by_name: Vec::new(),
            scenarios: Vec::new(),
            checks: Vec::new(),
            server: None,
            bytes_sent: None,
            body_bytes: None,
            status: None,
        };
        line.scheduled = line.second.requests + line.dropped;
        all.push(Event::Second(SecondEvent {
            line,
            target: Some(300.0),
        }));
    }
    all
}

#[test]
fn the_view_adds_up_the_seconds_draws_the_plan_and_says_when_the_run_ended() {
    let r = run();
    let mut view = View::default();
    assert!(fragment(&view.frame(), "").contains("data-state=\"waiting\""));
    for e in events(&r, 3) {
        view.apply(&e);
    }
    let per_second = r.timeline[0].requests;
    let live = fragment(&view.frame(), "");
    assert!(live.contains("data-state=\"running\""), "{live}");
    assert!(
        live.contains(&format!("data-requests=\"{}\"", 3 * per_second)),
        "{live}"
    );
    assert!(live.contains("target rate (the plan)"), "{live}");
    assert!(live.contains("<dt>dropped</dt><dd>3</dd>"), "{live}");
    assert!(live.contains("<dt>in flight</dt><dd>2</dd>"), "{live}");
    // The service time is not in the records: no legend for a line that is not there.
    assert!(
        !live.contains("service time (from the actual send)"),
        "{live}"
    );

    view.apply(&Event::End(Box::new(r.clone())));
    let end = fragment(&view.frame(), "The report: here.");
    assert!(end.contains("data-state=\"finished\""), "{end}");
    assert!(
        end.contains("Finished after") && end.contains("The report: here."),
        "{end}"
    );
    let ended = r.totals.completed + r.totals.errors;
    assert!(end.contains(&format!("data-requests=\"{ended}\"")), "{end}");
}

#[test]
fn a_long_run_draws_its_last_half_hour_and_counts_all_of_it() {
    let r = run();
    let mut view = View::default();
    for e in events(&r, WINDOW as u64 + 100) {
        view.apply(&e);
    }
    let d = view.drawn().unwrap();
    assert_eq!(d.timeline.len(), WINDOW);
    assert_eq!(d.timeline[0].t, 100);
    assert_eq!(d.totals.completed, (WINDOW as u64 + 100) * r.timeline[0].ok);
}

#[test]
fn a_day_long_run_keeps_no_more_than_its_window_and_five_minutes_of_seconds() {
    let r = run();
    let mut view = View::default();
    let n = 5 * WINDOW as u64 + 100;
    for e in events(&r, n) {
        view.apply(&e);
    }
    let d = view.drawn().unwrap();
    assert_eq!(d.timeline.len(), WINDOW);
    assert_eq!(d.timeline[0].t, n - WINDOW as u64);
    assert_eq!(d.totals.completed, n * r.timeline[0].ok);
    // The plan's line too: memory that grew with the run's length would not stay flat for a
    // 24-hour soak.
    assert!(
        view.targets().len() < 2 * WINDOW,
        "{}",
        view.targets().len()
    );
    assert_eq!(view.targets().last().unwrap().0, n as f64 - 0.5);
}

#[test]
fn a_recording_read_back_makes_the_same_page_and_a_cut_line_ends_it() {
    let r = run();
    let mut all = events(&r, 4);
    all.push(Event::End(Box::new(r)));
    let mut live = View::default();
    let mut text = String::new();
    for e in &all {
        live.apply(e);
        text.push_str(&serde_json::to_string(e).unwrap());
        text.push('\n');
    }
    let dir = std::env::temp_dir().join(format!("herd-live-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rec.ndjson");
    std::fs::write(&path, &text).unwrap();
    let read = super::recording::read(&path).unwrap().expect("a recording");
    assert_eq!(fragment(&read.frame(), "x"), fragment(&live.frame(), "x"));
    // Killed mid-line: the seconds before stand, the run is not finished.
    let cut = &text[..text.rfind("{\"event\":\"end\"").unwrap() + 30];
    std::fs::write(&path, cut).unwrap();
    let partial = super::recording::read(&path).unwrap().unwrap();
    assert!(partial.end().is_none() && partial.seconds == 4);
    std::fs::write(&path, "{\"kind\":\"run\"}\n").unwrap();
    assert!(super::recording::read(&path).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` seconds whose lines carry two request names and the watched server's reading.
fn named_events_with_the_server(r: &RunResult, n: u64) -> Vec<Event> {
    let mut all = events(r, n);
    for (t, e) in all.iter_mut().skip(1).enumerate() {
        let Event::Second(s) = e else { continue };
        s.line.by_name = ["home", "item"]
            .iter()
            .map(|name| herd_result::stream::NameLine {
                name: (*name).to_owned(),
                ok: 7,
                failed: 0,
                errors: 1,
                latency_histogram: None,
            })
            .collect();
        s.line.server = Some(herd_result::Server {
            processes: vec![herd_result::WatchedProcess {
                pid: 42,
                samples: vec![herd_result::ProcessSample {
                    t: t as f64 + 1.0,
                    cpu_percent: 12.5,
                    rss_bytes: 3 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            prometheus: Vec::new(),
        });
    }
    all
}

#[test]
fn the_live_page_shows_the_watched_server_and_a_row_per_request_name() {
    let r = run();
    let mut view = View::default();
    for e in named_events_with_the_server(&r, 3) {
        view.apply(&e);
    }
    let live = fragment(&view.frame(), "");
    assert!(live.contains("<dt>server CPU</dt><dd>12.5%</dd>"), "{live}");
    assert!(
        live.contains("<dt>server memory</dt><dd>3.15 MB</dd>"),
        "{live}"
    );
    assert!(live.contains("id=\"chart-server-cpu\""), "{live}");
    assert!(live.contains("id=\"chart-server-memory\""), "{live}");
    for name in ["home", "item"] {
        let row = format!(
            "<tr data-name=\"{name}\"><td>{name}</td><td>24</td><td>8.00</td><td>21</td><td>3</td>"
        );
        assert!(live.contains(&row), "{row}: {live}");
    }
    // Only the last half hour of the server's readings is drawn, as of the rest.
    let mut long = View::default();
    for e in named_events_with_the_server(&r, WINDOW as u64 + 100) {
        long.apply(&e);
    }
    let d = long.drawn().unwrap();
    let server = d.server.unwrap();
    assert_eq!(server.processes[0].samples.len(), WINDOW);
    assert_eq!(server.processes[0].samples[0].t, 101.0);
    // Past two windows the view forgets the oldest, the server's readings with the rest.
    let mut day = View::default();
    for e in named_events_with_the_server(&r, 2 * WINDOW as u64 + 100) {
        day.apply(&e);
    }
    let server = day.drawn().unwrap().server.unwrap();
    assert_eq!(server.processes[0].samples.len(), WINDOW);
    assert_eq!(server.processes[0].samples[0].t, (WINDOW + 101) as f64);
}

#[test]
fn a_series_page_lists_the_levels_done_above_the_step_going_on() {
    use super::event::{LevelRow, Levels};
    use super::html::series_fragment;
    let r = run();
    let mut view = View::default();
    for e in events(&r, 2) {
        view.apply(&e);
    }
    let row = |asked: &str| LevelRow {
        asked: asked.to_owned(),
        achieved: "19.8 replies/s".to_owned(),
        p99_ms: 4.0,
        verdict: "ok".to_owned(),
        ..LevelRow::default()
    };
    let mut levels = Levels {
        what: "herd sweep http://x/ at 20,40".to_owned(),
        step: Some("40 req/s".to_owned()),
        rows: vec![row("20 req/s")],
        ..Levels::default()
    };
    let going = series_fragment(&levels, &view.frame(), "");
    assert!(
        going.contains("data-state=\"running\" data-levels=\"1\""),
        "{going}"
    );
    assert!(going.contains("<h2>Now: 40 req/s</h2>"), "{going}");
    assert!(
        going.contains("<tr class=\"level\"><td>20 req/s</td><td>19.8 replies/s</td>"),
        "{going}"
    );
    levels.rows.push(row("40 req/s"));
    (levels.done, levels.step) = (true, None);
    let done = series_fragment(&levels, &view.frame(), "The report: here.");
    assert!(
        done.contains("data-state=\"finished\" data-levels=\"2\""),
        "{done}"
    );
    assert!(
        done.contains("Finished: 2 level(s). The report: here."),
        "{done}"
    );
    assert!(!done.contains("id=\"step\""), "{done}");
}

#[test]
fn a_series_recording_read_back_makes_the_same_page_as_it_had_live() {
    use super::event::{LevelRow, Levels};
    let r = run();
    let levels = Levels {
        what: "herd sweep http://x/ at 20,40".to_owned(),
        unit: "req/s".to_owned(),
        ..Levels::default()
    };
    let row = |asked: &str| {
        Event::Level(LevelRow {
            asked: asked.to_owned(),
            verdict: "ok".to_owned(),
            ..LevelRow::default()
        })
    };
    let mut all = vec![Event::Series(levels)];
    all.extend(events(&r, 2));
    all.push(row("20 req/s"));
    let mut live = View::default();
    for e in &all {
        live.apply(e);
    }
    let going = fragment(&live.frame(), "");
    assert!(going.contains("data-levels=\"1\""), "{going}");
    assert!(going.contains("<h2>Now: 300 req/s</h2>"), "{going}");
    all.extend(events(&r, 2));
    all.push(row("40 req/s"));
    all.push(Event::SeriesEnd { interrupted: false });
    let mut live = View::default();
    let mut text = String::new();
    for e in &all {
        live.apply(e);
        text.push_str(&serde_json::to_string(e).unwrap());
        text.push('\n');
    }
    assert!(live.ended());
    let dir = std::env::temp_dir().join(format!("herd-live-series-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rec.ndjson");
    std::fs::write(&path, &text).unwrap();
    let read = super::recording::read(&path).unwrap().expect("a recording");
    let page = fragment(&read.frame(), "x");
    assert_eq!(page, fragment(&live.frame(), "x"));
    assert!(
        page.contains("data-state=\"finished\" data-levels=\"2\""),
        "{page}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_http2_run_says_connections_times_streams_and_asks_in_streams() {
    let mut r = run();
    r.config.model = herd_result::Model::Closed;
    r.config.rate = None;
    r.config.connections = 4;
    r.config.streams = Some(8);
    let header = StreamHeader::new(r.target.clone(), r.config.clone(), std::time::UNIX_EPOCH);
    let mut view = View::default();
    view.apply(&Event::Start(header));
    for e in events(&r, 2).into_iter().skip(1) {
        // The closed model's target: users, which over HTTP/2 are streams (4 x 8).
        let Event::Second(mut s) = e else { continue };
        s.target = Some(32.0);
        view.apply(&Event::Second(s));
    }
    let live = fragment(&view.frame(), "");
    assert!(live.contains("4 connections x 8 streams"), "{live}");
    assert!(
        live.contains("<dt>plan asks</dt><dd>32 streams (4 connections x 8)</dd>"),
        "{live}"
    );
    assert!(!live.contains("32.0 users"), "{live}");
}

#[test]
fn a_websocket_runs_page_counts_messages_not_requests() {
    let mut r = run();
    r.config.url = "ws://127.0.0.1:9/chat".to_owned();
    r.target = r.config.url.clone();
    let mut view = View::default();
    for e in events(&r, 2) {
        view.apply(&e);
    }
    let live = fragment(&view.frame(), "");
    assert!(live.contains("<dt>messages</dt>"), "{live}");
    assert!(live.contains("msg/s, last second"), "{live}");
    assert!(live.contains("Messages per second"), "{live}");
    assert!(!live.contains("<dt>requests</dt>"), "{live}");
    assert!(!live.contains("req/s"), "{live}");
}

#[test]
fn an_llm_runs_seconds_draw_its_time_to_first_token_live() {
    let r = run();
    let mut view = View::default();
    let mut all = events(&r, 3);
    for e in &mut all {
        let Event::Second(s) = e else { continue };
        s.line.second.streams = Some(herd_result::TimelineStreams {
            streams: 7,
            ttft_p50_ms: 200.0 + 100.0 * s.line.second.t as f64,
            ttft_p99_ms: 450.0,
            ttft_sent_p50_ms: 200.0,
            ttft_sent_p99_ms: 210.0,
            itl_p50_ms: 20.0,
            itl_p99_ms: 23.0,
            ttft_histogram: Some("kept out of the view".into()),
            ..Default::default()
        });
    }
    let plain = fragment(&View::default().frame(), "");
    for e in &all {
        view.apply(e);
    }
    let page = fragment(&view.frame(), "");
    for id in ["chart-ttft", "chart-itl", "chart-events"] {
        assert!(page.contains(id), "no {id}");
        assert!(!plain.contains(id));
    }
    // The view keeps the percentiles it draws, not the histograms.
    let drawn = view.drawn().unwrap();
    assert!(drawn.timeline.iter().all(|e| e
        .streams
        .as_ref()
        .is_some_and(|s| s.ttft_histogram.is_none())));
}
