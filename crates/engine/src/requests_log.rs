//! `--requests-log`: one [`Line`] per measured request, handed off the worker threads in
//! batches. A worker only copies a few integers into its own buffer per request; formatting,
//! compression and the disk belong to whoever holds the [`Receiver`] (herd-live's writer
//! thread). The loop never waits for that thread: a batch it has no room for is counted lost
//! (and said so), never silently dropped and never a stall in the measurement.

use herd_metrics::{ErrorKind, Outcome, Verdict};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lines a worker gathers before it hands them on (and at least once a second, on its tick).
pub const BATCH: usize = 4096;
/// A worker hands on what it has at least this often, so the file follows the run.
const EVERY: Duration = Duration::from_secs(1);
/// Batches waiting for the writer, per run, before the workers start counting lines lost.
const QUEUED: usize = 64;

/// One measured request, times in microseconds since the measurement started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    /// When it should have been sent: latency counts from here.
    pub intended_us: u64,
    /// When it was written; `None` when it never was.
    pub sent_us: Option<u64>,
    pub latency_us: u64,
    /// From the send to the end; `None` when it was never sent.
    pub service_us: Option<u64>,
    /// 0 when no response arrived.
    pub status: u16,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub result: Result<Verdict, ErrorKind>,
    /// The request name's index (`Outcome::name`).
    pub name: u32,
    /// The connection that carried it, unique in the run; `None` when it never had one.
    pub connection: Option<u64>,
}

impl Line {
    /// `outcome`'s line, carried by `connection`.
    pub fn of(outcome: &Outcome, connection: Option<u64>) -> Line {
        let us = |d: std::time::Duration| d.as_micros() as u64;
        let done = us(outcome.at);
        Line {
            intended_us: done.saturating_sub(us(outcome.latency)),
            sent_us: outcome.service.map(|s| done.saturating_sub(us(s))),
            latency_us: us(outcome.latency),
            service_us: outcome.service.map(us),
            status: outcome.status,
            bytes_in: outcome.bytes_received,
            bytes_out: outcome.bytes_sent,
            result: outcome.result,
            name: outcome.name,
            connection,
        }
    }
}

/// The run's end of the log: the workers send batches into it.
#[derive(Debug)]
pub struct RequestsLog {
    tx: SyncSender<Vec<Line>>,
    lost: AtomicU64,
}

impl RequestsLog {
    /// A log and the receiver its batches arrive on.
    pub fn new() -> (Arc<RequestsLog>, Receiver<Vec<Line>>) {
        let (tx, rx) = mpsc::sync_channel(QUEUED);
        let log = RequestsLog {
            tx,
            lost: AtomicU64::new(0),
        };
        (Arc::new(log), rx)
    }

    /// Lines the workers could not hand on: the writer was behind, or gone.
    pub fn lost(&self) -> u64 {
        self.lost.load(Relaxed)
    }
}

/// A worker's buffer of lines not yet handed on.
pub(crate) struct Batch {
    log: Arc<RequestsLog>,
    lines: Vec<Line>,
    /// When the lines gathered so far go, full or not.
    due: Instant,
}

impl Batch {
    pub fn new(log: Arc<RequestsLog>, now: Instant) -> Batch {
        Batch {
            log,
            lines: Vec::with_capacity(BATCH),
            due: now + EVERY,
        }
    }

    /// On the worker's tick: hands on what a second gathered.
    pub fn tick(&mut self, now: Instant) {
        if now >= self.due {
            self.due = now + EVERY;
            self.hand_on();
        }
    }

    #[inline]
    pub fn push(&mut self, line: Line) {
        self.lines.push(line);
        if self.lines.len() >= BATCH {
            self.hand_on();
        }
    }

    /// Hands the lines on if the writer has room, else counts them lost: the loop never waits.
    fn hand_on(&mut self) {
        if self.lines.is_empty() {
            return;
        }
        let lines = std::mem::replace(&mut self.lines, Vec::with_capacity(BATCH));
        match self.log.tx.try_send(lines) {
            Ok(()) => {}
            Err(TrySendError::Full(lines)) | Err(TrySendError::Disconnected(lines)) => {
                self.log.lost.fetch_add(lines.len() as u64, Relaxed);
                self.lines = lines;
                self.lines.clear();
            }
        }
    }

    /// The last lines, at the end of the run: the load is over, so waiting for the writer
    /// costs no measurement.
    pub fn finish(mut self) {
        if self.lines.is_empty() {
            return;
        }
        let lines = std::mem::take(&mut self.lines);
        let n = lines.len() as u64;
        if self.log.tx.send(lines).is_err() {
            self.log.lost.fetch_add(n, Relaxed);
        }
    }
}
