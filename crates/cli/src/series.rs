//! What `herd sweep` and `herd capacity` share on the CLI's side: the request flags, the list of
//! levels, the targets' names, the check of output paths, and the [`Runs`] each target becomes.
//!
//! The loops themselves are herd-series': they ask a [`Runs`] (herd-run's prepared run) for "a
//! run at rate R" or "a run with N users" and never look inside; for a URL a level counts
//! requests, for a workload scenario iterations.

use crate::exit::Exit;
use clap::Args;
use herd_result::RunResult;
pub use herd_run::{Length, Level, Runs};
use herd_run::{LoadFlags, RunSpec, Source};
use std::time::Duration;

/// A URL or a workload file, by the rule `herd run` uses, checked at `level` and `length`
/// (every problem before anything is sent); a shard plays its share of every run.
pub fn runs_for(
    target: &str,
    a: &SeriesArgs,
    level: Level,
    length: Length,
    shard: Option<herd_run::shard::ShardRun>,
) -> Result<Box<dyn Runs>, Exit> {
    let source = match herd_run::workload_path(target) {
        Some(path) => Source::Workload { path, target: None },
        None => Source::Url {
            url: target.to_owned(),
        },
    };
    let load = LoadFlags {
        connections: a.max_connections,
        calls_per_conn: a.calls_per_conn,
        timeout: a.timeout,
        warmup: a.warmup,
        threads: a.threads,
        arrivals: a.arrivals,
        seed: a.seed,
        ..LoadFlags::default()
    };
    let spec = RunSpec {
        level: Some(level),
        length: Some(length),
        shard,
        ..a.reach.spec(source, &a.request, load)
    };
    Ok(Box::new(spec.prepare()?))
}

/// What a series feeds beside its table as each run goes and ends: each run's outputs (the
/// progress line, files numbered by run, metrics labelled by step, the series' page), made as
/// the run begins and finished as it ends, then the run kept in the store (`--store`) as a run
/// of its own, labelled with its step. The sweep's table and the capacity search's have one
/// each.
pub struct StepOutputs {
    pub outputs: herd_live::Outputs,
    keep: crate::store_cmd::StoreFlags,
    /// `sweep` or `capacity`: the `series` label of each stored run.
    series: &'static str,
    current: Option<herd_live::Sinks>,
    runs: usize,
    problems: Vec<String>,
}

impl StepOutputs {
    pub fn new(
        outputs: herd_live::Outputs,
        given: &crate::outputs::OutputArgs,
        series: &'static str,
    ) -> StepOutputs {
        StepOutputs {
            outputs,
            keep: given.keep.clone(),
            series,
            current: None,
            runs: 0,
            problems: Vec::new(),
        }
    }

    /// A run begins: its outputs take its stream.
    pub fn begin(&mut self) -> &mut dyn herd_run::Observer {
        self.runs += 1;
        self.current.insert(self.outputs.for_step(self.runs))
    }

    /// A run at `level` ended: it is labelled with its step, its outputs finish (adding to
    /// `run` what they wrote), the store keeps it, and the page shows its `row` (made only when
    /// there is a page).
    pub fn ended(
        &mut self,
        run: &mut RunResult,
        level: f64,
        row: impl FnOnce() -> herd_live::dashboard::LevelRow,
    ) {
        crate::store_cmd::label_step(&self.keep, run, self.series, self.runs, level);
        if let Some(mut sinks) = self.current.take() {
            let problems = sinks.finish(run);
            self.problems
                .extend(problems.iter().map(|e| format!("cannot write {e}")));
        }
        if let Err(e) = crate::store_cmd::keep(&self.keep, run) {
            self.problems.push(e.message);
        }
        self.outputs.level(row);
    }

    /// The series ended: its page offers `report`; what could not be written, for the end.
    pub fn end(&mut self, report: impl FnOnce() -> String, interrupted: bool) -> Option<Exit> {
        self.outputs.end_series(report, interrupted);
        let problems = std::mem::take(&mut self.problems);
        (!problems.is_empty()).then(|| Exit::bad_input(problems.join("\n")))
    }
}

/// The flags of `herd run` that a series keeps the same at every level: the request, how the
/// target is reached, and the load besides the level and the length.
#[derive(Args, Debug, Clone)]
pub struct SeriesArgs {
    #[command(flatten)]
    pub request: crate::args::RequestArgs,

    /// Per-request deadline, connect included (autobench's --timeout); wins over a workload
    /// file's `defaults: timeout` [default: 10s]
    #[arg(long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,

    /// Requests per connection before it is replaced (httperf's --num-calls) [default: keep-alive]
    #[arg(long = "calls-per-conn", visible_alias = "num-calls", value_name = "K", value_parser = crate::values::count::<u64>)]
    pub calls_per_conn: Option<u64>,

    /// Open model: the most connections a run may open [default: 1000]
    #[arg(long = "max-connections", value_name = "N", value_parser = crate::values::count::<u64>)]
    pub max_connections: Option<u64>,

    /// Run this long before each measurement, excluded from it [default: 0s]
    #[arg(long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub warmup: Option<Duration>,

    /// Worker threads, each with its own event loop [default: one per core]
    #[arg(short = 't', long, value_name = "N", value_parser = crate::values::count::<usize>)]
    pub threads: Option<usize>,

    /// Open model: how each step's arrivals are spaced around its rate: constant, poisson or
    /// uniform, as `herd run --arrivals` [default: constant]
    #[arg(long, value_name = "PROCESS", value_parser = crate::values::arrivals)]
    pub arrivals: Option<herd_engine::Process>,

    /// What poisson or uniform arrivals are drawn from, as `herd run --seed` [default: 1]
    #[arg(long, value_name = "N", value_parser = crate::values::count::<u64>)]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub reach: crate::args::ReachArgs,
}

/// Parses levels: `20:600:20` (low:high:step, both ends included) or a list `1,5,10,100`.
pub fn parse_levels(spec: &str) -> Result<Vec<f64>, String> {
    let bad = |why: &str| {
        format!("`{spec}` {why}: write low:high:step (20:600:20) or a list (100,200,400)")
    };
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| bad(&format!("has `{}`, not a number above 0", s.trim())))
    };
    let levels = if spec.contains(':') {
        let parts: Vec<&str> = spec.split(':').collect();
        let [low, high, step] = parts[..] else {
            return Err(bad("needs three parts"));
        };
        let (low, high, step) = (num(low)?, num(high)?, num(step)?);
        if high < low {
            return Err(bad("goes down"));
        }
        let n = ((high - low) / step + 1e-9).floor() as u64 + 1;
        if n > 10_000 {
            return Err(bad(&format!("has {n} steps, more than 10,000")));
        }
        (0..n).map(|i| low + step * i as f64).collect()
    } else {
        spec.split(',').map(num).collect::<Result<Vec<f64>, _>>()?
    };
    if levels.is_empty() {
        return Err(bad("is empty"));
    }
    Ok(levels)
}

/// A target as given: `NAME=URL` or a bare URL.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedTarget {
    pub name: String,
    pub url: String,
    /// `NAME=` was given: the name is the user's, not the URL's host:port.
    pub named: bool,
}

/// Names the targets: a `NAME=` prefix wins; otherwise the URL's host:port, made unique with a
/// number when two targets share it. Names become column suffixes and legend labels, so they
/// keep only letters, digits and `.-:`.
pub fn name_targets(given: &[String]) -> Vec<NamedTarget> {
    let mut out: Vec<NamedTarget> = Vec::new();
    for g in given {
        let (name, url, named) = match g.split_once('=') {
            Some((n, u)) if !n.contains('/') && !n.is_empty() => (n.to_owned(), u.to_owned(), true),
            _ => match herd_run::workload_path(g) {
                // A workload file is named by its file name, without the folders.
                Some(file) => (
                    file.file_name()
                        .map_or(g.clone(), |f| f.to_string_lossy().into_owned()),
                    g.clone(),
                    false,
                ),
                None => (authority(g).to_owned(), g.clone(), false),
            },
        };
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || ".-:_".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let mut unique = clean.clone();
        let mut n = 2;
        while out.iter().any(|t| t.name == unique) {
            unique = format!("{clean}-{n}");
            n += 1;
        }
        out.push(NamedTarget {
            name: unique,
            url,
            named,
        });
    }
    out
}

fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_people_write() {
        let table: [(&str, &[f64]); 5] = [
            ("20:100:20", &[20.0, 40.0, 60.0, 80.0, 100.0]),
            ("20:90:20", &[20.0, 40.0, 60.0, 80.0]),
            ("1,5,10,100,1000", &[1.0, 5.0, 10.0, 100.0, 1000.0]),
            ("0.5:1.5:0.5", &[0.5, 1.0, 1.5]),
            ("400", &[400.0]),
        ];
        for (spec, want) in table {
            assert_eq!(parse_levels(spec).unwrap(), want, "{spec}");
        }
        for bad in ["600:20:20", "1:2", "a,b", "0,5", "1:1000000:1", ""] {
            let e = parse_levels(bad).unwrap_err();
            assert!(e.contains("low:high:step"), "{bad}: {e}");
        }
    }

    #[test]
    fn targets_are_named_for_columns_and_legends() {
        let given = [
            "apache=http://10.0.0.1/".to_owned(),
            "http://127.0.0.1:8080/a".to_owned(),
            "http://127.0.0.1:8080/b?x=1".to_owned(),
            "my site=http://h/".to_owned(),
        ];
        let names: Vec<String> = name_targets(&given).into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            vec!["apache", "127.0.0.1:8080", "127.0.0.1:8080-2", "my-site"]
        );
        assert_eq!(name_targets(&given)[0].url, "http://10.0.0.1/");
        assert_eq!(name_targets(&given)[2].url, "http://127.0.0.1:8080/b?x=1");
    }
}
