//! Reading logs as users have them: a hand-written Apache log with %D, gzip, a custom nginx
//! log_format, JSON lines, garbage lines, several files, and a known mix and Zipf exponent
//! recovered from a generated log.

use herd_logs::analysis::Analyzer;
use herd_logs::source::{read_logs, FormatSpec};
use herd_logs::summary::LogsReport;
use std::io::Write;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("herd-logs-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn analyse(paths: &[PathBuf], spec: &FormatSpec, fields: Option<&str>) -> LogsReport {
    let mut a = Analyzer::new(&[], 1800);
    let stats = read_logs(paths, spec, fields, |r| a.add(r)).unwrap();
    a.finish(&stats)
}

fn share(r: &LogsReport, name: &str) -> f64 {
    r.types
        .iter()
        .find(|t| t.name == name)
        .map_or(0.0, |t| t.share)
}

#[test]
fn apache_fixture_with_percent_d_gives_time_taken_per_type() {
    let fmt =
        FormatSpec::parse(r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D"#).unwrap();
    let r = analyse(&[fixture("apache_d.log")], &fmt, None);
    assert_eq!(r.input.records, 8);
    assert_eq!(r.input.bad_lines, 0);
    let p = r
        .types
        .iter()
        .find(|t| t.name == "GET /products/{id}")
        .unwrap();
    assert_eq!(p.requests, 4);
    let t = p.time_taken_ms.as_ref().unwrap();
    assert!((t.max - 5000.0).abs() < 5.0, "{t:?}");
    assert!((t.p50 - 38.0).abs() < 0.1, "{t:?}");
    assert_eq!(r.status_classes["3xx"], 2);
    assert_eq!(r.methods["POST"], 1);
    // local hour is the log's own: 09 at +0100
    assert_eq!(r.rate.by_hour[9], 8);
    // the same file detected automatically: Combined with a whole number after it is %D
    let auto = analyse(&[fixture("apache_d.log")], &FormatSpec::Auto, None);
    assert_eq!(
        auto.time_taken_ms.as_ref().unwrap().max,
        r.time_taken_ms.as_ref().unwrap().max
    );
}

#[test]
fn gzip_files_read_like_plain_ones() {
    let gz = temp("apache_d.log.gz");
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    e.write_all(&std::fs::read(fixture("apache_d.log")).unwrap())
        .unwrap();
    e.finish().unwrap();
    let r = analyse(&[gz], &FormatSpec::Auto, None);
    assert_eq!(r.input.records, 8);
    assert_eq!(share(&r, "GET /products/{id}"), 50.0);
}

#[test]
fn custom_nginx_log_format_with_iso_time_and_upstream() {
    let log = temp("custom.log");
    std::fs::write(
        &log,
        "2026-11-24T10:00:00+00:00|1.1.1.1|GET /a/1?x=1 HTTP/1.1|200|10|0.004\n\
         2026-11-24T10:00:01+00:00|1.1.1.2|GET /a/2 HTTP/1.1|502|0|0.001, 0.002\n\
         2026-11-24T10:00:01+00:00|1.1.1.2|GET /b HTTP/1.1|200|7|-\n",
    )
    .unwrap();
    let fmt = FormatSpec::parse("nginx:log_format pipes '$time_iso8601|$remote_addr|$request|$status|$body_bytes_sent|$upstream_response_time';").unwrap();
    let r = analyse(&[log], &fmt, None);
    assert_eq!(r.input.records, 3);
    let a = r
        .types
        .iter()
        .find(|t| t.name == "GET /a/{id}?x={q}")
        .or_else(|| r.types.iter().find(|t| t.name.starts_with("GET /a/{id}")))
        .unwrap();
    assert!(a.time_taken_ms.is_some());
    assert_eq!(r.time_taken_ms.as_ref().unwrap().count, 2);
}

#[test]
fn json_lines_from_nginx_escape_json_and_with_a_mapping() {
    let log = temp("json.log");
    std::fs::write(
        &log,
        concat!(
            r#"{"time_iso8601":"2026-11-24T10:00:00+00:00","remote_addr":"1.1.1.1","request":"GET /items/5 HTTP/1.1","status":"200","body_bytes_sent":"100","request_time":"0.012","http_user_agent":"a \"b\""}"#, "\n",
            r#"{"time_iso8601":"2026-11-24T10:00:00+00:00","remote_addr":"1.1.1.1","request":"GET /items/6 HTTP/1.1","status":"404","body_bytes_sent":"0","request_time":"0.002","http_user_agent":"x"}"#, "\n",
        ),
    )
    .unwrap();
    let r = analyse(&[log], &FormatSpec::Auto, None);
    assert_eq!(r.input.formats, vec!["json"]);
    assert_eq!(share(&r, "GET /items/{id}"), 100.0);
    assert!((r.time_taken_ms.as_ref().unwrap().max - 12.0).abs() < 0.02);

    let mapped = temp("mapped.log");
    std::fs::write(
        &mapped,
        "{\"ts\":1795514400.5,\"verb\":\"GET\",\"url\":\"/x?y=1\",\"code\":201,\"ms\":30}\n",
    )
    .unwrap();
    let r = analyse(
        &[mapped],
        &FormatSpec::Json,
        Some("time=ts,method=verb,uri=url,status=code,taken_ms=ms"),
    );
    assert_eq!(r.types[0].name, "GET /x?y={q}");
    assert_eq!(r.status_classes["2xx"], 1);
    assert_eq!(r.time_taken_ms.as_ref().unwrap().p50, 30.0);
}

/// Writes a Combined log: `n` requests at `rate` per second from `t0`; returns the path.
fn synthetic(name: &str, n: usize, garbage_every: usize, seed: u64, s: f64) -> PathBuf {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    // Zipf over 1000 ids by inverse CDF
    let weights: Vec<f64> = (1..=1000).map(|k| 1.0 / (k as f64).powf(s)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::new();
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cdf.push(acc);
    }
    let path = temp(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..n {
        let sec = i / 50;
        let stamp = format!(
            "24/Nov/2026:{:02}:{:02}:{:02} +0000",
            10 + sec / 3600,
            sec / 60 % 60,
            sec % 60
        );
        let u: f64 = rng.gen();
        let path = if u < 0.5 {
            let x: f64 = rng.gen();
            format!("/items/{}", cdf.partition_point(|c| *c < x) + 1)
        } else if u < 0.8 {
            format!("/search?q=w{}", rng.gen_range(0..5000))
        } else if u < 0.95 {
            "/".to_owned()
        } else {
            "/static/app.js".to_owned()
        };
        writeln!(
            f,
            r#"10.0.0.{} - - [{stamp}] "GET {path} HTTP/1.1" 200 {} "-" "agent {}" {}"#,
            i % 200,
            1000 + i % 7,
            i % 3,
            1000 + i % 500
        )
        .unwrap();
        if garbage_every > 0 && i % garbage_every == garbage_every - 1 {
            writeln!(f, "#%&! not a log line {i}").unwrap();
        }
    }
    path
}

#[test]
fn five_percent_garbage_is_counted_shown_and_skipped() {
    let log = synthetic("garbage.log", 2000, 19, 1, 1.0);
    let r = analyse(&[log], &FormatSpec::Auto, None);
    assert_eq!(r.input.records, 2000);
    assert_eq!(r.input.bad_lines, 105);
    assert_eq!(r.input.bad_samples.len(), 5);
    assert_eq!(r.input.bad_samples[0].line, 20);
    assert!(r.input.bad_samples[0].text.starts_with("#%&!"));
}

#[test]
fn a_file_of_only_garbage_is_an_error_naming_lines() {
    let log = temp("all-bad.log");
    std::fs::write(&log, "hello\nworld\n").unwrap();
    let e = read_logs(&[log], &FormatSpec::Auto, None, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("not one of the 2 lines"), "{e}");
    assert!(e.contains("all-bad.log:1"), "{e}");
    assert!(e.contains("--format"), "{e}");
}

#[test]
fn known_mix_and_zipf_exponent_are_recovered() {
    let log = synthetic("zipf.log", 60_000, 0, 7, 1.1);
    let r = analyse(&[log], &FormatSpec::Auto, None);
    assert!(
        (share(&r, "GET /items/{id}") - 50.0).abs() < 2.0,
        "{:?}",
        r.types
    );
    assert!((share(&r, "GET /search?q={q}") - 30.0).abs() < 2.0);
    assert!((share(&r, "GET /") - 15.0).abs() < 2.0);
    let z = r
        .types
        .iter()
        .find(|t| t.name == "GET /items/{id}")
        .unwrap()
        .ids
        .as_ref()
        .unwrap()
        .zipf
        .clone()
        .unwrap();
    assert!((z.s - 1.1).abs() < 0.05, "{z:?}");
    assert_eq!(z.fit, "good");
    assert_eq!(r.rate.peak_second.requests, 50);
    assert_eq!(r.rate.per_second.len(), 1200);
}

#[test]
fn several_files_are_merged_in_time_order() {
    let a = temp("merge-a.log");
    let b = temp("merge-b.log");
    let line = |s: u32, p: &str| {
        format!(
            "1.1.1.1 - - [24/Nov/2026:10:00:{s:02} +0000] \"GET {p} HTTP/1.1\" 200 1 \"-\" \"x\"\n"
        )
    };
    std::fs::write(&a, [line(0, "/a"), line(2, "/a"), line(4, "/a")].concat()).unwrap();
    std::fs::write(&b, [line(1, "/b"), line(3, "/b")].concat()).unwrap();
    let mut order = Vec::new();
    read_logs(&[a, b], &FormatSpec::Auto, None, |r| {
        order.push((
            r.time.secs() % 60,
            String::from_utf8_lossy(r.path).into_owned(),
        ))
    })
    .unwrap();
    let secs: Vec<i64> = order.iter().map(|(s, _)| *s).collect();
    assert_eq!(secs, vec![0, 1, 2, 3, 4]);
}

#[test]
fn given_patterns_name_types_and_session_idle_splits_sessions() {
    let log = temp("patterns.log");
    let line = |m: u32, p: &str| {
        format!(
            "1.1.1.1 - - [24/Nov/2026:10:{m:02}:00 +0000] \"GET {p} HTTP/1.1\" 200 1 \"-\" \"x\"\n"
        )
    };
    std::fs::write(
        &log,
        [
            line(0, "/shop/red-hat"),
            line(1, "/shop/blue-hat"),
            line(12, "/about"),
            line(13, "/shop/x/y"),
        ]
        .concat(),
    )
    .unwrap();
    let mut a = Analyzer::new(&["/shop/{name}".to_owned()], 600);
    let stats = read_logs(std::slice::from_ref(&log), &FormatSpec::Auto, None, |r| {
        a.add(r)
    })
    .unwrap();
    let r = a.finish(&stats);
    assert_eq!(r.types[0].name, "/shop/{name}");
    assert_eq!(r.types[0].requests, 2);
    // a 10-minute idle time: the 11-minute gap starts a second session
    assert_eq!(r.clients.sessions, 2);
    assert_eq!(r.clients.think_time_s.count, 2);
}
