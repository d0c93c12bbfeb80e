//! [`Socket`]: what one WebSocket carries whatever carries it (its own TCP connection after
//! HTTP/1.1's Upgrade, or a stream of an HTTP/2 connection after RFC 8441's extended CONNECT):
//! its messages framed and masked into `out`, the server's frames read from the bytes given,
//! replies matched to the messages waiting in `queue`, pings on a schedule, pongs and closes
//! told to the loop as notes. No I/O here: the session around it moves the bytes.

use super::frame::{self, Head};
use super::{field_value, WebSocket, MAX_MESSAGE};
use herd_engine::{Failed, Failure, Note, Request, Response, Ticket};
use herd_metrics::{ErrorKind, SocketEvent};
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A message waiting for its reply: what its [`Response`] will say, made only when the reply
/// comes (a `Response` in the queue was a move of its 88 bytes in and out, and a drop, per
/// message).
pub(crate) struct Waiting {
    pub(crate) ticket: Ticket,
    /// The value of the matched field, with `--match`.
    id: Option<Box<[u8]>>,
    /// The frame, until the socket is open (then it is in `out`).
    pub(crate) frame: Option<Box<[u8]>>,
    /// When the frame went out, where it waited for the socket to open; `None`: when handed
    /// over.
    pub(crate) sent: Option<Instant>,
    /// The frame's bytes on the wire.
    pub(crate) bytes: u32,
    /// Its reply is kept (a workload's checks and extractions read it).
    pub(crate) keep: bool,
    /// The socket's last message (a workload's `ws: close`): closed once it is answered.
    pub(crate) last: bool,
    /// Not a message: the Upgrade that opens the socket ([`herd_engine::SocketRole::Open`]),
    /// answered by the server's `101`.
    pub(crate) upgrade: bool,
}

impl Waiting {
    pub(crate) fn failed(self, why: &Failure) -> Note {
        Note::Failed(Failed {
            ticket: self.ticket,
            failure: why.clone(),
            received: 0,
            unseen: self.frame.is_some(),
            sent: Some(u64::from(self.bytes)).filter(|_| self.frame.is_none()),
        })
    }

    /// The response this message's reply (or the server's refusal) makes.
    pub(crate) fn response(&self) -> Response {
        Response {
            sent: self.sent,
            bytes_sent: u64::from(self.bytes),
            ..Response::default()
        }
    }
}

/// Pings on a fixed schedule (`--ping-interval`), boxed: a socket that does not ping pays a
/// pointer for them.
pub(crate) struct Pinger {
    every: Duration,
    /// The next ping's intended instant.
    pub(crate) next: Instant,
    seq: u32,
    /// Pings out and not yet answered: their number (their payload) and intended instant.
    out: VecDeque<(u32, Instant)>,
    /// The instant the loop must pump at, named in this pump (`Session::wake_at`).
    pub(crate) wake: Option<Instant>,
}

/// Pings a socket keeps waiting for: more and the oldest are given up (a server may answer
/// only the latest, as RFC 6455 5.5.3 allows).
const PINGS_OUT: usize = 64;

pub(crate) struct Socket {
    pub(crate) ws: Arc<WebSocket>,
    /// Messages waiting for their replies, oldest first.
    pub(crate) queue: VecDeque<Waiting>,
    /// Bytes to send: frames, pongs, a close (and, over HTTP/1.1, the Upgrade request first).
    pub(crate) out: Vec<u8>,
    /// Received and not yet consumed: a partial frame (over HTTP/1.1, a partial head).
    pub(crate) input: Vec<u8>,
    /// A message in fragments: its payload so far, its frames' bytes and first byte's instant.
    parts: Option<(Vec<u8>, u64, Instant)>,
    /// Masks are drawn from here (xorshift, seeded at random per socket).
    rng: u64,
    pub(crate) pinger: Option<Box<Pinger>>,
}

impl Socket {
    pub(crate) fn new(ws: Arc<WebSocket>) -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0);
        Socket {
            ws,
            queue: VecDeque::with_capacity(1),
            out: Vec::new(),
            input: Vec::new(),
            parts: None,
            rng: h.finish() | 1,
            pinger: None,
        }
    }

    /// The socket opened at `now`: pings start (`--ping-interval`) and the messages held for
    /// the handshake go out, each marked sent now.
    pub(crate) fn opened(&mut self, now: Instant) {
        if let Some(every) = self.ws.ping_interval {
            self.pinger = Some(Box::new(Pinger {
                every,
                next: now + every,
                seq: 0,
                out: VecDeque::new(),
                wake: Some(now + every),
            }));
        }
        for w in &mut self.queue {
            if let Some(f) = w.frame.take() {
                self.out.extend_from_slice(&f);
                w.sent = Some(now);
            }
        }
    }

    /// Frames `req` as a message: straight into `out` when the socket is `open`, else held
    /// with it until it opens.
    pub(crate) fn submit(&mut self, ticket: Ticket, req: &Request, open: bool) {
        let mask = self.mask();
        let (frame, bytes) = if open {
            let at = self.out.len();
            frame::encode(frame::TEXT, &req.bytes, mask, &mut self.out);
            (None, self.out.len() - at)
        } else {
            let mut f = Vec::with_capacity(req.bytes.len() + 14);
            frame::encode(frame::TEXT, &req.bytes, mask, &mut f);
            let n = f.len();
            (Some(f.into_boxed_slice()), n)
        };
        let id = self
            .ws
            .field
            .as_deref()
            .and_then(|field| field_value(&req.bytes, field))
            .map(Box::from);
        self.queue.push_back(Waiting {
            ticket,
            id,
            frame,
            sent: None,
            bytes: bytes as u32,
            keep: req.keep_response,
            last: req.last,
            upgrade: false,
        });
    }

    /// Takes the exchange of `req`, the Upgrade that opens this socket: answered by the
    /// server's answer to it, ahead of every message.
    pub(crate) fn submit_upgrade(&mut self, ticket: Ticket, req: &Request) {
        self.queue.push_front(Waiting {
            ticket,
            id: None,
            frame: None,
            sent: None,
            bytes: req.bytes.len() as u32,
            keep: req.keep_response,
            last: req.last,
            upgrade: true,
        });
    }

    /// Takes `got`, just received on an open socket, with what an earlier read left.
    pub(crate) fn take(
        &mut self,
        got: &[u8],
        now: Instant,
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        if self.input.is_empty() {
            // The usual read: whole frames, nothing left over to keep.
            let used = self.frames(got, now, out)?;
            if used < got.len() {
                self.input.extend_from_slice(&got[used..]);
            }
        } else {
            let mut held = std::mem::take(&mut self.input);
            held.extend_from_slice(got);
            let used = self.frames(&held, now, out)?;
            held.drain(..used);
            self.input = held;
        }
        Ok(())
    }

    /// Every message waiting fails with `why`; what was received is dropped.
    pub(crate) fn fail_all(&mut self, why: &Failure, out: &mut Vec<Note>) {
        for w in self.queue.drain(..) {
            out.push(w.failed(why));
        }
        self.input.clear();
        self.parts = None;
    }

    /// Gives up the message of `ticket` (matched by a field, a late reply matches nothing).
    pub(crate) fn forget(&mut self, ticket: Ticket) {
        self.queue.retain(|w| w.ticket != ticket);
    }

    /// Sends the pings due by `now`, each on its own intended instant (a loop that fell
    /// behind sends the ones it owes at once, timed from when they were due).
    pub(crate) fn ping(&mut self, now: Instant) {
        let Some(mut p) = self.pinger.take() else {
            return;
        };
        while p.next <= now {
            p.seq = p.seq.wrapping_add(1);
            let mask = self.mask();
            frame::encode(frame::PING, &p.seq.to_be_bytes(), mask, &mut self.out);
            if p.out.len() == PINGS_OUT {
                p.out.pop_front();
            }
            p.out.push_back((p.seq, p.next));
            p.next += p.every;
            p.wake = Some(p.next);
        }
        self.pinger = Some(p);
    }

    /// A pong: the round trip of the ping it answers (and the older ones given up).
    fn pong(&mut self, payload: &[u8], now: Instant, out: &mut Vec<Note>) {
        let (Some(p), Ok(seq)) = (self.pinger.as_mut(), <[u8; 4]>::try_from(payload)) else {
            return;
        };
        let seq = u32::from_be_bytes(seq);
        if let Some(i) = p.out.iter().position(|&(s, _)| s == seq) {
            let (_, intended) = p.out[i];
            p.out.drain(..=i);
            out.push(Note::Socket(SocketEvent::Pong(
                now.saturating_duration_since(intended),
            )));
        }
    }

    pub(crate) fn mask(&mut self) -> [u8; 4] {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng as u32).to_ne_bytes()
    }

    /// Takes the frames at the start of `bytes`: how many bytes they took.
    pub(crate) fn frames(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<Note>,
    ) -> Result<usize, Failure> {
        let mut at = 0;
        // A read usually ends on a frame's end: no decode of the nothing after it.
        while at < bytes.len() {
            let head = frame::decode(&bytes[at..], MAX_MESSAGE)
                .map_err(|why| Failure::new(ErrorKind::Protocol, format!("WebSocket: {why}")))?;
            let Some(h) = head else { break };
            let payload = &bytes[at + h.start..at + h.end];
            self.frame(h, payload, now, out)?;
            at += h.end;
        }
        Ok(at)
    }

    /// One whole frame from the server.
    fn frame(
        &mut self,
        h: Head,
        payload: &[u8],
        now: Instant,
        out: &mut Vec<Note>,
    ) -> Result<(), Failure> {
        let wire = (h.end) as u64;
        match h.opcode {
            frame::TEXT | frame::BINARY if self.parts.is_some() => Err(Failure::new(
                ErrorKind::Protocol,
                "WebSocket: a new message began inside a fragmented one",
            )),
            frame::TEXT | frame::BINARY if h.fin => {
                self.message(payload, wire, now, out);
                Ok(())
            }
            frame::TEXT | frame::BINARY => {
                self.parts = Some((payload.to_vec(), wire, now));
                Ok(())
            }
            frame::CONTINUATION => {
                let Some((mut whole, bytes, first)) = self.parts.take() else {
                    return Err(Failure::new(
                        ErrorKind::Protocol,
                        "WebSocket: a continuation frame with no message begun",
                    ));
                };
                if whole.len() as u64 + payload.len() as u64 > MAX_MESSAGE {
                    return Err(Failure::new(
                        ErrorKind::Protocol,
                        format!("WebSocket: a message over {MAX_MESSAGE} bytes"),
                    ));
                }
                whole.extend_from_slice(payload);
                if h.fin {
                    self.message(&whole, bytes + wire, first, out);
                } else {
                    self.parts = Some((whole, bytes + wire, first));
                }
                Ok(())
            }
            frame::PING => {
                let mask = self.mask();
                frame::encode(frame::PONG, payload, mask, &mut self.out);
                Ok(())
            }
            frame::PONG => {
                self.pong(payload, now, out);
                Ok(())
            }
            _ => {
                let (code, reason) = frame::close_code(payload);
                out.push(Note::Socket(SocketEvent::Closed(code)));
                // Answered with the same code, as RFC 6455 section 5.5.1 asks.
                let mask = self.mask();
                frame::encode(
                    frame::CLOSE,
                    &payload[..payload.len().min(2)],
                    mask,
                    &mut self.out,
                );
                Err(Failure::new(
                    ErrorKind::WsClosed,
                    format!(
                        "the server closed the WebSocket with code {code}{}{}",
                        if reason.is_empty() { "" } else { ": " },
                        String::from_utf8_lossy(reason)
                    ),
                ))
            }
        }
    }

    /// A whole message from the server: the reply to the message it matches, if any (a
    /// message nothing waits for is the server's own, and is not counted).
    fn message(&mut self, payload: &[u8], wire: u64, first: Instant, out: &mut Vec<Note>) {
        let at = match &self.ws.field {
            None => (!self.queue.is_empty()).then_some(0),
            Some(field) => field_value(payload, field)
                .and_then(|id| self.queue.iter().position(|w| w.id.as_deref() == Some(id))),
        };
        let Some(w) = at.and_then(|i| match i {
            0 => self.queue.pop_front(),
            _ => self.queue.remove(i),
        }) else {
            return;
        };
        let mut resp = Response {
            // A message has no status: the 101 was the Upgrade's, once per connection.
            status: herd_metrics::NO_STATUS,
            keep_alive: true,
            first_byte: Some(first),
            bytes_received: wire,
            body_len: payload.len() as u64,
            ..w.response()
        };
        if w.keep {
            resp.body = payload.into();
        }
        if w.last {
            // Its socket's last message: a close frame (1000) goes before the loop closes
            // the connection (the exchange was its last call).
            let mask = self.mask();
            frame::encode(frame::CLOSE, &1000u16.to_be_bytes(), mask, &mut self.out);
        }
        out.push(Note::Response(w.ticket, resp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server's unmasked text frame of `payload` (under 126 bytes).
    fn reply(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0x81, payload.len() as u8];
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn replies_cut_anywhere_between_reads_each_answer_one_message() {
        // Three replies, the bytes split in two reads at every place: each reply answers its
        // message once, whole; nothing is left over once the last byte is in.
        let t = crate::Target::parse("ws://127.0.0.1:9/").unwrap();
        let ws = Arc::new(WebSocket::new(&t, &[], super::super::Match::InOrder));
        let mut wire = reply(b"first");
        wire.extend(reply(b""));
        wire.extend(reply(&[b'x'; 64]));
        let now = Instant::now();
        for cut in 0..=wire.len() {
            let mut s = Socket::new(Arc::clone(&ws));
            for slot in 0..3 {
                let ticket = Ticket {
                    slot,
                    generation: 0,
                };
                s.submit(ticket, &Request::new(&b"m"[..]), true);
            }
            let mut notes = Vec::new();
            s.take(&wire[..cut], now, &mut notes).unwrap();
            s.take(&wire[cut..], now, &mut notes).unwrap();
            let answered: Vec<(u32, u64)> = notes
                .iter()
                .map(|n| match n {
                    Note::Response(t, r) => (t.slot, r.body_len),
                    _ => panic!("not a reply"),
                })
                .collect();
            assert_eq!(answered, [(0, 5), (1, 0), (2, 64)], "cut at {cut}");
            assert!(s.input.is_empty() && s.queue.is_empty(), "cut at {cut}");
        }
    }

    /// A message waiting for its reply holds what its response will say, not a `Response`
    /// (88 bytes moved in and out of the queue and dropped, per message: bench/RESULTS.md,
    /// session 15).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_waiting_message_stays_small() {
        let waiting = std::mem::size_of::<super::Waiting>();
        assert!(waiting <= 64, "{waiting}");
    }
}
