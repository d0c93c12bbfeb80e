//! `herd logs --against result.json SERVER_LOG`: did the server see what herd sent? The log's
//! lines inside the run's window are counted per second and per request type and set beside
//! herd's own counts; differences beyond a tolerance are flagged with what they usually mean.

use crate::analysis::{classes, round, times};
use crate::pattern::{template, UserPattern};
use crate::record::Record;
use crate::summary::Times;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// herd's side, filled from its result by the CLI (this crate does not read results).
#[derive(Clone, Debug, Default)]
pub struct RunSide {
    /// Start of the measurement, UTC seconds since the epoch (with a fraction).
    pub start: f64,
    pub duration_s: f64,
    /// Requests that ended in each second of the run.
    pub per_second: Vec<u64>,
    pub status_classes: BTreeMap<String, u64>,
    pub service_ms: (f64, f64),
    /// Per request name: (name as herd wrote it, requests, status classes, service p50/p95 ms).
    pub names: Vec<NameSide>,
}

#[derive(Clone, Debug, Default)]
pub struct NameSide {
    pub name: String,
    pub requests: u64,
    pub status_classes: BTreeMap<String, u64>,
    pub service_ms: (f64, f64),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Comparison {
    pub kind: String,
    pub window: (String, f64),
    pub tolerance_percent: f64,
    pub herd_requests: u64,
    pub logged: u64,
    /// Lines outside the window (not compared).
    pub outside: u64,
    pub status_classes: BTreeMap<String, (u64, u64)>,
    pub herd_service_ms: (f64, f64),
    pub server_time_taken_ms: Option<Times>,
    pub per_second: Vec<(u64, u64, u64)>,
    pub by_type: Vec<TypeRow>,
    pub flags: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TypeRow {
    pub name: String,
    pub herd: u64,
    pub logged: u64,
    pub herd_service_ms: Option<(f64, f64)>,
    pub server_ms: Option<(f64, f64)>,
}

/// Counts the log's side; feed it every record, then [`Against::finish`].
pub struct Against {
    run: RunSide,
    tolerance: f64,
    patterns: Vec<(String, UserPattern)>,
    per_second: Vec<u64>,
    outside: u64,
    status: [u64; 6],
    taken: Histogram<u64>,
    types: BTreeMap<String, (u64, Option<Histogram<u64>>)>,
    key: Vec<u8>,
}

/// Whether a request name is a method and a path (herd's default names), so it can be matched.
fn path_like(name: &str) -> bool {
    name.split_once(' ').is_some_and(|(m, p)| {
        !m.is_empty() && m.bytes().all(|c| c.is_ascii_uppercase()) && p.starts_with('/')
    })
}

/// `GET /items/{{item}}` (a workload's request name) as a pattern over paths.
fn name_pattern(name: &str) -> UserPattern {
    let mut p = String::new();
    let mut rest = name;
    while let Some(i) = rest.find("{{") {
        p.push_str(&rest[..i]);
        p.push_str("{v}");
        rest = rest[i..].find("}}").map_or("", |j| &rest[i + j + 2..]);
    }
    p.push_str(rest);
    UserPattern::parse(&p)
}

impl Against {
    pub fn new(run: RunSide, tolerance_percent: f64) -> Against {
        let patterns = run
            .names
            .iter()
            .map(|n| (n.name.clone(), name_pattern(&n.name)))
            .collect();
        let secs = ((run.start + run.duration_s).floor() - run.start.floor()) as usize + 1;
        Against {
            run,
            tolerance: tolerance_percent,
            patterns,
            per_second: vec![0; secs],
            outside: 0,
            status: [0; 6],
            taken: Histogram::new(3).expect("valid"),
            types: BTreeMap::new(),
            key: Vec::new(),
        }
    }

    pub fn add(&mut self, r: &Record) {
        // logs often time lines to the whole second: the window is the run's seconds, whole
        let base = self.run.start.floor();
        let t = r.time.micros as f64 / 1e6 - base;
        if t < 0.0 || t >= self.per_second.len() as f64 {
            self.outside += 1;
            return;
        }
        self.per_second[t as usize] += 1;
        self.status[r.status_class()] += 1;
        if let Some(us) = r.taken_us {
            let _ = self.taken.record(us);
        }
        let name = match self
            .patterns
            .iter()
            .find(|(_, p)| p.matches(r.method, r.path))
        {
            Some((n, _)) => n.clone(),
            None => {
                template(r.method, r.path, r.query, &mut self.key);
                String::from_utf8_lossy(&self.key).into_owned()
            }
        };
        let e = self.types.entry(name).or_insert((0, None));
        e.0 += 1;
        if let Some(us) = r.taken_us {
            let _ =
                e.1.get_or_insert_with(|| Histogram::new(3).expect("valid"))
                    .record(us);
        }
    }

    pub fn finish(self) -> Comparison {
        let tol = self.tolerance / 100.0;
        let herd: u64 = self.run.per_second.iter().sum();
        let logged: u64 = self.per_second.iter().sum();
        let mut flags = Vec::new();
        let off = |a: u64, b: u64, floor: u64| off(tol, a, b, floor);
        if off(herd, logged, 0) {
            if logged < herd {
                flags.push(format!(
                    "lost: herd counted {herd} requests, the server logged {logged} ({:+.1}%): requests that never reached this server (a proxy or cache answered, or the connection failed before it)",
                    100.0 * (logged as f64 - herd as f64) / herd.max(1) as f64
                ));
            } else {
                flags.push(format!(
                    "extra: the server logged {logged} lines, herd counted {herd} requests ({:+.1}%): retries, other clients in the window, or a log shared with other sites",
                    100.0 * (logged as f64 - herd as f64) / herd.max(1) as f64
                ));
            }
        }
        let server = classes(&self.status);
        let mut status_classes = BTreeMap::new();
        let keys: std::collections::BTreeSet<&String> = server
            .keys()
            .chain(self.run.status_classes.keys())
            .collect();
        for k in keys {
            let h = self.run.status_classes.get(k).copied().unwrap_or(0);
            let s = server.get(k).copied().unwrap_or(0);
            status_classes.insert(k.clone(), (h, s));
            if off(h, s, 2) {
                flags.push(format!("status {k}: herd saw {h}, the server logged {s}: {}", if h > s { "something in between answered (proxy, load balancer, cache) or the server did not log them" } else { "herd counted them otherwise (errors, timeouts)" }));
            }
        }
        let server_t = (!self.taken.is_empty()).then(|| times(&self.taken, 1000.0));
        if let Some(st) = &server_t {
            let (h50, _) = self.run.service_ms;
            let gap = h50 - st.p50;
            if gap.abs() > (tol * h50.max(st.p50)).max(2.0) {
                flags.push(format!(
                    "time: herd's service time p50 {h50:.2} ms, the server's time taken p50 {:.2} ms: {}",
                    st.p50,
                    if gap > 0.0 { "time spent outside the server (network, proxy, herd's own queue)" } else { "the server counts more than herd saw (its clock, or time to send the last byte to a slow client)" }
                ));
            }
        }
        let per_second = self.seconds(tol, &mut flags);
        let by_type = self.types(tol, &mut flags);
        Comparison {
            kind: "logs-against".into(),
            window: (
                crate::time::rfc3339(self.run.start.floor() as i64),
                self.run.duration_s,
            ),
            tolerance_percent: self.tolerance,
            herd_requests: herd,
            logged,
            outside: self.outside,
            status_classes,
            herd_service_ms: self.run.service_ms,
            server_time_taken_ms: server_t,
            per_second,
            by_type,
            flags,
        }
    }
    /// Each second's counts side by side; a flag for the seconds that differ (with the seconds
    /// around them) beyond the tolerance.
    fn seconds(&self, tol: f64, flags: &mut Vec<String>) -> Vec<(u64, u64, u64)> {
        let off = |a: u64, b: u64, floor: u64| off(tol, a, b, floor);
        // herd's seconds start at the run's start, the log's at the whole second before it:
        // herd's counts are spread over the log's whole seconds in proportion (a run that
        // started at .6 puts 0.4 of its first second in the log's first), and a second is
        // flagged only when the 3 seconds around it (those that exist) differ too
        let expected = whole_seconds(&self.run.per_second, self.run.start);
        let n = expected.len().max(self.per_second.len());
        let h_at = |i: usize| expected.get(i).copied().unwrap_or(0);
        let s_at = |i: usize| self.per_second.get(i).copied().unwrap_or(0);
        let around = |f: &dyn Fn(usize) -> u64, i: usize| {
            (i.saturating_sub(1)..(i + 2).min(n)).map(f).sum::<u64>()
        };
        let mut per_second = Vec::new();
        let mut bad_seconds = Vec::new();
        for i in 0..n {
            let (h, s) = (h_at(i), s_at(i));
            per_second.push((i as u64, h, s));
            let (h3, s3) = (around(&h_at, i), around(&s_at, i));
            if off(h, s, 2) && off(h3, s3, 2.max(h.max(s) / 2)) {
                bad_seconds.push(format!("t={i}s herd {h} server {s}"));
            }
        }
        if !bad_seconds.is_empty() {
            flags.push(format!(
                "{} of {n} seconds differ beyond {}%: {}",
                bad_seconds.len(),
                self.tolerance,
                bad_seconds
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        per_second
    }

    /// Each request type's counts and times side by side; a flag for each that differs.
    fn types(&self, tol: f64, flags: &mut Vec<String>) -> Vec<TypeRow> {
        let off = |a: u64, b: u64, floor: u64| off(tol, a, b, floor);
        let mut by_type = Vec::new();
        for nm in &self.run.names {
            let (l, h) = self
                .types
                .get(&nm.name)
                .map_or((0, None), |(c, h)| (*c, h.as_ref()));
            // a name like `item page` says nothing of its path: shown, not judged
            if path_like(&nm.name) && off(nm.requests, l, 2) {
                flags.push(format!(
                    "type {}: herd {} requests, server {}",
                    nm.name,
                    herd_result::format::count(nm.requests),
                    herd_result::format::count(l)
                ));
            }
            by_type.push(TypeRow {
                name: nm.name.clone(),
                herd: nm.requests,
                logged: l,
                herd_service_ms: Some(nm.service_ms),
                server_ms: h.map(|h| {
                    (
                        round(h.value_at_quantile(0.5) as f64 / 1000.0, 3),
                        round(h.value_at_quantile(0.95) as f64 / 1000.0, 3),
                    )
                }),
            });
        }
        for (name, (c, h)) in &self.types {
            if !self.run.names.iter().any(|n| &n.name == name) {
                if !self.run.names.is_empty() && self.run.names.iter().all(|n| path_like(&n.name)) {
                    flags.push(format!("type {name}: {c} lines the run has no name for"));
                }
                by_type.push(TypeRow {
                    name: name.clone(),
                    herd: 0,
                    logged: *c,
                    herd_service_ms: None,
                    server_ms: h.as_ref().map(|h| {
                        (
                            round(h.value_at_quantile(0.5) as f64 / 1000.0, 3),
                            round(h.value_at_quantile(0.95) as f64 / 1000.0, 3),
                        )
                    }),
                });
            }
        }
        by_type
    }
}

/// Whether `a` and `b` differ by more than the tolerance `tol` (a fraction of the larger) and
/// more than `floor`.
fn off(tol: f64, a: u64, b: u64, floor: u64) -> bool {
    (a as f64 - b as f64).abs() > (tol * a.max(b) as f64).max(floor as f64)
}

/// herd's per-second counts (seconds from `start`) as counts in the whole seconds of the
/// clock, from the one `start` falls in, each split in proportion to its overlap: what a log
/// timed to the second should show, rounded.
fn whole_seconds(per_second: &[u64], start: f64) -> Vec<u64> {
    let frac = start - start.floor();
    let mut out = vec![0.0; per_second.len() + 1];
    for (i, &n) in per_second.iter().enumerate() {
        out[i] += n as f64 * (1.0 - frac);
        out[i + 1] += n as f64 * frac;
    }
    if frac == 0.0 {
        out.pop();
    }
    out.into_iter().map(|x| x.round() as u64).collect()
}

/// The comparison as text.
pub fn render(c: &Comparison) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "run window {} for {:.1} s; {} log lines outside it were left out",
        c.window.0, c.window.1, c.outside
    );
    let _ = writeln!(
        o,
        "requests   herd {}  server {}",
        c.herd_requests, c.logged
    );
    for (k, (h, s)) in &c.status_classes {
        let _ = writeln!(o, "status {k}  herd {h}  server {s}");
    }
    let st = c
        .server_time_taken_ms
        .as_ref()
        .map_or("not logged".to_owned(), |t| {
            format!("p50 {:.2} ms, p95 {:.2} ms", t.p50, t.p95)
        });
    let _ = writeln!(
        o,
        "time       herd service p50 {:.2} ms, p95 {:.2} ms; server time taken {st}",
        c.herd_service_ms.0, c.herd_service_ms.1
    );
    let _ = writeln!(o, "by type:");
    for t in &c.by_type {
        let s = t.server_ms.map_or(String::new(), |(a, b)| {
            format!("  server p50 {a:.2} ms p95 {b:.2} ms")
        });
        let h = t.herd_service_ms.map_or(String::new(), |(a, b)| {
            format!("  herd p50 {a:.2} ms p95 {b:.2} ms")
        });
        let _ = writeln!(
            o,
            "  {:<40} herd {:>8}  server {:>8}{h}{s}",
            t.name, t.herd, t.logged
        );
    }
    if c.flags.is_empty() {
        let _ = writeln!(o, "agree: every count within {}%", c.tolerance_percent);
    } else {
        for f in &c.flags {
            let _ = writeln!(o, "FLAG {f}");
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn record(secs: f64, path: &'static [u8], status: u16) -> Record<'static> {
        Record {
            time: Timestamp {
                micros: (secs * 1e6) as i64,
                offset_min: 0,
            },
            method: b"GET",
            path,
            status,
            taken_us: Some(1000),
            ..Record::default()
        }
    }

    fn run(names: &[(&str, u64)]) -> RunSide {
        RunSide {
            start: 100.5,
            duration_s: 2.0,
            per_second: vec![2, 2],
            status_classes: [("2xx".to_owned(), 4)].into(),
            service_ms: (1.0, 1.0),
            names: names
                .iter()
                .map(|(n, r)| NameSide {
                    name: n.to_string(),
                    requests: *r,
                    ..NameSide::default()
                })
                .collect(),
        }
    }

    #[test]
    fn workload_names_match_paths_and_custom_names_are_not_judged() {
        let mut a = Against::new(run(&[("GET /items/{{item}}", 3), ("home page", 1)]), 2.0);
        for (t, p) in [
            (100.6, &b"/items/1"[..]),
            (101.2, b"/items/2"),
            (101.9, b"/items/3"),
            (102.1, b"/"),
        ] {
            a.add(&record(t, p, 200));
        }
        a.add(&record(90.0, b"/items/9", 200));
        let c = a.finish();
        assert_eq!(c.outside, 1);
        assert_eq!(c.by_type[0].logged, 3);
        assert!(c.flags.is_empty(), "{:?}", c.flags);
    }

    #[test]
    fn a_run_not_started_on_a_whole_second_whose_every_request_was_logged_agrees() {
        // 900 requests at 300/s from 100.5 s, each logged at its own time (as nginx does, to
        // the second): the log's first and last whole seconds hold half a second each.
        let r = RunSide {
            start: 100.5,
            duration_s: 3.0,
            per_second: vec![300, 300, 300],
            status_classes: [("2xx".to_owned(), 900)].into(),
            service_ms: (1.0, 1.0),
            names: vec![NameSide {
                name: "GET /".into(),
                requests: 900,
                ..NameSide::default()
            }],
        };
        let mut a = Against::new(r, 2.0);
        for i in 0..900 {
            a.add(&record(100.5 + i as f64 / 300.0, b"/", 200));
        }
        let c = a.finish();
        assert_eq!((c.herd_requests, c.logged), (900, 900));
        assert!(c.flags.is_empty(), "{:?}", c.flags);
        assert_eq!(c.by_type.len(), 1, "{:?}", c.by_type);
        assert_eq!((c.by_type[0].herd, c.by_type[0].logged), (900, 900));
    }

    #[test]
    fn a_proxy_answering_5xx_is_flagged() {
        let mut r = run(&[]);
        r.status_classes = [("2xx".to_owned(), 10), ("5xx".to_owned(), 3)].into();
        let mut a = Against::new(r, 2.0);
        a.add(&record(100.6, b"/", 200));
        a.add(&record(101.6, b"/", 200));
        let c = a.finish();
        assert!(
            c.flags.iter().any(|f| f.starts_with("lost")),
            "{:?}",
            c.flags
        );
        assert!(
            c.flags
                .iter()
                .any(|f| f.starts_with("status 5xx: herd saw 3, the server logged 0")),
            "{:?}",
            c.flags
        );
        let twice = c
            .flags
            .iter()
            .filter(|f| f.starts_with("status 2xx"))
            .count();
        assert_eq!(twice, 1, "a flag printed once: {:?}", c.flags);
    }
}
