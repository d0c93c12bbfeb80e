//! `--metrics-listen ADDR`: the run as Prometheus / OpenMetrics text while it goes on. Counters
//! and a latency histogram are cumulative over the closed seconds, so a scrape at any moment
//! reads what happened, not an average; the endpoint stays up after the run until one last
//! scrape (or a short grace), so the final seconds are not lost (vegeta's exporter loses them).
//! The same series are pushed where nobody can scrape: Prometheus remote write and OTLP, each
//! from one pusher thread that makes its last push with the final counts.

mod exposition;
mod family;
mod ladder;
mod named;
pub mod otlp;
mod push;
mod pushed;
pub mod remote_write;
mod server;
mod sockets;

pub use exposition::{buckets_for, Exposition};
pub use family::{Family, Point};
pub use otlp::otlp;
pub use push::Endpoint;
pub use pushed::Pushed;
pub use remote_write::remote_write;
pub use server::MetricsServer;

use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::RunResult;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FLAG: &str = "--metrics-listen";

/// How long the endpoint waits after the run for its last scrape.
pub const GRACE: Duration = Duration::from_secs(10);

pub struct Metrics {
    server: MetricsServer,
    state: Arc<Mutex<Exposition>>,
    grace: Duration,
    /// How many Ctrl-Cs the process has had: one more during the wait for the last scrape
    /// ends it.
    interrupts: Option<fn() -> u64>,
}

impl Metrics {
    /// Listens on `addr` now, so a port in use is refused before the first request.
    pub fn listen(addr: SocketAddr, grace: Duration) -> Result<Self, SinkError> {
        let state = Arc::new(Mutex::new(Exposition::default()));
        let server = MetricsServer::start(addr, Arc::clone(&state))
            .map_err(|e| SinkError::new(FLAG, std::path::Path::new(&addr.to_string()), e))?;
        Ok(Metrics {
            server,
            state,
            grace,
            interrupts: None,
        })
    }

    /// Lets a Ctrl-C (one more than `count` had when the wait began) end the wait for the last
    /// scrape.
    pub fn skipped_by(mut self, count: fn() -> u64) -> Self {
        self.interrupts = Some(count);
        self
    }

    /// Where it listens (the port picked when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    fn with(&self, f: impl FnOnce(&mut Exposition)) {
        with(&self.state, f);
    }

    /// The endpoint's sink for one run of a series: the endpoint stays up for the whole series,
    /// each run's series labelled with its step and counted from zero.
    pub fn step(&self) -> StepMetrics {
        StepMetrics {
            state: Arc::clone(&self.state),
        }
    }

    /// The series ended: the last step's counts are the final ones.
    pub fn end(&self) {
        self.with(|e| e.finished = true);
    }

    /// Waits up to the grace for one last scrape, saying so (the summary is printed: without a
    /// word, the wait looks like a hang); a Ctrl-C during it ends it.
    pub fn await_last_scrape(&self) {
        if self.server.scraped() {
            return;
        }
        // Counted before the words: a Ctrl-C answering them must find the count moved.
        let count = self.interrupts;
        let base = count.map_or(0, |c| c());
        let skips = if self.interrupts.is_some() {
            " (Ctrl-C skips it)"
        } else {
            ""
        };
        eprintln!(
            "herd: waiting up to {} s for a last scrape of http://{}/metrics{skips}",
            self.grace.as_secs(),
            self.server.local_addr()
        );
        self.server
            .await_last_scrape(self.grace, &|| count.is_some_and(|c| c() > base));
    }
}

fn with(state: &Mutex<Exposition>, f: impl FnOnce(&mut Exposition)) {
    let mut e = state.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut e);
}

/// One run of a series on the series' endpoint ([`Metrics::step`]).
pub struct StepMetrics {
    state: Arc<Mutex<Exposition>>,
}

impl Sink for StepMetrics {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        with(&self.state, |e| {
            *e = Exposition::default();
            e.start(start);
        });
        Ok(())
    }

    fn record(
        &mut self,
        r: &Record,
        server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        with(&self.state, |e| {
            if let Some(fresh) = server {
                e.watched(fresh);
            }
            e.add(r)
        });
        Ok(())
    }
}

impl Sink for Metrics {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        self.with(|e| e.start(start));
        Ok(())
    }

    fn record(
        &mut self,
        r: &Record,
        server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        self.with(|e| {
            if let Some(fresh) = server {
                e.watched(fresh);
            }
            e.add(r)
        });
        Ok(())
    }

    fn finish(&mut self, _result: &RunResult) -> Result<(), SinkError> {
        self.with(|e| e.finished = true);
        Ok(())
    }

    fn linger(&mut self) {
        self.await_last_scrape();
    }
}
