use super::*;

/// xorshift64*: seeded, so a failing noise case can be replayed.
struct Noise(u64);

impl Noise {
    /// A factor in [1 - spread, 1 + spread].
    fn factor(&mut self, spread: f64) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let u = (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64;
        1.0 + spread * (2.0 * u - 1.0)
    }
}

fn noisy(curve: &[(f64, f64)], seed: u64) -> Vec<(f64, f64)> {
    let mut n = Noise(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    curve
        .iter()
        .map(|&(l, t)| (l, t * n.factor(0.05)))
        .collect()
}

#[test]
fn knee_of_seed_001s_apache_curve() {
    // dem_req_rate and avg_rep_rate x (1 - errors) from autobench's sample in seed 001: kept up
    // (within 10%) to 1,800 req/s, behind at 1,900.
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
    assert_eq!(
        shape(Model::Open, &curve),
        Some(Shape::Knee {
            below: 1800.0,
            at: 1900.0,
            throughput: 1655.9
        })
    );
    assert_eq!(knee(Model::Open, &curve).unwrap().level, 1900.0);
}

#[test]
fn a_straight_line_has_no_knee() {
    let line = [(100.0, 99.0), (200.0, 198.0), (400.0, 397.0)];
    assert_eq!(knee(Model::Open, &line), None);
    let users = [(1.0, 100.0), (5.0, 480.0), (10.0, 950.0)];
    assert_eq!(
        shape(Model::Closed, &users),
        Some(Shape::Rising {
            top: 10.0,
            throughput: 950.0
        })
    );
    assert_eq!(knee(Model::Open, &[]), None);
    assert!(matches!(
        shape(Model::Closed, &[(5.0, 10.0)]),
        Some(Shape::Single { .. })
    ));
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
    assert_eq!(
        shape(Model::Closed, &users),
        Some(Shape::Knee {
            below: 1.0,
            at: 5.0,
            throughput: 1000.0
        })
    );
}

#[test]
fn the_best_at_the_top_level_is_no_knee() {
    // "saturates at ~50 users" when 50 was the top level and the best: the curve never bent.
    let users = [
        (10.0, 100.0),
        (20.0, 190.0),
        (30.0, 260.0),
        (40.0, 300.0),
        (50.0, 340.0),
    ];
    assert!(matches!(
        shape(Model::Closed, &users),
        Some(Shape::Rising { top: 50.0, .. })
    ));
    // Levels too close together to tell a plateau from a rise.
    let close = [(100.0, 1000.0), (105.0, 1050.0), (110.0, 1100.0)];
    assert!(matches!(
        shape(Model::Closed, &close),
        Some(Shape::Rising { .. })
    ));
}

#[test]
fn a_flat_curve_with_five_percent_noise_is_flat_from_the_first_level_every_time() {
    // The same flat curve once read "~5 users" and once "~50".
    let users: Vec<(f64, f64)> = [1.0, 5.0, 10.0, 50.0, 100.0, 500.0, 1000.0]
        .iter()
        .map(|&u| (u, 1000.0))
        .collect();
    let rates: Vec<(f64, f64)> = (1..=10).map(|i| (1000.0 * i as f64, 500.0)).collect();
    for seed in 0..500 {
        for (model, curve) in [(Model::Closed, &users), (Model::Open, &rates)] {
            let got = shape(model, &noisy(curve, seed));
            let first = curve[0].0;
            assert!(
                matches!(got, Some(Shape::FlatFromFirst { first: f, .. }) if f == first),
                "{model:?} seed {seed}: {got:?}"
            );
        }
    }
}

#[test]
fn a_saturating_curve_with_five_percent_noise_gives_the_same_bracket_every_time() {
    // Closed: 200 req/s per user up to 5 users, then 1,000 req/s whatever the users.
    let users: Vec<(f64, f64)> = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 20.0, 50.0]
        .iter()
        .map(|&u: &f64| (u, (200.0 * u).min(1000.0)))
        .collect();
    // Open: keeps up to 1,000 req/s, then serves 1,000 whatever is asked.
    let rates: Vec<(f64, f64)> = (1..=10)
        .map(|i| (200.0 * i as f64, (200.0 * i as f64).min(1000.0)))
        .collect();
    // Open, linear: every rate kept up with.
    let line: Vec<(f64, f64)> = (1..=10)
        .map(|i| (100.0 * i as f64, 100.0 * i as f64))
        .collect();
    for seed in 0..500 {
        let got = shape(Model::Closed, &noisy(&users, seed));
        assert!(
            matches!(
                got,
                Some(Shape::Knee {
                    below: 4.0,
                    at: 5.0,
                    ..
                })
            ),
            "closed seed {seed}: {got:?}"
        );
        let got = shape(Model::Open, &noisy(&rates, seed));
        assert!(
            matches!(
                got,
                Some(Shape::Knee {
                    below: 1000.0,
                    at: 1200.0,
                    ..
                })
            ),
            "open seed {seed}: {got:?}"
        );
        let got = shape(Model::Open, &noisy(&line, seed));
        assert!(
            matches!(got, Some(Shape::Rising { top: 1000.0, .. })),
            "line seed {seed}: {got:?}"
        );
    }
}
