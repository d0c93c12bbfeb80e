//! Test data (seed 003): rows of a CSV file (logins, account numbers) handed out per user, in
//! sequence or at random, lists of values, and Zipf-skewed ids (a few items are very popular,
//! most are rare, as with real search terms and products).

use crate::diag::{did_you_mean, Diag};
use crate::read::{Fields, Reader};
use crate::yaml::Node;
use herd_engine::segment::Shard;
use rand::Rng;
use rand_distr::{Distribution, Zipf};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Which row or value an iteration gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Each virtual user keeps one row for the whole run (user N gets row N mod rows).
    PerUser,
    /// Each iteration of any user takes the next row, wrapping around.
    Sequential,
    /// Each iteration draws a row uniformly.
    Random,
}

const PICKS: [&str; 3] = ["per-user", "sequential", "random"];

#[derive(Clone, Debug)]
pub enum Kind {
    Table {
        columns: Vec<String>,
        rows: Vec<Vec<String>>,
        pick: Pick,
    },
    Values {
        values: Vec<String>,
        pick: Pick,
    },
    Zipf {
        n: u64,
        dist: Zipf<f64>,
    },
}

#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub kind: Kind,
    /// Shared by all users and threads for `sequential`.
    next: Arc<AtomicU64>,
}

/// What one iteration drew from a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drawn {
    Nothing,
    Row(usize),
    Number(u64),
}

impl Source {
    pub fn column(&self, name: &str) -> Option<usize> {
        match &self.kind {
            Kind::Table { columns, .. } => columns.iter().position(|c| c == name),
            _ => None,
        }
    }

    pub fn column_names(&self) -> &[String] {
        match &self.kind {
            Kind::Table { columns, .. } => columns,
            _ => &[],
        }
    }

    pub fn is_table(&self) -> bool {
        matches!(self.kind, Kind::Table { .. })
    }

    #[cfg(test)]
    pub fn draw(&self, user: u64, rng: &mut impl Rng) -> Drawn {
        self.draw_in(user, rng, None)
    }

    /// [`Source::draw`] for one shard of a run: `user` is the user's id in the whole run, and
    /// sequential rows follow the shard's stripe, so no two shards ever take the same row.
    pub fn draw_in(&self, user: u64, rng: &mut impl Rng, shard: Option<&Shard>) -> Drawn {
        let mut pick = |len: usize, pick: Pick| match pick {
            Pick::PerUser => (user % len as u64) as usize,
            Pick::Sequential => {
                let j = self.next.fetch_add(1, Ordering::Relaxed);
                let global = shard.map_or(j, |s| s.stripe().nth(j));
                (global % len as u64) as usize
            }
            Pick::Random => rng.gen_range(0..len),
        };
        match &self.kind {
            Kind::Table { rows, pick: p, .. } => Drawn::Row(pick(rows.len(), *p)),
            Kind::Values { values, pick: p } => Drawn::Row(pick(values.len(), *p)),
            Kind::Zipf { n, dist } => Drawn::Number((dist.sample(rng) as u64).clamp(1, *n)),
        }
    }

    /// The text of `drawn`, column `column` for tables.
    pub fn text<'a>(&'a self, drawn: &Drawn, column: usize, buf: &'a str) -> Option<&'a str> {
        match (&self.kind, drawn) {
            (Kind::Table { rows, .. }, Drawn::Row(r)) => rows[*r].get(column).map(|s| s.as_str()),
            (Kind::Values { values, .. }, Drawn::Row(r)) => Some(&values[*r]),
            (Kind::Zipf { .. }, Drawn::Number(_)) => Some(buf),
            _ => None,
        }
    }
}

/// Reads the `data:` section; CSV paths are relative to the workload file's folder. Also
/// returns the names of sources that could not be read, so their uses are not reported again.
pub fn read_sources(r: &mut Reader, node: &Node, base: &Path) -> (Vec<Source>, Vec<String>) {
    let mut out = Vec::new();
    let mut broken = Vec::new();
    let Some(fields) = r.map(node, "data") else {
        return (out, broken);
    };
    for (k, v) in fields.entries() {
        let Some(name) = k.scalar() else { continue };
        broken.push(name.to_owned());
        let Some(f) = r.fields(
            v,
            &format!("data source `{name}`"),
            &["csv", "pick", "zipf", "values", "secret"],
        ) else {
            continue;
        };
        // `secret: true` only says where the file travels (`herd k8s render` puts it into a
        // Secret, not the ConfigMap); the run reads it like any other.
        if let Some(s) = f.get("secret") {
            if r.boolean(s, "secret").is_some() && !f.has("csv") {
                r.report(
                    Diag::new(s.at, "only a csv source can be secret")
                        .hint("e.g. { csv: users.csv, secret: true }"),
                );
            }
        }
        let kinds = ["csv", "zipf", "values"]
            .iter()
            .filter(|k| f.has(k))
            .count();
        if kinds != 1 {
            r.report(
                Diag::new(
                    v.at,
                    format!("data source `{name}` needs exactly one of csv, zipf, values"),
                )
                .hint("e.g. { csv: users.csv, pick: per-user } or { zipf: { n: 10000, s: 1.1 } }"),
            );
            continue;
        }
        let pick = f.get("pick").map_or(Pick::PerUser, |p| read_pick(r, p));
        let kind = if let Some(path) = f.get("csv") {
            let Some(file) = r.string(path, "csv") else {
                continue;
            };
            match read_csv(&base.join(&file)) {
                Ok((columns, rows)) => Kind::Table {
                    columns,
                    rows,
                    pick,
                },
                Err(e) => {
                    r.report(Diag::new(path.at, e));
                    continue;
                }
            }
        } else if let Some(list) = f.get("values") {
            let Some(items) = r.seq(list, "values") else {
                continue;
            };
            let values: Vec<String> = items
                .iter()
                .filter_map(|i| r.string(i, "a value"))
                .collect();
            if values.is_empty() {
                r.error(list.at, format!("data source `{name}` has no values"));
                continue;
            }
            Kind::Values { values, pick }
        } else {
            let Some(kind) = read_zipf(r, &f) else {
                continue;
            };
            kind
        };
        broken.pop();
        out.push(Source {
            name: name.to_owned(),
            kind,
            next: Arc::new(AtomicU64::new(0)),
        });
    }
    (out, broken)
}

/// A `zipf: { n, s }` source: ids 1..n drawn with the popularity of a real site's.
fn read_zipf(r: &mut Reader, f: &Fields) -> Option<Kind> {
    let z = f.get("zipf").expect("counted above");
    if f.has("pick") {
        r.report(Diag::new(
            z.at,
            "a zipf source draws at random; it takes no `pick`",
        ));
    }
    let zf = r.fields(z, "zipf", &["n", "s"])?;
    let n = zf.get("n").and_then(|n| r.count(n, "zipf n"));
    let s = zf.get("s").map_or(Some(1.0), |s| r.number(s, "zipf s"));
    let (Some(n), Some(s)) = (n, s) else {
        if !zf.has("n") {
            r.report(
                Diag::new(z.at, "zipf needs `n`, the number of distinct ids")
                    .hint("e.g. { n: 10000, s: 1.1 }"),
            );
        }
        return None;
    };
    match Zipf::new(n, s) {
        Ok(dist) if n >= 1 => Some(Kind::Zipf { n, dist }),
        _ => {
            r.report(Diag::new(
                z.at,
                format!("zipf needs n >= 1 and s >= 0, not n = {n}, s = {s}"),
            ));
            None
        }
    }
}

/// `pick:`: which row or value a user takes.
fn read_pick(r: &mut Reader, p: &Node) -> Pick {
    match p.scalar().unwrap_or_default() {
        "per-user" => Pick::PerUser,
        "sequential" => Pick::Sequential,
        "random" => Pick::Random,
        other => {
            let hint = did_you_mean(other, PICKS)
                .unwrap_or_else(|| "one of per-user, sequential, random".into());
            r.report(Diag::new(p.at, format!("`{other}` is not a pick mode")).hint(hint));
            Pick::PerUser
        }
    }
}

/// A CSV file with a header row; every row must have the header's number of fields.
fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let shown = path.display();
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| match e.kind() {
            csv::ErrorKind::Io(io) => format!("cannot read the CSV file {shown}: {io}"),
            _ => format!("cannot read the CSV file {shown}: {e}"),
        })?;
    let columns: Vec<String> = rd
        .headers()
        .map_err(|e| format!("{shown}: {e}"))?
        .iter()
        .map(str::to_owned)
        .collect();
    let mut rows = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| format!("{shown}: {e}"))?;
        rows.push(rec.iter().map(str::to_owned).collect());
    }
    if rows.is_empty() {
        // A 0-byte file has no header either: saying it has one would send the user looking
        // for rows under a line that is not there.
        if columns.iter().all(|c| c.is_empty()) {
            return Err(format!(
                "the CSV file {shown} is empty; write a header line (e.g. user,password) and one row per user"
            ));
        }
        return Err(format!("the CSV file {shown} has a header but no rows"));
    }
    Ok((columns, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn table(pick: Pick) -> Source {
        Source {
            name: "users".into(),
            kind: Kind::Table {
                columns: vec!["user".into()],
                rows: (0..4).map(|i| vec![format!("u{i}")]).collect(),
                pick,
            },
            next: Arc::new(AtomicU64::new(0)),
        }
    }

    #[test]
    fn sequential_rows_of_shards_never_meet() {
        let mut taken = std::collections::BTreeSet::new();
        for i in 0..3 {
            let shard = Shard::new(i, 3).unwrap();
            let mut seq = table(Pick::Sequential);
            if let Kind::Table { rows, .. } = &mut seq.kind {
                *rows = (0..12).map(|i| vec![i.to_string()]).collect();
            }
            let mut rng = SmallRng::seed_from_u64(1);
            for _ in 0..4 {
                let Drawn::Row(r) = seq.draw_in(0, &mut rng, Some(&shard)) else {
                    panic!("a row")
                };
                assert!(taken.insert(r), "row {r} taken twice");
            }
        }
        assert_eq!(taken.len(), 12);
    }

    #[test]
    fn pick_modes() {
        let mut rng = SmallRng::seed_from_u64(1);
        let per_user = table(Pick::PerUser);
        for _ in 0..3 {
            assert_eq!(per_user.draw(5, &mut rng), Drawn::Row(1));
        }
        let seq = table(Pick::Sequential);
        let rows: Vec<_> = (0..6).map(|u| seq.draw(u, &mut rng)).collect();
        let want: Vec<_> = [0, 1, 2, 3, 0, 1].into_iter().map(Drawn::Row).collect();
        assert_eq!(rows, want);
        let random = table(Pick::Random);
        let mut seen = [0; 4];
        for _ in 0..400 {
            let Drawn::Row(r) = random.draw(0, &mut rng) else {
                panic!()
            };
            seen[r] += 1;
        }
        assert!(seen.iter().all(|n| (60..=140).contains(n)), "{seen:?}");
    }

    #[test]
    fn zipf_is_skewed_toward_small_ids() {
        let z = Source {
            name: "item".into(),
            kind: Kind::Zipf {
                n: 1000,
                dist: Zipf::new(1000, 1.1).unwrap(),
            },
            next: Arc::new(AtomicU64::new(0)),
        };
        let mut rng = SmallRng::seed_from_u64(42);
        let mut counts = vec![0u32; 1001];
        let draws = 20_000;
        for _ in 0..draws {
            let Drawn::Number(n) = z.draw(0, &mut rng) else {
                panic!()
            };
            assert!((1..=1000).contains(&n));
            counts[n as usize] += 1;
        }
        // Uniform would give id 1 about 20 draws; Zipf(1.1) over 1000 ids about a fifth of all.
        let top = counts[1] as f64 / draws as f64;
        assert!(top > 0.15 && top < 0.30, "share of id 1: {top}");
        assert!(counts[1] > counts[2] && counts[2] > counts[10]);
        let top10: u32 = counts[1..=10].iter().sum();
        assert!(top10 as f64 / draws as f64 > 0.4, "top 10 share");
    }

    #[test]
    fn an_empty_csv_file_is_called_empty_not_headed() {
        let dir = std::env::temp_dir().join(format!("herd-empty-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.csv");
        std::fs::write(&empty, "").unwrap();
        let e = read_csv(&empty).unwrap_err();
        assert!(e.contains("is empty") && !e.contains("header but"), "{e}");
        let headed = dir.join("headed.csv");
        std::fs::write(&headed, "user,password\n").unwrap();
        let e = read_csv(&headed).unwrap_err();
        assert!(e.contains("has a header but no rows"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn csv_problems_name_the_path() {
        let e = read_csv(Path::new("/nonexistent/users.csv")).unwrap_err();
        assert!(e.contains("/nonexistent/users.csv"), "{e}");
    }
}
