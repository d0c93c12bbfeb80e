//! `--csv FILE`: the per-second timeline, one row as each second closes (Locust's
//! `--csv-full-history`), for a spreadsheet or pandas while the run is still going.

use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::fault::in_force;
use herd_result::stream::StreamLine;
use herd_result::FaultWindow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

const FLAG: &str = "--csv";

/// The columns, in order.
pub const HEADER: &str = "t,requests,ok,failed,errors,rps,p50_ms,p90_ms,p99_ms,max_ms,\
bytes_received,status_2xx,status_4xx,status_5xx,target,whole,cpu_percent,connections,events,tokens,\
ttft_p50_ms,ttft_p99_ms,itl_p50_ms,itl_p99_ms,fault";

/// The columns of a WebSocket run, whose exchanges are messages: the same columns, the
/// second and sixth named for them (a message's reply has no status: those columns count
/// refused Upgrades), and before `fault` the sockets' own: pongs and their round trips' p99,
/// the server's closes and the refused Upgrades, each as `code:count` pairs (`1006:2 1011:1`),
/// and the send backlog as the second closed, messages and bytes (empty without
/// `--message-rate`).
pub const MESSAGES_HEADER: &str = "t,messages,ok,failed,errors,msg_per_s,p50_ms,p90_ms,p99_ms,\
max_ms,bytes_received,status_2xx,status_4xx,status_5xx,target,whole,cpu_percent,connections,\
events,tokens,ttft_p50_ms,ttft_p99_ms,itl_p50_ms,itl_p99_ms,pongs,ping_p99_ms,closes,\
handshakes_failed,backlog_messages,backlog_bytes,fault";

/// The header for a run whose exchanges are `x`.
pub fn header(x: herd_result::Exchange) -> &'static str {
    match x {
        herd_result::Exchange::Request => HEADER,
        herd_result::Exchange::Message => MESSAGES_HEADER,
    }
}

pub struct Csv {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    /// A workload's fault windows as they were told (the planned end while in force).
    faults: Vec<FaultWindow>,
    /// A WebSocket run's: its sockets' columns too.
    messages: bool,
}

impl Csv {
    pub fn create(path: &Path) -> Self {
        Csv {
            path: path.to_owned(),
            out: None,
            faults: Vec::new(),
            messages: false,
        }
    }
}

/// One record as a CSV row: every field a number but the last, the fault windows in force
/// during part of the second (`fault 1: latency 200 ms on db`, as the report labels them),
/// quoted when it needs to be.
pub fn row(r: &Record, faults: &[FaultWindow], messages: bool) -> String {
    let e = StreamLine::new(&r.second, r.whole, None).second;
    let sockets = if messages {
        let ws = e.ws.as_deref().cloned().unwrap_or_default();
        let pairs = |m: &std::collections::BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, n)| format!("{k}:{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let or_empty = |n: Option<u64>| n.map_or(String::new(), |n| n.to_string());
        format!(
            "{},{:.3},{},{},{},{},",
            ws.pongs,
            ws.ping_p99_ms,
            pairs(&ws.closes),
            pairs(&ws.handshakes_failed),
            or_empty(ws.backlog_messages),
            or_empty(ws.backlog_bytes)
        )
    } else {
        String::new()
    };
    let class = |c: &str| e.status_class.get(c).copied().unwrap_or(0);
    let (cpu, conns) = match &r.health {
        Some(h) => (
            format!("{:.1}", h.cpu_percent.iter().sum::<f64>()),
            h.open_connections.to_string(),
        ),
        None => (String::new(), String::new()),
    };
    let fault = in_force(faults, e.t)
        .into_iter()
        .map(|i| format!("fault {}: {}", i + 1, faults[i].description))
        .collect::<Vec<_>>()
        .join(" + ");
    let fault = if fault.contains([',', '"', '\n']) {
        format!("\"{}\"", fault.replace('"', "\"\""))
    } else {
        fault
    };
    // A second with no stream ended in it has no stream figures: empty, not 0.
    let streams = e.streams.as_ref().map_or(",,,".to_owned(), |s| {
        format!(
            "{:.3},{:.3},{:.3},{:.3}",
            s.ttft_p50_ms, s.ttft_p99_ms, s.itl_p50_ms, s.itl_p99_ms
        )
    });
    format!(
        "{},{},{},{},{},{:.1},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{},{cpu},{conns},{},{},{streams},{sockets}{fault}",
        e.t,
        e.requests,
        e.ok,
        e.failed,
        e.errors,
        e.rps,
        e.p50_ms,
        e.p90_ms,
        e.p99_ms,
        e.max_ms,
        e.bytes_received,
        class("2xx"),
        class("4xx"),
        class("5xx"),
        r.target.map_or(String::new(), |t| format!("{t}")),
        u8::from(r.whole),
        e.events,
        e.tokens,
    )
}

impl Sink for Csv {
    fn fault(&mut self, window: &FaultWindow) {
        match self.faults.iter_mut().find(|f| f.name == window.name) {
            Some(f) => *f = window.clone(),
            None => self.faults.push(window.clone()),
        }
    }

    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        let err = |e| SinkError::new(FLAG, &self.path, e);
        let mut out = BufWriter::new(File::create(&self.path).map_err(err)?);
        writeln!(out, "{}", header(start.config.exchange())).map_err(err)?;
        self.messages = start.config.exchange() == herd_result::Exchange::Message;
        self.out = Some(out);
        Ok(())
    }

    fn record(
        &mut self,
        r: &Record,
        _server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        let err = |e| SinkError::new(FLAG, &self.path, e);
        if let Some(out) = self.out.as_mut() {
            writeln!(out, "{}", row(r, &self.faults, self.messages)).map_err(err)?;
            out.flush().map_err(err)?;
        }
        Ok(())
    }
}
