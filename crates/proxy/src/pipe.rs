//! One direction of one connection: the bytes read from one side, through the toxics of its
//! stream in the order they were added, to the other side.
//!
//! `queues[i]` is stage i's input and `queues[i + 1]` its output; the last queue is what
//! waits to be written. With no toxic there is one queue, and the relay writes what it reads
//! straight through when nothing waits.

use std::collections::VecDeque;
use std::time::Instant;

use crate::request::Req;
use crate::stage::{Ask, CloseCause, Item, Stage, Tally};
use crate::toxic::{Kind, Stream, Toxic};

pub(crate) struct Pipe {
    pub stream: Stream,
    stages: Vec<Stage>,
    queues: Vec<VecDeque<Item>>,
    /// Bytes of the first waiting item already written.
    pub written_front: usize,
    /// Bytes read and neither written nor dropped: reading stops above a bound.
    pub buffered: u64,
    /// The source's end was read.
    pub src_done: bool,
    /// The end was written (the destination's write side shut).
    pub dst_done: bool,
}

/// What stepping a pipe's toxics gave.
pub(crate) struct Stepped {
    pub wake: Option<Instant>,
    pub reset: bool,
    pub dropped_chunks: u64,
    /// Causes of closes a toxic made this step.
    pub closes: Vec<CloseCause>,
    pub http_hits: u64,
}

impl Pipe {
    pub fn new(stream: Stream) -> Pipe {
        Pipe {
            stream,
            stages: Vec::new(),
            queues: vec![VecDeque::new()],
            written_front: 0,
            buffered: 0,
            src_done: false,
            dst_done: false,
        }
    }

    /// Nothing between the sides and nothing waiting: bytes may go straight through.
    pub fn direct(&self) -> bool {
        self.stages.is_empty() && self.queues[0].is_empty()
    }

    pub fn push(&mut self, item: Item) {
        if let Item::Data { bytes, .. } = &item {
            self.buffered += bytes.len() as u64;
        }
        self.queues[0].push_back(item);
    }

    pub fn out(&mut self) -> &mut VecDeque<Item> {
        self.queues.last_mut().expect("at least one queue")
    }

    /// A request went up: each `http` toxic of this (downstream) pipe matches its response.
    pub fn note_request(&mut self, req: &Req) {
        for s in &mut self.stages {
            s.note_request(req);
        }
    }

    /// A new HTTP/2 stream: the first of this pipe's `http2` toxics that hits it.
    pub fn h2_choose(&mut self, req: &Req) -> Option<crate::h2_fault::H2Hit> {
        self.stages.iter_mut().find_map(|s| s.h2_choose(req))
    }

    /// An `http2` toxic acts on this connection.
    pub fn h2_faulty(&self) -> bool {
        self.stages.iter().any(|s| s.h2_active())
    }

    pub fn has_http(&self) -> bool {
        self.stages
            .iter()
            .any(|s| matches!(s.toxic.kind, Kind::Http(_)))
    }

    pub fn has_stages(&self) -> bool {
        !self.stages.is_empty()
    }

    /// Steps every toxic in order, so an item can cross the whole chain in one step.
    pub fn step(&mut self, now: Instant) -> Stepped {
        let mut out = Stepped {
            wake: None,
            reset: false,
            dropped_chunks: 0,
            closes: Vec::new(),
            http_hits: 0,
        };
        let mut tally = Tally::default();
        for i in 0..self.stages.len() {
            let (a, b) = self.queues.split_at_mut(i + 1);
            let before = self.stages[i].close_cause;
            let (wake, ask) = self.stages[i].step(now, &mut a[i], &mut b[0], &mut tally);
            if let (None, Some(c)) = (before, self.stages[i].close_cause) {
                out.closes.push(c);
            }
            out.reset |= ask == Ask::Reset;
            out.wake = match (out.wake, wake) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
        }
        self.buffered = self.buffered.saturating_sub(tally.dropped_bytes);
        out.dropped_chunks = tally.dropped_chunks;
        out.http_hits = tally.http_hits;
        out
    }

    /// Puts the toxics of this pipe's stream in line with `toxics`: gone ones removed (what
    /// they held goes on), changed ones updated, new ones added at the end. Returns true when
    /// a removed toxic closes the connection (`timeout`).
    pub fn sync(&mut self, toxics: &[Toxic], seed: impl Fn(&Toxic) -> u64, now: Instant) -> bool {
        let mine: Vec<&Toxic> = toxics.iter().filter(|t| t.stream == self.stream).collect();
        let mut close = false;
        let mut i = 0;
        while i < self.stages.len() {
            let name = &self.stages[i].toxic.name;
            match mine.iter().find(|t| &t.name == name) {
                Some(t) => {
                    if **t != self.stages[i].toxic {
                        self.stages[i].update(t, now);
                    }
                    i += 1;
                }
                None => close |= self.remove(i),
            }
        }
        for t in mine {
            if !self.stages.iter().any(|s| s.toxic.name == t.name) {
                let at = self.stages.len();
                self.stages.push(Stage::new(t, seed(t), now));
                // The new stage's input is a new queue; what already waits to be written
                // stays ahead of it.
                self.queues.insert(at, VecDeque::new());
            }
        }
        close
    }

    fn remove(&mut self, i: usize) -> bool {
        let stage = self.stages.remove(i);
        let (held, close) = stage.remove();
        let input = self.queues.remove(i);
        let next = &mut self.queues[i];
        next.extend(held);
        next.extend(input);
        if close {
            next.push_back(Item::Close);
        }
        close
    }
}
