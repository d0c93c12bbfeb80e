//! The sums behind a merge: totals, counts by key, response sizes, request names, scenarios,
//! checks and the generator's health. Floats that add are carried as whole micro-units so the
//! sum does not depend on the order of the shards.

use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::result::GeneratorSample;
use crate::summary::{SizeSummary, Totals};
use crate::{CheckResult, Generator, GeneratorVerdict, Histograms, NameResult, ScenarioResult};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// `x` in whole millionths: adding these is exact and order-free.
pub(super) fn micros(x: f64) -> i128 {
    if x.is_finite() {
        (x * 1e6).round() as i128
    } else {
        0
    }
}

pub(super) fn from_micros(n: i128) -> f64 {
    n as f64 / 1e6
}

pub(super) fn add_totals(a: &mut Totals, b: &Totals) {
    a.scheduled += b.scheduled;
    a.sent += b.sent;
    a.completed += b.completed;
    a.ok += b.ok;
    a.failed += b.failed;
    a.errors += b.errors;
    a.dropped += b.dropped;
    a.bytes_sent += b.bytes_sent;
    a.bytes_received += b.bytes_received;
}

pub(super) fn add_counts(a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>) {
    for (k, n) in b {
        *a.entry(k.clone()).or_default() += n;
    }
}

/// Response sizes: the sum of bytes is recovered from each mean (it was `sum / completed`).
#[derive(Default)]
pub(super) struct Bodies {
    min: Option<u64>,
    max: u64,
    sum: u128,
    completed: u64,
}

impl Bodies {
    pub(super) fn add(&mut self, s: &SizeSummary, completed: u64) {
        if completed == 0 {
            return;
        }
        self.min = Some(self.min.map_or(s.min, |m| m.min(s.min)));
        self.max = self.max.max(s.max);
        self.sum += (s.mean * completed as f64).round() as u128;
        self.completed += completed;
    }

    pub(super) fn summary(&self) -> SizeSummary {
        match self.min {
            None => SizeSummary::default(),
            Some(min) => SizeSummary {
                min,
                mean: self.sum as f64 / self.completed as f64,
                max: self.max,
            },
        }
    }
}

fn add_decoded(acc: &mut Option<Histogram<u64>>, s: &str, what: &str) -> Result<(), String> {
    let h = decode_histogram(s).map_err(|e| format!("its {what} histogram cannot be read: {e}"))?;
    match acc {
        None => *acc = Some(h),
        Some(a) => a
            .add(&h)
            .map_err(|e| format!("{what} histograms do not add: {e:?}"))?,
    }
    Ok(())
}

/// One request name's sums.
pub(super) struct NameSum {
    name: String,
    totals: Totals,
    status: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    latency: Option<Histogram<u64>>,
    service: Option<Histogram<u64>>,
    time_to_error: Option<Histogram<u64>>,
    /// Connections opened for this name, and its phases: kept when every shard had them.
    connect: Option<Histogram<u64>>,
    phases: crate::phases::PhaseSum,
    streams: crate::streams::StreamSum,
    bodies: Bodies,
}

pub(super) fn add_names(acc: &mut Vec<NameSum>, names: &[NameResult]) -> Result<(), String> {
    if acc.is_empty() {
        acc.extend(names.iter().map(|n| NameSum {
            name: n.name.clone(),
            totals: Totals::default(),
            status: BTreeMap::new(),
            errors: BTreeMap::new(),
            latency: None,
            service: None,
            time_to_error: None,
            connect: None,
            phases: Default::default(),
            streams: Default::default(),
            bodies: Bodies::default(),
        }));
    }
    for (a, n) in acc.iter_mut().zip(names) {
        let Some(h) = &n.histograms else {
            return Err(format!(
                "the request name `{}` has no histograms (written by an older herd): rerun the shard",
                n.name
            ));
        };
        add_totals(&mut a.totals, &n.totals);
        add_counts(&mut a.status, &n.status);
        add_counts(&mut a.errors, &n.errors);
        add_decoded(&mut a.latency, &h.latency, "latency")?;
        if !h.time_to_error.is_empty() {
            add_decoded(&mut a.time_to_error, &h.time_to_error, "time to error")?;
        }
        add_decoded(&mut a.service, &h.service_time, "service time")?;
        if !h.connect.is_empty() {
            add_decoded(&mut a.connect, &h.connect, "connect")?;
        }
        a.phases
            .add(h.phases.as_ref())
            .map_err(|e| format!("the request name `{}`: {e}", n.name))?;
        a.streams
            .add(n.streams.as_ref())
            .map_err(|e| format!("the request name `{}`: {e}", n.name))?;
        a.bodies.add(&n.response_bytes, n.totals.completed);
    }
    Ok(())
}

impl NameSum {
    pub(super) fn finish(self, duration_s: f64) -> NameResult {
        let h = |x: Option<Histogram<u64>>| x.unwrap_or_else(herd_metrics::new_histogram);
        let (latency, service, time_to_error, connect) = (
            h(self.latency),
            h(self.service),
            h(self.time_to_error),
            h(self.connect),
        );
        // Shards written before per-name phases have none: the merge then has none either.
        let phases = self.phases.finish();
        NameResult {
            name: self.name,
            throughput_rps: crate::build::per_second(self.totals.completed, duration_s),
            totals: self.totals,
            status: self.status,
            errors: self.errors,
            latency_ms: summarize_us(&latency),
            service_time_ms: summarize_us(&service),
            time_to_error_ms: summarize_us(&time_to_error),
            response_bytes: self.bodies.summary(),
            connect_ms: phases.is_some().then(|| summarize_us(&connect)),
            histograms: Some(Histograms {
                latency: encode_histogram(&latency),
                service_time: encode_histogram(&service),
                connect: if phases.is_some() {
                    encode_histogram(&connect)
                } else {
                    String::new()
                },
                time_to_error: encode_histogram(&time_to_error),
                phases: phases.as_ref().map(|p| p.1.clone()),
            }),
            phases: phases.map(|p| p.0),
            streams: self.streams.finish(duration_s),
        }
    }
}

pub(super) struct ScenarioSum {
    name: String,
    weight: u64,
    iterations: u64,
    durations: Option<Histogram<u64>>,
}

pub(super) fn add_scenarios(
    acc: &mut Vec<ScenarioSum>,
    scenarios: &[ScenarioResult],
) -> Result<(), String> {
    if acc.is_empty() {
        acc.extend(scenarios.iter().map(|s| ScenarioSum {
            name: s.name.clone(),
            weight: s.weight,
            iterations: 0,
            durations: None,
        }));
    }
    for (a, s) in acc.iter_mut().zip(scenarios) {
        let Some(h) = &s.duration_histogram else {
            return Err(format!(
                "the scenario `{}` has no duration histogram (written by an older herd)",
                s.name
            ));
        };
        a.iterations += s.iterations;
        add_decoded(&mut a.durations, h, "scenario duration")?;
    }
    Ok(())
}

impl ScenarioSum {
    pub(super) fn finish(self) -> ScenarioResult {
        let d = self.durations.unwrap_or_else(herd_metrics::new_histogram);
        ScenarioResult {
            name: self.name,
            weight: self.weight,
            iterations: self.iterations,
            duration_ms: summarize_us(&d),
            duration_histogram: Some(encode_histogram(&d)),
        }
    }
}

/// Checks add by name; the sample kept is the smallest message, the same whatever the order.
pub(super) fn add_checks(acc: &mut Vec<CheckResult>, checks: &[CheckResult]) {
    for c in checks {
        match acc.iter_mut().find(|a| a.name == c.name) {
            None => acc.push(c.clone()),
            Some(a) => {
                a.passes += c.passes;
                a.fails += c.fails;
                a.sample = match (a.sample.take(), c.sample.clone()) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                };
            }
        }
    }
}

/// The generators' health: any instance limited makes the whole measurement limited.
#[derive(Default)]
pub(super) struct GeneratorSum {
    cpu_user: i128,
    cpu_sys: i128,
    /// Percent-threads, so the merged percentage is over all the instances' threads.
    cpu_busy: i128,
    threads: u64,
    send_lag_p99_ms: f64,
    limited: bool,
    reasons: Vec<String>,
    warnings: Vec<String>,
    worker: Option<String>,
    connections_opened: u64,
    peak_connections: u64,
    /// Per protocol: connections, requests and handshakes.
    protocols: BTreeMap<String, (u64, u64, Option<HandshakeSum>)>,
    /// Per (version, cipher, ALPN): connections.
    tls: BTreeMap<(String, String, Option<String>), u64>,
    fds_peak: Option<u64>,
    fd_limit: Option<u64>,
    ports_peak: Option<u64>,
    port_range: Option<u64>,
    streams_allowed: Option<u64>,
    naps: Option<crate::Naps>,
    /// The machines that ran the shards.
    machines: std::collections::BTreeSet<String>,
    /// Per absolute second.
    seconds: BTreeMap<u64, GeneratorSample>,
}

/// Handshake times added exactly: their totals, in whole micro-units; the mean follows.
#[derive(Default)]
struct HandshakeSum {
    /// Full, then resumed: count, total and max.
    times: [(u64, i128, f64); 2],
    accepted: u64,
    rejected: u64,
}

impl HandshakeSum {
    fn add(&mut self, h: &crate::Handshakes) {
        for (sum, t) in self.times.iter_mut().zip([&h.full, &h.resumed]) {
            sum.0 += t.count;
            sum.1 += micros(t.total_ms);
            sum.2 = sum.2.max(t.max_ms);
        }
        self.accepted += h.early_data_accepted;
        self.rejected += h.early_data_rejected;
    }

    fn finish(self) -> crate::Handshakes {
        let [full, resumed] = self
            .times
            .map(|(count, total, max_ms)| crate::HandshakeTimes {
                count,
                mean_ms: from_micros(total / i128::from(count.max(1))),
                max_ms,
                total_ms: from_micros(total),
            });
        crate::Handshakes {
            full,
            resumed,
            early_data_accepted: self.accepted,
            early_data_rejected: self.rejected,
        }
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a.max(b)
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

impl GeneratorSum {
    /// `shard` labels a single instance's reasons (`shard 2/4: ...`); merged results already are.
    pub(super) fn add(&mut self, g: &Generator, shard: Option<&str>, start: u64) {
        self.cpu_user += micros(g.cpu_user_s);
        self.cpu_sys += micros(g.cpu_sys_s);
        self.cpu_busy += micros(g.cpu_percent * g.threads.max(1) as f64);
        self.threads += g.threads.max(1);
        self.send_lag_p99_ms = self.send_lag_p99_ms.max(g.send_lag_p99_ms);
        if g.verdict == GeneratorVerdict::GeneratorLimited {
            self.limited = true;
            let label = |r: &String| match shard {
                Some(s) => format!("shard {s}: {r}"),
                None => r.clone(),
            };
            if g.reasons.is_empty() {
                self.reasons.push(label(&"generator-limited".to_owned()));
            }
            self.reasons.extend(g.reasons.iter().map(label));
        }
        self.warnings.extend(g.warnings.iter().cloned());
        self.worker = self.worker.take().max(g.worker.clone());
        self.connections_opened += g.connections_opened;
        self.peak_connections += g.peak_connections;
        for p in &g.protocols {
            let e = self.protocols.entry(p.protocol.clone()).or_default();
            e.0 += p.connections;
            e.1 += p.requests;
            if let Some(h) = &p.handshakes {
                e.2.get_or_insert_with(HandshakeSum::default).add(h);
            }
        }
        for t in &g.tls {
            let key = (t.version.clone(), t.cipher.clone(), t.alpn.clone());
            *self.tls.entry(key).or_default() += t.connections;
        }
        self.fds_peak = max_opt(self.fds_peak, g.fds_peak);
        self.fd_limit = min_opt(self.fd_limit, g.fd_limit);
        self.ports_peak = max_opt(self.ports_peak, g.ephemeral_ports_peak);
        self.port_range = min_opt(self.port_range, g.ephemeral_port_range);
        self.streams_allowed = max_opt(self.streams_allowed, g.streams_allowed);
        if let Some(n) = &g.naps {
            self.naps.get_or_insert_with(crate::Naps::default).add(n);
        }
        self.machines.extend(g.machine.iter().cloned());
        for s in &g.timeline {
            let e = self.seconds.entry(start + s.t).or_default();
            e.cpu_percent.extend(&s.cpu_percent);
            e.send_lag_p99_ms = e.send_lag_p99_ms.max(s.send_lag_p99_ms);
            e.loop_delay_max_ms = e.loop_delay_max_ms.max(s.loop_delay_max_ms);
            e.connections += s.connections;
            e.fds = max_opt(e.fds, s.fds);
            e.ephemeral_ports = max_opt(e.ephemeral_ports, s.ephemeral_ports);
        }
    }

    pub(super) fn finish(mut self, start: u64) -> Generator {
        self.reasons.sort();
        self.reasons.dedup();
        self.warnings.sort();
        self.warnings.dedup();
        Generator {
            cpu_user_s: from_micros(self.cpu_user),
            cpu_sys_s: from_micros(self.cpu_sys),
            cpu_percent: from_micros(self.cpu_busy) / self.threads.max(1) as f64,
            send_lag_p99_ms: self.send_lag_p99_ms,
            verdict: if self.limited {
                GeneratorVerdict::GeneratorLimited
            } else {
                GeneratorVerdict::Ok
            },
            reasons: self.reasons,
            warnings: self.warnings,
            threads: self.threads,
            worker: self.worker,
            connections_opened: self.connections_opened,
            peak_connections: self.peak_connections,
            protocols: std::mem::take(&mut self.protocols)
                .into_iter()
                .map(
                    |(protocol, (connections, requests, handshakes))| crate::ProtocolUse {
                        protocol,
                        connections,
                        requests,
                        handshakes: handshakes.map(HandshakeSum::finish),
                    },
                )
                .collect(),
            tls: {
                let mut rows: Vec<_> = std::mem::take(&mut self.tls)
                    .into_iter()
                    .map(|((version, cipher, alpn), connections)| crate::TlsUse {
                        version,
                        cipher,
                        alpn,
                        connections,
                    })
                    .collect();
                crate::TlsUse::sort(&mut rows);
                rows
            },
            fds_peak: self.fds_peak,
            fd_limit: self.fd_limit,
            ephemeral_ports_peak: self.ports_peak,
            ephemeral_port_range: self.port_range,
            streams_allowed: self.streams_allowed,
            naps: self.naps,
            machine: (!self.machines.is_empty()).then(|| {
                std::mem::take(&mut self.machines)
                    .into_iter()
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
            timeline: self
                .seconds
                .into_iter()
                .filter(|(abs, _)| *abs >= start)
                .map(|(abs, mut s)| {
                    // Threads of all instances, busiest first: the same list in any order.
                    s.cpu_percent.sort_by(|a, b| b.total_cmp(a));
                    s.t = abs - start;
                    s
                })
                .collect(),
        }
    }
}
