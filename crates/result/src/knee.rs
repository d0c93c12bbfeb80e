//! The knee of a throughput curve: the level past which more load no longer buys more good
//! responses, only waiting and errors ("Apache became saturated at around 2500 requests per
//! second", seed 001, read off a graph by eye; here computed).
//!
//! Measured throughput wobbles by a few percent from one step to the next, so the rule reads the
//! curve with a tolerance ([`TOLERANCE`], 10%: twice the +-5% such wobble typically spans) and
//! says where the knee lies as a bracket between two levels tried, never as one level picked by
//! noise. The same flat curve must read the same on every run.

use crate::Model;
use serde::{Deserialize, Serialize};

/// Where the curve bends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The level (req/s demanded, or users) at the knee: the first level on the plateau.
    pub level: f64,
    /// The best good responses per second seen.
    pub throughput: f64,
}

/// Two throughputs this close (relative) are the same as far as a sweep can tell.
pub const TOLERANCE: f64 = 0.10;

/// What a throughput curve shows, and so how sure a sentence about it can be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// One level only: no curve to read.
    Single { level: f64, throughput: f64 },
    /// Good throughput followed load up to the top level tried: no knee within the levels.
    Rising { top: f64, throughput: f64 },
    /// On its plateau (closed model) or behind demand (open model) from the lowest level: the
    /// knee lies at or below `first`. `at_first` is the good throughput there, `throughput` the
    /// best seen.
    FlatFromFirst {
        first: f64,
        at_first: f64,
        throughput: f64,
    },
    /// Followed load up to `below`, saturated at `at`: the knee lies between them.
    Knee {
        below: f64,
        at: f64,
        throughput: f64,
    },
}

/// Reads `points`, (level, good responses per second) in any order.
///
/// Open model (levels are rates asked): a level is kept up with when its good throughput is
/// within [`TOLERANCE`] of the rate asked; the knee lies between the last level kept up with
/// and the first that was not. Closed model (levels are users): the plateau starts at the first
/// level within [`TOLERANCE`] of the best throughput, and it is a plateau only if it is not the
/// top level and the levels on it bought less than half the throughput a proportional gain
/// would have; otherwise the curve is still rising.
pub fn shape(model: Model, points: &[(f64, f64)]) -> Option<Shape> {
    let mut p: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(l, t)| l.is_finite() && t.is_finite() && *l > 0.0)
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (&(first, t0), &(top, t_top)) = (p.first()?, p.last()?);
    let best = p.iter().map(|(_, t)| *t).fold(0.0, f64::max);
    if p.len() == 1 {
        return Some(Shape::Single {
            level: first,
            throughput: t0,
        });
    }
    let on_plateau = match model {
        Model::Open => p.iter().position(|(l, t)| *t < (1.0 - TOLERANCE) * l),
        Model::Closed => {
            let f = p
                .iter()
                .position(|(_, t)| *t >= (1.0 - TOLERANCE) * best && best > 0.0)
                .unwrap_or(p.len() - 1);
            let (lf, tf) = p[f];
            let rest_best = p[f..].iter().map(|(_, t)| *t).fold(0.0, f64::max);
            let gained = if tf > 0.0 { rest_best / tf - 1.0 } else { 0.0 };
            let flat = f + 1 < p.len() && gained < 0.5 * (top / lf - 1.0);
            flat.then_some(f)
        }
    };
    Some(match on_plateau {
        None => Shape::Rising {
            top,
            throughput: t_top,
        },
        Some(0) => Shape::FlatFromFirst {
            first,
            at_first: t0,
            throughput: best,
        },
        Some(i) => Shape::Knee {
            below: p[i - 1].0,
            at: p[i].0,
            throughput: best,
        },
    })
}

/// The knee as one level (the first on the plateau), when the curve has one within the levels
/// tried; see [`shape`] for the bracket around it.
pub fn knee(model: Model, points: &[(f64, f64)]) -> Option<Knee> {
    match shape(model, points)? {
        Shape::Knee { at, throughput, .. } => Some(Knee {
            level: at,
            throughput,
        }),
        Shape::FlatFromFirst {
            first, throughput, ..
        } => Some(Knee {
            level: first,
            throughput,
        }),
        Shape::Single { .. } | Shape::Rising { .. } => None,
    }
}

#[cfg(test)]
mod tests;
