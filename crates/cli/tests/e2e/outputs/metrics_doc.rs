//! docs/outputs.md's table of Prometheus series against what `herd run --metrics-listen` serves:
//! every series it names is served, with the labels it names, and every label value it quotes
//! is one the binary uses.

use crate::common::{free_port, get, mock, one_at_a_time, shop_workload, Herd, TempDir};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Each series the page serves: its label names and the values each label took.
type Served = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn served(text: &str) -> Served {
    let mut out = Served::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let series = line.rsplit_once(' ').map_or(line, |(s, _)| s);
        let (name, labels) = series.split_once('{').unwrap_or((series, ""));
        let entry = out.entry(name.to_owned()).or_default();
        for pair in labels
            .trim_end_matches('}')
            .split("\",")
            .filter(|p| !p.is_empty())
        {
            let (k, v) = pair.split_once('=').expect("label=value");
            entry
                .entry(k.to_owned())
                .or_default()
                .insert(v.trim_matches('"').to_owned());
        }
    }
    out
}

/// A row of the table: each series it names with its labels, and the words it quotes.
type Row = (Vec<(String, Vec<String>)>, Vec<String>);

/// The rows of the `--metrics-listen` table: the series cell's `name{labels}` entries and the
/// words the description quotes.
fn documented() -> Vec<Row> {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/outputs.md"
    ))
    .expect("docs/outputs.md");
    let section = doc
        .split("## `--metrics-listen ADDR`")
        .nth(1)
        .expect("the --metrics-listen section")
        .split("\n## ")
        .next()
        .unwrap();
    let quoted = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    section
        .lines()
        .filter(|l| l.starts_with("| `herd_"))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let series = quoted(cells[0])
                .into_iter()
                .map(|s| match s.split_once('{') {
                    Some((name, labels)) => (
                        name.to_owned(),
                        labels
                            .trim_end_matches('}')
                            .split(',')
                            .map(str::to_owned)
                            .collect(),
                    ),
                    None => (s, Vec::new()),
                })
                .collect();
            (series, quoted(cells.last().copied().unwrap_or("")))
        })
        .collect()
}

#[test]
fn every_series_and_label_outputs_md_names_is_one_herd_serves() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("metrics-doc");
    let file = shop_workload(&dir, server.local_addr(), "users: 2, duration: 2s");
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let me = std::process::id().to_string();
    let child = Herd::new(&["run", file.to_str().unwrap(), "-t", "1", "-q"])
        .args(&["--metrics-listen", &metrics.to_string(), "--watch-pid", &me])
        .spawn();
    // The last scrape, once the run is over: herd waits for it before it exits.
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        assert!(
            Instant::now() < deadline,
            "the run never finished on /metrics"
        );
        if std::net::TcpStream::connect(metrics).is_ok() {
            let page = get(metrics, "/metrics");
            if page
                .lines()
                .any(|l| l.starts_with("herd_run_finished{") && l.ends_with(" 1"))
            {
                break page;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let served = served(page.split_once("\r\n\r\n").map_or("", |(_, b)| b));
    let rows = documented();
    assert!(rows.len() >= 15, "the table was not found: {rows:?}");
    for (series, quoted) in rows {
        for (name, labels) in &series {
            // A histogram is served as its _bucket, _sum and _count series.
            let Some(got) = served.get(name).or(served.get(&format!("{name}_bucket"))) else {
                panic!(
                    "outputs.md names {name}, which herd does not serve: {:?}",
                    served.keys()
                )
            };
            for l in ["run_id", "shard"]
                .iter()
                .map(|s| s.to_string())
                .chain(labels.clone())
            {
                assert!(
                    got.contains_key(&l),
                    "{name}: no label {l} (has {:?})",
                    got.keys()
                );
            }
        }
        // A word the row quotes is a series, a label, or a value one of its labels took.
        for word in quoted {
            if word.starts_with("--") || word.contains(' ') {
                continue;
            }
            let known = served.contains_key(&word)
                || series.iter().any(|(name, labels)| {
                    let got = served.get(name).or(served.get(&format!("{name}_bucket")));
                    labels.contains(&word)
                        || got.is_some_and(|g| g.values().any(|v| v.contains(&word)))
                });
            assert!(
                known,
                "outputs.md quotes `{word}` for {series:?}: herd serves no such value"
            );
        }
    }
}
