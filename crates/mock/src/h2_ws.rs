//! A `ws` route over HTTP/2 (RFC 8441): herd serve's SETTINGS offer extended CONNECT
//! (SETTINGS_ENABLE_CONNECT_PROTOCOL), a `CONNECT` with `:protocol websocket` to a `ws` route
//! is answered `200`, and its stream's DATA carries RFC 6455 frames both ways: each message
//! echoed after the route's latency, pings answered, a close answered with its code. As over
//! HTTP/1.1, the CONNECT and each message count as requests; the route's faults fire on their
//! share of messages (`fault=close`: a close frame 1011 and the stream's end; `reset`,
//! `refuse`: the stream reset; `stall`: no answer).

use std::collections::HashMap;
use std::time::Duration;

use herd_h2::ServerSession;
use rand::Rng;

use crate::counters::bump;
use crate::response::{Failure, Lookup};
use crate::route::Fault;
use crate::worker::Worker;
use crate::ws_frame::{frame, write_frame, FAULT_CODE};

/// RFC 9113 section 7's INTERNAL_ERROR.
const INTERNAL_ERROR: u32 = 0x2;

/// A message to echo once its latency is over.
pub(crate) struct Echo {
    pub stream_id: i32,
    pub delay: Duration,
    route: usize,
    opcode: u8,
    payload: Vec<u8>,
    failed: bool,
}

/// One open socket: its route, bytes not yet a whole frame, a message in fragments.
struct Socket {
    route: usize,
    buf: Vec<u8>,
    message: Option<(u8, Vec<u8>)>,
}

/// A connection's open sockets, by stream id.
#[derive(Default)]
pub(crate) struct Sockets {
    open: HashMap<i32, Socket>,
}

/// `:protocol: websocket` among a request's fields.
fn websocket(fields: &[u8]) -> bool {
    fields
        .split(|b| *b == b'\n')
        .any(|l| l.trim_ascii().eq_ignore_ascii_case(b":protocol: websocket"))
}

impl Sockets {
    /// A request's head: an extended CONNECT for a WebSocket is answered (`200` on a `ws`
    /// route, 404 elsewhere) and true; anything else is not this file's (false).
    pub(crate) fn begin(
        &mut self,
        session: &mut ServerSession,
        w: &Worker,
        stream_id: i32,
        (method, path, fields): (&[u8], &[u8], &[u8]),
    ) -> bool {
        if method != b"CONNECT" || !websocket(fields) {
            return false;
        }
        bump(&w.counters.requests);
        let path = String::from_utf8_lossy(path);
        match w.table.lookup("GET", &path) {
            Lookup::Found(route) if route.websocket => {
                let _ = session.open(stream_id, 200, &[]);
                let socket = Socket {
                    route: route.index,
                    buf: Vec::new(),
                    message: None,
                };
                self.open.insert(stream_id, socket);
            }
            _ => {
                let _ = session.respond(stream_id, 404, &[], b"");
            }
        }
        true
    }

    pub(crate) fn owns(&self, stream_id: i32) -> bool {
        self.open.contains_key(&stream_id)
    }

    /// Bytes of socket `stream_id`: pongs and closes answered at once, whole messages
    /// returned to be echoed when their latency is over.
    pub(crate) fn data(
        &mut self,
        session: &mut ServerSession,
        w: &Worker,
        stream_id: i32,
        bytes: &[u8],
    ) -> Vec<Echo> {
        let mut echoes = Vec::new();
        let Some(s) = self.open.get_mut(&stream_id) else {
            return echoes;
        };
        s.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut closed = false;
        let mut at = 0;
        while let Some((fin, opcode, payload, used)) = frame(&s.buf[at..]) {
            at += used;
            let whole = match opcode {
                0x1 | 0x2 if fin => (opcode, payload),
                0x1 | 0x2 => {
                    s.message = Some((opcode, payload));
                    continue;
                }
                0x0 => match s.message.take() {
                    Some((op, mut so_far)) => {
                        so_far.extend_from_slice(&payload);
                        if !fin {
                            s.message = Some((op, so_far));
                            continue;
                        }
                        (op, so_far)
                    }
                    None => continue,
                },
                0x9 => {
                    write_frame(&mut out, 0xA, &payload);
                    continue;
                }
                0x8 => {
                    write_frame(&mut out, 0x8, &payload[..payload.len().min(2)]);
                    closed = true;
                    break;
                }
                _ => continue,
            };
            bump(&w.counters.requests);
            let route = w.table.route(s.route);
            let mut rng = w.rng.borrow_mut();
            echoes.push(Echo {
                stream_id,
                delay: route.delay.sample(&mut *rng),
                route: s.route,
                opcode: whole.0,
                payload: whole.1,
                failed: route.error_rate > 0.0 && rng.gen_bool(route.error_rate),
            });
        }
        s.buf.drain(..at);
        if !out.is_empty() {
            let _ = session.write(stream_id, &out);
        }
        if closed {
            let _ = session.finish(stream_id, &[]);
            self.open.remove(&stream_id);
        }
        echoes
    }

    /// Echoes a message whose latency is over, or fails it as its route says.
    pub(crate) fn answer(&mut self, session: &mut ServerSession, w: &Worker, e: Echo) {
        if !self.owns(e.stream_id) {
            return;
        }
        let mut out = Vec::new();
        if !e.failed {
            write_frame(&mut out, e.opcode, &e.payload);
            let _ = session.write(e.stream_id, &out);
            return;
        }
        bump(&w.counters.injected);
        match &w.table.route(e.route).failure {
            Failure::Fault(Fault::Stall) => return,
            Failure::Fault(Fault::Reset | Fault::Refuse) => {
                let _ = session.reset(e.stream_id, INTERNAL_ERROR);
            }
            _ => {
                let mut close = FAULT_CODE.to_be_bytes().to_vec();
                close.extend_from_slice(b"herd serve fault");
                write_frame(&mut out, 0x8, &close);
                let _ = session.write(e.stream_id, &out);
                let _ = session.finish(e.stream_id, &[]);
            }
        }
        self.open.remove(&e.stream_id);
    }

    /// The client ended its side, or the stream is gone: the socket is over.
    pub(crate) fn end(&mut self, session: &mut ServerSession, stream_id: i32) {
        if self.open.remove(&stream_id).is_some() {
            let _ = session.finish(stream_id, &[]);
        }
    }

    pub(crate) fn closed(&mut self, stream_id: i32) {
        self.open.remove(&stream_id);
    }
}
