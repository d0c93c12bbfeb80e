//! The series per request name, scenario and check, and the run's load (scheduled, dropped, in
//! flight). Label values are the workload's names: a record keeps at most
//! `herd_metrics::NAMED_PER_SECOND` request names apart (the rest are `other`), and scenarios
//! and checks past [`MAX_LABELLED`] count as `other` too, so a URL file of 20,000 URLs makes
//! a hundred series, not 20,000.

use super::family::{family, Family, Point};
use herd_engine::Record;
use herd_run::Labels;

/// Scenarios and checks labelled apart; the rest count as `other`.
pub const MAX_LABELLED: u32 = 100;

#[derive(Debug, Default)]
struct Name {
    ok: u64,
    failed: u64,
    errors: u64,
    /// Cumulative count per bound of the run's latency ladder, then count and sum.
    buckets: Vec<u64>,
    count: u64,
    sum_s: f64,
}

/// Cumulative over every closed second, by label value in first-seen order.
#[derive(Debug, Default)]
pub(super) struct Named {
    labels: Labels,
    names: Vec<(String, Name)>,
    scenarios: Vec<(String, u64)>,
    checks: Vec<(String, u64, u64)>,
    scheduled: u64,
    dropped: u64,
    in_flight: Option<u64>,
}

fn slot<'a, T: Default>(v: &'a mut Vec<(String, T)>, key: &str) -> &'a mut T {
    let i = match v.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            v.push((key.to_owned(), T::default()));
            v.len() - 1
        }
    };
    &mut v[i].1
}

fn capped<'a>(i: u32, name: impl FnOnce(u32) -> &'a str) -> &'a str {
    if i < MAX_LABELLED {
        name(i)
    } else {
        "other"
    }
}

impl Named {
    pub fn start(&mut self, labels: &Labels) {
        self.labels = labels.clone();
    }

    pub fn add(&mut self, r: &Record, bounds: &[f64]) {
        for n in r.second.by_name.iter() {
            let key = self.labels.name(n.name).to_owned();
            let e = slot(&mut self.names, &key);
            e.ok += n.ok;
            e.failed += n.failed;
            e.errors += n.errors;
            if e.buckets.len() != bounds.len() {
                e.buckets = vec![0; bounds.len()];
            }
            if !n.latency.is_empty() {
                let h = n.latency.to_histogram();
                for (c, bound) in e.buckets.iter_mut().zip(bounds) {
                    *c += h.count_between(0, (bound * 1e6) as u64);
                }
                e.count += h.len();
                e.sum_s += h.mean() * h.len() as f64 / 1e6;
            }
        }
        for &(i, n) in &r.script.iterations {
            let key = capped(i, |i| self.labels.scenario(i)).to_owned();
            *slot(&mut self.scenarios, &key) += n;
        }
        for &(i, passes, fails) in &r.script.checks {
            let key = capped(i, |i| self.labels.check(i)).to_owned();
            let i = match self.checks.iter().position(|c| c.0 == key) {
                Some(i) => i,
                None => {
                    self.checks.push((key, 0, 0));
                    self.checks.len() - 1
                }
            };
            self.checks[i].1 += passes;
            self.checks[i].2 += fails;
        }
        self.scheduled += r.load.scheduled;
        self.dropped += r.load.dropped;
        self.in_flight = Some(r.load.in_flight);
    }

    pub fn families(&self, bounds: &[f64], out: &mut Vec<Family>) {
        let point = |name: &str, labels: &[(&str, &str)], value: f64| Point {
            name: name.to_owned(),
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            value,
        };
        let f = family(
            out,
            "herd_scheduled_total",
            "counter",
            "Requests the plan called for that ended or were dropped.",
        );
        f.points.push(point(f.name, &[], self.scheduled as f64));
        let f = family(
            out,
            "herd_dropped_total",
            "counter",
            "Arrivals dropped (open model): every user busy and the queue full.",
        );
        f.points.push(point(f.name, &[], self.dropped as f64));
        if let Some(n) = self.in_flight {
            let f = family(
                out,
                "herd_in_flight",
                "gauge",
                "Requests sent or waiting to be sent, not yet ended, at the last closed second.",
            );
            f.points.push(point(f.name, &[], n as f64));
        }
        if !self.names.is_empty() {
            let f = family(
                out,
                "herd_name_requests_total",
                "counter",
                "Requests that ended, by request name and outcome.",
            );
            for (name, n) in &self.names {
                for (outcome, v) in [("ok", n.ok), ("failed", n.failed), ("error", n.errors)] {
                    f.points.push(point(
                        f.name,
                        &[("name", name), ("outcome", outcome)],
                        v as f64,
                    ));
                }
            }
            let f = family(
                out,
                "herd_name_request_duration_seconds",
                "histogram",
                "Latency by request name, from the intended send time to the full response.",
            );
            let bucket = "herd_name_request_duration_seconds_bucket";
            for (name, n) in &self.names {
                for (bound, c) in bounds.iter().zip(&n.buckets) {
                    let le = bound.to_string();
                    f.points
                        .push(point(bucket, &[("name", name), ("le", &le)], *c as f64));
                }
                let labels = [("name", name.as_str()), ("le", "+Inf")];
                f.points.push(point(bucket, &labels, n.count as f64));
                let labels = [("name", name.as_str())];
                f.points.push(point(
                    "herd_name_request_duration_seconds_sum",
                    &labels,
                    n.sum_s,
                ));
                f.points.push(point(
                    "herd_name_request_duration_seconds_count",
                    &labels,
                    n.count as f64,
                ));
            }
        }
        if !self.scenarios.is_empty() {
            let f = family(
                out,
                "herd_scenario_iterations_total",
                "counter",
                "Iterations that ended, by scenario.",
            );
            for (s, n) in &self.scenarios {
                f.points.push(point(f.name, &[("scenario", s)], *n as f64));
            }
        }
        if !self.checks.is_empty() {
            let f = family(
                out,
                "herd_checks_total",
                "counter",
                "Checks, by check and result.",
            );
            for (c, passes, fails) in &self.checks {
                for (result, n) in [("pass", passes), ("fail", fails)] {
                    f.points.push(point(
                        f.name,
                        &[("check", c), ("result", result)],
                        *n as f64,
                    ));
                }
            }
        }
    }
}
