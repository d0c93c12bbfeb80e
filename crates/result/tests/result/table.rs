//! autobench's TSV: seed 001's sample read as autobench wrote it and as the web page printed it,
//! and herd's own tables written with autobench's exact column names.

use herd_result::knee::{knee, shape, Shape};
use herd_result::sweep::{read_table, write_table, Extra, Row, Separator, Table, TableStep};
use herd_result::{GeneratorVerdict, Model};

const AUTOBENCH: &str = include_str!("../fixtures/autobench_seed001.tsv");
const AS_PRINTED: &str = include_str!("../fixtures/autobench_seed001_as_printed.txt");

#[test]
fn seed_001s_autobench_sample_reads_as_one_target_with_nineteen_steps() {
    for (text, origin) in [(AUTOBENCH, "tsv"), (AS_PRINTED, "printed")] {
        let t = read_table(text, origin, "out").unwrap();
        assert_eq!(t.model, Model::Open, "{origin}");
        assert_eq!(t.targets, vec!["testhost"], "{origin}");
        assert_eq!(t.steps.len(), 19, "{origin}");
        let first = &t.steps[0];
        assert_eq!(first.level, 200.0);
        assert_eq!(
            first.rows[0],
            Row {
                req_rate: 199.3,
                con_rate: 19.9,
                min_rep_rate: 182.0,
                avg_rep_rate: 199.7,
                max_rep_rate: 200.6,
                stddev_rep_rate: 2.6,
                resp_time: 90.0,
                net_io: 243.7,
                errors: 0.0,
                extra: None,
            }
        );
        let last = &t.steps[18];
        assert_eq!(last.level, 2000.0);
        assert!((last.rows[0].errors - 0.53740779768177).abs() < 1e-12);
    }
}

#[test]
fn seed_001s_apache_saturates_between_1800_and_1900_requests_per_second() {
    let t = read_table(AUTOBENCH, "tsv", "out").unwrap();
    let points: Vec<(f64, f64)> = t
        .steps
        .iter()
        .map(|s| {
            let r = &s.rows[0];
            (s.level, r.avg_rep_rate * (1.0 - r.errors / 100.0))
        })
        .collect();
    // Kept up within 10% to 1,800 req/s (1,656 good/s), behind at 1,900 (1,645): the bracket a
    // reader of the graph would draw, stable against a few percent of noise.
    let got = shape(Model::Open, &points);
    assert!(
        matches!(got, Some(Shape::Knee { below: 1800.0, at: 1900.0, throughput })
            if (throughput - 1655.9).abs() < 0.1),
        "{got:?}"
    );
    assert_eq!(knee(Model::Open, &points).unwrap().level, 1900.0);
}

fn herd_row(rate: f64, generator: GeneratorVerdict) -> Row {
    Row {
        req_rate: rate,
        con_rate: rate / 10.0,
        min_rep_rate: rate * 0.9,
        avg_rep_rate: rate,
        max_rep_rate: rate + 10.0,
        stddev_rep_rate: 2.5,
        resp_time: 1.25,
        net_io: 12.5,
        errors: 0.5,
        extra: Some(Extra {
            p50: 1.0,
            p95: 2.0,
            p99: 3.0,
            p999: 4.5,
            ok: 990,
            failed: 10,
            generator,
        }),
    }
}

fn two_targets() -> Table {
    Table {
        model: Model::Open,
        targets: vec!["apache".into(), "iis".into()],
        named: true,
        steps: [100.0, 200.0]
            .iter()
            .map(|&level| TableStep {
                level,
                rows: vec![
                    herd_row(level, GeneratorVerdict::Ok),
                    herd_row(level, GeneratorVerdict::GeneratorLimited),
                ],
            })
            .collect(),
    }
}

#[test]
fn several_targets_get_autobench_suffixes_then_herds_columns() {
    let tsv = write_table(&two_targets(), Separator::Tab);
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    let mut want = vec!["dem_req_rate".to_owned()];
    for t in ["apache", "iis"] {
        for c in [
            "req_rate",
            "con_rate",
            "min_rep_rate",
            "avg_rep_rate",
            "max_rep_rate",
            "stddev_rep_rate",
            "resp_time",
            "net_io",
            "errors",
        ] {
            want.push(format!("{c}_{t}"));
        }
    }
    for t in ["apache", "iis"] {
        for c in [
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "p99.9_ms",
            "ok",
            "failed",
            "generator",
        ] {
            want.push(format!("{c}_{t}"));
        }
    }
    assert_eq!(header, want);
    let second = tsv.lines().nth(1).unwrap();
    assert!(
        second.starts_with("100\t100\t10\t90\t100\t110\t2.5\t1.25\t12.5\t0.5\t"),
        "{second}"
    );
    assert!(
        second.ends_with("\tok\t1\t2\t3\t4.5\t990\t10\tgenerator-limited"),
        "{second}"
    );
}

#[test]
fn one_unnamed_target_has_bare_column_names() {
    let mut t = two_targets();
    t.targets.truncate(1);
    t.named = false;
    for s in &mut t.steps {
        s.rows.truncate(1);
    }
    let csv = write_table(&t, Separator::Comma);
    assert_eq!(
        csv.lines().next().unwrap(),
        "dem_req_rate,req_rate,con_rate,min_rep_rate,avg_rep_rate,max_rep_rate,stddev_rep_rate,\
         resp_time,net_io,errors,p50_ms,p95_ms,p99_ms,p99.9_ms,ok,failed,generator"
    );
    let back = read_table(&csv, "csv", "mysite").unwrap();
    assert_eq!(back.targets, vec!["mysite"]);
}

#[test]
fn herds_tables_read_back_as_written() {
    let t = two_targets();
    for sep in [Separator::Tab, Separator::Comma] {
        let text = write_table(&t, sep);
        let back = read_table(&text, "herd", "x").unwrap();
        assert_eq!(back, t, "{sep:?}");
    }
    let mut closed = t.clone();
    closed.model = Model::Closed;
    let text = write_table(&closed, Separator::Tab);
    assert!(text.starts_with("users\t"));
    assert_eq!(read_table(&text, "c", "x").unwrap().model, Model::Closed);
}

#[test]
fn unreadable_tables_say_where_and_why() {
    let table = [
        ("", "is empty"),
        ("latency p99\n1 2\n", "first column is `latency`"),
        ("dem_req_rate req_rate\n1 2\n", "has no column con_rate"),
        (
            "dem_req_rate req_rate con_rate min_rep_rate avg_rep_rate max_rep_rate stddev_rep_rate resp_time net_io errors\n1 2 3\n",
            "line 2: 3 fields, but the header has 10 columns",
        ),
        (
            "dem_req_rate req_rate con_rate min_rep_rate avg_rep_rate max_rep_rate stddev_rep_rate resp_time net_io errors\n1 2 3 4 5 6 7 8 9 x\n",
            "`x` is not a number",
        ),
        // Negative rates and errors past 100% are refused, naming the line and the column.
        (
            "dem_req_rate req_rate_a con_rate_a min_rep_rate_a avg_rep_rate_a max_rep_rate_a stddev_rep_rate_a resp_time_a net_io_a errors_a\n1 2 3 4 5 6 7 8 9 0\n2 2 3 4 -5 6 7 8 9 0\n",
            "line 3: `avg_rep_rate_a` is -5: a measurement cannot be negative",
        ),
        (
            "dem_req_rate req_rate con_rate min_rep_rate avg_rep_rate max_rep_rate stddev_rep_rate resp_time net_io errors\n1 2 3 4 5 6 7 8 9 500\n",
            "line 2: `errors` is 500: a share of requests cannot pass 100%",
        ),
        (
            "users req_rate con_rate min_rep_rate avg_rep_rate max_rep_rate stddev_rep_rate resp_time net_io errors\n-1 2 3 4 5 6 7 8 9 0\n",
            "line 2: `users` is -1: a measurement cannot be negative",
        ),
    ];
    for (text, want) in table {
        let e = read_table(text, "f.tsv", "x").unwrap_err().to_string();
        assert!(e.starts_with("f.tsv"), "{e}");
        assert!(e.contains(want), "{want}: {e}");
    }
}

/// autobench's columns for one host, from seed 001's sample file, in order.
fn autobench_header() -> Vec<&'static str> {
    AUTOBENCH.lines().next().unwrap().split('\t').collect()
}

fn one_target(named: bool) -> Table {
    Table {
        model: Model::Open,
        targets: vec!["testhost".into()],
        named,
        steps: vec![TableStep {
            level: 200.0,
            rows: vec![herd_row(200.0, GeneratorVerdict::Ok)],
        }],
    }
}

#[test]
fn one_named_target_gets_autobenchs_suffixed_columns_and_reads_back() {
    let tsv = write_table(&one_target(true), Separator::Tab);
    let header: Vec<&str> = tsv.lines().next().unwrap().split('\t').collect();
    // autobench's ten columns exactly (`req_rate_testhost`, ...), then herd's own, suffixed too.
    assert_eq!(header[..10], autobench_header()[..]);
    assert_eq!(header[10], "p50_ms_testhost");
    assert_eq!(header.len(), 10 + 7);
    let back = read_table(&tsv, "tsv", "default").unwrap();
    assert_eq!(back, one_target(true));
}
