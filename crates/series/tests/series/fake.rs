//! A server as a function of the level, behind the `Runs` seam a series drives.

use herd_engine::Control;
use herd_result::{parse_json, RunResult};
use herd_run::{Length, Level, RunError, Runs, Sink, Stepped};
use std::cell::Cell;
use std::sync::Arc;

/// Requests every fake run schedules: enough to judge a p99 and a 1% error share.
const REQUESTS: u64 = 10_000;

pub struct Server {
    /// Everything is answered up to this level; beyond it, half the requests fail.
    pub capacity: f64,
    /// The run with this number (from 1) cannot start.
    pub fail_at: Option<usize>,
    /// Ctrl-C arrives during the run with this number (from 1).
    pub cancel_at: Option<usize>,
    pub runs: Cell<usize>,
}

impl Server {
    pub fn new(capacity: f64) -> Self {
        Server {
            capacity,
            fail_at: None,
            cancel_at: None,
            runs: Cell::new(0),
        }
    }
}

impl Runs for Server {
    fn check(&self, _level: Level, _length: Length) -> Result<(), RunError> {
        Ok(())
    }

    fn run(
        &self,
        level: Level,
        _length: Length,
        control: &Arc<Control>,
        sink: &mut dyn Sink,
    ) -> Result<RunResult, RunError> {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        if self.fail_at == Some(n) {
            return Err(RunError::Start("the fake server cannot start".into()));
        }
        if self.cancel_at == Some(n) {
            control.cancel();
        }
        let x = match level {
            Level::Rate(r) => r,
            Level::Users(u) => u as f64,
        };
        let failed = if x > self.capacity { REQUESTS / 2 } else { 0 };
        let mut r = parse_json(
            include_str!("../../../result/tests/fixtures/run-open.json"),
            "run-open.json",
        )
        .expect("a herd result");
        let t = &mut r.totals;
        (t.scheduled, t.sent, t.completed) = (REQUESTS, REQUESTS, REQUESTS);
        (t.ok, t.failed, t.errors, t.dropped) = (REQUESTS - failed, failed, 0, 0);
        r.latency_ms.count = REQUESTS;
        r.duration_s = REQUESTS as f64 / x;
        sink.finished();
        Ok(r)
    }

    fn rate_unit(&self) -> &'static str {
        "req/s"
    }
}

/// What a series told its observer, in order.
#[derive(Default)]
pub struct Told {
    pub ran: Vec<(f64, String)>,
    pub probed: Vec<(usize, f64, bool)>,
}

impl Sink for Told {
    fn stepped(&mut self, step: &Stepped, _run: &mut RunResult) {
        match step {
            Stepped::Swept { level, target } => self.ran.push((*level, target.name.clone())),
            Stepped::Probed { n, judged, .. } => {
                self.probed.push((*n, judged.probe.level, judged.held()))
            }
        }
    }
}
