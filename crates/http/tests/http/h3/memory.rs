//! The HTTP/3 connection against a quinn-proto server in the same test, datagrams passed by hand
//! on a virtual clock: what a real server is hard to make do on cue (go silent, reset a stream,
//! close with requests in flight), each exchange's outcome counted once.

use herd_http::h3::{EarlyData, H3Config, H3Connection, H3Event, H3Request, MAX_GSO_SEGMENTS};
use herd_http::{Target, TlsOptions};
use herd_metrics::ErrorKind;
use quinn_proto as quic;
use quinn_proto::crypto::rustls::QuicServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const IDLE: Duration = Duration::from_secs(3);

/// What the server does with each request stream.
#[derive(Clone, Copy, PartialEq)]
enum Serve {
    /// `200` and "hi".
    Answer,
    /// RESET_STREAM with H3_INTERNAL_ERROR.
    Reset,
    /// Closes the whole connection (H3_NO_ERROR) on the first request.
    Close,
    /// Reads the request and never answers.
    Ignore,
    /// Once three requests arrived: GOAWAY on its control stream, processing only the first.
    GoAway,
}

struct Server {
    endpoint: quic::Endpoint,
    conn: Option<(quic::ConnectionHandle, quic::Connection)>,
    serve: Serve,
    /// The server's process is gone: datagrams to it vanish.
    gone: bool,
    requests: usize,
}

const CLIENT: &str = "127.0.0.1:50000";
const SERVER: &str = "127.0.0.1:4433";

impl Server {
    fn new(serve: Serve) -> Server {
        Server::build(serve, false, None)
    }

    /// A server that lets the client open `streams` request streams at once.
    fn allowing(serve: Serve, streams: u32) -> Server {
        Server::build(serve, false, Some(streams))
    }

    /// A server whose session tickets let a client send early data (0-RTT).
    fn taking_early_data(serve: Serve) -> Server {
        Server::build(serve, true, None)
    }

    fn build(serve: Serve, early_data: bool, streams: Option<u32>) -> Server {
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![CertificateDer::from(cert.cert.der().to_vec())], key)
            .unwrap();
        tls.alpn_protocols = vec![b"h3".to_vec()];
        if early_data {
            tls.max_early_data_size = u32::MAX;
        }
        let crypto = Arc::new(QuicServerConfig::try_from(tls).unwrap());
        let mut config = quic::ServerConfig::with_crypto(crypto);
        if let Some(n) = streams {
            let mut transport = quic::TransportConfig::default();
            transport.max_concurrent_bidi_streams(n.into());
            config.transport_config(Arc::new(transport));
        }
        let endpoint = quic::Endpoint::new(
            Arc::new(quic::EndpointConfig::default()),
            Some(Arc::new(config)),
            false,
            None,
        );
        Server {
            endpoint,
            conn: None,
            serve,
            gone: false,
            requests: 0,
        }
    }

    fn receive(&mut self, now: Instant, data: &[u8]) {
        if self.gone {
            return;
        }
        let mut buf = Vec::new();
        let client: SocketAddr = CLIENT.parse().unwrap();
        let data = bytes::BytesMut::from(data);
        match self
            .endpoint
            .handle(now, client, None, None, data, &mut buf)
        {
            Some(quic::DatagramEvent::NewConnection(incoming)) => {
                let accepted = self.endpoint.accept(incoming, now, &mut buf, None);
                self.conn = Some(accepted.unwrap());
            }
            Some(quic::DatagramEvent::ConnectionEvent(_, ev)) => {
                if let Some((_, c)) = self.conn.as_mut() {
                    c.handle_event(ev);
                }
            }
            _ => {}
        }
        self.drive(now);
    }

    /// Answers what arrived, as `serve` says.
    fn drive(&mut self, now: Instant) {
        let Some((handle, c)) = self.conn.as_mut() else {
            return;
        };
        while let Some(ev) = c.poll_endpoint_events() {
            if let Some(ev) = self.endpoint.handle_event(*handle, ev) {
                c.handle_event(ev);
            }
        }
        while c.poll().is_some() {}
        while let Some(id) = c.streams().accept(quic::Dir::Bi) {
            self.requests += 1;
            match self.serve {
                Serve::Answer => {
                    // HEADERS {:status 200}, DATA "hi".
                    let frames = [0x01, 0x03, 0, 0, 0xd9, 0x00, 0x02, b'h', b'i'];
                    // A stream the client already gave up refuses the write: nothing to do.
                    let mut s = c.send_stream(id);
                    if s.write(&frames).is_ok() {
                        let _ = s.finish();
                    }
                    // Answered without reading the rest (RFC 9114 §4.1: H3_NO_ERROR): the
                    // stream is done on both sides, and counts toward new credit.
                    let _ = c.recv_stream(id).stop(quic::VarInt::from_u32(0x100));
                }
                Serve::Reset => {
                    let _ = c.send_stream(id).reset(quic::VarInt::from_u32(0x102));
                }
                Serve::Close => {
                    c.close(now, quic::VarInt::from_u32(0x100), "going away".into());
                }
                Serve::Ignore => {}
                Serve::GoAway if self.requests == 3 => {
                    let control = c.streams().open(quic::Dir::Uni).unwrap();
                    // Control stream, empty SETTINGS, GOAWAY: nothing from stream 4 on.
                    let frames = [0x00, 0x04, 0x00, 0x07, 0x01, 0x04];
                    c.send_stream(control).write(&frames).unwrap();
                }
                Serve::GoAway => {}
            }
        }
        // Request bodies and the client's control stream: read and dropped.
        while let Some(id) = c.streams().accept(quic::Dir::Uni) {
            let _ = c.recv_stream(id).stop(quic::VarInt::from_u32(0));
        }
    }

    fn transmit(&mut self, now: Instant, out: &mut Vec<Vec<u8>>) {
        let Some((_, c)) = self.conn.as_mut().filter(|_| !self.gone) else {
            return;
        };
        let mut buf = Vec::new();
        while let Some(t) = c.poll_transmit(now, 1, &mut buf) {
            out.push(buf[..t.size].to_vec());
            buf.clear();
        }
    }

    fn timeout(&mut self) -> Option<Instant> {
        self.conn.as_mut().filter(|_| !self.gone)?.1.poll_timeout()
    }
}

/// A client and a server exchanging datagrams on a clock that jumps to the next timer when
/// nothing is in flight.
struct Pair {
    client: H3Connection,
    server: Server,
    now: Instant,
    events: Vec<H3Event>,
}

fn config() -> H3Config {
    let target = Target::parse(&format!("https://{SERVER}/")).unwrap();
    let insecure = TlsOptions {
        insecure: true,
        ..TlsOptions::default()
    };
    H3Config::new(&target, insecure, IDLE).unwrap()
}

impl Pair {
    fn new(serve: Serve) -> Pair {
        Pair::on(&config(), Server::new(serve))
    }

    /// A connection of `config` (whose TLS session cache it shares) to `server`.
    fn on(config: &H3Config, server: Server) -> Pair {
        let now = Instant::now();
        let client = H3Connection::connect(config, now).unwrap();
        Pair {
            client,
            server,
            now,
            events: Vec::new(),
        }
    }

    /// Moves datagrams both ways until both sides are quiet, then fires the earliest timer;
    /// stops when `done` holds of the client's events, or after 10,000 steps (the test fails).
    fn run_until(&mut self, done: impl Fn(&[H3Event]) -> bool) {
        for _ in 0..10_000 {
            while let Some(ev) = self.client.poll_event() {
                self.events.push(ev);
            }
            if done(&self.events) {
                return;
            }
            let mut buf = Vec::new();
            let mut to_server = Vec::new();
            while let Some(out) = self
                .client
                .poll_transmit(self.now, MAX_GSO_SEGMENTS, &mut buf)
            {
                let seg = out.segment.unwrap_or(out.len);
                to_server.extend(buf[..out.len].chunks(seg).map(<[u8]>::to_vec));
            }
            for d in &to_server {
                self.server.receive(self.now, d);
            }
            let mut to_client = Vec::new();
            self.server.transmit(self.now, &mut to_client);
            for d in &to_client {
                self.client.handle_datagram(self.now, d);
            }
            if to_server.is_empty() && to_client.is_empty() {
                let next = [self.client.poll_timeout(), self.server.timeout()]
                    .into_iter()
                    .flatten()
                    .min()
                    .expect("a timer while nothing is in flight");
                self.now = self.now.max(next);
                self.client.handle_timeout(self.now);
                if let Some((_, c)) = self.server.conn.as_mut() {
                    c.handle_timeout(self.now);
                }
            }
        }
        panic!("never done: {:?}", self.events);
    }

    fn connect(&mut self) {
        self.run_until(|evs| evs.iter().any(|e| matches!(e, H3Event::Connected(_))));
    }

    fn send(&mut self, token: usize) {
        let req = H3Request::from_http1(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "https");
        assert!(self.client.send(token, &req.unwrap(), self.now).unwrap());
    }

    /// Each token's outcome: its failure class, or `None` for a response; every outcome once.
    fn outcomes(&self) -> Vec<(usize, Option<ErrorKind>)> {
        let mut seen: Vec<_> = self
            .events
            .iter()
            .filter_map(|e| match e {
                H3Event::Done { token, .. } => Some((*token, None)),
                H3Event::Failed { token, failure, .. } => Some((*token, Some(failure.kind))),
                _ => None,
            })
            .collect();
        seen.sort_by_key(|(t, _)| *t);
        seen
    }
}

fn finished(n: usize) -> impl Fn(&[H3Event]) -> bool {
    move |evs| {
        evs.iter()
            .filter(|e| matches!(e, H3Event::Done { .. } | H3Event::Failed { .. }))
            .count()
            >= n
    }
}

#[test]
fn requests_on_one_connection_all_get_their_response() {
    let mut p = Pair::new(Serve::Answer);
    p.connect();
    for token in 0..5 {
        p.send(token);
    }
    p.run_until(finished(5));
    assert_eq!(p.outcomes(), (0..5).map(|t| (t, None)).collect::<Vec<_>>());
    for e in &p.events {
        if let H3Event::Done { response, .. } = e {
            assert_eq!((response.status, response.body_len), (200, 2));
        }
    }
    assert_eq!(p.server.requests, 5);
}

#[test]
fn a_server_that_goes_silent_fails_each_request_once_at_the_idle_timeout() {
    let mut p = Pair::new(Serve::Ignore);
    p.connect();
    let start = p.now;
    p.server.gone = true;
    for token in 0..3 {
        p.send(token);
    }
    p.run_until(|evs| evs.iter().any(|e| matches!(e, H3Event::Closed(_))));
    let timeout = Some(ErrorKind::QuicTimeout);
    assert_eq!(p.outcomes(), [(0, timeout), (1, timeout), (2, timeout)]);
    // The connection's own end is not a fourth failure: it was the requests'.
    assert!(matches!(p.events.last(), Some(H3Event::Closed(None))));
    let waited = p.now - start;
    assert!(waited >= IDLE && waited < IDLE * 2, "{waited:?}");
}

#[test]
fn a_reset_stream_fails_its_request_and_the_connection_goes_on() {
    let mut p = Pair::new(Serve::Reset);
    p.connect();
    p.send(0);
    p.run_until(finished(1));
    assert_eq!(p.outcomes(), [(0, Some(ErrorKind::H3StreamReset))]);
    let message = p.events.iter().find_map(|e| match e {
        H3Event::Failed { failure, .. } => Some(failure.message.clone()),
        _ => None,
    });
    assert!(message.unwrap().contains("H3_INTERNAL_ERROR (0x102)"));
    p.server.serve = Serve::Answer;
    p.send(1);
    p.run_until(finished(2));
    assert_eq!(p.outcomes()[1], (1, None));
}

#[test]
fn a_server_closing_with_requests_in_flight_fails_each_once() {
    let mut p = Pair::new(Serve::Close);
    p.connect();
    p.send(0);
    p.send(1);
    p.run_until(|evs| evs.iter().any(|e| matches!(e, H3Event::Closed(_))));
    let closed = Some(ErrorKind::QuicClosed);
    assert_eq!(p.outcomes(), [(0, closed), (1, closed)]);
    assert!(p.client.is_over());
    assert!(
        !p.client.ready(),
        "a closed connection takes no more requests"
    );
}

#[test]
fn a_cancelled_request_gets_no_event_and_the_next_one_its_response() {
    let mut p = Pair::new(Serve::Ignore);
    p.connect();
    p.send(0);
    p.run_until(|_| true);
    assert!(p.client.cancel(0, p.now));
    p.server.serve = Serve::Answer;
    p.send(1);
    p.run_until(finished(1));
    assert_eq!(p.outcomes(), [(1, None)]);
}

#[test]
fn goaway_refuses_the_requests_past_its_id_as_unseen() {
    let mut p = Pair::new(Serve::GoAway);
    p.connect();
    for token in 0..3 {
        p.send(token);
    }
    p.run_until(finished(2));
    let refused: Vec<_> = p
        .events
        .iter()
        .filter_map(|e| match e {
            H3Event::Failed {
                token,
                failure,
                unseen,
                ..
            } => Some((*token, failure.kind, *unseen)),
            _ => None,
        })
        .collect();
    // Streams 4 and 8 (tokens 1 and 2) are past the GOAWAY's id 4: never processed, so
    // safe to send again elsewhere. Stream 0 is still the server's to answer.
    let kind = ErrorKind::H3StreamReset;
    assert_eq!(refused, [(1, kind, true), (2, kind, true)]);
    assert_eq!(p.client.in_flight(), 1);
    assert!(
        !p.client.ready(),
        "a server going away takes no new requests"
    );
    let req = H3Request::from_http1(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", "https").unwrap();
    assert!(p.client.send(9, &req, p.now).is_err());
}

#[test]
fn early_data_the_server_refuses_is_sent_again_and_answered_once() {
    let config = config();
    let mut first = Pair::on(&config, Server::taking_early_data(Serve::Answer));
    first.connect();
    first.send(0);
    first.run_until(finished(1));
    assert_eq!(first.outcomes(), [(0, None)]);

    // A server that knows nothing of the first one's session (as after a restart): the client
    // offers the ticket and sends its request in 0-RTT, the server refuses both.
    let mut second = Pair::on(&config, Server::taking_early_data(Serve::Answer));
    second.send(1);
    second.run_until(finished(1));
    let handshake = second
        .events
        .iter()
        .find_map(|e| match e {
            H3Event::Connected(h) => Some(*h),
            _ => None,
        })
        .unwrap();
    assert_eq!(handshake.early_data, EarlyData::Rejected, "{handshake:?}");
    assert!(!handshake.resumed, "{handshake:?}");
    assert_eq!(second.outcomes(), [(1, None)], "{:?}", second.events);
    assert_eq!(second.server.requests, 1, "the request was processed once");
}

#[test]
fn requests_past_the_servers_stream_limit_are_told_when_streams_free_up() {
    let mut p = Pair::on(&config(), Server::allowing(Serve::Answer, 2));
    p.connect();
    p.send(0);
    p.send(1);
    let req = H3Request::from_http1(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", "https").unwrap();
    assert!(
        !p.client.send(2, &req, p.now).unwrap(),
        "a third stream is past the server's limit"
    );
    p.run_until(finished(2));
    // The server grants new streams once its side of the answered ones is closed: the client
    // says so, or a caller holding the third request would wait for an event that never comes.
    p.run_until(|evs| evs.iter().any(|e| matches!(e, H3Event::StreamsAvailable)));
    assert!(p.client.send(2, &req, p.now).unwrap());
    p.run_until(finished(3));
    assert_eq!(p.outcomes(), [(0, None), (1, None), (2, None)]);
}
