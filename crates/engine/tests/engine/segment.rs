//! Shards of a run (`herd_engine::segment`): k6's published table, then properties over many
//! random sequences from a seeded generator (no clock, no luck).

use herd_engine::segment::{Ratio, Rows, Sequence, Shard};
use herd_engine::stages::{Profile, Stage};
use std::time::Duration;

/// A small seeded generator: the same sequences on every run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random full sequence: cut points on a random denominator.
fn random_sequence(rng: &mut Lcg) -> Sequence {
    let den = 1 + rng.below(24);
    let mut cuts: Vec<u64> = (1..den).filter(|_| rng.below(3) == 0).collect();
    cuts.dedup();
    let text: Vec<String> = std::iter::once("0".to_owned())
        .chain(cuts.iter().map(|c| format!("{c}/{den}")))
        .chain(std::iter::once("1".to_owned()))
        .collect();
    Sequence::parse(&text.join(",")).unwrap()
}

#[test]
fn k6_table_of_starts_offsets_users_and_indices() {
    // (sequence, segment index, start, offsets, VUs for 1..=10, first indices): sharding.md,
    // derived from k6's algorithm and matching its source comments.
    type Row = (
        &'static str,
        usize,
        u64,
        &'static [u64],
        [u64; 10],
        [u64; 6],
    );
    let table: [Row; 6] = [
        (
            "0,1/3,2/3,1",
            0,
            0,
            &[3],
            [1, 1, 1, 2, 2, 2, 3, 3, 3, 4],
            [0, 3, 6, 9, 12, 15],
        ),
        (
            "0,1/3,2/3,1",
            1,
            1,
            &[3],
            [0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
            [1, 4, 7, 10, 13, 16],
        ),
        (
            "0,1/3,2/3,1",
            2,
            2,
            &[3],
            [0, 0, 1, 1, 1, 2, 2, 2, 3, 3],
            [2, 5, 8, 11, 14, 17],
        ),
        (
            "0,1/2,3/4,1",
            0,
            0,
            &[2, 2],
            [1, 1, 2, 2, 3, 3, 4, 4, 5, 5],
            [0, 2, 4, 6, 8, 10],
        ),
        (
            "0,1/2,3/4,1",
            1,
            1,
            &[4],
            [0, 1, 1, 1, 1, 2, 2, 2, 2, 3],
            [1, 5, 9, 13, 17, 21],
        ),
        (
            "0,1/2,3/4,1",
            2,
            3,
            &[4],
            [0, 0, 0, 1, 1, 1, 1, 2, 2, 2],
            [3, 7, 11, 15, 19, 23],
        ),
    ];
    for (seq, i, start, offsets, vus, first) in table {
        let seq = Sequence::parse(seq).unwrap();
        let s = seq.stripe(i);
        assert_eq!(
            s.start_and_offsets(),
            (start, offsets.to_vec()),
            "{seq} #{i}"
        );
        let scaled: Vec<u64> = (1..=10).map(|v| s.scale(v)).collect();
        assert_eq!(scaled, vus, "{seq} #{i}");
        let got: Vec<u64> = s.indices().take(6).collect();
        assert_eq!(got, first, "{seq} #{i}");
    }
}

#[test]
fn k6_striping_depends_on_the_whole_sequence() {
    // TestGetStripedOffsets: 0:0.2 alone, and inside a longer sequence.
    let alone = Sequence::parse("0,0.2,1").unwrap();
    let s = alone.find(Ratio::new(0, 1), Ratio::new(1, 5)).unwrap();
    assert_eq!((s.start_and_offsets(), alone.lcd()), ((1, vec![5]), 5));
    let long = Sequence::parse("0,0.2,0.5,0.6,0.7,0.8,0.9,1").unwrap();
    let s = long.find(Ratio::new(0, 1), Ratio::new(1, 5)).unwrap();
    assert_eq!((s.start_and_offsets(), long.lcd()), ((1, vec![4, 6]), 10));
    let e = long.find(Ratio::new(0, 1), Ratio::new(1, 3)).unwrap_err();
    assert!(e.0.contains("same sequence"), "{e}");
}

#[test]
fn equal_sequences_stripe_in_closed_form_like_k6() {
    // The closed form for N equal shards is what the general walk gives for them.
    for n in 1..=12u64 {
        let closed = Sequence::equal(n).unwrap();
        let walked = Sequence::parse(&format!(
            "0,{}",
            (1..=n)
                .map(|i| format!("{i}/{n}"))
                .collect::<Vec<_>>()
                .join(",")
        ))
        .unwrap();
        for i in 0..n as usize {
            assert_eq!(closed.stripe(i).start_and_offsets(), (i as u64, vec![n]));
            let mut seen: Vec<u64> = walked.stripe(i).indices().take(3).collect();
            seen.sort();
            assert_eq!(seen, closed.stripe(i).indices().take(3).collect::<Vec<_>>());
        }
    }
    let big = Shard::new(99_999, 100_000).unwrap();
    assert_eq!(big.stripe().nth(2), 299_999);
}

#[test]
fn ten_users_on_three_shards_are_four_three_three() {
    let shares: Vec<u64> = (0..3)
        .map(|i| Shard::new(i, 3).unwrap().stripe().scale(10))
        .collect();
    assert_eq!(shares, [4, 3, 3]);
}

#[test]
fn shares_add_up_and_never_fall() {
    let mut rng = Lcg(7);
    for _ in 0..300 {
        let seq = random_sequence(&mut rng);
        let mut last = vec![0u64; seq.len()];
        for v in 0..(3 * seq.lcd() + 17) {
            let shares: Vec<u64> = (0..seq.len()).map(|i| seq.stripe(i).scale(v)).collect();
            assert_eq!(shares.iter().sum::<u64>(), v, "{seq} at {v}");
            for (now, before) in shares.iter().zip(&last) {
                assert!(now >= before, "{seq}: scale fell at {v}");
                assert!(
                    now - before <= 1,
                    "{seq}: one more grew a share by more than 1"
                );
            }
            last = shares;
        }
        // Large values: the cycle arithmetic, not the walk.
        let big = 1_000_000_007u64;
        let sum: u64 = (0..seq.len()).map(|i| seq.stripe(i).scale(big)).sum();
        assert_eq!(sum, big, "{seq}");
    }
}

#[test]
fn stripes_are_disjoint_and_cover_every_index() {
    let mut rng = Lcg(11);
    for _ in 0..300 {
        let seq = random_sequence(&mut rng);
        let n = 3 * seq.lcd() + 5;
        let mut owner = vec![None; n as usize];
        for i in 0..seq.len() {
            let s = seq.stripe(i);
            for k in s.indices().take_while(|&k| k < n) {
                assert_eq!(owner[k as usize], None, "{seq}: index {k} owned twice");
                owner[k as usize] = Some(i);
            }
            for k in 0..n {
                assert_eq!(
                    s.owns(k),
                    owner[k as usize] == Some(i),
                    "{seq} #{i} owns {k}"
                );
            }
            // scale(v) counts exactly the owned indices below v: shard j's first scale(v)
            // arrivals are precisely its share of the global first v.
            for v in 0..n {
                let below = (0..v).filter(|&k| s.owns(k)).count() as u64;
                assert_eq!(s.scale(v), below, "{seq} #{i} below {v}");
            }
        }
        assert!(
            owner.iter().all(Option::is_some),
            "{seq}: an index nobody owns"
        );
    }
}

#[test]
fn shards_stage_plans_add_up_to_the_unsharded_plan() {
    // The engine activates user `u` while the stage target exceeds it; a shard plays the users it
    // owns. At any instant the shards' active users add up to the single run's.
    let mut rng = Lcg(3);
    for _ in 0..40 {
        let stages: Vec<Stage> = (0..1 + rng.below(4))
            .map(|_| Stage {
                duration: Duration::from_secs(1 + rng.below(20)),
                target: rng.below(40) as f64,
            })
            .collect();
        let profile = Profile::new(&stages);
        let max = profile.max() as u64;
        let n = 1 + rng.below(7);
        let shards: Vec<Shard> = (0..n).map(|i| Shard::new(i, n).unwrap()).collect();
        let total_ms = profile.total().as_millis() as u64;
        for step in 0..=50 {
            let t = Duration::from_millis(total_ms * step / 50);
            let active = |u: u64| profile.next_active(u, t) == Some(t);
            let global = (0..max).filter(|&u| active(u)).count() as u64;
            let sharded: u64 = shards
                .iter()
                .map(|s| {
                    (0..max)
                        .filter(|&u| s.stripe().owns(u) && active(u))
                        .count() as u64
                })
                .sum();
            assert_eq!(sharded, global, "{stages:?} on {n} shards at {t:?}");
            for s in &shards {
                let mine = (0..max)
                    .filter(|&u| s.stripe().owns(u) && active(u))
                    .count() as u64;
                assert_eq!(mine, s.stripe().scale(global), "users are a prefix");
            }
        }
    }
}

#[test]
fn data_rows_belong_to_exactly_one_shard() {
    let rows = 10;
    let shards: Vec<Shard> = (0..3).map(|i| Shard::new(i, 3).unwrap()).collect();
    let mut seen = Vec::new();
    for s in &shards {
        let part = Rows::new(s.stripe(), rows).unwrap();
        for j in 0..s.stripe().scale(10) {
            // The row a single run would give global user nth(j).
            assert_eq!(part.per_user(j), s.stripe().nth(j));
            seen.push(part.per_user(j));
        }
        // More users than rows: they wrap within the shard's own rows.
        assert!((0..40).all(|j| s.stripe().owns(part.per_user(j)) && part.per_user(j) < rows));
        let seq: Vec<u64> = (0..2 * part.len()).map(|j| part.sequential(j)).collect();
        assert!(
            seq.iter().all(|&r| s.stripe().owns(r) && r < rows),
            "{seq:?}"
        );
        let picks: Vec<u64> = (0..50).map(|k| part.random(42, k)).collect();
        assert_eq!(
            picks,
            (0..50).map(|k| part.random(42, k)).collect::<Vec<_>>()
        );
        assert!(picks.iter().all(|&r| s.stripe().owns(r)));
    }
    seen.sort();
    assert_eq!(
        seen,
        (0..10).collect::<Vec<_>>(),
        "10 users, 10 distinct rows"
    );
    let e = Rows::new(Shard::new(4, 5).unwrap().stripe(), 3).unwrap_err();
    assert!(e.0.contains("add rows or use fewer shards"), "{e}");
}

#[test]
fn bad_shards_say_how_to_write_them() {
    for (s, want) in [
        ("3/3", "numbered 0 to 2"),
        ("0/0", "at least 1 shard"),
        ("1", "write I/N"),
        ("a/4", "write I/N"),
        ("-1/4", "write I/N"),
    ] {
        let e = Shard::parse(s).unwrap_err();
        assert!(e.0.contains(want), "{s}: {e}");
    }
    assert_eq!(Shard::parse(" 2/4 ").unwrap().to_string(), "2/4");
    for (s, r) in [
        ("1/4", (1, 4)),
        ("0.25", (1, 4)),
        ("25%", (1, 4)),
        ("1", (1, 1)),
    ] {
        assert_eq!(Ratio::parse(s).unwrap(), Ratio::new(r.0, r.1), "{s}");
    }
    for s in ["5/4", "1/0", "x", "", "1.5"] {
        assert!(Ratio::parse(s).is_err(), "{s}");
    }
    let err = |s: &str| Sequence::parse(s).map(|_| ()).unwrap_err().0;
    assert!(err("0,1/2,1/2,1").contains("rise"));
    assert!(err("1/999983,1").contains("simpler"));
    assert!(err("0,1/3,x").contains("not a fraction"));
}

#[test]
fn limits_are_scaled_but_never_to_zero_for_a_shard_with_work() {
    let caps: Vec<u64> = (0..3)
        .map(|i| Shard::new(i, 3).unwrap().stripe().scale_limit(1000))
        .collect();
    assert_eq!(caps, [334, 333, 333]);
    let caps: Vec<u64> = (0..3)
        .map(|i| Shard::new(i, 3).unwrap().stripe().scale_limit(2))
        .collect();
    assert_eq!(caps, [1, 1, 1]);
}
