//! The session each connection gets for the protocol a run speaks.

use crate::h2::H2;
use crate::protocol::Protocol;
use crate::wire::{Conn, Wire};
use crate::ws::{WsH2, WsSession};
use crate::ResponseParser;
use herd_engine::{Failure, Note, Ordered, Ready, Request, Session, Ticket};
use std::time::Instant;

/// A connection's session: HTTP/1.1's ordered pipeline or HTTP/2's streams.
// HTTP/1.1's session is inline, its request in flight with it: it is the session of nearly every
// connection, ten thousand of them in a run, where a box would be an allocation each (288
// bytes inline against 160 and a heap entry of 168 before, bench/RESULTS.md session 10).
#[allow(clippy::large_enum_variant)]
pub enum HttpSession {
    Http1(Ordered<ResponseParser>),
    Http2(Box<H2>),
    WebSocket(Box<WsSession>),
    WebSocketH2(Box<WsH2>),
}

impl HttpSession {
    pub(crate) fn new(protocol: &Protocol, tls: bool, window: usize, started: Instant) -> Self {
        match protocol {
            Protocol::Http1 => HttpSession::Http1(Ordered::new(window, started)),
            Protocol::Http2(settings) => {
                HttpSession::Http2(Box::new(H2::new(settings, window, started, tls)))
            }
            Protocol::WebSocket(ws) => {
                HttpSession::WebSocket(Box::new(WsSession::new(ws.clone(), window, started)))
            }
            Protocol::WebSocketH2(ws, settings) => HttpSession::WebSocketH2(Box::new(WsH2::new(
                ws.clone(),
                settings,
                window,
                started,
                tls,
            ))),
        }
    }
}

impl Session<Wire> for HttpSession {
    #[inline]
    fn room(&self) -> usize {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::room(s),
            HttpSession::Http2(s) => s.room(),
            HttpSession::WebSocket(s) => s.room(),
            HttpSession::WebSocketH2(s) => s.room(),
        }
    }

    #[inline]
    fn submit(&mut self, ticket: Ticket, req: &Request, last: bool) {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::submit(s, ticket, req, last),
            HttpSession::Http2(s) => s.submit(ticket, req, last),
            HttpSession::WebSocket(s) => s.submit(ticket, req, last),
            HttpSession::WebSocketH2(s) => s.submit(ticket, req, last),
        }
    }

    #[inline]
    fn write_now(&mut self, t: &mut Wire, conn: &mut Conn) -> bool {
        match self {
            HttpSession::Http1(s) => s.write_now(t, conn),
            HttpSession::WebSocket(s) => s.write_now(t, conn),
            HttpSession::Http2(_) | HttpSession::WebSocketH2(_) => false,
        }
    }

    #[inline]
    fn pump(
        &mut self,
        t: &mut Wire,
        conn: &mut Conn,
        ready: Ready,
        now: Instant,
        scratch: &mut [u8],
        out: &mut Vec<Note>,
    ) {
        match self {
            HttpSession::Http1(s) => s.pump(t, conn, ready, now, scratch, out),
            HttpSession::Http2(s) => s.pump(t, conn, ready, now, scratch, out),
            HttpSession::WebSocket(s) => s.pump(t, conn, ready, now, scratch, out),
            HttpSession::WebSocketH2(s) => s.pump(t, conn, ready, now, scratch, out),
        }
    }

    fn cancel(&mut self, ticket: Ticket) -> bool {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::cancel(s, ticket),
            HttpSession::Http2(s) => s.cancel(ticket),
            HttpSession::WebSocket(s) => s.cancel(ticket),
            HttpSession::WebSocketH2(s) => s.cancel(ticket),
        }
    }

    fn abandon(&mut self, why: &Failure, out: &mut Vec<Note>) {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::abandon(s, why, out),
            HttpSession::Http2(s) => s.abandon(why, out),
            HttpSession::WebSocket(s) => s.abandon(why, out),
            HttpSession::WebSocketH2(s) => s.abandon(why, out),
        }
    }

    #[inline]
    fn in_flight(&self) -> usize {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::in_flight(s),
            HttpSession::Http2(s) => s.in_flight(),
            HttpSession::WebSocket(s) => s.in_flight(),
            HttpSession::WebSocketH2(s) => s.in_flight(),
        }
    }

    fn unsent(&self) -> herd_metrics::Backlog {
        match self {
            HttpSession::WebSocket(s) => s.unsent(),
            HttpSession::WebSocketH2(s) => s.unsent(),
            _ => herd_metrics::Backlog::default(),
        }
    }

    fn limit(&self) -> Option<usize> {
        match self {
            HttpSession::Http1(_) | HttpSession::WebSocket(_) => None,
            HttpSession::Http2(s) => s.limit(),
            HttpSession::WebSocketH2(s) => s.limit(),
        }
    }

    #[inline]
    fn wake_at(&self) -> Option<Instant> {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::wake_at(s),
            HttpSession::Http2(s) => s.wake_at(),
            HttpSession::WebSocket(s) => s.wake_at(),
            HttpSession::WebSocketH2(s) => s.wake_at(),
        }
    }

    fn refill_in_batches(&mut self) {
        match self {
            HttpSession::Http1(s) => Session::<Wire>::refill_in_batches(s),
            HttpSession::Http2(s) => s.refill_in_batches(),
            HttpSession::WebSocket(_) | HttpSession::WebSocketH2(_) => {}
        }
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// An HTTP/1.1 session is held inline in each connection's slot, ten thousand of them in
    /// `bench.py rss`: a field that widens it is memory per connection (bench/RESULTS.md,
    /// session 11).
    #[test]
    fn an_http1_session_stays_as_small_as_measured() {
        let session = std::mem::size_of::<super::HttpSession>();
        assert!(session <= 216, "{session}");
        let response = std::mem::size_of::<herd_engine::Response>();
        assert!(response <= 88, "{response}");
    }
}
