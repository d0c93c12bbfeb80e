//! One HTTP/3 connection, sans-IO: a quinn-proto client endpoint and connection, the control
//! stream, the requests in flight. The caller owns the UDP socket and the clock: it hands in
//! datagrams ([`H3Connection::handle_datagram`]) and expired timers
//! ([`H3Connection::handle_timeout`]), sends what [`H3Connection::poll_transmit`] lays out (once
//! per loop turn, so quinn can fill GSO batches), and reads what happened from
//! [`H3Connection::poll_event`].

mod streams;

use super::config::H3Config;
use super::event::{EarlyData, H3Event, Handshake, Outgoing};
use super::frame::control_stream_opening;
use super::loss;
use super::request::H3Request;
use super::response::ResponseReader;
use super::resumption;
use bytes::BytesMut;
use herd_engine::{Failure, Response};
use herd_metrics::ErrorKind;
use quinn_proto as quic;
use quinn_proto::{Dir, Event, StreamEvent, StreamId, VarInt};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// At most this many datagrams in one GSO send.
pub const MAX_GSO_SEGMENTS: usize = 10;
const H3_NO_ERROR: u32 = 0x100;
const H3_REQUEST_CANCELLED: u32 = 0x10c;

struct Exchange {
    token: usize,
    stream: StreamId,
    frames: Arc<[u8]>,
    written: usize,
    reader: ResponseReader,
    response: Response,
}

/// A stream the server opened toward us: its type once read, and the control stream's bytes.
struct PeerStream {
    id: StreamId,
    kind: Option<u64>,
    buf: Vec<u8>,
}

pub struct H3Connection {
    endpoint: quic::Endpoint,
    handle: quic::ConnectionHandle,
    conn: quic::Connection,
    remote: SocketAddr,
    opened: Instant,
    handshake: Option<Handshake>,
    /// A server certificate was checked during the handshake: it resumed no session.
    certificate_checked: bool,
    /// Requests went out in 0-RTT.
    early: bool,
    control: Option<StreamId>,
    peer: Vec<PeerStream>,
    exchanges: Vec<Exchange>,
    /// The last request stream the server will process, once it sent GOAWAY.
    goaway: Option<u64>,
    over: bool,
    events: VecDeque<H3Event>,
    scratch: Vec<u8>,
}

impl H3Connection {
    /// Starts the handshake toward `config`'s server; the first flight waits in
    /// [`H3Connection::poll_transmit`].
    pub fn connect(config: &H3Config, now: Instant) -> Result<H3Connection, Failure> {
        let mut endpoint = quic::Endpoint::new(config.endpoint.clone(), None, false, None);
        let (handle, conn) = endpoint
            .connect(
                now,
                config.client.clone(),
                config.remote,
                &config.server_name,
            )
            .map_err(|e| Failure::new(ErrorKind::QuicHandshake, e.to_string()))?;
        let mut this = H3Connection {
            endpoint,
            handle,
            conn,
            remote: config.remote,
            opened: now,
            handshake: None,
            certificate_checked: false,
            early: false,
            control: None,
            peer: Vec::new(),
            exchanges: Vec::new(),
            goaway: None,
            over: false,
            events: VecDeque::new(),
            scratch: Vec::new(),
        };
        this.drive(now);
        Ok(this)
    }

    /// Takes one datagram received from the server.
    /// The protocol ALPN settled on, once the handshake is done: `h3` (herd offers no other).
    pub(crate) fn alpn(&self) -> Option<&'static str> {
        let data = self.conn.crypto_session().handshake_data()?;
        let data = data
            .downcast::<quinn_proto::crypto::rustls::HandshakeData>()
            .ok()?;
        data.protocol
            .map(|p| if p == b"h3" { "h3" } else { "other" })
    }

    pub fn handle_datagram(&mut self, now: Instant, data: &[u8]) {
        let checks = resumption::checks();
        let datagram = BytesMut::from(data);
        self.scratch.clear();
        let event = self
            .endpoint
            .handle(now, self.remote, None, None, datagram, &mut self.scratch);
        if let Some(quic::DatagramEvent::ConnectionEvent(_, event)) = event {
            self.conn.handle_event(event);
        }
        // A client endpoint never takes new connections; a stateless reset it would send for
        // an unknown connection is not worth a send path.
        self.certificate_checked |= resumption::checks() != checks;
        self.drive(now);
    }

    /// When quinn next needs [`H3Connection::handle_timeout`] (loss detection, acks, idle).
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        self.drive(now);
    }

    /// Lays out the next datagrams to send into `buf` (cleared first), up to `segments` of
    /// them (at most [`MAX_GSO_SEGMENTS`]) for one GSO send when the path allows; `None` when
    /// there is nothing to send. Call until `None` once per loop turn, after handling
    /// everything that arrived.
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        segments: usize,
        buf: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        buf.clear();
        let segments = segments.clamp(1, MAX_GSO_SEGMENTS);
        let t = self.conn.poll_transmit(now, segments, buf)?;
        Some(Outgoing {
            len: t.size,
            segment: t.segment_size,
        })
    }

    pub fn poll_event(&mut self) -> Option<H3Event> {
        self.events.pop_front()
    }

    /// Events wait in [`poll_event`](Self::poll_event).
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Gives up on the request sent with `token` alone: its stream is reset and the rest of
    /// its response refused; no event comes for it. `false` if it is not in flight.
    pub fn cancel(&mut self, token: usize, now: Instant) -> bool {
        let Some(i) = self.exchanges.iter().position(|e| e.token == token) else {
            return false;
        };
        let ex = self.exchanges.swap_remove(i);
        let code = VarInt::from_u32(H3_REQUEST_CANCELLED);
        let _ = self.conn.send_stream(ex.stream).reset(code);
        let _ = self.conn.recv_stream(ex.stream).stop(code);
        self.drive(now);
        true
    }

    /// Whether a request may be sent now: the handshake is done, or a resumed session lets
    /// replayable requests go in 0-RTT; and the server has not said it is going away.
    pub fn ready(&self) -> bool {
        !self.over && self.goaway.is_none() && (self.handshake.is_some() || self.conn.has_0rtt())
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> usize {
        self.exchanges.len()
    }

    /// The connection is over (its `Closed` event was queued).
    pub fn is_over(&self) -> bool {
        self.over
    }

    pub fn handshake(&self) -> Option<Handshake> {
        self.handshake
    }

    /// Sends `req` on a new request stream; its outcome comes back as an event carrying
    /// `token`. `Ok(false)` when the connection cannot take it now: not [`ready`](Self::ready),
    /// a request that is not replayable before the handshake's end (0-RTT can be replayed by
    /// anyone on the path), or the server's stream limit is reached (retry after the next
    /// `Done`).
    pub fn send(&mut self, token: usize, req: &H3Request, now: Instant) -> Result<bool, Failure> {
        if self.over {
            return Err(Failure::new(
                ErrorKind::QuicClosed,
                "the connection is over",
            ));
        }
        if self.goaway.is_some() {
            return Err(loss::refused_by_goaway());
        }
        let early = self.handshake.is_none();
        if !self.ready() || early && !req.replayable {
            return Ok(false);
        }
        self.open_control();
        let Some(stream) = self.conn.streams().open(Dir::Bi) else {
            return Ok(false);
        };
        let mut exchange = Exchange {
            token,
            stream,
            frames: req.frames.clone(),
            written: 0,
            reader: ResponseReader::default(),
            response: Response::default(),
        };
        exchange.reader.start(req.keep_response, req.llm);
        exchange.response.keep_alive = true;
        self.early |= early;
        self.exchanges.push(exchange);
        self.write(stream);
        self.drive(now);
        Ok(true)
    }

    /// Closes the connection (H3_NO_ERROR); the CONNECTION_CLOSE goes out with the next
    /// [`poll_transmit`](Self::poll_transmit). Requests still in flight come back `Failed`
    /// as cancelled: the caller chose to stop waiting for them and classes them itself.
    pub fn close(&mut self, now: Instant) {
        self.conn
            .close(now, VarInt::from_u32(H3_NO_ERROR), Default::default());
        self.end(None);
        self.drive(now);
    }

    /// Keeps (or stops keeping) the headers and body of the response to `token`, before any
    /// of it arrives.
    pub fn keep_response(&mut self, token: usize, keep: bool) {
        if let Some(ex) = self.exchanges.iter_mut().find(|e| e.token == token) {
            ex.reader.keep(keep);
        }
    }

    fn open_control(&mut self) {
        if self.control.is_some() {
            return;
        }
        let Some(id) = self.conn.streams().open(Dir::Uni) else {
            return;
        };
        // A few bytes on a fresh stream: flow control always has room for them.
        let opening = control_stream_opening();
        let _ = self.conn.send_stream(id).write(&opening);
        self.control = Some(id);
    }

    /// Writes what `stream`'s request still has to send, finishing the stream when all is out.
    fn write(&mut self, stream: StreamId) {
        let Some(ex) = self.exchanges.iter_mut().find(|e| e.stream == stream) else {
            return;
        };
        let mut send = self.conn.send_stream(stream);
        while ex.written < ex.frames.len() {
            match send.write(&ex.frames[ex.written..]) {
                Ok(n) => ex.written += n,
                Err(_) => return, // blocked: a Writable event resumes it; stopped: a reset follows
            }
        }
        let _ = send.finish();
    }

    /// Handles everything quinn has to say after new input, until it has nothing more.
    fn drive(&mut self, now: Instant) {
        loop {
            let mut progressed = false;
            while let Some(ev) = self.conn.poll_endpoint_events() {
                progressed = true;
                if let Some(ev) = self.endpoint.handle_event(self.handle, ev) {
                    self.conn.handle_event(ev);
                }
            }
            while let Some(ev) = self.conn.poll() {
                progressed = true;
                self.on_event(ev, now);
            }
            if !progressed {
                return;
            }
        }
    }

    fn on_event(&mut self, ev: Event, now: Instant) {
        match ev {
            Event::Connected => {
                let early_data = match (self.early, self.conn.accepted_0rtt()) {
                    (false, _) => EarlyData::NotSent,
                    (true, true) => EarlyData::Accepted,
                    (true, false) => EarlyData::Rejected,
                };
                let handshake = Handshake {
                    time: now.saturating_duration_since(self.opened),
                    resumed: !self.certificate_checked,
                    early_data,
                };
                self.handshake = Some(handshake);
                self.events.push_back(H3Event::Connected(handshake));
                if early_data == EarlyData::Rejected {
                    self.send_again();
                }
                self.open_control();
            }
            Event::ConnectionLost { reason } => {
                let handshaking = self.handshake.is_none();
                let failure = loss::connection_lost(&reason, handshaking);
                self.end(failure);
            }
            Event::Stream(StreamEvent::Readable { id }) => self.read(id, now),
            Event::Stream(StreamEvent::Writable { id }) => self.write(id),
            Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                while let Some(id) = self.conn.streams().accept(Dir::Uni) {
                    self.peer.push(PeerStream {
                        id,
                        kind: None,
                        buf: Vec::new(),
                    });
                    self.read(id, now);
                }
            }
            Event::Stream(StreamEvent::Available { dir: Dir::Bi }) => {
                self.events.push_back(H3Event::StreamsAvailable);
            }
            Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                // Servers open no bidirectional streams in HTTP/3 (RFC 9114 §6.1).
                while let Some(id) = self.conn.streams().accept(Dir::Bi) {
                    let _ = self.conn.recv_stream(id).stop(VarInt::from_u32(0x103));
                }
            }
            _ => {}
        }
    }

    /// The server refused the 0-RTT data: quinn forgot the streams sent in it (their ids
    /// start again from 0), so each request goes again on a new stream, in the order it was
    /// first sent. Requests the server's new stream limit leaves out fail as never seen.
    fn send_again(&mut self) {
        self.control = None;
        self.exchanges.sort_by_key(|e| e.stream.index());
        let mut k = 0;
        while k < self.exchanges.len() {
            match self.conn.streams().open(Dir::Bi) {
                Some(id) => {
                    let ex = &mut self.exchanges[k];
                    ex.stream = id;
                    ex.written = 0;
                    k += 1;
                    self.write(id);
                }
                None => {
                    let ex = self.exchanges.remove(k);
                    self.events.push_back(H3Event::Failed {
                        token: ex.token,
                        failure: Failure::new(
                            ErrorKind::H3StreamReset,
                            "the server refused the 0-RTT request and allows fewer streams now",
                        ),
                        received: 0,
                        unseen: true,
                    });
                }
            }
        }
    }

    fn end(&mut self, failure: Option<Failure>) {
        if self.over {
            return;
        }
        self.over = true;
        let in_flight = !self.exchanges.is_empty();
        for ex in self.exchanges.drain(..) {
            let failure = failure.clone().unwrap_or_else(|| {
                Failure::new(ErrorKind::Other, "cancelled: herd closed the connection")
            });
            self.events.push_back(H3Event::Failed {
                token: ex.token,
                failure,
                received: ex.response.bytes_received,
                unseen: false,
            });
        }
        self.events
            .push_back(H3Event::Closed(if in_flight { None } else { failure }));
    }
}
