//! `herd model`: a workload file recovered from a log, with its mix and Zipf exponent.

use crate::common::*;
use std::path::Path;

/// A seeded Combined log: 40,000 requests over 400 s from 100 clients, 60% item pages with
/// Zipf(1.1) ids over 2,000 items, 25% searches, 15% the home page.
fn synthetic_log(path: &Path) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let weights: Vec<f64> = (1..=2000).map(|k| (k as f64).powf(-1.1)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::new();
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cdf.push(acc);
    }
    let mut out = String::new();
    for i in 0..40_000u32 {
        let sec = i / 100;
        let u = uniform();
        let p = if u < 0.6 {
            let v = uniform();
            format!("/items/{}", cdf.partition_point(|c| *c < v) + 1)
        } else if u < 0.85 {
            format!("/search?q=w{}", i % 997)
        } else {
            "/".to_owned()
        };
        out.push_str(&format!(
            "10.1.0.{} - - [24/Nov/2026:10:{:02}:{:02} +0000] \"GET {p} HTTP/1.1\" 200 512 \"-\" \"ua\" {}\n",
            i % 100,
            sec / 60,
            sec % 60,
            2000 + i % 1000
        ));
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn model_recovers_a_known_mix_and_zipf_exponent_and_validates() {
    let dir = TempDir::new("model");
    let log = dir.path("synthetic.log");
    synthetic_log(&log);
    let yaml = dir.path("w.yaml");
    let out = run_herd(&[
        "model",
        log.to_str().unwrap(),
        "-o",
        yaml.to_str().unwrap(),
        "--scale",
        "2x",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let w = std::fs::read_to_string(&yaml).unwrap();
    let weight = |name: &str| -> f64 {
        let at = w
            .find(&format!("- name: '{name}'"))
            .unwrap_or_else(|| panic!("no scenario {name}:\n{w}"));
        let rest = &w[at..];
        let n = rest
            .split("weight: ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        n.parse::<f64>().unwrap() / 100.0
    };
    assert!((weight("GET /items/{id}") - 60.0).abs() < 2.0, "{w}");
    assert!((weight("GET /search?q={q}") - 25.0).abs() < 2.0, "{w}");
    assert!((weight("GET /") - 15.0).abs() < 2.0, "{w}");
    let s: f64 = w
        .split("zipf: { n: ")
        .nth(1)
        .and_then(|r| r.split("s: ").nth(1))
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((s - 1.1).abs() < 0.05, "fitted s = {s}\n{w}");
    // the peak second (100 requests) times --scale 2x
    assert!(w.contains("= 200 req/s (peak second x 2 --scale)"), "{w}");
    let out = run_herd(&["validate", yaml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{w}", stderr(&out));
}

/// A Combined log of 2,000 requests over 20 s: 40% searches for three words (half of them
/// `bag`), 30% item pages, 15% the home page, 5% a category sorted two ways, 5% ten rare pages,
/// 5% a stylesheet.
fn few_words_log(path: &Path) {
    let words = ["bag", "gloves", "bag", "hat"];
    let mut out = String::new();
    for i in 0..2000u32 {
        let p = match i % 20 {
            0..=7 => format!("/search?q={}", words[(i / 20 % 4) as usize]),
            8..=13 => format!("/items/{}", i % 53 + 1),
            14..=16 => "/".to_owned(),
            17 => format!("/c/shoes?sort={}", ["asc", "desc"][(i / 20 % 2) as usize]),
            18 => format!("/page{}", i / 20 % 10),
            _ => "/static/app.css".to_owned(),
        };
        out.push_str(&format!(
            "10.1.0.{} - - [24/Nov/2026:10:00:{:02} +0000] \"GET {p} HTTP/1.1\" 200 512 \"-\" \"ua\"\n",
            i % 50,
            i / 100
        ));
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn query_words_are_data_of_one_request_type_named_alike_by_logs_model_and_replay() {
    let dir = TempDir::new("model-words");
    let log = dir.path("words.log");
    few_words_log(&log);
    let log = log.to_str().unwrap();

    let json = dir.path("logs.json");
    let out = run_herd(&["logs", log, "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(crate::logs::share(&r, "GET /search?q={q}"), 40.0);
    assert_eq!(crate::logs::share(&r, "GET /c/shoes?sort={q}"), 5.0);

    let yaml = dir.path("w.yaml");
    let out = run_herd(&["model", log, "-o", yaml.to_str().unwrap(), "--open"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("covering 90.5% of the requests"),
        "{}",
        stdout(&out)
    );
    let w = std::fs::read_to_string(&yaml).unwrap();
    assert!(
        w.contains("- name: 'GET /search?q={q}'\n    weight: 4000 "),
        "{w}"
    );
    assert!(!w.contains("q=bag'"), "a word is its own type:\n{w}");
    // the words are data drawn in the log's proportions: bag twice as often as gloves
    let values = w
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("search_q: { pick: random, values: [")
        })
        .unwrap_or_else(|| panic!("no source for q:\n{w}"));
    let (bag, gloves) = (
        values.matches("'bag'").count(),
        values.matches("'gloves'").count(),
    );
    assert_eq!((bag, gloves), (2, 1), "{values}");
    assert!(w.contains("- get: '/search?q={{search_q}}'"), "{w}");
    // what is left out is said, with why
    assert!(w.contains("static file (browsers cache them"), "{w}");
    assert!(
        w.contains("9 types: rare: the scenarios above already cover 95%"),
        "{w}"
    );
    let out = run_herd(&["validate", yaml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{w}", stderr(&out));

    let server = mock(&[]);
    let json = dir.path("replay.json");
    let out = run_herd(&[
        "replay",
        log,
        "--target",
        &format!("http://{}", server.local_addr()),
        "--speed",
        "20",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let replayed = std::fs::read_to_string(&json).unwrap();
    assert!(replayed.contains("\"GET /search?q={q}\""), "{replayed}");
}
