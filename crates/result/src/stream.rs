//! A result written as the run goes: `herd run --json FILE` writes a header line, then one line
//! per closed second, and replaces the file with the full result at the end. A run killed
//! before its end (`kill -9`, an out-of-memory kill, an evicted pod) leaves the header and every
//! second written before the kill; [`complete`] turns that into a partial [`RunResult`], marked
//! so, which every command that reads results reads like any other.

use crate::build::{per_second, timeline_entry};
use crate::histogram::Histograms;
use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::result::Kind;
pub use crate::stream_parts::{name_lines, CheckLine, NameLine, ScenarioLine, Sections};
use crate::summary::Totals;
use crate::{
    Generator, GeneratorSample, ReportError, RunConfig, RunResult, Server, ShardHeader,
    TimelineEntry,
};
use herd_metrics::{new_histogram, Second};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The value of the header's `stream` key.
pub const RECORDS: &str = "records";

/// The first line of a result written as the run goes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamHeader {
    pub herd_version: String,
    pub schema_version: u32,
    pub kind: Kind,
    /// Always [`RECORDS`]: what tells this file from a finished result.
    pub stream: String,
    pub target: String,
    pub config: RunConfig,
    /// When the measurement was due to start (after any warm-up), RFC 3339 in UTC.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_start_unix_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardHeader>,
}

impl StreamHeader {
    pub fn new(target: String, config: RunConfig, started_at: std::time::SystemTime) -> Self {
        StreamHeader {
            herd_version: crate::HERD_VERSION.to_owned(),
            schema_version: crate::SCHEMA_VERSION,
            kind: Kind::Run,
            stream: RECORDS.to_owned(),
            target,
            config,
            started_at: crate::build::rfc3339(started_at),
            timeline_start_unix_s: started_at
                .duration_since(std::time::SystemTime::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs()),
            shard: None,
        }
    }
}

/// One closed second as a line of the stream: the timeline entry of the finished result, with
/// the generator's health of that second, its load, its service times, and the same second per
/// request name, scenario and check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamLine {
    #[serde(flatten)]
    pub second: TimelineEntry,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorSample>,
    /// Requests the plan called for that ended or were dropped in this second.
    #[serde(default)]
    pub scheduled: u64,
    /// Arrivals dropped in this second (open model: every user busy, the queue full).
    #[serde(default)]
    pub dropped: u64,
    /// Requests sent or waiting to be, not yet ended, when the second closed.
    #[serde(default)]
    pub in_flight: u64,
    /// Service time (from the send) of the second's responses, microseconds, encoded as the
    /// result's histograms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_histogram: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_name: Vec<NameLine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioLine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckLine>,
    /// The watched server's readings taken since the previous line (`--watch-*`), each at its
    /// own `t`: a reading at t covers the second before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Server>,
    /// What a result killed before its end still reports whole (absent from lines written by
    /// herd before them: "not recorded"): bytes written, the responses' body bytes (sum,
    /// smallest, largest) and their status codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_bytes: Option<[u64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BTreeMap<String, u64>>,
}

impl StreamLine {
    /// The line for a second of the measurement (`whole`: wholly inside it, a sample of the
    /// run). A second cut short is counted over a whole second: the stream does not know yet
    /// how long the run was (the finished result does).
    pub fn new(second: &Second, whole: bool, generator: Option<GeneratorSample>) -> Self {
        StreamLine {
            second: timeline_entry(second, second.index as f64 + 1.0, whole),
            generator,
            scheduled: second.requests(),
            dropped: 0,
            in_flight: 0,
            service_histogram: second.service.histogram().map(encode_histogram),
            by_name: Vec::new(),
            scenarios: Vec::new(),
            checks: Vec::new(),
            server: None,
            bytes_sent: Some(second.bytes_sent),
            body_bytes: Some([
                second.body_bytes,
                second.body_min.min(second.body_max),
                second.body_max,
            ]),
            status: Some(
                second
                    .status
                    .iter()
                    .map(|(code, n)| (code.to_string(), n))
                    .collect(),
            ),
        }
    }
}

/// The text of a finished result: `text` itself, or, for a stream a run left unfinished, the
/// partial result its lines describe.
pub fn complete<'t>(text: &'t str, origin: &str) -> Result<Cow<'t, str>, ReportError> {
    let first = text.lines().next().unwrap_or("");
    if !first.contains("\"stream\"") {
        return Ok(Cow::Borrowed(text));
    }
    let Ok(header) = serde_json::from_str::<StreamHeader>(first) else {
        return Ok(Cow::Borrowed(text));
    };
    if header.stream != RECORDS {
        return Ok(Cow::Borrowed(text));
    }
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        match serde_json::from_str::<StreamLine>(line) {
            Ok(l) => lines.push(l),
            // The kill came in the middle of writing this line: everything before it stands.
            Err(e) if e.classify() == serde_json::error::Category::Eof => break,
            Err(source) => {
                return Err(ReportError::Malformed {
                    origin: format!("{origin}, line {}", n + 1),
                    version: header.herd_version,
                    source,
                })
            }
        }
    }
    let result = partial(header, lines)?;
    let text = serde_json::to_string(&result).map_err(|source| ReportError::Malformed {
        origin: origin.to_owned(),
        version: result.herd_version.clone(),
        source,
    })?;
    Ok(Cow::Owned(text))
}

/// The partial result of the seconds written: totals, errors and latency added up from them
/// (with no lines, the empty result a live view grows second by second).
pub fn partial(header: StreamHeader, lines: Vec<StreamLine>) -> Result<RunResult, ReportError> {
    let mut latency = new_histogram();
    let mut service = new_histogram();
    let mut sections = Sections::default();
    let mut totals = Totals::default();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut health = Vec::new();
    let mut timeline = Vec::with_capacity(lines.len());
    let mut server: Option<Server> = None;
    let mut whole = Whole::default();
    for l in lines {
        whole.add(&l);
        if let Some(s) = l.server {
            server.get_or_insert_with(Server::default).append(s);
        }
        let s = &l.second;
        if let Some(h) = &s.latency_histogram {
            let _ = latency.add(decode_histogram(h)?);
        }
        totals.ok += s.ok;
        totals.failed += s.failed;
        totals.errors += s.errors;
        if let Some(h) = &l.service_histogram {
            let _ = service.add(decode_histogram(h)?);
        }
        sections.add(&l.by_name, &l.scenarios, &l.checks)?;
        totals.scheduled += l.scheduled;
        totals.dropped += l.dropped;
        totals.bytes_received += s.bytes_received;
        for (k, n) in &s.error_kinds {
            *errors.entry(k.clone()).or_default() += n;
        }
        health.extend(l.generator);
        timeline.push(l.second);
    }
    totals.completed = totals.ok + totals.failed;
    totals.sent = totals.completed + totals.errors;
    // A stream written before the load was counted per second says nothing of drops.
    totals.scheduled = totals.scheduled.max(totals.sent + totals.dropped);
    let duration_s = timeline.len() as f64;
    let empty = encode_histogram(&new_histogram());
    totals.bytes_sent = whole.bytes_sent.unwrap_or(0);
    let cpu_percent = cpu_percent(&health);
    let mut lacks = vec![
        "connect",
        "time_to_error",
        "phases",
        "cpu_split",
        "send_lag",
    ];
    for (figure, has) in [
        ("bytes_sent", whole.bytes_sent.is_some()),
        ("response_bytes", whole.body.is_some()),
        ("status", whole.status.is_some()),
        ("cpu", cpu_percent.is_some()),
    ] {
        if !has {
            lacks.push(figure);
        }
    }
    let mut extra = BTreeMap::new();
    extra.insert("partial".to_owned(), Value::Bool(true));
    extra.insert(NOT_RECORDED.to_owned(), Value::from(lacks));
    let (grpc, websocket) = (grpc_of(&timeline), sockets_of(&timeline)?);
    Ok(RunResult {
        herd_version: header.herd_version,
        schema_version: header.schema_version,
        kind: Kind::Run,
        target: header.target,
        config: header.config,
        started_at: header.started_at,
        duration_s,
        interrupted: true,
        warmup: Default::default(),
        throughput_rps: per_second(totals.completed, duration_s),
        response_bytes: whole.response_bytes(totals.completed),
        status: whole.status.unwrap_or_default(),
        warnings: vec![format!(
            "partial result: the run stopped without finishing its file (killed?) after {} \
             second(s) were written; the numbers cover those seconds (latency from the \
             per-second histograms); what the seconds do not carry is not recorded",
            timeline.len()
        )],
        errors,
        error_samples: BTreeMap::new(),
        latency_ms: summarize_us(&latency),
        service_time_ms: summarize_us(&service),
        connect_ms: Default::default(),
        time_to_error_ms: Default::default(),
        phases: None,
        generator: Generator {
            timeline: health,
            cpu_percent: cpu_percent.unwrap_or(0.0),
            ..Generator::default()
        },
        timeline,
        histograms: Histograms {
            latency: encode_histogram(&latency),
            service_time: encode_histogram(&service),
            connect: empty.clone(),
            time_to_error: empty,
            phases: None,
        },
        totals,
        extra,
        server,
        workload: None,
        by_name: sections.by_name(duration_s),
        by_scenario: sections.by_scenario(),
        checks: sections.checks(),
        thresholds: Vec::new(),
        timeline_start_unix_s: header.timeline_start_unix_s,
        shard: header.shard,
        requests_log: None,
        streams: None,
        grpc,
        websocket,
        faults: Vec::new(),
    })
}

/// The sockets a partial result's seconds counted (their round trips from the seconds still
/// live when written).
fn sockets_of(timeline: &[TimelineEntry]) -> Result<Option<crate::Sockets>, ReportError> {
    let mut sum = crate::websocket::SocketSum::default();
    for e in timeline {
        sum.add_second(e.ws.as_deref())
            .map_err(|reason| ReportError::Histogram {
                origin: "the result".to_owned(),
                path: format!("timeline[{}].ws", e.t),
                reason,
            })?;
    }
    let seconds = timeline.iter().filter_map(|e| e.ws.as_deref());
    Ok(crate::websocket::with_backlog(sum.finish(), seconds))
}

/// The calls a partial result's seconds counted (a killed run's file still tells its codes;
/// its methods' latency is not recorded).
fn grpc_of(timeline: &[TimelineEntry]) -> Option<crate::Grpc> {
    let mut status = BTreeMap::new();
    for e in timeline {
        crate::grpc::add_counts(&mut status, &e.grpc);
    }
    (!status.is_empty()).then(|| crate::Grpc {
        status,
        methods: Vec::new(),
    })
}

/// The key of a partial result's list of figures its file did not carry.
pub const NOT_RECORDED: &str = "not_recorded";

/// What the lines of a partial result add up to, where every line carried it (`None` where
/// one did not: a file written by an older herd).
struct Whole {
    bytes_sent: Option<u64>,
    /// Sum, smallest and largest of the responses' body bytes.
    body: Option<[u64; 3]>,
    status: Option<BTreeMap<String, u64>>,
}

impl Default for Whole {
    fn default() -> Self {
        Whole {
            bytes_sent: Some(0),
            body: Some([0, u64::MAX, 0]),
            status: Some(BTreeMap::new()),
        }
    }
}

impl Whole {
    fn add(&mut self, l: &StreamLine) {
        self.bytes_sent = self.bytes_sent.zip(l.bytes_sent).map(|(a, b)| a + b);
        self.body = match (self.body, l.body_bytes) {
            (Some([sum, min, max]), Some([s, lo, hi])) => {
                // A second with no responses says min 0 and max 0: not a size.
                let answered = l.second.ok + l.second.failed > 0;
                Some(if answered {
                    [sum + s, min.min(lo), max.max(hi)]
                } else {
                    [sum, min, max]
                })
            }
            _ => None,
        };
        match (&mut self.status, &l.status) {
            (Some(all), Some(codes)) => {
                for (code, n) in codes {
                    *all.entry(code.clone()).or_default() += n;
                }
            }
            _ => self.status = None,
        }
    }

    fn response_bytes(&self, completed: u64) -> crate::summary::SizeSummary {
        match self.body {
            Some([sum, min, max]) if completed > 0 => crate::summary::SizeSummary {
                min,
                mean: sum as f64 / completed as f64,
                max,
            },
            _ => Default::default(),
        }
    }
}

/// The worker threads' CPU over the seconds written, in percent of those threads, as the
/// finished result's `generator.cpu_percent`; `None` when no second carried it.
fn cpu_percent(health: &[GeneratorSample]) -> Option<f64> {
    let per_second: Vec<f64> = health
        .iter()
        .filter(|h| !h.cpu_percent.is_empty())
        .map(|h| h.cpu_percent.iter().sum::<f64>() / h.cpu_percent.len() as f64)
        .collect();
    (!per_second.is_empty()).then(|| per_second.iter().sum::<f64>() / per_second.len() as f64)
}

impl RunResult {
    /// The result of a run that stopped before writing its end (see [`complete`]).
    pub fn is_partial(&self) -> bool {
        self.extra.get("partial") == Some(&Value::Bool(true))
    }

    /// Whether the result holds `figure` (`bytes_sent`, `response_bytes`, `status`, `cpu`,
    /// `cpu_split`, `send_lag`, `connect`, `time_to_error`, `phases`): a partial result lists
    /// those its file did not carry, which are "not recorded", never 0.
    pub fn recorded(&self, figure: &str) -> bool {
        !self
            .extra
            .get(NOT_RECORDED)
            .and_then(Value::as_array)
            .is_some_and(|lacks| lacks.iter().any(|f| f.as_str() == Some(figure)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::{Outcome, Verdict};
    use std::time::{Duration, SystemTime};

    fn config() -> RunConfig {
        RunConfig {
            url: "http://127.0.0.1:8080/".into(),
            method: "GET".into(),
            model: crate::Model::Closed,
            connections: 2,
            rate: None,
            duration_s: Some(60.0),
            requests: None,
            warmup_s: 0.0,
            threads: 1,
            timeout_s: 10.0,
            calls_per_conn: None,
            pipeline: None,
            streams: None,
            proxy: None,
            headers: vec![],
            body_bytes: 0,
            secrets_shown: false,
            labels: Default::default(),
            arrivals: None,
        }
    }

    #[test]
    fn a_stream_cut_mid_line_reads_as_a_partial_result_of_its_whole_lines() {
        let header = StreamHeader::new("t".into(), config(), SystemTime::now());
        let mut text = serde_json::to_string(&header).unwrap() + "\n";
        for i in 0..3 {
            let mut s = Second::new(i);
            for ms in 1..=10 {
                s.record(&Outcome::completed(
                    0,
                    Duration::from_millis(ms),
                    Duration::ZERO,
                    200,
                    Verdict::Ok,
                ));
            }
            text += &serde_json::to_string(&StreamLine::new(&s, true, None)).unwrap();
            text += "\n";
        }
        text += r#"{"t":3,"requests":1"#;
        let r = crate::parse_json(&text, "cut.json").unwrap();
        assert!(r.is_partial() && r.interrupted);
        assert_eq!(r.timeline.len(), 3);
        assert_eq!(r.totals.completed, 30);
        assert_eq!(r.duration_s, 3.0);
        assert!(
            (9.0..=10.1).contains(&r.latency_ms.p99),
            "{}",
            r.latency_ms.p99
        );
        assert!(r.warnings[0].contains("partial result"));
    }

    #[test]
    fn a_partial_result_keeps_names_scenarios_checks_drops_service_times_and_the_server() {
        let header = StreamHeader::new("t".into(), config(), SystemTime::now());
        let mut text = serde_json::to_string(&header).unwrap() + "\n";
        for i in 0..2 {
            let mut s = Second::new(i);
            let mut by_name = herd_metrics::ByName::default();
            for (name, ms) in [(0, 2), (1, 8), (1, 9)] {
                let o = Outcome::completed(
                    name,
                    Duration::from_millis(ms),
                    Duration::from_millis(1),
                    200,
                    Verdict::Ok,
                );
                s.record(&o);
                by_name.record(&o);
            }
            let mut line = StreamLine::new(&s, true, None);
            line.dropped = 4;
            line.scheduled = 7;
            line.by_name = name_lines(&by_name, |i| ["home", "cart"][i as usize].to_owned());
            line.scenarios = vec![ScenarioLine {
                name: "shop".into(),
                iterations: 1,
            }];
            line.checks = vec![CheckLine {
                name: "cart: status 200".into(),
                passes: 2,
                fails: 1,
            }];
            line.server = Some(Server {
                processes: vec![crate::WatchedProcess {
                    pid: 42,
                    samples: vec![crate::ProcessSample {
                        t: i as f64 + 1.0,
                        cpu_percent: 50.0,
                        rss_bytes: 1 << 20,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                prometheus: Vec::new(),
            });
            text += &serde_json::to_string(&line).unwrap();
            text += "\n";
        }
        let r = crate::parse_json(&text, "killed.json").unwrap();
        assert!(r.is_partial());
        assert_eq!((r.totals.scheduled, r.totals.dropped), (14, 8));
        assert_eq!(r.service_time_ms.count, 6);
        let names: Vec<_> = r.by_name.iter().map(|n| (&*n.name, n.totals.ok)).collect();
        assert_eq!(names, vec![("home", 2), ("cart", 4)]);
        assert!(
            r.by_name[1].latency_ms.p50 >= 8.0,
            "{:?}",
            r.by_name[1].latency_ms
        );
        assert_eq!(r.by_scenario[0].iterations, 2);
        assert_eq!((r.checks[0].passes, r.checks[0].fails), (4, 2));
        let server = r.server.expect("the watched server's readings");
        let ts: Vec<f64> = server.processes[0].samples.iter().map(|s| s.t).collect();
        assert_eq!((server.processes.len(), ts), (1, vec![1.0, 2.0]));
    }

    #[test]
    fn a_finished_result_is_read_as_it_is() {
        let text = "{\n  \"herd_version\": \"x\"\n}\n";
        assert!(matches!(
            complete(text, "r.json").unwrap(),
            Cow::Borrowed(_)
        ));
    }
}
