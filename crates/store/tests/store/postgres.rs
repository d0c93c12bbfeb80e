//! The same store in PostgreSQL: a cluster started by the test, the same answers as SQLite.

use super::common::{series, Pg};
use super::sqlite::answers;
use herd_store::{Filter, Store};

#[test]
fn postgres_gives_the_answers_sqlite_gives_and_loses_nothing_to_eight_writers() {
    let Some(pg) = Pg::start() else { return };
    let runs = series(400, 401, 0.0, 0.05, 5);
    drop(Store::open(&pg.url).unwrap());
    std::thread::scope(|scope| {
        for chunk in runs.chunks(50) {
            let url = pg.url.clone();
            scope.spawn(move || {
                let mut s = Store::open(&url).unwrap();
                for r in chunk {
                    s.add(r, "test").unwrap();
                }
            });
        }
    });
    let mut p = Store::open(&pg.url).unwrap();
    assert_eq!(p.list(&Filter::default()).unwrap().len(), 400);
    let d = tempfile::tempdir().unwrap();
    let mut l = Store::open(d.path().join("runs.db").to_str().unwrap()).unwrap();
    for r in &runs {
        l.add(r, "test").unwrap();
    }
    assert_eq!(answers(&mut p), answers(&mut l));
    let id = p.list(&Filter::default()).unwrap()[3].id;
    assert_eq!(p.run(id).unwrap(), runs[3]);
    p.set_baseline("branch=main", id).unwrap();
    assert_eq!(p.baseline("branch=main").unwrap(), Some(id));
}

#[test]
fn postgres_migrates_an_older_store() {
    let Some(pg) = Pg::start() else { return };
    let mut old = Store::open_at(&pg.url, Some(1)).unwrap();
    assert_eq!(old.version().unwrap(), 1);
    old.add(&series(1, 2, 0.0, 0.0, 1)[0], "test").unwrap();
    drop(old);
    let mut s = Store::open(&pg.url).unwrap();
    assert_eq!(s.version().unwrap(), herd_store::schema::VERSION);
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
}
