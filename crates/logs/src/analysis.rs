//! `herd logs`: records folded into counters and histograms as they stream by, then summarized.
//! Nothing per line is kept; memory is bounded by the number of request types (capped), ids
//! (capped) and clients active within the session idle time.

use crate::params::ParamValues;
use crate::pattern::{is_asset, template, UserPattern};
use crate::rate::Rate;
use crate::record::Record;
use crate::session::Sessions;
use crate::source::ReadStats;
use crate::summary::*;
use crate::time::rfc3339;
use crate::zipf;
use ahash::AHashMap;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// Request types beyond this many are counted as one `other` type.
const MAX_TYPES: usize = 2000;
/// Distinct ids counted over all types; later new ids are counted as untracked.
const MAX_IDS: usize = 300_000;
const OTHER: &str = "other (types beyond the first 2000)";

fn hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant figures is valid")
}

struct TypeStats {
    requests: u64,
    status: [u64; 6],
    bytes: u64,
    taken_us: Option<Histogram<u64>>,
    example: String,
    asset: bool,
    ids: AHashMap<Box<[u8]>, u64>,
    untracked: u64,
    params: ParamValues,
}

impl TypeStats {
    fn new(example: String, asset: bool) -> TypeStats {
        TypeStats {
            requests: 0,
            status: [0; 6],
            bytes: 0,
            taken_us: None,
            example,
            asset,
            ids: AHashMap::new(),
            untracked: 0,
            params: ParamValues::default(),
        }
    }
}

/// Folds records; [`Analyzer::finish`] makes the summary.
pub struct Analyzer {
    patterns: Vec<UserPattern>,
    index: AHashMap<Box<[u8]>, usize>,
    types: Vec<(String, TypeStats)>,
    key: Vec<u8>,
    ids: usize,
    methods: AHashMap<Vec<u8>, u64>,
    status: [u64; 6],
    bytes: Histogram<u64>,
    bytes_total: u64,
    taken_us: Histogram<u64>,
    pub rate: Rate,
    sessions: Sessions,
}

impl Analyzer {
    pub fn new(patterns: &[String], session_idle_s: u64) -> Analyzer {
        Analyzer {
            patterns: patterns.iter().map(|p| UserPattern::parse(p)).collect(),
            index: AHashMap::new(),
            types: Vec::new(),
            key: Vec::with_capacity(256),
            ids: 0,
            methods: AHashMap::new(),
            status: [0; 6],
            bytes: hist(),
            bytes_total: 0,
            taken_us: hist(),
            rate: Rate::default(),
            sessions: Sessions::new(session_idle_s),
        }
    }

    pub fn add(&mut self, r: &Record) {
        self.rate.add(r.time);
        if let Some(n) = self.methods.get_mut(r.method) {
            *n += 1;
        } else if self.methods.len() < 64 {
            self.methods.insert(r.method.to_vec(), 1);
        }
        let class = r.status_class();
        self.status[class] += 1;
        let _ = self.bytes.record(r.bytes);
        self.bytes_total += r.bytes;
        if let Some(t) = r.taken_us {
            let _ = self.taken_us.record(t);
        }
        let asset = is_asset(r.path);
        self.sessions.add(r, asset);

        let id = match self.patterns.iter().find(|p| p.matches(r.method, r.path)) {
            Some(p) => {
                self.key.clear();
                self.key.extend_from_slice(p.text.as_bytes());
                None
            }
            None => template(r.method, r.path, r.query, &mut self.key),
        };
        let i = match self.index.get(&self.key[..]) {
            Some(&i) => i,
            None => {
                let name = if self.types.len() < MAX_TYPES {
                    String::from_utf8_lossy(&self.key).into_owned()
                } else {
                    OTHER.to_owned()
                };
                let i = match self.index.get(name.as_bytes()) {
                    Some(&i) => i,
                    None => {
                        let mut example = String::from_utf8_lossy(r.path).into_owned();
                        if !r.query.is_empty() {
                            example.push('?');
                            example.push_str(&String::from_utf8_lossy(r.query));
                        }
                        self.types
                            .push((name.clone(), TypeStats::new(example, asset)));
                        self.index
                            .insert(name.into_bytes().into_boxed_slice(), self.types.len() - 1);
                        self.types.len() - 1
                    }
                };
                if self.types.len() < MAX_TYPES {
                    self.index.insert(self.key.clone().into_boxed_slice(), i);
                }
                i
            }
        };
        let t = &mut self.types[i].1;
        t.requests += 1;
        t.status[class] += 1;
        t.bytes += r.bytes;
        if let Some(us) = r.taken_us {
            let _ = t.taken_us.get_or_insert_with(hist).record(us);
        }
        if !r.query.is_empty() {
            let mut budget = MAX_IDS - self.ids;
            t.params.add(r.query, &mut budget);
            self.ids = MAX_IDS - budget;
        }
        if let Some(id) = id {
            if let Some(n) = t.ids.get_mut(id) {
                *n += 1;
            } else if self.ids < MAX_IDS {
                t.ids.insert(id.into(), 1);
                self.ids += 1;
            } else {
                t.untracked += 1;
            }
        }
    }

    pub fn finish(mut self, read: &ReadStats) -> LogsReport {
        self.rate.finish();
        self.sessions.finish();
        let total = read.records.max(1);
        let mut types = std::mem::take(&mut self.types);
        types.sort_by(|a, b| b.1.requests.cmp(&a.1.requests).then_with(|| a.0.cmp(&b.0)));
        let types = types
            .into_iter()
            .map(|(name, t)| {
                let ids = (!t.ids.is_empty()).then(|| {
                    let mut all: Vec<(&[u8], u64)> =
                        t.ids.iter().map(|(k, v)| (&k[..], *v)).collect();
                    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
                    let top = all
                        .iter()
                        .take(100)
                        .map(|(k, v)| (String::from_utf8_lossy(k).into_owned(), *v))
                        .collect();
                    let mut counts: Vec<u64> = all.iter().map(|(_, v)| *v).collect();
                    Ids {
                        distinct: all.len() as u64,
                        untracked: t.untracked,
                        top,
                        zipf: zipf::fit(&mut counts),
                    }
                });
                TypeSummary {
                    name,
                    requests: t.requests,
                    share: round(100.0 * t.requests as f64 / total as f64, 2),
                    status_classes: classes(&t.status),
                    mean_bytes: round(t.bytes as f64 / t.requests.max(1) as f64, 1),
                    time_taken_ms: t.taken_us.as_ref().map(|h| times(h, 1000.0)),
                    example: t.example,
                    asset: t.asset,
                    ids,
                    params: t.params.summarize(),
                }
            })
            .collect();
        let r = &self.rate;
        let first = r.first.map_or(0, |t| t.secs());
        let last = r.last.map_or(0, |t| t.secs());
        let (pm_at, pm_n) = r.peak_minute();
        let s = &self.sessions;
        let mut methods: BTreeMap<String, u64> = BTreeMap::new();
        for (m, n) in &self.methods {
            methods.insert(String::from_utf8_lossy(m).into_owned(), *n);
        }
        LogsReport {
            kind: "logs".into(),
            herd_version: env!("CARGO_PKG_VERSION").into(),
            input: Input::from(read),
            span: Span {
                first: rfc3339(first),
                last: rfc3339(last),
                duration_s: (last - first + 1) as f64,
            },
            rate: RateSummary {
                mean_rps: round(r.mean_rps(), 3),
                p50_second_rps: r.second_quantile(0.5),
                p99_second_rps: r.second_quantile(0.99),
                peak_second: Peak {
                    at: rfc3339(r.peak_second.0),
                    requests: r.peak_second.1,
                    rps: r.peak_second.1 as f64,
                },
                peak_minute: Peak {
                    at: rfc3339(pm_at),
                    requests: pm_n,
                    rps: round(pm_n as f64 / 60.0, 3),
                },
                by_hour: r.hours.to_vec(),
                per_minute: r
                    .minutes
                    .iter()
                    .map(|(m, n)| (rfc3339(m * 60), *n))
                    .collect(),
                per_second: r.seconds.clone(),
                late_lines: r.late,
                reordered_lines: r.reordered,
            },
            methods,
            status_classes: classes(&self.status),
            response_bytes: Sizes {
                total: self.bytes_total,
                mean: round(self.bytes.mean(), 1),
                p50: self.bytes.value_at_quantile(0.5),
                p95: self.bytes.value_at_quantile(0.95),
                max: self.bytes.max(),
            },
            time_taken_ms: (!self.taken_us.is_empty()).then(|| times(&self.taken_us, 1000.0)),
            types,
            clients: Clients {
                distinct: s.clients.estimate(),
                sessions: s.sessions,
                session_idle_s: s.idle_s(),
                requests_per_session: times(&s.lengths, 1.0),
                session_duration_s: times(&s.durations_s, 1.0),
                think_time_s: times(&s.think_ms, 1000.0),
                asset_requests: s.assets,
            },
        }
    }
}

pub fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// A histogram's summary, values divided by `div` (microseconds to ms: 1000).
pub fn times(h: &Histogram<u64>, div: f64) -> Times {
    if h.is_empty() {
        return Times::default();
    }
    // the bucket's lowest value: a logged 30 ms reads 30, not 30.015 (within 0.1% either way)
    let low = |v: u64| round(h.lowest_equivalent(v) as f64 / div, 3);
    let q = |x: f64| low(h.value_at_quantile(x));
    Times {
        count: h.len(),
        mean: round(h.mean() / div, 3),
        p50: q(0.5),
        p95: q(0.95),
        p99: q(0.99),
        max: low(h.max()),
    }
}

pub fn classes(c: &[u64; 6]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (i, n) in c.iter().enumerate() {
        if *n > 0 {
            m.insert(
                if i == 0 {
                    "other".to_owned()
                } else {
                    format!("{i}xx")
                },
                *n,
            );
        }
    }
    m
}
