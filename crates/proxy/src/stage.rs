//! A toxic at work on one direction of one connection: toxiproxy's `ToxicStub` as a state
//! machine the relay loop steps, instead of a goroutine reading a channel.
//!
//! A stage takes items from its input queue and puts them on its output queue, now or at a
//! due instant it keeps (`held`); the loop steps it when bytes arrive or its instant comes.
//! Whether the toxic acts on this connection at all (its toxicity) is drawn once, when it
//! meets the connection, from the stage's own generator, seeded from the proxy's seed, the
//! connection's number and the toxic's name: a run with the same seed and the same order of
//! connections makes the same choices.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::h2_fault::H2Hit;
use crate::http_fault::{Out, ResponseTap};
use crate::request::Req;
use crate::toxic::{Kind, Toxic};

/// What travels through a direction: bytes stamped with when they arrived, the end of the
/// source's stream (a half-close), or a toxic's close of the whole connection.
#[derive(Debug)]
pub(crate) enum Item {
    Data {
        bytes: Vec<u8>,
        stamp: Instant,
    },
    Eof,
    Close,
    /// Reset both sides once what precedes is written (the `http` toxic's `reset`).
    Reset,
}

/// What a stage asks of the connection beyond its items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ask {
    Nothing,
    /// Reset both sides now (TCP RST): `reset_peer`.
    Reset,
}

/// Why a stage ended the connection, for the proxy's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CloseCause {
    Limit,
    Timeout,
}

pub(crate) struct Stage {
    pub toxic: Toxic,
    active: bool,
    rng: SmallRng,
    held: VecDeque<(Instant, Item)>,
    /// The earliest the next item may leave: keeps the order of what is held.
    next_due: Option<Instant>,
    started: Instant,
    /// `reset_peer`'s instant once data came, `timeout`'s from the start.
    deadline: Option<Instant>,
    transmitted: u64,
    dropped_last: bool,
    /// A close went out; what comes after is dropped.
    closed: bool,
    pub(crate) close_cause: Option<CloseCause>,
    /// The `http` toxic's view of the connection's responses.
    tap: Option<Box<ResponseTap>>,
    /// The `http2` toxic's count of the connection's matching streams.
    matched: u64,
}

/// Counts a stage hands back to the pipe.
#[derive(Default)]
pub(crate) struct Tally {
    pub dropped_bytes: u64,
    pub dropped_chunks: u64,
    /// Responses an `http` toxic hit.
    pub http_hits: u64,
}

impl Stage {
    pub fn new(toxic: &Toxic, seed: u64, now: Instant) -> Stage {
        let mut rng = SmallRng::seed_from_u64(seed);
        let active = draw(&mut rng, toxic.toxicity);
        let mut s = Stage {
            toxic: toxic.clone(),
            active,
            rng,
            held: VecDeque::new(),
            next_due: None,
            started: now,
            deadline: None,
            transmitted: 0,
            dropped_last: false,
            closed: false,
            close_cause: None,
            tap: matches!(toxic.kind, Kind::Http(_)).then(|| Box::new(ResponseTap::new())),
            matched: 0,
        };
        s.arm(now);
        s
    }

    /// New attributes or toxicity: toxiproxy restarts the toxic on each connection (a new
    /// draw, its timers from now) and keeps its per-connection state (`limit_data`'s count).
    pub fn update(&mut self, toxic: &Toxic, now: Instant) {
        self.toxic = toxic.clone();
        self.active = draw(&mut self.rng, toxic.toxicity);
        self.started = now;
        self.deadline = None;
        self.arm(now);
    }

    fn arm(&mut self, now: Instant) {
        if let (true, Kind::Timeout { timeout }) = (self.active, &self.toxic.kind) {
            if *timeout > 0 {
                self.deadline = Some(now + ms(*timeout));
            }
        }
    }

    /// Removed from the chain: what it holds goes on at once (toxiproxy drops no data on
    /// removal); `timeout` closes the connection as it goes, as toxiproxy's cleanup does.
    pub fn remove(mut self) -> (VecDeque<Item>, bool) {
        let items = self.held.drain(..).map(|(_, i)| i).collect();
        let close = self.active && matches!(self.toxic.kind, Kind::Timeout { .. });
        (items, close)
    }

    /// Moves what can move from `input` to `output`; returns when it next needs a step and
    /// whether the connection must be reset.
    pub fn step(
        &mut self,
        now: Instant,
        input: &mut VecDeque<Item>,
        output: &mut VecDeque<Item>,
        tally: &mut Tally,
    ) -> (Option<Instant>, Ask) {
        if self.closed {
            for item in input.drain(..) {
                if let Item::Data { bytes, .. } = item {
                    tally.dropped_bytes += bytes.len() as u64;
                }
            }
        } else if !self.active {
            output.extend(input.drain(..));
            return (None, Ask::Nothing);
        }
        while let Some(item) = input.pop_front() {
            self.take(now, item, output, tally);
            if self.closed {
                return self.step(now, input, output, tally);
            }
        }
        if let (false, Some(d)) = (self.closed, self.deadline) {
            if d <= now {
                self.deadline = None;
                match self.toxic.kind {
                    Kind::ResetPeer { .. } => return (None, Ask::Reset),
                    _ => {
                        self.close(output, Some(CloseCause::Timeout));
                        return (None, Ask::Nothing);
                    }
                }
            }
        }
        while let Some((due, _)) = self.held.front() {
            if *due > now {
                break;
            }
            let (_, item) = self.held.pop_front().expect("front exists");
            output.push_back(item);
        }
        let wake = match (self.held.front().map(|(d, _)| *d), self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (wake, Ask::Nothing)
    }

    fn close(&mut self, output: &mut VecDeque<Item>, cause: Option<CloseCause>) {
        output.extend(self.held.drain(..).map(|(_, i)| i));
        output.push_back(Item::Close);
        self.closed = true;
        self.close_cause = cause;
    }

    /// Ends the stream with `item` after what is held (each at its instant); what comes
    /// after is dropped.
    fn end_with(&mut self, now: Instant, item: Item, output: &mut VecDeque<Item>) {
        self.pass(now, item, output);
        self.closed = true;
    }

    /// A request went up the connection: the `http` toxic matches its response with it.
    pub fn note_request(&mut self, req: &Req) {
        if let Some(tap) = &mut self.tap {
            tap.requests.push_back(req.clone());
        }
    }

    /// A new HTTP/2 stream of the connection: whether this (`http2`) toxic hits it.
    pub fn h2_choose(&mut self, req: &Req) -> Option<H2Hit> {
        match &self.toxic.kind {
            Kind::Http2(fault) if self.active => {
                fault.choose(req, &mut self.matched, &mut self.rng)
            }
            _ => None,
        }
    }

    /// An `http2` toxic that acts on this connection.
    pub fn h2_active(&self) -> bool {
        self.active && matches!(self.toxic.kind, Kind::Http2(_))
    }

    /// Holds an item until `due`, after everything held before it.
    fn hold(&mut self, due: Instant, item: Item) {
        let due = self.next_due.map_or(due, |n| n.max(due));
        self.next_due = Some(due);
        self.held.push_back((due, item));
    }

    /// Passes an item on now, unless something is held before it.
    fn pass(&mut self, now: Instant, item: Item, output: &mut VecDeque<Item>) {
        if self.held.is_empty() {
            output.push_back(item);
        } else {
            self.hold(now, item);
        }
    }

    fn take(&mut self, now: Instant, item: Item, output: &mut VecDeque<Item>, tally: &mut Tally) {
        let (bytes, stamp) = match item {
            Item::Data { bytes, stamp } => (bytes, stamp),
            Item::Close | Item::Reset => return self.end_with(now, item, output),
            Item::Eof => return self.take_eof(now, output),
        };
        match self.toxic.kind.clone() {
            Kind::Latency { latency, jitter } => {
                let mut delay = latency;
                if jitter > 0 {
                    delay += self.rng.gen_range(0..jitter * 2) - jitter;
                }
                let due = stamp + ms(delay.max(0));
                self.hold(due, Item::Data { bytes, stamp: due });
            }
            Kind::Bandwidth { rate } if rate > 0 => {
                // Large chunks go out in pieces of 100 ms at the rate, as toxiproxy sends them.
                let piece = (rate as usize).saturating_mul(100).max(1);
                for part in bytes.chunks(piece) {
                    let start = self.next_due.map_or(now, |n| n.max(now));
                    let due = start + Duration::from_micros(part.len() as u64 * 1000 / rate as u64);
                    self.hold(
                        due,
                        Item::Data {
                            bytes: part.to_vec(),
                            stamp,
                        },
                    );
                }
            }
            Kind::Slicer {
                average_size,
                size_variation,
                delay,
            } => {
                let avg = average_size.max(1) as usize;
                let var = (size_variation.max(0) as usize).min(avg - 1);
                let mut cuts = vec![0];
                slice(&mut self.rng, 0, bytes.len(), avg, var, &mut cuts);
                let gap = Duration::from_micros(delay.max(0) as u64);
                let mut due = self.next_due.map_or(now, |n| n.max(now));
                for w in cuts.windows(2) {
                    let part = bytes[w[0]..w[1]].to_vec();
                    self.held
                        .push_back((due, Item::Data { bytes: part, stamp }));
                    due += gap;
                }
                self.next_due = Some(due);
            }
            Kind::Timeout { .. } => tally.dropped_bytes += bytes.len() as u64,
            Kind::ResetPeer { timeout } => {
                tally.dropped_bytes += bytes.len() as u64;
                self.deadline.get_or_insert(now + ms(timeout.max(0)));
            }
            Kind::LimitData { bytes: limit } => {
                let limit = limit.max(0) as u64;
                let room = limit.saturating_sub(self.transmitted) as usize;
                let mut bytes = bytes;
                if bytes.len() > room {
                    tally.dropped_bytes += (bytes.len() - room) as u64;
                    bytes.truncate(room);
                }
                self.transmitted += bytes.len() as u64;
                if !bytes.is_empty() {
                    self.pass(now, Item::Data { bytes, stamp }, output);
                }
                if self.transmitted >= limit {
                    self.close(output, Some(CloseCause::Limit));
                }
            }
            Kind::PacketLoss {
                loss_rate,
                correlation,
            } => {
                let p = loss_rate + if self.dropped_last { correlation } else { 0.0 };
                self.dropped_last = self.rng.gen::<f64>() < p;
                if self.dropped_last {
                    tally.dropped_bytes += bytes.len() as u64;
                    tally.dropped_chunks += 1;
                } else {
                    self.pass(now, Item::Data { bytes, stamp }, output);
                }
            }
            Kind::Http(fault) => {
                let Some(tap) = self.tap.as_mut() else {
                    return self.pass(now, Item::Data { bytes, stamp }, output);
                };
                let mut outs = Vec::new();
                tap.take(
                    &fault,
                    &mut self.rng,
                    now,
                    &bytes,
                    &mut outs,
                    &mut tally.http_hits,
                );
                for o in outs {
                    match o {
                        Out::Bytes(bytes, Some(due)) => self.hold(due, Item::Data { bytes, stamp }),
                        Out::Bytes(bytes, None) => {
                            self.pass(now, Item::Data { bytes, stamp }, output)
                        }
                        Out::Close => return self.end_with(now, Item::Close, output),
                        Out::Reset => return self.end_with(now, Item::Reset, output),
                    }
                }
            }
            // The `http2` toxic acts where the connection's frames are followed (`h2_follow`).
            Kind::Bandwidth { .. } | Kind::SlowClose { .. } | Kind::Http2(_) => {
                self.pass(now, Item::Data { bytes, stamp }, output)
            }
        }
    }

    fn take_eof(&mut self, now: Instant, output: &mut VecDeque<Item>) {
        match self.toxic.kind {
            Kind::SlowClose { delay } => self.hold(now + ms(delay.max(0)), Item::Eof),
            Kind::ResetPeer { timeout } => {
                self.deadline.get_or_insert(now + ms(timeout.max(0)));
            }
            Kind::Latency { .. } | Kind::Bandwidth { .. } | Kind::Slicer { .. } => {
                self.hold(now, Item::Eof)
            }
            _ => self.pass(now, Item::Eof, output),
        }
    }

    #[cfg(test)]
    pub fn active(&self) -> bool {
        self.active
    }
}

fn draw(rng: &mut SmallRng, toxicity: f32) -> bool {
    // toxiproxy: `rand.Float32() < toxicity`, so 1 always acts and 0 never does.
    rng.gen::<f32>() < toxicity
}

fn ms(n: i64) -> Duration {
    Duration::from_millis(n.max(0) as u64)
}

/// toxiproxy's slicer: halve around the middle ± the variation until a piece is within the
/// variation of the average size; `cuts` gets each piece's end.
fn slice(
    rng: &mut SmallRng,
    start: usize,
    end: usize,
    avg: usize,
    var: usize,
    cuts: &mut Vec<usize>,
) {
    if (end - start).saturating_sub(avg) <= var {
        if end > start {
            cuts.push(end);
        }
        return;
    }
    let mut mid = start + (end - start) / 2;
    if var > 0 {
        let shift = rng.gen_range(0..var * 2);
        mid = (mid + shift).saturating_sub(var).clamp(start + 1, end - 1);
    }
    slice(rng, start, mid, avg, var, cuts);
    slice(rng, mid, end, avg, var, cuts);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn toxic(v: serde_json::Value) -> Toxic {
        Toxic::from_json(&v).unwrap()
    }

    fn data(n: usize, at: Instant) -> Item {
        Item::Data {
            bytes: vec![b'x'; n],
            stamp: at,
        }
    }

    fn sizes(q: &VecDeque<Item>) -> Vec<usize> {
        q.iter()
            .map(|i| match i {
                Item::Data { bytes, .. } => bytes.len(),
                Item::Eof => 0,
                Item::Close | Item::Reset => usize::MAX,
            })
            .collect()
    }

    #[test]
    fn latency_holds_each_chunk_from_its_arrival_in_order() {
        let t0 = Instant::now();
        let mut s = Stage::new(
            &toxic(json!({"type": "latency", "attributes": {"latency": 50}})),
            1,
            t0,
        );
        let (mut input, mut out) = (VecDeque::from([data(10, t0)]), VecDeque::new());
        let mut tally = Tally::default();
        let (wake, _) = s.step(t0, &mut input, &mut out, &mut tally);
        assert_eq!(wake, Some(t0 + ms(50)));
        assert!(out.is_empty());
        input.push_back(data(5, t0 + ms(10)));
        input.push_back(Item::Eof);
        let (wake, _) = s.step(t0 + ms(49), &mut input, &mut out, &mut tally);
        assert_eq!((wake, out.len()), (Some(t0 + ms(50)), 0));
        s.step(t0 + ms(50), &mut input, &mut out, &mut tally);
        assert_eq!(sizes(&out), vec![10]);
        let (wake, _) = s.step(t0 + ms(60), &mut input, &mut out, &mut tally);
        assert_eq!(
            sizes(&out),
            vec![10, 5, 0],
            "the end follows the data at once"
        );
        assert_eq!(wake, None);
    }

    #[test]
    fn limit_data_passes_exactly_the_limit_then_closes() {
        let t0 = Instant::now();
        let mut s = Stage::new(
            &toxic(json!({"type": "limit_data", "attributes": {"bytes": 25}})),
            1,
            t0,
        );
        let mut input = VecDeque::from([data(10, t0), data(10, t0), data(10, t0), data(10, t0)]);
        let mut out = VecDeque::new();
        let mut tally = Tally::default();
        s.step(t0, &mut input, &mut out, &mut tally);
        assert_eq!(sizes(&out), vec![10, 10, 5, usize::MAX]);
        assert_eq!(tally.dropped_bytes, 15);
        assert_eq!(s.close_cause, Some(CloseCause::Limit));
    }

    #[test]
    fn reset_peer_resets_after_its_timeout_from_the_first_data() {
        let t0 = Instant::now();
        let mut s = Stage::new(
            &toxic(json!({"type": "reset_peer", "attributes": {"timeout": 20}})),
            1,
            t0,
        );
        let mut tally = Tally::default();
        let (mut input, mut out) = (VecDeque::new(), VecDeque::new());
        assert_eq!(
            s.step(t0 + ms(100), &mut input, &mut out, &mut tally),
            (None, Ask::Nothing)
        );
        input.push_back(data(3, t0));
        let t1 = t0 + ms(100);
        assert_eq!(
            s.step(t1, &mut input, &mut out, &mut tally),
            (Some(t1 + ms(20)), Ask::Nothing)
        );
        assert_eq!(
            s.step(t1 + ms(20), &mut input, &mut out, &mut tally).1,
            Ask::Reset
        );
        assert!(out.is_empty());
    }

    #[test]
    fn bandwidth_spreads_bytes_at_the_rate() {
        let t0 = Instant::now();
        // 10 KB/s: 1,000 bytes take 100 ms; 2,500 bytes go in pieces of 1,000 (100 ms each).
        let mut s = Stage::new(
            &toxic(json!({"type": "bandwidth", "attributes": {"rate": 10}})),
            1,
            t0,
        );
        let (mut input, mut out) = (VecDeque::from([data(2500, t0)]), VecDeque::new());
        let mut tally = Tally::default();
        let (wake, _) = s.step(t0, &mut input, &mut out, &mut tally);
        assert_eq!(wake, Some(t0 + ms(100)));
        s.step(t0 + ms(200), &mut input, &mut out, &mut tally);
        assert_eq!(sizes(&out), vec![1000, 1000]);
        let (wake, _) = s.step(t0 + ms(249), &mut input, &mut out, &mut tally);
        assert_eq!(wake, Some(t0 + ms(250)));
    }

    #[test]
    fn slicer_cuts_into_pieces_near_the_average_size_delay_apart() {
        let t0 = Instant::now();
        let mut s = Stage::new(
            &toxic(
                json!({"type": "slicer", "attributes": {"average_size": 100, "size_variation": 20, "delay": 1000}}),
            ),
            7,
            t0,
        );
        let (mut input, mut out) = (VecDeque::from([data(1000, t0)]), VecDeque::new());
        let mut tally = Tally::default();
        let (wake, _) = s.step(t0, &mut input, &mut out, &mut tally);
        assert_eq!(
            (out.len(), wake),
            (1, Some(t0 + ms(1))),
            "a slice at once, the next 1 ms on"
        );
        s.step(t0 + ms(100), &mut input, &mut out, &mut tally);
        let got = sizes(&out);
        assert_eq!(got.iter().sum::<usize>(), 1000);
        assert!(got.iter().all(|&n| (40..=140).contains(&n)), "{got:?}");
    }

    #[test]
    fn toxicity_is_drawn_from_the_seed() {
        let t0 = Instant::now();
        let t = toxic(json!({"type": "timeout", "toxicity": 0.5}));
        let draws = |base: u64| -> Vec<bool> {
            (0..64)
                .map(|i| Stage::new(&t, base + i, t0).active())
                .collect()
        };
        assert_eq!(draws(0), draws(0));
        let on = draws(0).iter().filter(|a| **a).count();
        assert!((16..=48).contains(&on), "{on} of 64 at toxicity 0.5");
    }
}
