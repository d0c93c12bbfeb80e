//! The seam for `herd replay`: a log's requests as open-model arrivals, each with its offset
//! from the first, its method, path and query, and the headers the log kept. Filters (methods,
//! include/exclude regexes, a time window) and `--speed` apply here; the engine only plays the
//! schedule. Logs with whole-second times (Apache `%t`, nginx `$time_local`) would send each
//! second's requests at once: they are spread evenly over their second instead. Lines up to a
//! second out of order are put back in order; later ones are sent at once (counted `late`).

use crate::record::Record;
use crate::source::{read_logs, FormatSpec, ReadStats};
use crate::LogError;
use regex::Regex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// 2.0 plays twice as fast.
    pub speed: f64,
    /// Only paths (with query) matching one of these, when any.
    pub include: Vec<Regex>,
    /// Never paths matching one of these.
    pub exclude: Vec<Regex>,
    /// UTC microseconds: lines before `from` or at/after `to` are left out.
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// Methods sent (upper case); others are skipped and counted. Default GET and HEAD.
    pub methods: Vec<String>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            speed: 1.0,
            include: vec![],
            exclude: vec![],
            from: None,
            to: None,
            methods: vec!["GET".into(), "HEAD".into()],
        }
    }
}

/// One request to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// When to send it, from the first arrival (already divided by the speed).
    pub offset: Duration,
    pub method: String,
    pub path_and_query: String,
    pub user_agent: Option<String>,
    pub referer: Option<String>,
    /// The time the server took for it, when the log says (production's answer time).
    pub taken: Option<Duration>,
}

/// What was not replayed, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Requests with a method not allowed (`--methods`), by method.
    pub methods: BTreeMap<String, u64>,
    /// Left out by `--include`/`--exclude`.
    pub filtered: u64,
    /// Outside `--from`/`--to`.
    pub outside: u64,
    /// More than a second out of order: sent at once rather than in the past.
    pub late: u64,
}

impl Skipped {
    /// The line `herd replay` ends with: what it left out and why, and `invalid` lines whose
    /// request the target refuses.
    pub fn line(&self, invalid: u64) -> String {
        let by_method: u64 = self.methods.values().sum();
        format!(
            "  replay     skipped {by_method} by method, {} by --include/--exclude, {} outside \
             --from/--to, {invalid} not sendable to the target; {} out of order sent at once",
            self.filtered, self.outside, self.late
        )
    }
}

struct Pending {
    micros: i64,
    arrival: Arrival,
}

struct Spreader<'f> {
    speed: f64,
    whole_seconds: bool,
    buffered: BTreeMap<i64, Vec<Pending>>,
    origin: Option<i64>,
    last: Duration,
    skipped: Skipped,
    each: &'f mut dyn FnMut(Arrival),
}

impl Spreader<'_> {
    fn push(&mut self, micros: i64, arrival: Arrival) {
        let sec = micros.div_euclid(1_000_000);
        self.buffered
            .entry(sec)
            .or_default()
            .push(Pending { micros, arrival });
        while let Some((&first, _)) = self.buffered.first_key_value() {
            if first >= sec - 1 {
                break;
            }
            self.flush_first();
        }
    }

    fn flush_first(&mut self) {
        let Some((sec, mut items)) = self.buffered.pop_first() else {
            return;
        };
        let n = items.len() as i64;
        if self.whole_seconds {
            for (i, p) in items.iter_mut().enumerate() {
                p.micros = sec * 1_000_000 + i as i64 * 1_000_000 / n;
            }
        } else {
            items.sort_by_key(|p| p.micros);
        }
        for mut p in items {
            let origin = *self.origin.get_or_insert(p.micros);
            let us = ((p.micros - origin).max(0) as f64 / self.speed) as u64;
            let mut offset = Duration::from_micros(us);
            if offset < self.last {
                self.skipped.late += 1;
                offset = self.last;
            }
            self.last = offset;
            p.arrival.offset = offset;
            (self.each)(p.arrival);
        }
    }
}

fn text(b: &[u8]) -> Option<String> {
    (!b.is_empty() && b != b"-").then(|| String::from_utf8_lossy(b).into_owned())
}

/// Streams the arrivals of `paths` to `each` in the order to send them.
pub fn arrivals(
    paths: &[PathBuf],
    spec: &FormatSpec,
    fields: Option<&str>,
    o: &ReplayOptions,
    mut each: impl FnMut(Arrival),
) -> Result<(ReadStats, Skipped), LogError> {
    if !(o.speed.is_finite() && o.speed > 0.0) {
        return Err(LogError::Format(format!(
            "--speed {} must be above 0 (2 plays twice as fast)",
            o.speed
        )));
    }
    let mut sp = Spreader {
        speed: o.speed,
        whole_seconds: true,
        buffered: BTreeMap::new(),
        origin: None,
        last: Duration::ZERO,
        skipped: Skipped::default(),
        each: &mut each,
    };
    let mut target = String::new();
    let stats = read_logs(paths, spec, fields, |r: &Record| {
        let t = r.time.micros;
        if o.from.is_some_and(|f| t < f) || o.to.is_some_and(|to| t >= to) {
            sp.skipped.outside += 1;
            return;
        }
        if !o.methods.iter().any(|m| m.as_bytes() == r.method) {
            *sp.skipped
                .methods
                .entry(String::from_utf8_lossy(r.method).into_owned())
                .or_default() += 1;
            return;
        }
        target.clear();
        target.push_str(&String::from_utf8_lossy(r.path));
        if !r.query.is_empty() {
            target.push('?');
            target.push_str(&String::from_utf8_lossy(r.query));
        }
        if (!o.include.is_empty() && !o.include.iter().any(|re| re.is_match(&target)))
            || o.exclude.iter().any(|re| re.is_match(&target))
        {
            sp.skipped.filtered += 1;
            return;
        }
        if t % 1_000_000 != 0 {
            sp.whole_seconds = false;
        }
        let a = Arrival {
            offset: Duration::ZERO,
            method: String::from_utf8_lossy(r.method).into_owned(),
            path_and_query: target.clone(),
            user_agent: text(r.user_agent),
            referer: text(r.referer),
            taken: r.taken_us.map(Duration::from_micros),
        };
        sp.push(t, a);
    })?;
    while !sp.buffered.is_empty() {
        sp.flush_first();
    }
    Ok((stats, sp.skipped))
}
