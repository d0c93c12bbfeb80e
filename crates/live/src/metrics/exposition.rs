//! The series herd exposes, kept as cumulative counters over the closed seconds, and their text
//! exposition (Prometheus text format 0.0.4, which OpenMetrics scrapers read too).

use super::family::{family, point, Family};
use crate::RunStart;
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
    labels: Vec<(String, String)>,
    bounds: Vec<f64>,
    /// Responses by status class (index as `Second::status_class`), and requests that got none
    /// by error class.
    status_class: [u64; 6],
    errors: [u64; ErrorKind::COUNT],
    ok: u64,
    failed: u64,
    bytes: u64,
    /// Events and tokens of the event streams (Server-Sent Events) ended so far.
    events: u64,
    tokens: u64,
    /// Their time to first event and gaps between events (empty without streams).
    ttft: super::ladder::Ladder,
    itl: super::ladder::Ladder,
    /// Latency histogram: a cumulative count per bound, the count and the sum (seconds).
    latency: super::ladder::Ladder,
    seconds: u64,
    target: Option<f64>,
    cpu_percent: Option<f64>,
    send_lag_s: Option<f64>,
    loop_delay_s: Option<f64>,
    connections: Option<u64>,
    /// The watched server's processes (`--watch-pid`, `--watch-name`) at their last reading:
    /// who, CPU % and resident bytes.
    server: Vec<(String, f64, u64)>,
    named: super::named::Named,
    /// A WebSocket run's sockets, once one told something.
    sockets: Option<super::sockets::Sockets>,
    pub finished: bool,
}

impl Exposition {
    pub fn start(&mut self, s: &RunStart) {
        let shard = s
            .shard
            .as_ref()
            .and_then(|h| {
                h.instances
                    .first()
                    .map(|i| format!("{}/{}", i.index, h.count))
            })
            .unwrap_or_default();
        self.labels = vec![
            ("run_id".to_owned(), s.run_id.clone()),
            ("shard".to_owned(), shard),
        ];
        // A series' runs are told apart by their step (one run id for the whole series).
        if let Some(n) = s.step {
            self.labels.push(("step".to_owned(), n.to_string()));
        }
        self.bounds = buckets_for(s.config.timeout_s);
        self.named.start(&s.labels);
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
        self.events += s.events;
        self.tokens += s.tokens;
        if let Some(st) = &s.streams {
            let pairs = [
                (&mut self.ttft, st.first.histogram()),
                (&mut self.itl, st.gap.histogram()),
            ];
            for (ladder, h) in pairs {
                if let Some(h) = h {
                    ladder.add(h, &self.bounds);
                }
            }
        }
        if let Some(h) = s.latency.histogram() {
            self.latency.add(h, &self.bounds);
        }
        self.seconds = self.seconds.max(s.index + 1);
        self.target = r.target;
        if let Some(h) = &r.health {
            self.cpu_percent = Some(h.cpu_percent.iter().sum());
            self.send_lag_s = Some(h.send_lag_p99.as_secs_f64());
            self.loop_delay_s = Some(h.loop_delay_max.as_secs_f64());
            self.connections = Some(h.open_connections);
        }
        self.named.add(r, &self.bounds);
        if let Some(w) = &s.ws {
            self.sockets.get_or_insert_default().add(w, &self.bounds);
        }
    }

    /// The watched server's readings since the last call: each process's last one stands.
    pub fn watched(&mut self, fresh: &herd_result::Server) {
        for p in &fresh.processes {
            let Some(s) = p.samples.last() else { continue };
            let who = p.name.clone().unwrap_or_else(|| p.pid.to_string());
            match self.server.iter_mut().find(|x| x.0 == who) {
                Some(x) => (x.1, x.2) = (s.cpu_percent, s.rss_bytes),
                None => self.server.push((who, s.cpu_percent, s.rss_bytes)),
            }
        }
    }

    /// Every series, by family, as of the last closed second.
    pub fn families(&self) -> Vec<Family> {
        let mut out = Vec::new();
        self.counters(&mut out);
        self.latency(&mut out);
        super::ladder::streams(&self.ttft, &self.itl, &self.bounds, &mut out);
        self.gauges(&mut out);
        self.server(&mut out);
        self.named.families(&self.bounds, &mut out);
        if let Some(w) = &self.sockets {
            w.families(&self.bounds, &mut out);
        }
        let f = family(
            &mut out,
            "herd_run_finished",
            "gauge",
            "1 once the run has ended: the counters are final.",
        );
        f.points
            .push(point(f.name, None, f64::from(u8::from(self.finished))));
        out
    }

    /// Requests, responses and errors by class, bytes received.
    fn counters(&self, out: &mut Vec<Family>) {
        let f = family(
            out,
            "herd_requests_total",
            "counter",
            "Requests that ended, by outcome (ok, failed: a 4xx/5xx or failed check, error: no response).",
        );
        for (outcome, n) in [
            ("ok", self.ok),
            ("failed", self.failed),
            ("error", self.errors.iter().sum()),
        ] {
            f.points
                .push(point(f.name, Some(("outcome", outcome.into())), n as f64));
        }
        let f = family(
            out,
            "herd_responses_total",
            "counter",
            "Responses by status class.",
        );
        const CLASSES: [&str; 6] = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"];
        for (class, n) in CLASSES.iter().zip(self.status_class) {
            f.points.push(point(
                f.name,
                Some(("status_class", (*class).into())),
                n as f64,
            ));
        }
        let f = family(
            out,
            "herd_errors_total",
            "counter",
            "Requests that got no response, by error class.",
        );
        for k in ErrorKind::ALL {
            let n = self.errors[k.index()];
            f.points
                .push(point(f.name, Some(("class", k.key().into())), n as f64));
        }
        let f = family(
            out,
            "herd_received_bytes_total",
            "counter",
            "Response bytes received.",
        );
        f.points.push(point(f.name, None, self.bytes as f64));
        for (name, help, n) in [
            (
                "herd_stream_events_total",
                "Events read in event streams (Server-Sent Events) that ended.",
                self.events,
            ),
            (
                "herd_stream_tokens_total",
                "Tokens of event streams that ended (--sse llm: the usage the server reported, else the content events).",
                self.tokens,
            ),
        ] {
            let f = family(out, name, "counter", help);
            f.points.push(point(f.name, None, n as f64));
        }
    }

    /// The latency histogram.
    fn latency(&self, out: &mut Vec<Family>) {
        self.latency.family(
            out,
            [
                "herd_request_duration_seconds",
                "herd_request_duration_seconds_bucket",
                "herd_request_duration_seconds_sum",
                "herd_request_duration_seconds_count",
            ],
            "Latency from each request's intended send time to its full response.",
            &self.bounds,
        );
    }

    /// What the measurement is at: its seconds, the plan's target, the generator's health.
    fn gauges(&self, out: &mut Vec<Family>) {
        let f = family(
            out,
            "herd_measured_seconds",
            "gauge",
            "Seconds of the measurement closed so far.",
        );
        f.points.push(point(f.name, None, self.seconds as f64));
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
                let f = family(out, name, "gauge", help);
                f.points.push(point(name, None, v));
            }
        }
    }

    /// The watched server's processes at their last reading.
    fn server(&self, out: &mut Vec<Family>) {
        if !self.server.is_empty() {
            let f = family(
                out,
                "herd_server_cpu_percent",
                "gauge",
                "CPU of the watched server's processes (--watch-pid: the pid, --watch-name: the name) at their last reading, percent of one core.",
            );
            for (who, cpu, _) in &self.server {
                f.points
                    .push(point(f.name, Some(("process", who.clone())), *cpu));
            }
            let f = family(
                out,
                "herd_server_resident_memory_bytes",
                "gauge",
                "Resident memory of the watched server's processes at their last reading.",
            );
            for (who, _, rss) in &self.server {
                f.points
                    .push(point(f.name, Some(("process", who.clone())), *rss as f64));
            }
        }
    }

    /// The labels every series carries: the run and the shard.
    pub fn base_labels(&self) -> &[(String, String)] {
        &self.labels
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let mut o = String::new();
        for f in self.families() {
            let _ = writeln!(
                o,
                "# HELP {} {}\n# TYPE {} {}",
                f.name, f.help, f.name, f.kind
            );
            for p in &f.points {
                let labels: Vec<String> = self
                    .labels
                    .iter()
                    .chain(&p.labels)
                    .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                    .collect();
                let _ = writeln!(o, "{}{{{}}} {}", p.name, labels.join(","), p.value);
            }
        }
        o
    }
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

    #[test]
    fn the_watched_server_is_a_gauge_per_process_at_its_last_reading() {
        let reading = |name: Option<&str>, pid, cpu, rss| herd_result::WatchedProcess {
            pid,
            name: name.map(str::to_owned),
            samples: vec![herd_result::ProcessSample {
                cpu_percent: cpu,
                rss_bytes: rss,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut e = Exposition::default();
        assert!(!e.render().contains("herd_server"));
        let fresh = |ps| herd_result::Server {
            processes: ps,
            prometheus: Vec::new(),
        };
        e.watched(&fresh(vec![
            reading(Some("nginx"), 7, 40.0, 1000),
            reading(None, 9, 1.5, 20),
        ]));
        e.watched(&fresh(vec![reading(Some("nginx"), 7, 55.5, 2048)]));
        let text = e.render();
        assert!(
            text.contains("herd_server_cpu_percent{process=\"nginx\"} 55.5"),
            "{text}"
        );
        assert!(
            text.contains("herd_server_cpu_percent{process=\"9\"} 1.5"),
            "{text}"
        );
        assert!(
            text.contains("herd_server_resident_memory_bytes{process=\"nginx\"} 2048"),
            "{text}"
        );
    }
}
