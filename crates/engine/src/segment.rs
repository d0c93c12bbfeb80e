//! Shards of a run: k6's execution segments and segment sequences, in exact rational arithmetic.
//!
//! A run split over N instances must add up to exactly the run one infinitely large machine
//! would play, with no coordinator: each instance derives its share from the plan and its own
//! segment alone. k6's answer (`lib/execution_segment.go`) is followed to the letter, because
//! its striping is the reference users compare against:
//!
//! - a [`Sequence`] `0 = r0 < r1 < … < rn = 1` cuts `(0, 1]` into segments; every instance
//!   must be given the same sequence, because the stripes depend on all of it;
//! - the sequence is striped once: over a cycle of `lcd` global indices (the least common
//!   multiple of the segments' length denominators) each segment owns `len × lcd` of them,
//!   interleaved so that any prefix `0..v` is split as evenly as possible;
//! - [`Stripe::scale`]`(v)` is the number of indices below `v` a segment owns: summed over the
//!   segments it is exactly `v`, and it only ever grows with `v`.
//!
//! Everything countable in a plan uses the same stripe: arrival `k` of the global schedule is
//! sent by the shard that owns `k`; user `u` of a stage plays on the shard that owns `u` (so the
//! users active at any instant add up across shards); data row `r` belongs to the shard that
//! owns `r`. No floats: a fraction is a pair of `u64`s, products are taken in `u128`.

use crate::process::splitmix64;
use std::fmt;

/// The largest cycle a general sequence may stripe to; k6 has no bound, but a sequence such as
/// `0,1/999983,1` would make every instance walk a million-long table for nothing. Equal
/// sequences (`--shard I/N`) stripe in closed form and have no such bound.
const MAX_LCD: u64 = 100_000;

/// A fraction in lowest terms, `0 ≤ num/den ≤ 1` wherever this module uses one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    pub num: u64,
    pub den: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b)).checked_mul(b)
}

impl Ratio {
    pub fn new(num: u64, den: u64) -> Ratio {
        assert!(den != 0, "a ratio's denominator is not 0");
        let g = gcd(num, den).max(1);
        Ratio {
            num: num / g,
            den: den / g,
        }
    }

    /// `a/b`, a decimal (`0.25`) or a percentage (`25%`), as k6 accepts them.
    pub fn parse(s: &str) -> Result<Ratio, SegmentError> {
        let t = s.trim();
        let bad = || SegmentError(format!("`{s}` is not a fraction: write 1/4, 0.25 or 25%"));
        let r = if let Some(p) = t.strip_suffix('%') {
            let Ratio { num, den } = Self::decimal(p).ok_or_else(bad)?;
            Ratio::new(num, den.checked_mul(100).ok_or_else(bad)?)
        } else if let Some((n, d)) = t.split_once('/') {
            let n: u64 = n.trim().parse().map_err(|_| bad())?;
            let d: u64 = d.trim().parse().map_err(|_| bad())?;
            if d == 0 {
                return Err(SegmentError(format!("`{s}` divides by zero")));
            }
            Ratio::new(n, d)
        } else {
            Self::decimal(t).ok_or_else(bad)?
        };
        if r.num > r.den {
            return Err(SegmentError(format!("`{s}` is more than 1")));
        }
        Ok(r)
    }

    fn decimal(t: &str) -> Option<Ratio> {
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        if int.is_empty() && frac.is_empty() || frac.len() > 12 {
            return None;
        }
        let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || !digits(frac) {
            return None;
        }
        let den = 10u64.pow(frac.len() as u32);
        let i: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let f: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().ok()?
        };
        Some(Ratio::new(i.checked_mul(den)?.checked_add(f)?, den))
    }

    fn sub(self, o: Ratio) -> Ratio {
        let den = lcm(self.den, o.den).expect("denominators of a checked sequence fit");
        Ratio::new(self.num * (den / self.den) - o.num * (den / o.den), den)
    }

    fn lt(self, o: Ratio) -> bool {
        (self.num as u128) * (o.den as u128) < (o.num as u128) * (self.den as u128)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.num, self.den) {
            (0, _) => f.write_str("0"),
            (n, d) if n == d => f.write_str("1"),
            (n, d) => write!(f, "{n}/{d}"),
        }
    }
}

/// A shard that cannot be: says what is wrong and how to write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentError(pub String);

impl fmt::Display for SegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SegmentError {}

/// The cut points `0 = r0 < r1 < … < rn = 1` shared by every instance of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sequence {
    points: Vec<Ratio>,
    lcd: u64,
    /// Per segment, the indices it owns within one cycle of `lcd`, ascending.
    owned: Vec<Vec<u64>>,
}

impl Sequence {
    /// N equal segments, `0,1/N,…,1`: what `--shard I/N` means (k6-operator's split).
    pub fn equal(n: u64) -> Result<Sequence, SegmentError> {
        if n == 0 {
            return Err(SegmentError("a run has at least 1 shard".into()));
        }
        Sequence::new((0..=n).map(|i| Ratio::new(i, n)).collect())
    }

    /// k6's `--execution-segment-sequence`: `0,1/3,2/3,1`; missing 0 and 1 are added.
    pub fn parse(s: &str) -> Result<Sequence, SegmentError> {
        let mut points = s
            .split(',')
            .map(Ratio::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if points.first() != Some(&Ratio::new(0, 1)) {
            points.insert(0, Ratio::new(0, 1));
        }
        if points.last() != Some(&Ratio::new(1, 1)) {
            points.push(Ratio::new(1, 1));
        }
        Sequence::new(points)
    }

    fn new(points: Vec<Ratio>) -> Result<Sequence, SegmentError> {
        if let Some(w) = points.windows(2).find(|w| !w[0].lt(w[1])) {
            return Err(SegmentError(format!(
                "the sequence must rise strictly, but {} is followed by {}",
                w[0], w[1]
            )));
        }
        let lengths: Vec<Ratio> = points.windows(2).map(|w| w[1].sub(w[0])).collect();
        let n = lengths.len() as u64;
        if lengths.iter().all(|l| *l == Ratio::new(1, n)) {
            // What k6's striping gives N equal segments: segment i owns i, i+N, i+2N, ...
            return Ok(Sequence {
                owned: (0..n).map(|i| vec![i]).collect(),
                points,
                lcd: n,
            });
        }
        let lcd = lengths
            .iter()
            .try_fold(1u64, |acc, l| lcm(acc, l.den))
            .filter(|&l| l <= MAX_LCD && l.saturating_mul(n) <= 100 * MAX_LCD)
            .ok_or_else(|| {
                SegmentError(format!(
                    "the sequence's segments need a cycle longer than {MAX_LCD}: use simpler fractions"
                ))
            })?;
        Ok(Sequence {
            owned: stripe(&lengths, lcd),
            points,
            lcd,
        })
    }

    pub fn len(&self) -> usize {
        self.points.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cycle length of the stripes.
    pub fn lcd(&self) -> u64 {
        self.lcd
    }

    /// Segment `i` of the sequence, `(r_i, r_{i+1}]`.
    pub fn stripe(&self, i: usize) -> Stripe<'_> {
        assert!(
            i < self.len(),
            "segment {i} of a {}-segment sequence",
            self.len()
        );
        Stripe { seq: self, i }
    }

    /// The segment `(from, to]` of this sequence, or why it is not one of its segments.
    pub fn find(&self, from: Ratio, to: Ratio) -> Result<Stripe<'_>, SegmentError> {
        (0..self.len())
            .find(|&i| self.points[i] == from && self.points[i + 1] == to)
            .map(|i| self.stripe(i))
            .ok_or_else(|| {
                SegmentError(format!(
                    "{from}:{to} is not a segment of the sequence {self}: give every instance the same sequence"
                ))
            })
    }
}

impl fmt::Display for Sequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.points.iter().enumerate() {
            write!(f, "{}{p}", if i > 0 { "," } else { "" })?;
        }
        Ok(())
    }
}

/// k6's striping (`NewExecutionSegmentSequenceWrapper`): biggest segments first (stable), each
/// index of the cycle goes to the first segment that is "owed" one.
fn stripe(lengths: &[Ratio], lcd: u64) -> Vec<Vec<u64>> {
    let norm: Vec<u64> = lengths.iter().map(|l| l.num * (lcd / l.den)).collect();
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by(|&a, &b| norm[b].cmp(&norm[a]));
    let mut chosen = vec![0u64; lengths.len()];
    let mut owned: Vec<Vec<u64>> = norm
        .iter()
        .map(|&n| Vec::with_capacity(n as usize))
        .collect();
    for i in 0..lcd {
        for (rank, &seg) in order.iter().enumerate() {
            let num = chosen[rank] as u128 * lcd as u128;
            let den = norm[seg] as u128;
            let (q, r) = (num / den, num % den);
            if i as u128 > q || (i as u128 == q && r == 0) {
                chosen[rank] += 1;
                owned[seg].push(i);
                break;
            }
        }
    }
    owned
}

/// One segment of a sequence: which global indices it owns, and its share of any count.
#[derive(Clone, Copy, Debug)]
pub struct Stripe<'a> {
    seq: &'a Sequence,
    i: usize,
}

impl<'a> Stripe<'a> {
    /// The segment's position in its sequence (the shard index of `--shard I/N`).
    pub fn index(&self) -> usize {
        self.i
    }

    /// `(from, to]`.
    pub fn bounds(&self) -> (Ratio, Ratio) {
        (self.seq.points[self.i], self.seq.points[self.i + 1])
    }

    fn cycle(&self) -> &'a [u64] {
        &self.seq.owned[self.i]
    }

    /// k6's `start` and `offsets`: the first owned index, then the gaps to each next one,
    /// repeating every cycle.
    pub fn start_and_offsets(&self) -> (u64, Vec<u64>) {
        let c = self.cycle();
        let lcd = self.seq.lcd;
        let mut offsets: Vec<u64> = c.windows(2).map(|w| w[1] - w[0]).collect();
        offsets.push(lcd - c[c.len() - 1] + c[0]);
        (c[0], offsets)
    }

    /// This segment's share of `v` (users, a connection cap, a request count): the owned
    /// indices below `v`. Over all segments it sums to `v`; it never falls as `v` grows.
    pub fn scale(&self, v: u64) -> u64 {
        let c = self.cycle();
        let lcd = self.seq.lcd;
        (v / lcd) * c.len() as u64 + c.partition_point(|&x| x < v % lcd) as u64
    }

    /// A per-run limit (connection cap, in-flight requests) for this shard: its share, but at
    /// least 1 where the whole had any, so a shard that owns arrivals can always send them. The
    /// shards' limits then add up to at most `v + N - 1`.
    pub fn scale_limit(&self, v: u64) -> u64 {
        if v == 0 {
            0
        } else {
            self.scale(v).max(1)
        }
    }

    /// Whether global index `k` (an arrival, a user, a data row) is this segment's.
    pub fn owns(&self, k: u64) -> bool {
        self.cycle().binary_search(&(k % self.seq.lcd)).is_ok()
    }

    /// The global index of this segment's `j`-th own one (0-based).
    pub fn nth(&self, j: u64) -> u64 {
        let c = self.cycle();
        let m = c.len() as u64;
        (j / m) * self.seq.lcd + c[(j % m) as usize]
    }

    /// The global indices this segment owns, ascending, without end.
    pub fn indices(self) -> impl Iterator<Item = u64> + 'a {
        (0u64..).map(move |j| self.nth(j))
    }
}

/// `--shard I/N`: shard `I` (0-based, as Kubernetes' `JOB_COMPLETION_INDEX`) of `N` equal ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
    sequence: Sequence,
}

impl Shard {
    pub fn new(index: u64, count: u64) -> Result<Shard, SegmentError> {
        if count == 0 {
            return Err(SegmentError(
                "a run has at least 1 shard: write --shard 0/4 for the first of 4".into(),
            ));
        }
        // A cut point per shard is kept: a count no cluster has would cost gigabytes first.
        if count > MAX_SHARDS {
            return Err(SegmentError(format!(
                "{count} shards are more than herd splits a run into ({MAX_SHARDS}): give at most {MAX_SHARDS}"
            )));
        }
        if index >= count {
            return Err(SegmentError(format!(
                "shard {index} does not exist in a run of {count}: shards are numbered 0 to {}",
                count - 1
            )));
        }
        Ok(Shard {
            index,
            count,
            sequence: Sequence::equal(count)?,
        })
    }

    /// `I/N`, e.g. `0/4` … `3/4`.
    pub fn parse(s: &str) -> Result<Shard, SegmentError> {
        let bad = || {
            SegmentError(format!(
                "`{s}` is not a shard: write I/N, e.g. 0/4 for the first of 4 (numbered from 0)"
            ))
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let i: u64 = i.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(i, n)
    }

    pub fn stripe(&self) -> Stripe<'_> {
        self.sequence.stripe(self.index as usize)
    }

    pub fn sequence(&self) -> &Sequence {
        &self.sequence
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The most shards a run is split into: far beyond any generator fleet, small enough that
/// every instance's copy of the cut points costs nothing.
pub const MAX_SHARDS: u64 = 100_000;

/// Test data rows split between shards: row `r` of a file belongs to the shard that owns `r`,
/// so two shards never log in as the same user, whatever order they read in.
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    stripe: Stripe<'a>,
    /// Rows this shard owns.
    mine: u64,
}

impl<'a> Rows<'a> {
    /// The shard's part of a file of `rows` rows; an error when it would get none.
    pub fn new(stripe: Stripe<'a>, rows: u64) -> Result<Rows<'a>, SegmentError> {
        let mine = stripe.scale(rows);
        if mine == 0 {
            return Err(SegmentError(format!(
                "the data file has {rows} rows, too few to give shard {} one of its own: add rows or use fewer shards",
                stripe.index()
            )));
        }
        Ok(Rows { stripe, mine })
    }

    /// Rows this shard owns.
    pub fn len(&self) -> u64 {
        self.mine
    }

    pub fn is_empty(&self) -> bool {
        self.mine == 0
    }

    /// Per-user data for this shard's `j`-th user (global user `nth(j)`): while there are
    /// enough rows it is the row a single run gives that user (row `u` for user `u`); with more
    /// users than rows, users wrap within this shard's own rows, never onto another shard's.
    pub fn per_user(&self, local_user: u64) -> u64 {
        self.stripe.nth(local_user % self.mine)
    }

    /// Sequential data: this shard's `j`-th read takes its `j`-th own row, wrapping within them.
    pub fn sequential(&self, j: u64) -> u64 {
        self.stripe.nth(j % self.mine)
    }

    /// A random row among this shard's own, reproducible from the run's seed and the
    /// request's global index (the same pick on every rerun, whatever the timing).
    pub fn random(&self, seed: u64, global_index: u64) -> u64 {
        self.stripe
            .nth(splitmix64(seed ^ splitmix64(global_index)) % self.mine)
    }
}
