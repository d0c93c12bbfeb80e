//! A response read as an event stream (Server-Sent Events): when its events arrived. The
//! parser that finds the events is the protocol's (`herd-http`); what they measure is the
//! engine's, turned into a [`herd_metrics::StreamOutcome`] with the exchange's instants.

use std::time::Instant;

/// One response's events so far. Allocated once per stream, when its head says
/// `text/event-stream`; nothing more per event but a gap pushed (and, for an event split
/// across reads, its bytes held in `carry` until its end arrives).
#[derive(Clone, Debug, Default)]
pub struct EventStream {
    /// Read as an LLM's tokens (`--sse llm`): only events carrying content count, `[DONE]`
    /// ends the stream, `usage.completion_tokens` is the number of tokens.
    pub llm: bool,
    /// When the first counted event arrived (the first token).
    pub first: Option<Instant>,
    /// When the last counted event arrived.
    pub last: Option<Instant>,
    /// Events counted (content events with `llm`).
    pub events: u64,
    /// Microseconds between consecutive counted events.
    pub gaps: Vec<u32>,
    /// `data: [DONE]` was read.
    pub done: bool,
    /// The server's `usage.completion_tokens`, when an event said it.
    pub usage: Option<u64>,
    /// The bytes of an event whose end has not arrived yet (a gRPC message's prefix).
    pub carry: Vec<u8>,
    /// A gRPC call's reply (`application/grpc`): its events are its messages, each counted
    /// when its last byte arrives; `left` is what the current message still lacks.
    pub grpc: bool,
    pub left: u64,
}

impl EventStream {
    pub fn new(llm: bool) -> Self {
        EventStream {
            llm,
            ..EventStream::default()
        }
    }

    /// An event that counts arrived at `now`.
    #[inline]
    pub fn event(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let gap = now.saturating_duration_since(last).as_micros();
            self.gaps.push(u32::try_from(gap).unwrap_or(u32::MAX));
        } else {
            self.first = Some(now);
        }
        self.last = Some(now);
        self.events += 1;
    }
}
