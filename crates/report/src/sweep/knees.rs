//! Where each target of a sweep saturated: the knee of its good-replies curve, said the same
//! way after the live table and in the HTML report.

use super::{Row, SweepResult};
use crate::format::{count, rate};
use crate::knee::{knee, Knee};
use crate::{GeneratorVerdict, Model};

/// One target's saturation over the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetKnee {
    pub name: String,
    /// `None`: the curve never bent, no saturation up to `last_level`.
    pub knee: Option<Knee>,
    pub last_level: f64,
    /// Steps of this target where herd itself was the bottleneck.
    pub limited_steps: usize,
}

/// Good replies per second of a row: replies that were not errors. autobench's reply rate
/// counts a 503 as a reply; a client does not.
pub fn good_rate(row: &Row) -> f64 {
    row.avg_rep_rate * (1.0 - row.errors / 100.0)
}

/// A level as asked: whole numbers exactly (`50`, `1,000`), fractions at three digits.
pub fn level_text(x: f64) -> String {
    if x.fract() == 0.0 && x >= 0.0 {
        count(x as u64)
    } else {
        rate(x)
    }
}

/// What a level counts: `req/s asked` or `users`.
pub fn level_unit(model: Model) -> &'static str {
    match model {
        Model::Open => "req/s asked",
        Model::Closed => "users",
    }
}

impl SweepResult {
    /// What this sweep's levels count: `req/s asked`, `users`, or `iterations/s asked` when the
    /// targets are workload files (a workload's rate is scenario iterations per second).
    pub fn level_unit(&self) -> &'static str {
        let workload = self
            .steps
            .iter()
            .flat_map(|s| &s.runs)
            .any(|r| r.workload.is_some());
        match self.model {
            Model::Open if workload => "iterations/s asked",
            m => level_unit(m),
        }
    }

    /// Every target's knee, in `targets` order.
    pub fn knees(&self) -> Vec<TargetKnee> {
        let t = self.table();
        t.targets
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let rows = || {
                    t.steps
                        .iter()
                        .filter_map(move |s| Some((s.level, s.rows.get(i)?)))
                };
                let points: Vec<(f64, f64)> = rows().map(|(l, r)| (l, good_rate(r))).collect();
                let limited_steps = rows()
                    .filter(|(_, r)| {
                        r.extra
                            .as_ref()
                            .is_some_and(|x| x.generator == GeneratorVerdict::GeneratorLimited)
                    })
                    .count();
                TargetKnee {
                    name: name.clone(),
                    knee: knee(self.model, &points),
                    last_level: t.steps.last().map_or(0.0, |s| s.level),
                    limited_steps,
                }
            })
            .collect()
    }
}

impl TargetKnee {
    /// "small: saturates at ~300 req/s asked: good replies level off near 220 req/s", or
    /// "small: no saturation up to 700 req/s asked".
    pub fn sentence(&self, model: Model) -> String {
        self.sentence_in(level_unit(model))
    }

    /// [`TargetKnee::sentence`] with the levels in `unit` ([`SweepResult::level_unit`]).
    pub fn sentence_in(&self, unit: &str) -> String {
        match &self.knee {
            Some(k) => format!(
                "{}: saturates at ~{} {unit}: good replies level off near {} req/s",
                self.name,
                level_text(k.level),
                rate(k.throughput)
            ),
            None => format!(
                "{}: no saturation up to {} {unit}",
                self.name,
                level_text(self.last_level)
            ),
        }
    }
}
