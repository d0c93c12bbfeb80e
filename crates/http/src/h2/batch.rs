//! New streams in batches ([`Session::refill_in_batches`], the closed model): an exchange
//! handed over while the connection's other streams are open waits, its stream not yet opened
//! in nghttp2, until half the window waits or no stream is open, and then they all leave in
//! one write. A generator faster than nginx otherwise opens one or two streams per response it
//! reads, nginx answers them in groups as small, and each group costs both sides a write, a
//! read and a wake-up (h2load's write on the next turn of its loop keeps its groups near 3;
//! these keep them near half the window). Control frames (acknowledgements, window updates)
//! never wait: only the opening of streams does.

use super::H2;
use herd_engine::{Failed, Failure, Note, Parts};
use herd_metrics::ErrorKind;
use std::time::{Duration, Instant};

/// A batch waits at least this long and at most twice as long: it ends on the first instant of
/// a grid of this step, shared by every connection of the process, this long after it began.
/// Against a fast server it fills in a fraction of this; a slow one (or streams that stall) is
/// not kept from what it would have had: the hold is a saving of the generator's CPU, which
/// only a fast server makes matter. The grid makes the connections' holds end together: the
/// loop's alarm is set again (a system call, and on a virtual machine a timer programmed by the
/// host) only when the instant it is armed for changes, and it fires at most once a step. With
/// an end of its own per hold (`now + 1 ms`), h2c at 10 connections x 10 streams against nginx
/// set the alarm once per 13 requests and took 1.14x the CPU per request it takes on the grid
/// (0.81x h2load's against 0.71x; bench/RESULTS.md, session 21).
const STEP: Duration = Duration::from_micros(500);

/// The first instant of the grid at least [`STEP`] after `now`.
fn hold_end(now: Instant) -> Instant {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(|| now);
    let at = now + STEP;
    match at.checked_duration_since(origin) {
        Some(d) => {
            let step = STEP.as_nanos();
            let steps = d.as_nanos().div_ceil(step);
            origin + Duration::from_nanos(u64::try_from(steps * step).unwrap_or(u64::MAX))
        }
        // Before the grid began (another thread's loop began it a moment later).
        None => at,
    }
}

impl H2 {
    /// Whether the held exchanges start at `now`: no stream of the connection is open, enough
    /// of them wait, the hold is over, or the connection's last call (or the server's GOAWAY)
    /// came.
    pub(super) fn due(&mut self, now: Instant) -> bool {
        let until = match self.held_until {
            Some(until) => until,
            None => {
                // The loop comes back when the hold is over, events or not.
                let until = hold_end(now);
                self.held_until = Some(until);
                self.wake = Some(until);
                until
            }
        };
        self.held.len() >= self.batch
            || self.in_flight == self.held.len()
            || self.closing
            || now >= until
    }

    /// Opens the stream of `exchange` for `parts` in nghttp2; its frames go with the next
    /// write. `held`: it waited for its batch, so if nghttp2 refuses it now (the server's
    /// GOAWAY came meanwhile) the server never saw it, and it goes again elsewhere.
    pub(super) fn start(&mut self, exchange: usize, parts: &Parts, keep: bool, held: bool) {
        let headers: Vec<(&[u8], &[u8])> = parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .collect();
        // A paced body: its first piece now, the rest on their schedule (`pace.rs`).
        let (body, pace) = match &parts.paced {
            Some(p) if p.pieces.len() > 1 => (&p.pieces[0][..], super::schedule::Pace::of(p)),
            Some(p) => (p.pieces.first().map_or(&[][..], |b| &b[..]), None),
            None => (&parts.body[..], None),
        };
        let request = herd_h2::Request {
            method: parts.method.as_bytes(),
            scheme: parts.scheme.as_bytes(),
            authority: parts.authority.as_bytes(),
            path: parts.path.as_bytes(),
            headers: &headers,
            body,
            open: pace.is_some(),
            protocol: None,
        };
        let early = (!self.h2.settled()).then_some(self.in_flight);
        match self.h2.submit(&request, exchange, keep) {
            Ok(stream_id) => {
                if let Some(Some(s)) = self.streams.get_mut(exchange) {
                    s.stream_id = stream_id;
                    // `in_flight` counts this stream already.
                    s.early = early;
                    if pace.is_some() {
                        s.pace = pace;
                        self.paced += 1;
                    }
                }
            }
            Err(e) => {
                // Reported by the next pump, which the loop does at once.
                if let Some(Some(s)) = self.streams.get_mut(exchange) {
                    s.stream_id = 0;
                }
                let f = match self.h2.goaway() {
                    Some(_) if held => Failure::new(
                        ErrorKind::H2Goaway,
                        "the server's GOAWAY came before this stream opened",
                    ),
                    _ => Failure::new(ErrorKind::H2Protocol, e.to_string()),
                };
                self.rejected.push((exchange, f, held));
            }
        }
    }

    /// Opens the streams of the held exchanges, which leave now.
    pub(super) fn release(&mut self, now: Instant) {
        self.held_until = None;
        for (exchange, parts, keep) in std::mem::take(&mut self.held) {
            if let Some(Some(s)) = self.streams.get_mut(exchange) {
                s.resp.sent = Some(now);
            }
            self.start(exchange, &parts, keep, true);
        }
    }

    /// Reports the requests nghttp2 would not take.
    pub(super) fn report_rejected(&mut self, out: &mut Vec<Note>) {
        for (exchange, f, unseen) in std::mem::take(&mut self.rejected) {
            if let Some(s) = self.take(exchange) {
                out.push(Note::Failed(Failed {
                    ticket: s.ticket,
                    failure: f,
                    received: 0,
                    unseen,
                    sent: Some(0),
                }));
            }
        }
    }
}
