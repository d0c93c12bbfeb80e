//! Scraping one Prometheus endpoint each second and keeping the selected series: counters as
//! per-second rates, gauges as values. A failed scrape is a gap with its error, never a stop.

use crate::exposition::{self, Exposition, MetricKind};
use crate::kept::{Point, KEPT};
use crate::scrape::{self, HttpUrl};
use crate::{MonitorError, Selector};
use herd_spill::Spill;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Series kept per endpoint: a selector such as a bare `node_cpu_seconds_total` on a 64-core
/// machine matches 512 series; past this many the rest are counted, not kept.
pub const MAX_SERIES: usize = 200;

/// Watched when no `--watch-metric` is given: the process metrics every Prometheus client
/// library exports about its own process, and node_exporter's load and free memory. Those the
/// endpoint does not have are left out quietly.
pub const DEFAULT_METRICS: [&str; 5] = [
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_open_fds",
    "node_load1",
    "node_memory_MemAvailable_bytes",
];

/// One series on the run's time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub kind: MetricKind,
    /// The samples are per-second rates of a cumulative value, not the value itself.
    pub rate: bool,
    /// `(when it was scraped, value)`; the value may be NaN or infinite, as exporters write it.
    pub samples: Vec<(Instant, f64)>,
    previous: Option<(Instant, f64)>,
}

impl Series {
    pub(crate) fn new(
        name: &str,
        labels: &BTreeMap<String, String>,
        kind: MetricKind,
        rate: bool,
    ) -> Self {
        Series {
            name: name.to_owned(),
            labels: labels.clone(),
            kind,
            rate,
            samples: Vec::new(),
            previous: None,
        }
    }

    /// Adds a scraped value: a gauge as it is, a counter as its rate since the last scrape.
    pub fn observe(&mut self, at: Instant, value: f64) {
        if !self.rate {
            self.samples.push((at, value));
            return;
        }
        if let Some((before, last)) = self.previous {
            let dt = at.saturating_duration_since(before).as_secs_f64();
            if dt > 0.0 && value.is_finite() && last.is_finite() {
                // A counter that went down was reset (the process restarted): it counted from
                // zero since, as Prometheus's rate() takes it.
                let increase = if value >= last { value - last } else { value };
                self.samples.push((at, increase / dt));
            }
        }
        self.previous = Some((at, value));
    }
}

/// A failed scrape: when, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    pub at: Instant,
    pub error: String,
}

/// Scrapes one endpoint. Not a thread: [`crate::Watcher`] calls it once a second.
#[derive(Debug)]
pub struct ExporterSampler {
    url: HttpUrl,
    selectors: Vec<Selector>,
    timeout: Duration,
    series: BTreeMap<(String, BTreeMap<String, String>), Series>,
    series_dropped: usize,
    scrapes: u64,
    gaps: Vec<Gap>,
    /// Each series' older points, out of memory until the watch stops ([`crate::kept`]).
    spilled: BTreeMap<(String, BTreeMap<String, String>), Spill<Point>>,
}

impl ExporterSampler {
    /// Checks the endpoint with one scrape now: it must answer in the text format and have
    /// every selected metric (or, with no selection, at least one of [`DEFAULT_METRICS`]).
    pub fn new(url: &str, metrics: &[Selector], timeout: Duration) -> Result<Self, MonitorError> {
        let bad_url = |reason: String| MonitorError::BadUrl(reason);
        let url = HttpUrl::parse(url).map_err(bad_url)?;
        let unreachable = |reason: String| MonitorError::Unreachable {
            url: url.url.clone(),
            reason,
        };
        let page = scrape::fetch(&url, timeout).map_err(|e| unreachable(e.to_string()))?;
        let expo = exposition::parse(&page).map_err(|e| {
            unreachable(format!(
                "the page is not in the Prometheus text format ({e}); is this the /metrics path?"
            ))
        })?;
        let selectors = if metrics.is_empty() {
            let found: Vec<Selector> = DEFAULT_METRICS
                .iter()
                .map(|m| Selector::parse(m).expect("the defaults parse"))
                .filter(|s| expo.samples.iter().any(|x| s.matches(x)))
                .collect();
            if found.is_empty() {
                return Err(MonitorError::NoMetric {
                    url: url.url.clone(),
                    selector: DEFAULT_METRICS.join(", "),
                    hint: hint(&expo, "process_"),
                });
            }
            found
        } else {
            for s in metrics {
                if !expo.samples.iter().any(|x| s.matches(x)) {
                    return Err(MonitorError::NoMetric {
                        url: url.url.clone(),
                        selector: s.to_string(),
                        hint: hint(&expo, &s.name),
                    });
                }
            }
            metrics.to_vec()
        };
        Ok(ExporterSampler {
            url,
            selectors,
            timeout,
            series: BTreeMap::new(),
            series_dropped: 0,
            scrapes: 0,
            gaps: Vec::new(),
            spilled: BTreeMap::new(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url.url
    }

    pub fn selectors(&self) -> &[Selector] {
        &self.selectors
    }

    /// Scrapes once; the values are taken as of when the page arrived.
    pub fn scrape(&mut self) {
        self.scrapes += 1;
        let page = scrape::fetch(&self.url, self.timeout);
        let at = Instant::now();
        match page
            .map_err(|e| e.to_string())
            .and_then(|p| exposition::parse(&p).map_err(|e| format!("not in the text format: {e}")))
        {
            Ok(expo) => self.keep(at, &expo),
            Err(error) => self.gaps.push(Gap { at, error }),
        }
    }

    /// Adds the selected samples of one scrape.
    pub fn keep(&mut self, at: Instant, expo: &Exposition) {
        for sample in &expo.samples {
            if !self.selectors.iter().any(|s| s.matches(sample)) {
                continue;
            }
            let key = (sample.name.clone(), sample.labels.clone());
            if !self.series.contains_key(&key) {
                if self.series.len() >= MAX_SERIES {
                    self.series_dropped += 1;
                    continue;
                }
                let (kind, rate) = expo.kind_of(&sample.name);
                let series = Series::new(&sample.name, &sample.labels, kind, rate);
                self.series.insert(key.clone(), series);
            }
            if let Some(series) = self.series.get_mut(&key) {
                series.observe(at, sample.value);
                if series.samples.len() >= 2 * KEPT {
                    let spill = self.spilled.entry(key).or_default();
                    let old = series.samples.len() - KEPT;
                    for (at, v) in series.samples.drain(..old) {
                        spill.push(&Point(at, v));
                    }
                }
            }
        }
    }

    /// Puts each series' spilled points back in front of those in memory: [`Self::series`]
    /// then holds every point of the watch.
    pub(crate) fn read_back(&mut self) {
        for (key, spill) in std::mem::take(&mut self.spilled) {
            let Some(series) = self.series.get_mut(&key) else {
                continue;
            };
            match spill.read_back() {
                Ok(old) => {
                    let new = std::mem::take(&mut series.samples);
                    series.samples = old.into_iter().map(|p| (p.0, p.1)).collect();
                    series.samples.extend(new);
                }
                Err(e) => self.gaps.push(Gap {
                    at: Instant::now(),
                    error: format!("the first points of {} are missing: {e}", key.0),
                }),
            }
        }
    }

    /// Scrapes tried, failed ones included.
    pub fn scrapes(&self) -> u64 {
        self.scrapes
    }

    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// The series kept, sorted by name then labels.
    pub fn series(&self) -> impl Iterator<Item = &Series> {
        self.series.values()
    }

    /// Series seen beyond [`MAX_SERIES`] (counted once per scrape).
    pub fn series_dropped(&self) -> usize {
        self.series_dropped
    }
}

/// Up to five metric names of the page that look like what was asked for.
fn hint(expo: &Exposition, wanted: &str) -> String {
    let names: BTreeSet<&str> = expo.samples.iter().map(|s| s.name.as_str()).collect();
    let stem = wanted.split('_').next().unwrap_or(wanted);
    let close: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with(stem))
        .take(5)
        .collect();
    if close.is_empty() {
        format!("the page has {} metrics, none like it", names.len())
    } else {
        format!(
            "the page has {} metrics, e.g. {}",
            names.len(),
            close.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn counters_become_rates_and_gauges_stay_values() {
        let t0 = Instant::now();
        let mut c = Series::new("c_total", &BTreeMap::new(), MetricKind::Counter, true);
        for (ms, v) in [
            (0, 10.0),
            (1000, 20.0),
            (1500, 30.0),
            (2500, 5.0),
            (3500, 5.0),
        ] {
            c.observe(at(t0, ms), v);
        }
        let rates: Vec<f64> = c.samples.iter().map(|s| s.1).collect();
        // first scrape: no rate yet; 10/1 s; 10/0.5 s; reset to 5 (5 counted since); flat
        assert_eq!(rates, [10.0, 20.0, 5.0, 0.0]);
        let mut g = Series::new("g", &BTreeMap::new(), MetricKind::Gauge, false);
        g.observe(t0, 3.0);
        g.observe(at(t0, 1000), f64::NAN);
        assert_eq!(g.samples.len(), 2);
        assert!(g.samples[1].1.is_nan());
    }

    /// A sampler of a node_exporter on loopback that has not scraped yet.
    fn sampler(selectors: &[&str]) -> ExporterSampler {
        ExporterSampler {
            url: HttpUrl::parse("http://127.0.0.1:9100/metrics").unwrap(),
            selectors: selectors
                .iter()
                .map(|s| Selector::parse(s).unwrap())
                .collect(),
            timeout: Duration::from_secs(1),
            series: BTreeMap::new(),
            series_dropped: 0,
            scrapes: 0,
            gaps: Vec::new(),
            spilled: BTreeMap::new(),
        }
    }

    #[test]
    fn a_day_long_watch_keeps_its_last_points_in_memory_and_every_point_at_the_end() {
        let mut s = sampler(&["node_load1"]);
        let t0 = Instant::now();
        for i in 0..2_000u64 {
            let page = format!("# TYPE node_load1 gauge\nnode_load1 {}\n", i as f64 / 4.0);
            s.keep(at(t0, i * 1000), &exposition::parse(&page).unwrap());
            let held = s.series().map(|x| x.samples.len()).sum::<usize>();
            assert!(held < 2 * KEPT, "{held} points in memory");
        }
        s.read_back();
        let series: Vec<&Series> = s.series().collect();
        assert_eq!(series.len(), 1);
        let want: Vec<(Instant, f64)> = (0..2_000u64)
            .map(|i| (at(t0, i * 1000), i as f64 / 4.0))
            .collect();
        assert_eq!(series[0].samples, want);
        assert!(s.gaps.is_empty());
    }

    #[test]
    fn selected_series_are_kept_with_their_kind() {
        let page = "# TYPE node_cpu_seconds_total counter\n\
            node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 100\n\
            node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 50\n\
            node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} 200\n\
            # TYPE node_load1 gauge\nnode_load1 0.5\n";
        let expo = exposition::parse(page).unwrap();
        let mut s = sampler(&["node_cpu_seconds_total{mode=\"idle\"}", "node_load1"]);
        let t0 = Instant::now();
        s.keep(t0, &expo);
        let later = exposition::parse(&page.replace("} 100", "} 101")).unwrap();
        s.keep(at(t0, 1000), &later);
        let got: Vec<(String, bool, Vec<f64>)> = s
            .series()
            .map(|x| {
                let labels = x.labels.values().cloned().collect::<Vec<_>>().join(",");
                let v = x.samples.iter().map(|p| p.1).collect();
                (format!("{}{{{labels}}}", x.name), x.rate, v)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("node_cpu_seconds_total{0,idle}".to_owned(), true, vec![1.0]),
                ("node_cpu_seconds_total{1,idle}".to_owned(), true, vec![0.0]),
                ("node_load1{}".to_owned(), false, vec![0.5, 0.5]),
            ]
        );
    }
}
