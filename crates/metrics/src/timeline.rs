use crate::stats::micros;
use crate::{ByName, ErrorKind, Outcome, SecondLatency, StatusCounts, Verdict};
use herd_spill::{get_varint, put_varint, Spilled};
use herd_spill::{Spill, SpillError};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

/// Seconds older than this (behind the newest second reported) are sealed: their latency
/// histogram becomes a few percentiles. Workers hand over each second within a tick of its end,
/// so a minute leaves room for a stalled worker and keeps the live part of the timeline bounded.
pub const SEAL_AFTER_S: u64 = 60;

/// What ended in one second of the measurement, from one worker or merged over all of them.
#[derive(Clone, Debug)]
pub struct Second {
    /// Seconds since the measurement started.
    pub index: u64,
    pub ok: u64,
    pub failed: u64,
    pub errors: [u64; ErrorKind::COUNT],
    /// Status counts by class: index 1 = 1xx … 5 = 5xx, 0 = anything else.
    pub status_class: [u64; 6],
    pub bytes_received: u64,
    /// Bytes written for the requests that ended in this second.
    pub bytes_sent: u64,
    /// The responses' body bytes: their sum, smallest and largest (`u64::MAX` and 0 with none).
    pub body_bytes: u64,
    pub body_min: u64,
    pub body_max: u64,
    /// Events read in the event streams (Server-Sent Events) that ended in this second, and
    /// their tokens (`--sse llm`).
    pub events: u64,
    pub tokens: u64,
    /// Those streams' time to first event and gaps between events (`None` without any).
    pub streams: Option<Box<crate::SecondStreams>>,
    /// Responses by status code: a run killed before its end still tells its codes.
    pub status: StatusCounts,
    /// gRPC calls that ended in this second, by `grpc-status` (none without calls).
    pub grpc: Option<Box<crate::GrpcCounts>>,
    /// WebSocket pings answered, closes and refused handshakes in this second (none without
    /// any).
    pub ws: Option<Box<crate::SocketSecond>>,
    /// Latency of the responses that ended in this second, in microseconds (requests that got
    /// no response are counted in `errors` only).
    pub latency: SecondLatency,
    /// Service time (from the send) of the same responses, in microseconds.
    pub service: SecondLatency,
    /// The same outcomes per request name, when the run has more than one name (cleared when
    /// the second is sealed).
    pub by_name: ByName,
}

impl Second {
    pub fn new(index: u64) -> Self {
        Second {
            index,
            ok: 0,
            failed: 0,
            errors: [0; ErrorKind::COUNT],
            status_class: [0; 6],
            bytes_received: 0,
            bytes_sent: 0,
            body_bytes: 0,
            body_min: u64::MAX,
            body_max: 0,
            events: 0,
            tokens: 0,
            streams: None,
            status: StatusCounts::default(),
            grpc: None,
            ws: None,
            latency: SecondLatency::default(),
            service: SecondLatency::default(),
            by_name: ByName::default(),
        }
    }

    pub fn record(&mut self, o: &Outcome) {
        self.count(o);
        if o.result.is_ok() {
            self.latency.saturating_record(micros(o.latency));
            if let Some(s) = o.service {
                self.service.saturating_record(micros(s));
            }
        }
    }

    /// Counts `o` (its verdict, status class, bytes, error) without its latency and service.
    #[inline]
    pub(crate) fn count(&mut self, o: &Outcome) {
        self.bytes_received += o.bytes_received;
        self.bytes_sent += o.bytes_sent;
        if let Some(s) = &o.stream {
            self.events += s.events;
            self.tokens += s.tokens;
            self.streams.get_or_insert_default().record(s);
        }
        match o.result {
            Ok(v) => {
                match v {
                    Verdict::Ok => self.ok += 1,
                    Verdict::Failed => self.failed += 1,
                }
                if o.status != crate::NO_STATUS {
                    let class = (o.status / 100) as usize;
                    self.status_class[if (1..=5).contains(&class) { class } else { 0 }] += 1;
                    self.status.add(o.status, 1);
                }
                if let Some(code) = o.grpc {
                    self.grpc.get_or_insert_default().add(code, 1);
                }
                self.body_bytes += o.body_bytes;
                self.body_min = self.body_min.min(o.body_bytes);
                self.body_max = self.body_max.max(o.body_bytes);
            }
            Err(k) => self.errors[k.index()] += 1,
        }
    }

    /// Requests that ended in this second.
    pub fn requests(&self) -> u64 {
        self.ok + self.failed + self.error_total()
    }

    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    pub fn merge(&mut self, other: &Second) {
        self.ok += other.ok;
        self.failed += other.failed;
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += b;
        }
        for (a, b) in self.status_class.iter_mut().zip(other.status_class.iter()) {
            *a += b;
        }
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
        self.body_bytes += other.body_bytes;
        self.body_min = self.body_min.min(other.body_min);
        self.body_max = self.body_max.max(other.body_max);
        self.events += other.events;
        self.tokens += other.tokens;
        if let Some(s) = &other.streams {
            self.streams.get_or_insert_default().add(s);
        }
        for (code, n) in other.status.iter() {
            self.status.add(code, n);
        }
        if let Some(g) = &other.grpc {
            self.grpc.get_or_insert_default().merge(g);
        }
        if let Some(w) = &other.ws {
            self.ws.get_or_insert_default().merge(w);
        }
        self.latency.add(&other.latency);
        self.service.add(&other.service);
        self.by_name.merge(&other.by_name);
    }

    /// Keeps the summaries and frees the histograms and the per-name entries.
    pub fn seal(&mut self) {
        self.latency.seal();
        self.service.seal();
        if let Some(s) = &mut self.streams {
            s.seal();
        }
        if let Some(w) = &mut self.ws {
            w.ping.seal();
        }
        self.by_name.clear();
    }

    /// Bytes this second holds, its own size included: what the timeline grows by per second.
    pub fn held_bytes(&self) -> usize {
        std::mem::size_of::<Second>()
            + self.latency.heap_bytes()
            + self.service.heap_bytes()
            + self.by_name.held_bytes()
            + self.status.heap_bytes()
            + self.streams.as_ref().map_or(0, |s| s.held_bytes())
            + self.ws.as_ref().map_or(0, |w| w.heap_bytes())
    }
}

/// A sealed second on disk (the timeline's spill); its per-name entries are gone once sealed.
impl Spilled for Second {
    fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.by_name.is_empty(), "only sealed seconds are spilled");
        let counts = [
            self.index,
            self.ok,
            self.failed,
            self.bytes_received,
            self.bytes_sent,
            self.body_bytes,
            self.body_min,
            self.body_max,
            self.events,
            self.tokens,
        ];
        for v in counts.iter().chain(&self.errors).chain(&self.status_class) {
            put_varint(out, *v);
        }
        put_varint(out, self.status.iter().count() as u64);
        for (code, n) in self.status.iter() {
            put_varint(out, u64::from(code));
            put_varint(out, n);
        }
        // gRPC's codes: a count of the slots that follow (0 without calls).
        let grpc = self.grpc.as_deref().map_or(&[][..], |g| &g.0[..]);
        put_varint(out, grpc.len() as u64);
        for n in grpc {
            put_varint(out, *n);
        }
        // A WebSocket's sockets: a tag, then their figures.
        match &self.ws {
            None => out.push(0),
            Some(w) => {
                out.push(1);
                w.encode(out);
            }
        }
        self.latency.encode(out);
        self.service.encode(out);
        // The event streams: a tag, then their summaries.
        match &self.streams {
            None => out.push(0),
            Some(s) => {
                out.push(1);
                s.encode(out);
            }
        }
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut s = Second::new(get_varint(input)?);
        s.ok = get_varint(input)?;
        s.failed = get_varint(input)?;
        s.bytes_received = get_varint(input)?;
        s.bytes_sent = get_varint(input)?;
        s.body_bytes = get_varint(input)?;
        s.body_min = get_varint(input)?;
        s.body_max = get_varint(input)?;
        s.events = get_varint(input)?;
        s.tokens = get_varint(input)?;
        for v in s.errors.iter_mut().chain(s.status_class.iter_mut()) {
            *v = get_varint(input)?;
        }
        for _ in 0..get_varint(input)? {
            let code = u16::try_from(get_varint(input)?).ok()?;
            s.status.add(code, get_varint(input)?);
        }
        let slots = get_varint(input)?;
        if slots > 0 {
            let mut g = crate::GrpcCounts::default();
            for i in 0..slots {
                g.add(u8::try_from(i).ok()?, get_varint(input)?);
            }
            s.grpc = Some(Box::new(g));
        }
        let (&tag, rest) = input.split_first()?;
        *input = rest;
        if tag == 1 {
            s.ws = Some(Box::new(crate::SocketSecond::decode(input)?));
        }
        s.latency = SecondLatency::decode(input)?;
        s.service = SecondLatency::decode(input)?;
        let (&tag, rest) = input.split_first()?;
        *input = rest;
        if tag == 1 {
            s.streams = Some(Box::new(crate::SecondStreams::decode(input)?));
        }
        Some(s)
    }
}

/// Adds `s` to the second of its index in `seconds`, or makes it that second.
fn fold(seconds: &mut BTreeMap<u64, Second>, s: Second) {
    match seconds.entry(s.index) {
        Entry::Occupied(mut have) => have.get_mut().merge(&s),
        Entry::Vacant(slot) => {
            slot.insert(s);
        }
    }
}

/// Collects the seconds every worker reports and merges those of the same index.
#[derive(Debug, Default)]
pub struct Timeline {
    seconds: BTreeMap<u64, Second>,
    /// Every second below this one is sealed.
    sealed_below: u64,
    /// Every second below this one is in `spill`, out of memory until the end.
    spilled_below: u64,
    spill: Spill<Second>,
    /// Parts of spilled seconds that came after them (a worker stalled for minutes), added to
    /// them at the end.
    late: BTreeMap<u64, Second>,
}

impl Timeline {
    pub fn add(&mut self, s: Second) {
        let index = s.index;
        if index < self.spilled_below {
            fold(&mut self.late, s);
            return;
        }
        fold(&mut self.seconds, s);
        let seal_below = index.saturating_sub(SEAL_AFTER_S);
        if seal_below > self.sealed_below {
            for (_, sec) in self.seconds.range_mut(self.sealed_below..seal_below) {
                sec.seal();
            }
            self.sealed_below = seal_below;
        }
    }

    /// Bytes the timeline holds (seconds and their latency summaries; map overhead aside).
    pub fn held_bytes(&self) -> usize {
        let held = self.seconds.values().chain(self.late.values());
        held.map(Second::held_bytes).sum::<usize>() + self.spill.held_bytes()
    }

    /// Seconds held in memory, not spilled.
    pub fn held(&self) -> usize {
        self.seconds.len() + self.late.len()
    }

    /// Moves the sealed seconds below `index` out of memory, to be read back by
    /// [`Timeline::finish`]. [`Timeline::get`] no longer answers for them.
    pub fn spill_below(&mut self, index: u64) {
        let index = index.min(self.sealed_below);
        if index <= self.spilled_below {
            return;
        }
        let keep = self.seconds.split_off(&index);
        for (_, mut s) in std::mem::replace(&mut self.seconds, keep) {
            s.seal();
            self.spill.push(&s);
        }
        self.spilled_below = index;
    }

    /// The most recent second with data, if any.
    pub fn last(&self) -> Option<&Second> {
        self.seconds.values().next_back()
    }

    pub fn get(&self, index: u64) -> Option<&Second> {
        self.seconds.get(&index)
    }

    /// Every second from 0 to `len - 1`, empty ones included, so a stall shows as zeros rather
    /// than as a gap that plots would bridge. Responses that arrived after the window (requests
    /// in flight at its end) fold into the last second rather than make a stub second of their own.
    ///
    /// Spilled seconds are read back first; only an error reading the spill file fails.
    pub fn finish(mut self, len: u64) -> Result<Vec<Second>, SpillError> {
        let mut seconds: BTreeMap<u64, Second> = self
            .spill
            .read_back()?
            .into_iter()
            .map(|s| (s.index, s))
            .collect();
        for part in self.late.into_values() {
            fold(&mut seconds, part);
        }
        seconds.append(&mut self.seconds);
        if len == 0 {
            return Ok(seconds.into_values().collect());
        }
        let mut out: Vec<Second> = (0..len)
            .map(|i| seconds.remove(&i).unwrap_or_else(|| Second::new(i)))
            .collect();
        let last = out.last_mut().expect("len > 0");
        for late in seconds.values() {
            last.merge(late);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds_from_workers_merge_and_gaps_fill() {
        let mut t = Timeline::default();
        for worker in 0..2 {
            let mut s = Second::new(2);
            s.record(&Outcome::completed(
                0,
                Duration::from_millis(worker + 1),
                Duration::ZERO,
                200,
                Verdict::Ok,
            ));
            t.add(s);
        }
        let mut e = Second::new(0);
        e.record(&Outcome::error(
            0,
            Duration::from_millis(1),
            ErrorKind::Reset,
        ));
        t.add(e);
        let mut late = Second::new(7);
        late.record(&Outcome::error(
            0,
            Duration::from_millis(1),
            ErrorKind::Timeout,
        ));
        t.add(late);
        let v = t.finish(4).unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(
            v.iter().map(Second::requests).collect::<Vec<_>>(),
            vec![1, 0, 2, 1]
        );
        assert_eq!(v[2].status_class[2], 2);
        assert_eq!(v[0].errors[ErrorKind::Reset.index()], 1);
    }

    /// Two workers' seconds, each with `n` responses of spread latencies.
    fn busy_second(t: &mut Timeline, index: u64, n: u64) {
        for worker in 0..2 {
            let mut s = Second::new(index);
            for i in 0..n {
                let us = 100 + (i * 7_919 + worker * 13 + index) % 20_000;
                s.record(&Outcome::completed(
                    0,
                    Duration::from_micros(us),
                    Duration::ZERO,
                    200,
                    Verdict::Ok,
                ));
            }
            t.add(s);
        }
    }

    #[test]
    fn timeline_bytes_per_second_stay_constant_after_the_first_minute() {
        let mut t = Timeline::default();
        let mut at = Vec::new();
        for sec in 0..600 {
            busy_second(&mut t, sec, 3_000);
            at.push(t.held_bytes());
        }
        // Past the first minute each new second adds its sealed summaries (latency and service
        // time), its bytes, body sizes and status codes (what a killed run's file reports), a
        // pointer for gRPC's codes, and nothing else: 50 MB a day (older seconds wait on disk:
        // `spill_below`). Each error class adds its count (WebSocket's two took 584 to 600,
        // sse_stalled 608), the event streams' pointer 8 more, a WebSocket's sockets' 8 more.
        let per_second = (at[599] - at[299]) / 300;
        assert!(per_second <= 624, "{per_second} bytes per second");
        assert_eq!(at[599] - at[499], at[499] - at[399]);
        // The live minute is bounded too: 6,000 distinct latencies a second, 64 KiB at most.
        assert!(at[119] < 60 * 65_536, "{}", at[119]);
        let v = t.finish(600).unwrap();
        assert_eq!(v[10].requests(), 6_000);
        let p99 = v[10].latency.value_at_quantile(0.99);
        assert!(v[10].latency.is_sealed() && p99 > 19_000, "{p99}");
    }

    #[test]
    fn a_spilled_timeline_holds_the_window_and_finishes_as_a_kept_one() {
        let (mut kept, mut spilled) = (Timeline::default(), Timeline::default());
        let mut most_held = 0;
        for sec in 0..900 {
            // A quiet stretch: seconds with nothing in them.
            let n = if (400..420).contains(&sec) { 0 } else { 50 };
            busy_second(&mut kept, sec, n);
            busy_second(&mut spilled, sec, n);
            spilled.spill_below(sec.saturating_sub(300));
            most_held = most_held.max(spilled.held());
        }
        assert!(most_held <= 301, "{most_held} seconds held");
        assert_eq!(spilled.spill.len(), 599, "seconds 0 to 598 on disk");
        // A stalled worker's part of a second already on disk still counts.
        for t in [&mut kept, &mut spilled] {
            let mut late = Second::new(5);
            late.record(&Outcome::error(
                0,
                Duration::from_millis(1),
                ErrorKind::Timeout,
            ));
            t.add(late);
        }
        let (a, b) = (kept.finish(900).unwrap(), spilled.finish(900).unwrap());
        assert_eq!(b.len(), 900);
        assert_eq!(b[5].errors[ErrorKind::Timeout.index()], 1);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    #[test]
    fn per_second_latency_is_of_responses_only() {
        let mut s = Second::new(0);
        s.record(&Outcome::completed(
            0,
            Duration::from_millis(2),
            Duration::ZERO,
            503,
            Verdict::Failed,
        ));
        s.record(&Outcome::error(
            0,
            Duration::from_secs(10),
            ErrorKind::Timeout,
        ));
        assert_eq!((s.requests(), s.latency.len()), (2, 1));
        assert!(s.latency.max() < 3_000);
    }
}

#[cfg(test)]
mod grpc_tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_spilled_second_keeps_its_grpc_codes() {
        let mut s = Second::new(3);
        let mut o = Outcome::completed(
            0,
            Duration::from_millis(2),
            Duration::ZERO,
            200,
            Verdict::Ok,
        );
        for code in [0, 0, 14] {
            o.grpc = Some(code);
            s.record(&o);
        }
        s.seal();
        let mut bytes = Vec::new();
        s.encode(&mut bytes);
        let back = Second::decode(&mut bytes.as_slice()).unwrap();
        let codes: Vec<_> = back.grpc.unwrap().iter().collect();
        assert_eq!(codes, [("OK", 2), ("UNAVAILABLE", 1)]);
        let mut plain = Second::new(4);
        plain.seal();
        bytes.clear();
        plain.encode(&mut bytes);
        assert!(Second::decode(&mut bytes.as_slice())
            .unwrap()
            .grpc
            .is_none());
    }
}
