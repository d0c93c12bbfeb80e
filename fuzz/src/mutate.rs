//! Inputs made from seeds: byte flips, insertions and deletions, repeated and spliced runs,
//! interesting numbers, and each format's own tokens (`Transfer-Encoding: chunked`, `{{`,
//! `"latency"`), so mutations reach past the first syntax check (AFL's havoc stage, without
//! coverage feedback).

use rand::rngs::SmallRng;
use rand::Rng;

/// Inputs are kept below this size, as a parser's input is in practice (a log line, a head).
pub const MAX_LEN: usize = 64 * 1024;

const NUMBERS: [&[u8]; 12] = [
    b"0",
    b"-1",
    b"18446744073709551615",
    b"18446744073709551616",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"4294967296",
    b"1e309",
    b"NaN",
    b"-0",
    b"ffffffffffffffff",
    b"0.0000000000000000001",
];

/// One mutant of `seed`: 1 to 8 stacked edits, with `other` for splices and `dict` for tokens.
pub fn mutate(rng: &mut SmallRng, seed: &[u8], other: &[u8], dict: &[&[u8]]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..rng.gen_range(1..=8) {
        let at = |rng: &mut SmallRng, v: &Vec<u8>| rng.gen_range(0..=v.len());
        match rng.gen_range(0..10) {
            0 if !v.is_empty() => {
                let i = rng.gen_range(0..v.len());
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if !v.is_empty() => {
                let i = rng.gen_range(0..v.len());
                v[i] = rng.gen();
            }
            2 => {
                let i = at(rng, &v);
                let n = rng.gen_range(1..=8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                v.splice(i..i, bytes);
            }
            3 if !v.is_empty() => {
                let i = rng.gen_range(0..v.len());
                let n = rng.gen_range(1..=(v.len() - i).min(32));
                v.drain(i..i + n);
            }
            4 if !v.is_empty() => {
                // a run repeated: deep nesting, long lines, many headers
                let i = rng.gen_range(0..v.len());
                let n = rng.gen_range(1..=(v.len() - i).min(64));
                let run = v[i..i + n].to_vec();
                let times = rng.gen_range(1..=64);
                for _ in 0..times {
                    v.splice(i..i, run.iter().copied());
                }
            }
            5 if !other.is_empty() => {
                let i = at(rng, &v);
                let j = rng.gen_range(0..other.len());
                let n = rng.gen_range(1..=(other.len() - j));
                v.truncate(i);
                v.extend_from_slice(&other[j..j + n]);
            }
            6 => {
                // a number replaced by an extreme one
                let starts: Vec<usize> = (0..v.len())
                    .filter(|&i| v[i].is_ascii_digit() && (i == 0 || !v[i - 1].is_ascii_digit()))
                    .collect();
                if starts.is_empty() {
                    continue;
                }
                let s = starts[rng.gen_range(0..starts.len())];
                let e = (s..v.len())
                    .find(|&i| !v[i].is_ascii_digit())
                    .unwrap_or(v.len());
                let n = NUMBERS[rng.gen_range(0..NUMBERS.len())];
                v.splice(s..e, n.iter().copied());
            }
            7..=8 if !dict.is_empty() => {
                let i = at(rng, &v);
                let t = dict[rng.gen_range(0..dict.len())];
                v.splice(i..i, t.iter().copied());
            }
            _ if !v.is_empty() => {
                v.truncate(rng.gen_range(0..v.len()));
            }
            _ => {}
        }
    }
    v.truncate(MAX_LEN);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn mutants_are_bounded_and_reproducible() {
        let seed = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let run = |s| {
            let mut rng = SmallRng::seed_from_u64(s);
            (0..200)
                .map(|_| mutate(&mut rng, seed, b"other", &[b"chunked"]))
                .collect::<Vec<_>>()
        };
        let a = run(7);
        assert_eq!(a, run(7));
        assert!(a.iter().all(|m| m.len() <= MAX_LEN));
        assert!(a.iter().filter(|m| m.as_slice() != seed).count() > 150);
    }
}
