//! The SQLite store: filters, duplicates, migrations, writers at once, the list's index.

use super::common::series;
use herd_store::{Added, Filter, Store};

fn open(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().join("runs.db").to_str().unwrap()).unwrap()
}

/// The answers the tests compare between SQLite and PostgreSQL.
pub fn answers(s: &mut Store) -> String {
    let mut out = String::new();
    let all = s.list(&Filter::default()).unwrap();
    out += &format!("{} runs\n", all.len());
    let f = Filter {
        labels: vec![("commit".into(), "c07".into())],
        ..Filter::default()
    };
    for r in s.list(&f).unwrap() {
        out += &format!("c07: {} {} {:?}\n", r.started_at, r.workload_hash, r.labels);
    }
    let last = Filter {
        last: Some(5),
        ..Filter::default()
    };
    for p in s.series(&last, "p99", "").unwrap() {
        out += &format!("{} {} {:?}\n", p.run.started_at, p.value, p.noise);
    }
    let since = Filter {
        since: Some(all[all.len() / 2].started_unix),
        ..Filter::default()
    };
    out += &format!("since: {}\n", s.list(&since).unwrap().len());
    out
}

#[test]
fn filters_select_by_label_target_workload_and_time() {
    let d = tempfile::tempdir().unwrap();
    let mut s = open(&d);
    let runs = series(10, 11, 0.0, 0.02, 1);
    for r in &runs {
        assert!(matches!(s.add(r, "test").unwrap(), Added::New(_)));
    }
    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(all.len(), 10);
    assert!(all
        .windows(2)
        .all(|w| w[0].started_unix <= w[1].started_unix));
    let by = |f: Filter, s: &mut Store| s.list(&f).unwrap().len();
    let label = |k: &str, v: &str| Filter {
        labels: vec![(k.into(), v.into())],
        ..Filter::default()
    };
    assert_eq!(by(label("branch", "main"), &mut s), 10);
    assert_eq!(by(label("commit", "c03"), &mut s), 1);
    assert_eq!(by(label("branch", "dev"), &mut s), 0);
    let target = runs[0].target.clone();
    assert_eq!(
        by(
            Filter {
                target: Some(target),
                ..Filter::default()
            },
            &mut s
        ),
        10
    );
    assert_eq!(
        by(
            Filter {
                target: Some("http://elsewhere/".into()),
                ..Filter::default()
            },
            &mut s
        ),
        0
    );
    let t3 = all[3].started_unix;
    assert_eq!(
        by(
            Filter {
                since: Some(t3),
                ..Filter::default()
            },
            &mut s
        ),
        7
    );
    assert_eq!(
        by(
            Filter {
                until: Some(t3),
                ..Filter::default()
            },
            &mut s
        ),
        3
    );
    let last = s
        .list(&Filter {
            last: Some(4),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(
        last.iter().map(|r| r.id).collect::<Vec<_>>(),
        all[6..].iter().map(|r| r.id).collect::<Vec<_>>()
    );
    // The same result twice is stored once.
    assert_eq!(s.add(&runs[2], "test").unwrap(), Added::Already(all[2].id));
}

#[test]
fn an_older_store_is_migrated_and_a_newer_one_refused() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("runs.db");
    let mut old = Store::open_at(path.to_str().unwrap(), Some(1)).unwrap();
    assert_eq!(old.version().unwrap(), 1);
    let id = old.add(&series(1, 2, 0.0, 0.0, 1)[0], "test").unwrap().id();
    drop(old);
    let mut s = Store::open(path.to_str().unwrap()).unwrap();
    assert_eq!(s.version().unwrap(), herd_store::schema::VERSION);
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
    s.set_baseline("branch=main", id).unwrap();
    assert_eq!(s.baseline("branch=main").unwrap(), Some(id));
    drop(s);
    // A store a newer herd wrote is not misread.
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute(
        "INSERT INTO herd_schema (version, applied_unix) VALUES (99, 0)",
        [],
    )
    .unwrap();
    drop(c);
    let e = Store::open(path.to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("newer than this herd"), "{e}");
}

#[test]
fn eight_writers_at_once_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("runs.db").to_str().unwrap().to_owned();
    drop(open(&d));
    let runs = series(400, 401, 0.0, 0.05, 5);
    std::thread::scope(|scope| {
        for chunk in runs.chunks(50) {
            let path = path.clone();
            scope.spawn(move || {
                let mut s = Store::open(&path).unwrap();
                for r in chunk {
                    s.add(r, "test").unwrap();
                }
            });
        }
    });
    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 400);
}

#[test]
fn listing_uses_indexes_not_a_scan_and_sort() {
    let d = tempfile::tempdir().unwrap();
    let mut s = open(&d);
    for r in series(20, 21, 0.0, 0.02, 1) {
        s.add(&r, "test").unwrap();
    }
    let plans = [
        Filter::default(),
        Filter {
            labels: vec![("branch".into(), "main".into())],
            ..Filter::default()
        },
        Filter {
            since: Some(0),
            last: Some(10),
            ..Filter::default()
        },
    ];
    for (i, f) in plans.iter().enumerate() {
        let plan = s.plan_of_list(f).unwrap();
        // No table read whole: every scan goes through an index (`t` is --last's few rows).
        for line in plan
            .lines()
            .filter(|l| l.starts_with("SCAN") && *l != "SCAN t")
        {
            assert!(line.contains("USING"), "{plan}");
        }
        if i == 0 {
            // All runs come in the index's order: no sort.
            assert!(
                plan.contains("runs_by_time") && !plan.contains("TEMP B-TREE"),
                "{plan}"
            );
        }
        if !f.labels.is_empty() {
            assert!(plan.contains("labels_by_value"), "{plan}");
        }
    }
}

#[test]
fn a_bad_selector_or_a_missing_run_says_what_to_do() {
    let d = tempfile::tempdir().unwrap();
    let mut s = open(&d);
    let e = s.set_baseline("branch", 1).err().unwrap().to_string();
    assert!(e.contains("history ls") || e.contains("KEY=VALUE"), "{e}");
    let e = s.run(42).err().unwrap().to_string();
    assert!(e.contains("no run #42"), "{e}");
}
