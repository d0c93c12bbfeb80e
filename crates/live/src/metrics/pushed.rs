//! The sink both pushes are: the endpoint's series kept as the records come, laid out by the
//! receiver's encoding and pushed from a [`Pusher`] thread every few seconds, the final counts
//! pushed once more at the end. Remote write and OTLP differ only in the encoding.

use super::exposition::Exposition;
use super::push::{Endpoint, Format, Pusher};
use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::RunResult;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// A push's body from the series so far and the instant the measurement started.
pub type Encode = fn(&Exposition, SystemTime) -> Vec<u8>;

/// A push output (`--prometheus-remote-write`, `--otlp`).
pub struct Pushed {
    flag: &'static str,
    to: Endpoint,
    format: Format,
    every: Duration,
    encode: Encode,
    state: Arc<Mutex<Exposition>>,
    start: SystemTime,
    pusher: Option<Pusher>,
}

impl Pushed {
    pub(crate) fn new(
        flag: &'static str,
        to: Endpoint,
        format: Format,
        every: Duration,
        encode: Encode,
    ) -> Self {
        Pushed {
            flag,
            to,
            format,
            every,
            encode,
            state: Arc::new(Mutex::new(Exposition::default())),
            start: SystemTime::UNIX_EPOCH,
            pusher: None,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Exposition> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sink for Pushed {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        self.state().start(start);
        self.start = start.measure_start;
        let (state, from, encode) = (Arc::clone(&self.state), self.start, self.encode);
        let pusher = Pusher::start(
            self.flag,
            self.to.clone(),
            self.format,
            self.every,
            move || encode(&state.lock().unwrap_or_else(|e| e.into_inner()), from),
        )
        .map_err(|e| SinkError::new(self.flag, Path::new(&self.to.url), e))?;
        self.pusher = Some(pusher);
        Ok(())
    }

    fn record(
        &mut self,
        r: &Record,
        server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        let mut state = self.state();
        if let Some(fresh) = server {
            state.watched(fresh);
        }
        state.add(r);
        Ok(())
    }

    fn notes(&mut self) -> Vec<String> {
        self.pusher
            .as_ref()
            .and_then(Pusher::note)
            .into_iter()
            .collect()
    }

    fn finish(&mut self, _result: &RunResult) -> Result<(), SinkError> {
        let body = {
            let mut e = self.state();
            e.finished = true;
            (self.encode)(&e, self.start)
        };
        if let Some(p) = &mut self.pusher {
            p.finish(body);
        }
        Ok(())
    }
}
