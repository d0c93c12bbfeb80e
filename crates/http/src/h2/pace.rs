//! A request body sent in pieces on a schedule (a gRPC client stream's messages at
//! `--message-rate`): the first piece goes with the request, each next one `interval` after
//! the one before, the last ends the stream. The loop comes back at the next piece's instant
//! ([`herd_engine::Session::wake_at`]); a piece late by more than one interval goes at once,
//! with the ones due meanwhile, so the schedule does not drift.

use super::H2;
use std::time::Instant;

impl H2 {
    /// Writes the pieces due at `now` and notes when the next one is.
    pub(super) fn pace(&mut self, now: Instant) {
        self.pace_wake = None;
        if self.paced == 0 {
            return;
        }
        let mut next: Option<Instant> = None;
        let mut ended = 0;
        for s in self.streams.iter_mut().flatten() {
            let Some(p) = s.pace.as_mut() else {
                continue;
            };
            let interval = p.paced.interval;
            let mut due = *p.due.get_or_insert(now + interval);
            while due <= now && p.next < p.paced.pieces.len() {
                let last = p.next + 1 == p.paced.pieces.len();
                // A stream already gone (answered early, reset) takes nothing more.
                let _ = self.h2.write(s.stream_id, &p.paced.pieces[p.next], last);
                p.next += 1;
                due += interval;
            }
            if p.next == p.paced.pieces.len() {
                s.pace = None;
                ended += 1;
                continue;
            }
            p.due = Some(due);
            next = Some(next.map_or(due, |n| n.min(due)));
        }
        self.paced -= ended;
        self.pace_wake = next;
    }
}
