//! The series herd exposes, kept as cumulative counters over the closed seconds, and their text
//! exposition (Prometheus text format 0.0.4, which OpenMetrics scrapers read too).

use crate::Start;
use herd_engine::metrics::ErrorKind;
use herd_engine::Record;
use std::fmt::Write;

/// Latency bucket bounds in seconds for a run whose requests time out after `timeout_s`: a
/// 1-2.5-5 ladder from 100 us, up to the timeout (nothing is slower).
pub fn buckets_for(timeout_s: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 1e-4;
    'ladder: loop {
        for m in [1.0, 2.5, 5.0] {
            let b = decade * m;
            if b >= timeout_s || out.len() >= 30 {
                break 'ladder;
            }
            out.push(b);
        }
        decade *= 10.0;
    }
    out.push(timeout_s.max(1e-4));
    out
}

/// What the endpoint shows: cumulative over every second closed so far.
#[derive(Debug, Default)]
pub struct Exposition {
    labels: String,
    bounds: Vec<f64>,
    /// Responses by status class (index as `Second::status_class`), and requests that got none
    /// by error class.
    status_class: [u64; 6],
    errors: [u64; ErrorKind::COUNT],
    ok: u64,
    failed: u64,
    bytes: u64,
    /// Latency histogram: a cumulative count per bound, the count and the sum (seconds).
    buckets: Vec<u64>,
    count: u64,
    sum_s: f64,
    seconds: u64,
    target: Option<f64>,
    cpu_percent: Option<f64>,
    send_lag_s: Option<f64>,
    loop_delay_s: Option<f64>,
    connections: Option<u64>,
    pub finished: bool,
}

impl Exposition {
    pub fn start(&mut self, s: &Start) {
        let shard = s
            .shard
            .as_ref()
            .and_then(|h| {
                h.instances
                    .first()
                    .map(|i| format!("{}/{}", i.index, h.count))
            })
            .unwrap_or_default();
        self.labels = format!(
            "run_id=\"{}\",shard=\"{}\"",
            escape(&s.run_id),
            escape(&shard)
        );
        self.bounds = buckets_for(s.config.timeout_s);
        self.buckets = vec![0; self.bounds.len()];
    }

    pub fn add(&mut self, r: &Record) {
        let s = &r.second;
        for (a, b) in self.status_class.iter_mut().zip(s.status_class) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(s.errors) {
            *a += b;
        }
        self.ok += s.ok;
        self.failed += s.failed;
        self.bytes += s.bytes_received;
        if let Some(h) = s.latency.histogram() {
            for (n, bound) in self.buckets.iter_mut().zip(&self.bounds) {
                *n += h.count_between(0, (bound * 1e6) as u64);
            }
            self.count += h.len();
            self.sum_s += h.mean() * h.len() as f64 / 1e6;
        }
        self.seconds = self.seconds.max(s.index + 1);
        self.target = r.target;
        if let Some(h) = &r.health {
            self.cpu_percent = Some(h.cpu_percent.iter().sum());
            self.send_lag_s = Some(h.send_lag_p99.as_secs_f64());
            self.loop_delay_s = Some(h.loop_delay_max.as_secs_f64());
            self.connections = Some(h.open_connections);
        }
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let l = &self.labels;
        let mut o = String::new();
        header(
            &mut o,
            "herd_requests_total",
            "counter",
            "Requests that ended, by outcome (ok, failed: a 4xx/5xx or failed check, error: no response).",
        );
        for (outcome, n) in [
            ("ok", self.ok),
            ("failed", self.failed),
            ("error", self.errors.iter().sum()),
        ] {
            let _ = writeln!(o, "herd_requests_total{{{l},outcome=\"{outcome}\"}} {n}");
        }
        header(
            &mut o,
            "herd_responses_total",
            "counter",
            "Responses by status class.",
        );
        const CLASSES: [&str; 6] = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"];
        for (class, n) in CLASSES.iter().zip(self.status_class) {
            let _ = writeln!(
                o,
                "herd_responses_total{{{l},status_class=\"{class}\"}} {n}"
            );
        }
        header(
            &mut o,
            "herd_errors_total",
            "counter",
            "Requests that got no response, by error class.",
        );
        for k in ErrorKind::ALL {
            let n = self.errors[k.index()];
            let _ = writeln!(o, "herd_errors_total{{{l},class=\"{}\"}} {n}", k.key());
        }
        header(
            &mut o,
            "herd_received_bytes_total",
            "counter",
            "Response bytes received.",
        );
        let _ = writeln!(o, "herd_received_bytes_total{{{l}}} {}", self.bytes);
        header(
            &mut o,
            "herd_request_duration_seconds",
            "histogram",
            "Latency from each request's intended send time to its full response.",
        );
        for (bound, n) in self.bounds.iter().zip(&self.buckets) {
            let _ = writeln!(
                o,
                "herd_request_duration_seconds_bucket{{{l},le=\"{bound}\"}} {n}"
            );
        }
        let _ = writeln!(
            o,
            "herd_request_duration_seconds_bucket{{{l},le=\"+Inf\"}} {}\n\
             herd_request_duration_seconds_sum{{{l}}} {}\n\
             herd_request_duration_seconds_count{{{l}}} {}",
            self.count, self.sum_s, self.count
        );
        header(
            &mut o,
            "herd_measured_seconds",
            "gauge",
            "Seconds of the measurement closed so far.",
        );
        let _ = writeln!(o, "herd_measured_seconds{{{l}}} {}", self.seconds);
        let gauges = [
            (
                "herd_target",
                "What the plan asks for now: arrivals per second (open model) or users (closed).",
                self.target,
            ),
            (
                "herd_generator_cpu_percent",
                "CPU of herd's worker threads in the last closed second, percent of one core.",
                self.cpu_percent,
            ),
            (
                "herd_send_lag_p99_seconds",
                "How late arrivals went out against the schedule in the last closed second, p99.",
                self.send_lag_s,
            ),
            (
                "herd_loop_delay_max_seconds",
                "How late herd's event loops woke in the last closed second.",
                self.loop_delay_s,
            ),
            (
                "herd_connections",
                "Connections open at the end of the last closed second.",
                self.connections.map(|c| c as f64),
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(v) = value {
                header(&mut o, name, "gauge", help);
                let _ = writeln!(o, "{name}{{{l}}} {v}");
            }
        }
        header(
            &mut o,
            "herd_run_finished",
            "gauge",
            "1 once the run has ended: the counters are final.",
        );
        let _ = writeln!(o, "herd_run_finished{{{l}}} {}", u8::from(self.finished));
        o
    }
}

fn header(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value as the text format wants it.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_climb_a_ladder_up_to_the_timeout() {
        let b = buckets_for(10.0);
        assert_eq!(b.first(), Some(&1e-4));
        assert_eq!(b.last(), Some(&10.0));
        assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
        assert_eq!(buckets_for(0.3).last(), Some(&0.3));
    }
}
