//! herd's own table of a session's streams, indexed by stream id.
//!
//! Both sides see the client's stream ids rise (1, 3, 5, ...), so a stream's place is its id
//! halved, minus the first id still held: a ring that grows at the back as streams open and
//! shrinks at the front as the oldest close. No hash map, no allocation once the ring has
//! grown to the window; a stream that stalls only keeps the ring as long as its deadline.

use std::collections::VecDeque;

/// A header field kept past the call that gave it: name, value.
pub(crate) type Field = (Box<[u8]>, Box<[u8]>);

/// One stream's state, on either side.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    pub(crate) live: bool,
    pub(crate) exchange: usize,
    /// Keep headers and body bytes for the caller (a script reads them), not just count them.
    pub(crate) keep: bool,
    /// Client side: the response is an event stream (`text/event-stream`): its body is
    /// handed over as it arrives, kept or not, for its events to be read.
    pub(crate) events: bool,
    /// Bytes this side sends as the stream's body, and how many went out already.
    pub(crate) body: Vec<u8>,
    pub(crate) sent: usize,
    /// Bytes of this stream's frames written (headers included), for the caller's count of
    /// what went on the wire.
    pub(crate) wire_out: u64,
    /// Server side: the request's method and path, its other fields as `name: value\r\n`
    /// lines, and its body (the first [`KEPT_BODY`](crate::KEPT_BODY) bytes; all counted).
    pub(crate) method: Vec<u8>,
    pub(crate) path: Vec<u8>,
    pub(crate) fields: Vec<u8>,
    pub(crate) request_body: Vec<u8>,
    /// Body bytes received (the request's on a server, the response's on a client).
    pub(crate) received: usize,
    /// Client side: the request was HEAD (its response has no body whatever its length says).
    pub(crate) head: bool,
    /// Client side: the final response has no body whatever its length says (HEAD, 204, 304).
    pub(crate) bodiless: bool,
    /// Client side: the final response's `content-length`, when it has one and a body;
    /// `u64::MAX` when it is no number.
    pub(crate) length: Option<u64>,
    /// Server side: a response opened with `ServerSession::open`, its body written as it
    /// comes; `finished` once the last piece is in, then `trailers` end the stream.
    pub(crate) streaming: bool,
    pub(crate) finished: bool,
    pub(crate) trailers: Vec<Field>,
    /// nghttp2 holds the stream's DATA back until resumed (nothing was left to send).
    pub(crate) deferred: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Streams {
    ring: VecDeque<Stream>,
    /// `ring[0]`'s stream id, halved.
    base: usize,
    live: usize,
}

fn index(stream_id: i32) -> usize {
    usize::try_from(stream_id).unwrap_or(0) >> 1
}

impl Streams {
    /// Streams opened and not yet closed.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Takes the slot of a new stream; ids must rise, as RFC 9113 section 5.1.1 makes them.
    pub(crate) fn open(&mut self, stream_id: i32) -> Option<&mut Stream> {
        let at = index(stream_id);
        if self.ring.is_empty() {
            self.base = at;
        }
        let pos = at.checked_sub(self.base)?;
        while self.ring.len() <= pos {
            self.ring.push_back(Stream::default());
        }
        let stream = &mut self.ring[pos];
        if stream.live {
            return None;
        }
        stream.live = true;
        self.live += 1;
        Some(stream)
    }

    pub(crate) fn peek(&self, stream_id: i32) -> Option<&Stream> {
        let pos = index(stream_id).checked_sub(self.base)?;
        self.ring.get(pos).filter(|s| s.live)
    }

    pub(crate) fn get(&mut self, stream_id: i32) -> Option<&mut Stream> {
        let pos = index(stream_id).checked_sub(self.base)?;
        self.ring.get_mut(pos).filter(|s| s.live)
    }

    /// Frees a stream's slot, returning it (its exchange, what it kept) for the last time.
    pub(crate) fn close(&mut self, stream_id: i32) -> Option<Stream> {
        let pos = index(stream_id).checked_sub(self.base)?;
        let slot = self.ring.get_mut(pos).filter(|s| s.live)?;
        let stream = std::mem::take(slot);
        self.live -= 1;
        while self.ring.front().is_some_and(|s| !s.live) {
            self.ring.pop_front();
            self.base += 1;
        }
        Some(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stalled_stream_holds_the_ring_only_until_it_closes() {
        let mut streams = Streams::default();
        for id in [1, 3, 5, 9] {
            streams.open(id).unwrap().exchange = id as usize * 10;
        }
        assert!(streams.open(5).is_none(), "an id opens once");
        assert_eq!(streams.close(3).unwrap().exchange, 30);
        assert_eq!(streams.close(5).unwrap().exchange, 50);
        assert_eq!(streams.ring.len(), 5, "stream 1 still holds the front");
        assert_eq!(streams.close(1).unwrap().exchange, 10);
        assert_eq!(streams.ring.len(), 1, "only stream 9 is left");
        assert!(
            streams.get(7).is_none() && streams.close(7).is_none(),
            "7 never opened"
        );
        assert_eq!(streams.get(9).unwrap().exchange, 90);
        assert_eq!(streams.live(), 1);
        assert!(streams.open(1).is_none(), "ids never go back");
    }
}
