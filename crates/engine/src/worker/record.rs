//! Turning an exchange into an [`Outcome`] and counting it: the warm-up rule and the connection
//! counts, kept once for every run.

use crate::{EventStream, Failure, Request, Response};
use herd_metrics::{ErrorKind, Outcome, Phases, Recorder, StreamOutcome, Verdict};
use std::time::{Duration, Instant};

/// When one exchange started, was sent and ended, for its [`Outcome`].
pub(crate) struct Span {
    pub measure_start: Instant,
    /// Latency is measured from here.
    pub intended: Instant,
    /// When the request was written; `None` when it never was.
    pub sent: Option<Instant>,
    pub done: Instant,
    /// Time to open the connection, when the exchange opened one, and its TLS part.
    pub connect: Option<Duration>,
    pub tls: Option<Duration>,
    /// Sent as the connection's last call: its `Connection: close` twin went on the wire.
    pub last_call: bool,
}

/// The outcome of one exchange: a full response in `resp` with the script's verdict, or the
/// failure.
///
/// A response's latency is the sum of its phases: `blocked` is all of the time from the
/// intended instant to the send that the connection's opening (`connect`) does not account
/// for: a wait for a place on a connection, for a pipeline's or HTTP/2's batch, the loop's
/// lag behind an arrival. `waiting` runs from the send to the first byte, `receiving` from
/// there to the end.
pub(crate) fn outcome(
    req: &Request,
    resp: &Response,
    span: Span,
    result: Result<(Verdict, Option<String>), Failure>,
) -> Outcome {
    let result = match (result, resp.events.as_deref()) {
        (Ok(_), Some(ev)) if ev.llm && !ev.done => Err(Failure::new(
            ErrorKind::SseNoDone,
            format!(
                "the event stream ended without `data: [DONE]` after {} content events",
                ev.events
            ),
        )),
        (result, _) => result,
    };
    let stream = resp.events.as_deref().map(|ev| Box::new(stream(ev, &span)));
    // A gRPC call keeps its response, whose trailers say its code (a call that got no valid
    // response has none). Only kept responses are looked at: no flag in the request, whose
    // size is memory per connection.
    let grpc = match (&result, req.keep_response && !resp.headers.is_empty()) {
        (Ok(_), true) => {
            herd_metrics::grpc_status(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())))
        }
        _ => None,
    };
    let (status, result, message, body_bytes) = match result {
        Ok((verdict, message)) => (resp.status, Ok(verdict), message, resp.body_len),
        Err(f) => (0, Err(f.kind), Some(f.message), 0),
    };
    let first = resp.first_byte.filter(|_| result.is_ok());
    let service = span.sent.map(|s| span.done.saturating_duration_since(s));
    // Sent at its intended instant (the closed model's usual case): latency is the service
    // time, and nothing waited before the send; a clock subtraction fewer.
    let (latency, blocked) = match span.sent {
        Some(s) if s == span.intended => (service.unwrap_or_default(), None),
        Some(s) => {
            let before = s.saturating_duration_since(span.intended);
            let blocked = before.saturating_sub(span.connect.unwrap_or_default());
            (
                span.done.saturating_duration_since(span.intended),
                (!blocked.is_zero()).then_some(blocked),
            )
        }
        None => (span.done.saturating_duration_since(span.intended), None),
    };
    // A response read whole in one pass (most of them) has its first byte at its end: no
    // time receiving, all of its service time waiting; two clock subtractions fewer.
    let (waiting, receiving) = match first {
        Some(f) if f == span.done => (service, Some(Duration::ZERO)),
        Some(f) => (
            span.sent.map(|s| f.saturating_duration_since(s)),
            Some(span.done.saturating_duration_since(f)),
        ),
        None => (None, None),
    };
    let phases = Phases {
        tls: span.tls,
        blocked,
        waiting,
        receiving,
    };
    Outcome {
        phases,
        name: req.name,
        at: span.done.saturating_duration_since(span.measure_start),
        latency,
        service,
        connect: span.connect,
        status,
        result,
        message,
        bytes_sent: match (span.sent, resp.bytes_sent) {
            (None, _) => 0,
            (Some(_), 0) => match (&req.closing, span.last_call) {
                (Some(closing), true) => closing.len() as u64,
                _ => req.bytes.len() as u64,
            },
            (Some(_), wire) => wire,
        },
        bytes_received: resp.bytes_received,
        body_bytes,
        stream,
        grpc,
    }
}

/// What a response's events measured, from the exchange's instants.
fn stream(ev: &EventStream, span: &Span) -> StreamOutcome {
    let since = |from: Instant| ev.first.map(|f| f.saturating_duration_since(from));
    StreamOutcome {
        first: since(span.intended),
        first_sent: span.sent.and_then(since),
        gaps: ev.gaps.clone(),
        events: ev.events,
        duration: ev
            .first
            .map_or(Duration::ZERO, |f| span.done.saturating_duration_since(f)),
        tokens: ev.usage.unwrap_or(ev.events),
    }
}

/// What a worker counts besides its recorder.
#[derive(Default)]
pub(crate) struct Tally {
    /// Measured outcomes.
    pub scheduled: u64,
    /// Outcomes of iterations intended during the warm-up.
    pub warmup: u64,
    pub last_done: Option<Instant>,
    pub open_conns: u64,
    pub peak_conns: u64,
    pub opened: u64,
    /// Connections and requests per protocol.
    pub protocols: Vec<crate::ProtocolUse>,
    /// Connections per TLS version, cipher suite and ALPN protocol.
    pub tls: Vec<crate::TlsUse>,
    /// Connections the server closed first: their TIME_WAIT is on the server's side.
    pub server_closed: u64,
    /// The second's fastest answers, for the next second's nap.
    pub nap: super::nap::Nap,
    /// The naps decided so far.
    pub naps: crate::Naps,
}

impl Tally {
    /// Records `outcome` of an iteration intended at `iteration`, unless the warm-up was still
    /// on then: whether outcomes count is decided once per iteration, never split across the
    /// line. Whether it counted.
    pub fn finish(
        &mut self,
        measure_start: Instant,
        iteration: Instant,
        done: Instant,
        outcome: &Outcome,
        recorder: &mut Recorder,
    ) -> bool {
        self.nap.saw(outcome);
        if iteration < measure_start {
            self.warmup += 1;
            return false;
        }
        self.scheduled += 1;
        // Answers, and failures the server caused, stretch the measured window; requests the
        // run itself cut off at its end do not.
        if outcome.result != Err(herd_metrics::ErrorKind::Unfinished) {
            self.last_done = Some(done);
        }
        recorder.record(outcome);
        true
    }

    pub fn connection_opened(&mut self) {
        self.opened += 1;
        self.open_conns += 1;
        self.peak_conns = self.peak_conns.max(self.open_conns);
    }

    pub fn connection_closed(&mut self) {
        self.open_conns = self.open_conns.saturating_sub(1);
    }
}
