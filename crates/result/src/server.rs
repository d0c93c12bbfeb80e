//! The server under test as herd watched it during the run (`--watch-pid`, `--watch-name`,
//! `--watch-prometheus`): part of the JSON contract, under the optional key `server`.
//!
//! Every sample carries `t`, seconds since the measurement started (negative during a warm-up),
//! at the moment it was read; CPU % and rates cover the interval that ends there. Readings fall
//! on whole seconds, so the sample at `t = 3` covers the same second as the timeline entry
//! `t = 2`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What herd saw of the server while loading it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Server {
    /// One entry per `--watch-pid` and `--watch-name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<WatchedProcess>,
    /// One entry per `--watch-prometheus` endpoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prometheus: Vec<Exporter>,
}

/// A process, or every process of a name summed, read from `/proc` once a second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchedProcess {
    /// The pid asked for, or the oldest process of the name (nginx's master).
    pub pid: u32,
    /// The name given with `--watch-name`; absent for `--watch-pid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Every process counted in some sample.
    pub pids: Vec<u32>,
    /// `--watch-name`: the roots of the separate process trees the name matched when the watch
    /// started; more than one means unrelated processes were summed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<u32>,
    /// `--watch-parent`: only processes in this pid's tree were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The first reading, before any interval; `None` when the process was already gone.
    pub start: Option<ProcessState>,
    pub samples: Vec<ProcessSample>,
    /// What happened to the processes, e.g. "pid 1235 exited".
    pub notes: Vec<Note>,
}

/// Memory, threads and descriptors at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessState {
    pub t: f64,
    /// Processes counted (more than one for a name).
    pub processes: u32,
    pub rss_bytes: u64,
    pub threads: u64,
    /// Open file descriptors; `None` when `/proc/PID/fd` was not readable (another user's).
    pub fds: Option<u64>,
}

/// One second (the interval ending at `t`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    pub t: f64,
    pub processes: u32,
    /// CPU time (user + system) over the interval, in percent of one core (200 = two cores).
    pub cpu_percent: f64,
    pub rss_bytes: u64,
    pub threads: u64,
    pub fds: Option<u64>,
    /// Context switches during the interval: waits (voluntary) and preemptions (involuntary).
    pub ctx_switches_voluntary: u64,
    pub ctx_switches_involuntary: u64,
}

/// Something worth knowing that happened at `t`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub t: f64,
    pub text: String,
}

/// A Prometheus endpoint scraped once a second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Exporter {
    pub url: String,
    /// The selectors, e.g. `node_cpu_seconds_total{mode="idle"}`.
    pub metrics: Vec<String>,
    /// Scrapes tried, failed ones included.
    pub scrapes: u64,
    /// Failed scrapes.
    pub gaps: Vec<Gap>,
    pub series: Vec<PromSeries>,
    /// Series matched beyond the number kept (counted per scrape).
    #[serde(default)]
    pub series_dropped: u64,
}

/// A failed scrape: no samples at `t`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    pub t: f64,
    pub error: String,
}

/// One series: a metric name and its labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromSeries {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub kind: SeriesKind,
    /// The values are per-second rates of a cumulative value (a counter, or a histogram's or
    /// summary's `_bucket`, `_sum`, `_count`), not the value itself.
    pub rate: bool,
    /// `[t, value]`; the value is `null` where the exporter wrote NaN or an infinity.
    pub samples: Vec<(f64, Option<f64>)>,
}

/// The `# TYPE` the endpoint gave the series' family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesKind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

impl Server {
    /// Adds what was watched in a later stretch of the same run (a stream's line): samples,
    /// notes and gaps are appended to the target they belong to, in the order watched.
    pub fn append(&mut self, later: Server) {
        for p in later.processes {
            match self.processes.iter_mut().find(|x| same_process(x, &p)) {
                Some(x) => {
                    x.samples.extend(p.samples);
                    x.notes.extend(p.notes);
                    for pid in p.pids {
                        if !x.pids.contains(&pid) {
                            x.pids.push(pid);
                        }
                    }
                    x.start = x.start.take().or(p.start);
                }
                None => self.processes.push(p),
            }
        }
        for e in later.prometheus {
            let Some(x) = self.prometheus.iter_mut().find(|x| x.url == e.url) else {
                self.prometheus.push(e);
                continue;
            };
            x.scrapes = x.scrapes.max(e.scrapes);
            x.series_dropped = x.series_dropped.max(e.series_dropped);
            x.gaps.extend(e.gaps);
            for s in e.series {
                match (x.series.iter_mut()).find(|y| y.name == s.name && y.labels == s.labels) {
                    Some(y) => y.samples.extend(s.samples),
                    None => x.series.push(s),
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.processes.is_empty() && self.prometheus.is_empty()
    }
}

fn same_process(a: &WatchedProcess, b: &WatchedProcess) -> bool {
    a.pid == b.pid && a.name == b.name
}

impl WatchedProcess {
    /// The samples of the measurement (after any warm-up).
    fn measured(&self) -> impl Iterator<Item = &ProcessSample> {
        self.samples.iter().filter(|s| s.t > 0.0)
    }

    /// Mean CPU % over the measurement, each second weighted by its length.
    pub fn cpu_mean(&self) -> Option<f64> {
        let mut before = self.start.as_ref().map(|s| s.t);
        let (mut busy, mut wall) = (0.0, 0.0);
        for s in &self.samples {
            if let (Some(b), true) = (before, s.t > 0.0) {
                let dt = s.t - b;
                busy += s.cpu_percent * dt;
                wall += dt;
            }
            before = Some(s.t);
        }
        (wall > 0.0).then(|| busy / wall)
    }

    pub fn cpu_peak(&self) -> Option<f64> {
        self.measured().map(|s| s.cpu_percent).reduce(f64::max)
    }

    /// The state when the measurement started: the last reading at or before `t = 0`.
    pub fn at_start(&self) -> Option<ProcessState> {
        let before = self
            .samples
            .iter()
            .rev()
            .find(|s| s.t <= 0.0)
            .map(|s| ProcessState {
                t: s.t,
                processes: s.processes,
                rss_bytes: s.rss_bytes,
                threads: s.threads,
                fds: s.fds,
            });
        before.or_else(|| self.start.clone())
    }

    /// The last sample.
    pub fn at_end(&self) -> Option<&ProcessSample> {
        self.samples.last()
    }

    /// RSS at the end minus RSS at the start of the measurement: over a long steady run, the
    /// leak signal.
    pub fn rss_growth(&self) -> Option<i64> {
        let start = self.at_start()?;
        let end = self.at_end()?;
        Some(end.rss_bytes as i64 - start.rss_bytes as i64)
    }

    pub fn fds_peak(&self) -> Option<u64> {
        self.measured().filter_map(|s| s.fds).max()
    }

    pub fn threads_peak(&self) -> Option<u64> {
        self.measured().map(|s| s.threads).max()
    }

    /// Context switches per second over the measurement: (voluntary, involuntary).
    pub fn ctx_switches_per_s(&self) -> Option<(f64, f64)> {
        let start = self.at_start()?.t.max(0.0);
        let end = self.measured().last()?.t;
        let span = end - start;
        if span <= 0.0 {
            return None;
        }
        let (v, i) = self.measured().fold((0, 0), |(v, i), s| {
            (v + s.ctx_switches_voluntary, i + s.ctx_switches_involuntary)
        });
        Some((v as f64 / span, i as f64 / span))
    }
}

/// Minimum, mean and maximum of a series over the measurement (finite values only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesStats {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub count: usize,
}

impl PromSeries {
    /// Over the measurement: a gauge read at `t = 0` counts, a rate ending there does not (it
    /// covers the second before).
    pub fn stats(&self) -> Option<SeriesStats> {
        let values: Vec<f64> = self
            .samples
            .iter()
            .filter(|(t, _)| *t > 0.0 || (*t == 0.0 && !self.rate))
            .filter_map(|(_, v)| *v)
            .filter(|v| v.is_finite())
            .collect();
        if values.is_empty() {
            return None;
        }
        Some(SeriesStats {
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            count: values.len(),
        })
    }

    /// `name{label="value",...}`, as PromQL writes a series.
    pub fn display_name(&self) -> String {
        if self.labels.is_empty() {
            return self.name.clone();
        }
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        format!("{}{{{}}}", self.name, labels.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, cpu: f64, rss: u64) -> ProcessSample {
        ProcessSample {
            t,
            processes: 1,
            cpu_percent: cpu,
            rss_bytes: rss,
            threads: 4,
            fds: Some(10 + t as u64),
            ctx_switches_voluntary: 100,
            ctx_switches_involuntary: 10,
        }
    }

    fn watched(start_t: f64, samples: Vec<ProcessSample>) -> WatchedProcess {
        WatchedProcess {
            pid: 42,
            trees: Vec::new(),
            parent: None,
            start: Some(ProcessState {
                t: start_t,
                processes: 1,
                rss_bytes: 1_000,
                threads: 4,
                fds: Some(9),
            }),
            samples,
            ..WatchedProcess::default()
        }
    }

    #[test]
    fn summaries_cover_the_measurement_only() {
        // A 2 s warm-up (samples at -1 and 0), then three seconds, the last one half long.
        let p = watched(
            -2.0,
            vec![
                sample(-1.0, 90.0, 5_000),
                sample(0.0, 90.0, 6_000),
                sample(1.0, 10.0, 6_500),
                sample(2.0, 30.0, 7_000),
                sample(2.5, 60.0, 9_000),
            ],
        );
        // (10 * 1 + 30 * 1 + 60 * 0.5) / 2.5
        assert_eq!(p.cpu_mean(), Some(28.0));
        assert_eq!(p.cpu_peak(), Some(60.0));
        assert_eq!(
            p.at_start().unwrap().rss_bytes,
            6_000,
            "RSS when measuring began"
        );
        assert_eq!(p.rss_growth(), Some(3_000));
        assert_eq!(p.fds_peak(), Some(12));
        assert_eq!(p.ctx_switches_per_s(), Some((300.0 / 2.5, 30.0 / 2.5)));
    }

    #[test]
    fn without_a_warmup_the_first_reading_is_the_start() {
        let p = watched(-0.004, vec![sample(1.0, 50.0, 4_000)]);
        assert_eq!(p.rss_growth(), Some(3_000));
        let mean = p.cpu_mean().unwrap();
        assert!((mean - 50.0).abs() < 1e-9, "{mean}");
        let none = watched(-0.004, vec![]);
        assert_eq!(
            (none.cpu_mean(), none.cpu_peak(), none.rss_growth()),
            (None, None, None)
        );
    }

    #[test]
    fn series_stats_skip_gaps_and_non_finite_values() {
        let s = PromSeries {
            name: "node_cpu_seconds_total".into(),
            labels: [("cpu", "0"), ("mode", "idle")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            kind: SeriesKind::Counter,
            rate: true,
            samples: vec![
                (0.0, Some(100.0)),
                (1.0, Some(0.5)),
                (2.0, None),
                (3.0, Some(1.5)),
            ],
        };
        let st = s.stats().unwrap();
        assert_eq!((st.min, st.mean, st.max, st.count), (0.5, 1.0, 1.5, 2));
        let gauge = PromSeries {
            rate: false,
            ..s.clone()
        };
        assert_eq!(
            gauge.stats().unwrap().max,
            100.0,
            "a gauge read at t = 0 counts"
        );
        assert_eq!(
            s.display_name(),
            r#"node_cpu_seconds_total{cpu="0",mode="idle"}"#
        );
    }
}
