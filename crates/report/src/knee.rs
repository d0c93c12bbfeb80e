//! The knee of a throughput curve: the level past which more load no longer buys more good
//! responses, only waiting and errors ("Apache became saturated at around 2500 requests per
//! second", seed 001, read off a graph by eye; here computed).

use crate::Model;
use serde::{Deserialize, Serialize};

/// Where the curve bends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The level (req/s demanded, or users) at the knee.
    pub level: f64,
    /// Good responses per second there.
    pub throughput: f64,
}

/// Good throughput within this share of its best counts as "at the plateau".
const PLATEAU: f64 = 0.95;

/// `points` are (level, good responses per second), in any order. The knee is the lowest level
/// whose throughput is within 5% of the best seen — but only once the curve has visibly bent:
/// in the open model some level got less than 95% of what it demanded; in the closed model some
/// step of users bought less than half the throughput a proportional gain would have. Without a
/// bend there is no knee yet, only "not saturated up to here".
pub fn knee(model: Model, points: &[(f64, f64)]) -> Option<Knee> {
    let mut p: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(l, t)| l.is_finite() && t.is_finite() && *l > 0.0)
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bent = match model {
        Model::Open => p.iter().any(|(l, t)| *t < PLATEAU * l),
        Model::Closed => p.windows(2).any(|w| {
            let (a, b) = (w[0], w[1]);
            let proportional = a.1 * (b.0 / a.0 - 1.0);
            b.1 - a.1 < 0.5 * proportional
        }),
    };
    if !bent {
        return None;
    }
    let best = p.iter().map(|(_, t)| *t).fold(0.0, f64::max);
    if best <= 0.0 {
        return None;
    }
    p.iter()
        .find(|(_, t)| *t >= PLATEAU * best)
        .map(|&(level, throughput)| Knee { level, throughput })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_of_seed_001s_apache_curve() {
        // dem_req_rate and avg_rep_rate x (1 - errors) from autobench's sample in seed 001.
        let curve = [
            (1400.0, 1381.7),
            (1500.0, 1474.6),
            (1600.0, 1561.9),
            (1700.0, 1628.7),
            (1800.0, 1655.9),
            (1900.0, 1645.0),
            (2000.0, 1650.2),
            (200.0, 199.7),
        ];
        let k = knee(Model::Open, &curve).unwrap();
        assert_eq!(k.level, 1700.0);
    }

    #[test]
    fn a_straight_line_has_no_knee() {
        let line = [(100.0, 99.0), (200.0, 198.0), (400.0, 397.0)];
        assert_eq!(knee(Model::Open, &line), None);
        let users = [(1.0, 100.0), (5.0, 480.0), (10.0, 950.0)];
        assert_eq!(knee(Model::Closed, &users), None);
        assert_eq!(knee(Model::Open, &[]), None);
    }

    #[test]
    fn closed_model_knee_is_where_users_stop_adding_throughput() {
        // Seed 004's shape: 1, 5, 10, 100, 1000 users; the server tops out near 1,000 pages/s.
        let users = [
            (1.0, 250.0),
            (5.0, 900.0),
            (10.0, 990.0),
            (100.0, 1000.0),
            (1000.0, 980.0),
        ];
        let k = knee(Model::Closed, &users).unwrap();
        assert_eq!(k.level, 10.0);
    }
}
