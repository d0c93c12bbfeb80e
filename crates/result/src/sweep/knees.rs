//! Where each target of a sweep saturated: the shape of its good-replies curve, its latency and
//! its errors, said the same way after the live table and in the HTML report.

use super::conclusion::{
    backlog_clause, errors_clause, latency_clause, level_unit, throughput_clause, Point,
};
use super::{Row, SweepResult};
use crate::backlog::{run_syn_retries, Backlog};
use crate::knee::{knee, shape, Knee, Shape};
use crate::{GeneratorVerdict, Model};

/// One target's saturation over the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetKnee {
    pub name: String,
    /// The first level on the plateau, when the curve reached one within the levels tried.
    pub knee: Option<Knee>,
    /// The curve as read, with the bracket the knee lies in.
    pub shape: Option<Shape>,
    /// Every step of this target, in order.
    pub points: Vec<Point>,
    pub last_level: f64,
    /// The first step whose connect times clustered at the SYN retransmission times.
    pub backlog: Option<(f64, Backlog)>,
    /// Steps of this target where herd itself was the bottleneck.
    pub limited_steps: usize,
    /// Lengths (s) of the steps too short to judge ([`MIN_STEP_S`]), left out of the curve.
    pub short_steps: Vec<f64>,
}

/// A step shorter than this is mostly connection set-up and drain: two runs of it disagree
/// ("saturates between 50 and 100 users" once, "between 1 and 5" the next, for steps of
/// 40-130 ms). It is shown, but not judged.
pub const MIN_STEP_S: f64 = 0.25;

/// Whether a step's run is too short to judge.
pub fn too_short(r: &crate::RunResult) -> bool {
    r.duration_s < MIN_STEP_S
}

/// Good replies per second of a row: replies that were not errors. autobench's reply rate
/// counts a 503 as a reply; a client does not.
pub fn good_rate(row: &Row) -> f64 {
    row.avg_rep_rate * (1.0 - row.errors / 100.0)
}

impl SweepResult {
    /// What this sweep's levels count: `req/s asked`, `users`, or `iterations/s asked` when the
    /// targets are workload files (a workload's rate is scenario iterations per second). Over
    /// HTTP/2 and HTTP/3 a closed level is connections, each carrying `--streams` requests at
    /// once (h2load's `-c` and `-m`): `connections x 10 streams`, not users.
    pub fn level_unit(&self) -> String {
        let runs = || self.steps.iter().flat_map(|s| &s.runs);
        let workload = runs().any(|r| r.workload.is_some());
        let streams = runs().find_map(|r| r.config.streams);
        match (self.model, streams) {
            (Model::Open, _) if workload => "iterations/s asked".to_owned(),
            (Model::Closed, Some(m)) => {
                format!("connections x {m} stream{}", if m == 1 { "" } else { "s" })
            }
            (m, _) => level_unit(m).to_owned(),
        }
    }

    /// Every target's knee, in `targets` order.
    pub fn knees(&self) -> Vec<TargetKnee> {
        self.targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let runs = || {
                    self.steps
                        .iter()
                        .filter_map(move |s| Some((s.level, s.runs.get(i)?)))
                };
                let short_steps: Vec<f64> = runs()
                    .filter(|(_, r)| too_short(r))
                    .map(|(_, r)| r.duration_s)
                    .collect();
                let points: Vec<Point> = runs()
                    .filter(|(_, r)| !too_short(r))
                    .map(|(level, r)| {
                        let row = super::row_of(r);
                        let totals = &r.totals;
                        Point {
                            level,
                            good: good_rate(&row),
                            p99_ms: r.latency_ms.p99,
                            error_percent: row.errors,
                            errored: totals.errors + totals.failed + totals.dropped,
                        }
                    })
                    .collect();
                let limited_steps = runs()
                    .filter(|(_, r)| r.generator.verdict == GeneratorVerdict::GeneratorLimited)
                    .count();
                let backlog = runs().find_map(|(l, r)| Some((l, run_syn_retries(r)?)));
                let curve: Vec<(f64, f64)> = points.iter().map(|p| (p.level, p.good)).collect();
                TargetKnee {
                    name: t.name.clone(),
                    knee: knee(self.model, &curve),
                    shape: shape(self.model, &curve),
                    points,
                    last_level: self.steps.last().map_or(0.0, |s| s.level),
                    backlog,
                    limited_steps,
                    short_steps,
                }
            })
            .collect()
    }
}

impl TargetKnee {
    /// "small: saturates between 200 and 300 req/s asked: ...; p99 rises past 3x its lowest
    /// ...; errors from 300 req/s asked (12.0%, up to 40.0%)", or "small: no saturation up to
    /// 700 req/s asked: ...; p99 stays within 3x its lowest ...; no errors".
    pub fn sentence(&self, model: Model) -> String {
        self.sentence_in(level_unit(model))
    }

    /// [`TargetKnee::sentence`] with the levels in `unit` ([`SweepResult::level_unit`]).
    pub fn sentence_in(&self, unit: &str) -> String {
        let open = unit.ends_with("asked");
        let short = unit.trim_end_matches(" asked");
        if self.points.is_empty() && !self.short_steps.is_empty() {
            return format!(
                "{}: no conclusion: every step was too short to judge ({}), under the {MIN_STEP_S} s a step needs; lengthen the steps (--step-duration, or more --num-conns)",
                self.name,
                self.short_lengths()
            );
        }
        let mut clauses = vec![throughput_clause(self.shape, unit, open)];
        if !self.points.is_empty() {
            clauses.push(latency_clause(&self.points, short));
            clauses.push(errors_clause(&self.points, short));
            let first = self.backlog.as_ref().map(|(l, b)| (*l, b));
            clauses.push(backlog_clause(first, short));
        }
        if !self.short_steps.is_empty() {
            clauses.push(format!(
                "{} too short to judge ({}) left out: the conclusion rests on the others",
                if self.short_steps.len() == 1 {
                    "1 step".to_owned()
                } else {
                    format!("{} steps", self.short_steps.len())
                },
                self.short_lengths()
            ));
        }
        clauses.retain(|c| !c.is_empty());
        format!("{}: {}", self.name, clauses.join("; "))
    }

    /// "40-130 ms": the range of the short steps' lengths.
    fn short_lengths(&self) -> String {
        let ms = |s: f64| (s * 1e3).round() as u64;
        let lo = self
            .short_steps
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let hi = self.short_steps.iter().copied().fold(0.0, f64::max);
        if ms(lo) == ms(hi) {
            format!("{} ms", ms(lo))
        } else {
            format!("{}-{} ms", ms(lo), ms(hi))
        }
    }
}
