//! A capacity search's probes by level, as its charts show them: `herd report` and `herd plot`
//! draw the same points.

use super::{CapacityResult, ProbeRecord};
use crate::format::{count, rate};
use crate::sweep::{row_of, Table, TableStep};
use crate::Model;

impl CapacityResult {
    /// A level as read: `400 req/s`, `8 users`; over HTTP/2 and HTTP/3 a closed level is
    /// connections each carrying `--streams` requests at once: `8 connections x 10 streams`.
    pub fn level_text(&self, x: f64) -> String {
        let s = |n: u64| if n == 1 { "" } else { "s" };
        match self.model {
            Model::Open => format!("{} {}", rate(x), self.open_unit()),
            Model::Closed => {
                let n = x.round() as u64;
                match self.probes.iter().find_map(|p| p.result.config.streams) {
                    Some(m) => format!("{} connection{} x {m} stream{}", count(n), s(n), s(m)),
                    None => format!("{} user{}", count(n), s(n)),
                }
            }
        }
    }

    /// What an open-model level counts: requests, or scenario iterations for a workload file.
    pub fn open_unit(&self) -> &'static str {
        if self.probes.iter().any(|p| p.result.workload.is_some()) {
            "iterations/s"
        } else {
            "req/s"
        }
    }

    /// One probe per level, the latest at a level winning (a confirmation, a contradiction),
    /// in order of level.
    pub fn by_level(&self) -> Vec<&ProbeRecord> {
        let mut out: Vec<&ProbeRecord> = Vec::new();
        for p in &self.probes {
            match out.iter_mut().find(|q| q.level == p.level) {
                Some(q) => *q = p,
                None => out.push(p),
            }
        }
        out.sort_by(|a, b| a.level.total_cmp(&b.level));
        out
    }

    /// The probes as a sweep of one target: a step per level ([`Self::by_level`]).
    pub fn table(&self) -> Table {
        Table {
            model: self.model,
            targets: vec![self.target.clone()],
            named: false,
            steps: self
                .by_level()
                .into_iter()
                .map(|p| TableStep {
                    level: p.level,
                    rows: vec![row_of(&p.result)],
                })
                .collect(),
        }
    }
}
