//! The mock over HTTP/2 with prior knowledge (h2c), as herd's own client session sees it: the
//! same routes as HTTP/1.1 on the same port, and the faults only HTTP/2 has.

use std::io::{Read, Write};
use std::net::TcpStream;

use herd_h2::{ClientSession, Event, Request, Settings, StreamEnd};

use crate::common::{serve, Client, TIMEOUT};

/// What a client saw of one exchange.
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    status: u16,
    body: Vec<u8>,
    end: Option<StreamEnd>,
    /// Header fields and trailers, in order.
    fields: Vec<(String, String)>,
}

/// A byte stream to the mock: plain TCP or TLS.
trait Wire: Read + Write {}
impl<T: Read + Write> Wire for T {}

struct H2 {
    stream: Box<dyn Wire>,
    session: ClientSession,
    seen: Vec<Seen>,
    goaway: Option<(i32, u32)>,
}

impl H2 {
    fn connect(server: &herd_mock::Server) -> H2 {
        let stream = TcpStream::connect(server.local_addr()).unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        H2::over(Box::new(stream))
    }

    fn over(stream: Box<dyn Wire>) -> H2 {
        H2 {
            stream,
            session: ClientSession::new(&Settings::default()).unwrap(),
            seen: Vec::new(),
            goaway: None,
        }
    }

    fn get(&mut self, path: &str) -> usize {
        self.submit(Request {
            authority: b"mock",
            path: path.as_bytes(),
            ..Request::default()
        })
    }

    fn submit(&mut self, request: Request<'_>) -> usize {
        let exchange = self.seen.len();
        self.seen.push(Seen::default());
        self.session.submit(&request, exchange, true).unwrap();
        exchange
    }

    /// Writes and reads until `done` holds or the server closes (a read timeout fails).
    fn run_until(&mut self, done: impl Fn(&H2) -> bool) {
        let mut buf = vec![0; 16 << 10];
        for _ in 0..10_000 {
            let mut out = Vec::new();
            self.session.send(&mut out).unwrap();
            self.stream.write_all(&out).unwrap();
            self.take();
            if done(self) {
                return;
            }
            let n = self.stream.read(&mut buf).expect("the mock went silent");
            if n == 0 {
                return;
            }
            self.session.recv(&buf[..n]).unwrap();
            self.take();
        }
        panic!("no end after 10,000 reads");
    }

    fn take(&mut self) {
        let got = self.session.events();
        for event in got.events {
            match event {
                Event::Status { exchange, status } => self.seen[exchange].status = status,
                Event::Data {
                    exchange,
                    kept: Some(k),
                    ..
                } => self.seen[exchange].body.extend_from_slice(&got.kept[k]),
                Event::Closed { exchange, end, .. } => self.seen[exchange].end = Some(end),
                Event::Header {
                    exchange,
                    name,
                    value,
                } => {
                    let text = |r: std::ops::Range<usize>| {
                        String::from_utf8_lossy(&got.kept[r]).into_owned()
                    };
                    self.seen[exchange].fields.push((text(name), text(value)));
                }
                Event::GoAway {
                    last_stream_id,
                    code,
                } => self.goaway = Some((last_stream_id, code)),
                _ => {}
            }
        }
    }

    fn ended(&self) -> usize {
        self.seen.iter().filter(|s| s.end.is_some()).count()
    }
}

#[test]
fn h2c_and_http1_share_the_port_and_the_routes() {
    let server = serve(&["/hi size=5", "/*"]);
    let mut h2 = H2::connect(&server);
    for _ in 0..10 {
        h2.get("/hi");
    }
    let missing = h2.get("/elsewhere/x");
    h2.run_until(|h| h.ended() == 11);
    for seen in &h2.seen[..10] {
        assert_eq!(
            (seen.status, &seen.body[..], seen.end),
            (200, &b"hello"[..], Some(StreamEnd::Complete))
        );
    }
    assert_eq!(h2.seen[missing].status, 200, "the catch-all route");
    let mut h1 = Client::connect(server.local_addr());
    assert_eq!(h1.get("/hi").text(), "hello");
    let stats = server.shutdown();
    assert_eq!((stats.connections, stats.requests), (2, 12));
}

#[test]
fn echo_over_h2_shows_the_request_as_received() {
    let server = serve(&[]);
    let mut h2 = H2::connect(&server);
    let headers: [(&[u8], &[u8]); 1] = [(b"X-Test", b"yes")];
    let echo = h2.submit(Request {
        method: b"POST",
        authority: b"mock",
        path: b"/echo",
        headers: &headers,
        body: b"payload",
        ..Request::default()
    });
    h2.run_until(|h| h.ended() == 1);
    let text = String::from_utf8_lossy(&h2.seen[echo].body).into_owned();
    assert!(text.starts_with("POST /echo HTTP/2\r\n"), "{text}");
    assert!(text.contains("x-test: yes\r\n"), "{text}");
    assert!(text.ends_with("\r\n\r\npayload"), "{text}");
}

#[test]
fn goaway_after_n_leaves_later_streams_unprocessed_and_closes() {
    let server = serve(&["/* goaway-after=3"]);
    let mut h2 = H2::connect(&server);
    for _ in 0..5 {
        h2.get("/");
    }
    h2.run_until(|h| h.ended() == 5);
    let ends: Vec<_> = h2.seen.iter().map(|s| s.end.unwrap()).collect();
    assert_eq!(ends[..3], [StreamEnd::Complete; 3]);
    assert_eq!(ends[3..], [StreamEnd::Unprocessed; 2]);
    assert_eq!(h2.goaway, Some((5, 0)), "GOAWAY names stream 5, the third");
    let mut rest = Vec::new();
    h2.stream.read_to_end(&mut rest).unwrap();
    assert_eq!(
        server.shutdown().requests,
        5,
        "every request counted once as received"
    );
}

#[test]
fn refuse_and_reset_faults_reset_only_their_stream() {
    let server = serve(&["/refuse fault=refuse", "/reset fault=reset", "/*"]);
    let mut h2 = H2::connect(&server);
    let refused = h2.get("/refuse");
    let reset = h2.get("/reset");
    let fine = h2.get("/fine");
    h2.run_until(|h| h.ended() == 3);
    assert_eq!(h2.seen[refused].end, Some(StreamEnd::Reset(0x7)));
    assert_eq!(h2.seen[reset].end, Some(StreamEnd::Reset(0x2)));
    assert_eq!(h2.seen[fine].end, Some(StreamEnd::Complete));
    assert_eq!(server.shutdown().injected, 2);
}

#[test]
fn max_streams_one_is_announced_and_a_stalled_stream_holds_only_itself() {
    let server = serve(&["/stall fault=stall", "/* max-streams=1"]);
    let mut h2 = H2::connect(&server);
    h2.get("/first");
    h2.run_until(|h| h.ended() == 1);
    assert_eq!(
        h2.session.capacity(),
        1,
        "SETTINGS_MAX_CONCURRENT_STREAMS 1"
    );
    server.shutdown();

    let server = serve(&["/stall fault=stall", "/* latency=20ms"]);
    let mut h2 = H2::connect(&server);
    let stalled = h2.get("/stall");
    for _ in 0..3 {
        h2.get("/slow");
    }
    h2.run_until(|h| h.ended() == 3);
    assert_eq!(h2.seen[stalled].end, None, "never answered");
    assert!(h2.seen[1..].iter().all(|s| s.status == 200));
}

/// A client trusting only `cert`, offering `alpn`; returns the stream after the handshake and
/// the protocol the server chose.
fn tls_connect(
    server: &herd_mock::Server,
    cert: &rcgen::CertifiedKey,
    alpn: &[&[u8]],
) -> (Box<dyn Wire>, Option<Vec<u8>>) {
    use std::sync::Arc;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(server.local_addr()).unwrap();
    tcp.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).unwrap();
    }
    let alpn = tls.conn.alpn_protocol().map(<[u8]>::to_vec);
    (Box::new(tls), alpn)
}

#[test]
fn over_tls_alpn_picks_h2_or_http1_for_the_same_routes() {
    let dir = std::env::temp_dir().join(format!("herd-mock-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).unwrap();
    let server = herd_mock::Server::start(herd_mock::Config {
        routes: vec![herd_mock::Route::parse("/* size=5").unwrap()],
        tls: Some(herd_mock::Tls::Files {
            cert: cert_path,
            key: key_path,
        }),
        ..herd_mock::Config::default()
    })
    .unwrap();

    let (stream, alpn) = tls_connect(&server, &cert, &[b"h2", b"http/1.1"]);
    assert_eq!(alpn.as_deref(), Some(&b"h2"[..]));
    let mut h2 = H2::over(stream);
    for _ in 0..3 {
        h2.get("/x");
    }
    h2.run_until(|h| h.ended() == 3);
    assert!(h2
        .seen
        .iter()
        .all(|s| s.status == 200 && s.body == b"hello"));

    let (mut stream, alpn) = tls_connect(&server, &cert, &[b"http/1.1"]);
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    stream
        .write_all(b"GET /x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nhello"), "{answer}");
    assert_eq!(server.shutdown().requests, 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn grpc_routes_take_only_grpc_calls_and_fail_them_on_the_stream() {
    let server = serve(&["/herd.echo.Echo/* grpc fault=refuse", "/* size=5"]);
    let mut h2 = H2::connect(&server);
    let grpc: [(&[u8], &[u8]); 2] = [(b"content-type", b"application/grpc"), (b"te", b"trailers")];
    let call = |path: &'static [u8]| Request {
        method: b"POST",
        authority: b"mock",
        path,
        headers: &grpc,
        // An empty message: 5 bytes of prefix (not compressed, length 0).
        body: &[0, 0, 0, 0, 0],
        ..Request::default()
    };
    let refused = h2.submit(call(b"/herd.echo.Echo/Unary"));
    let plain = h2.get("/herd.echo.Echo/Unary");
    let hello = h2.submit(call(b"/helloworld.Greeter/SayHello"));
    h2.run_until(|h| h.ended() == 3);
    assert_eq!(
        h2.seen[refused].end,
        Some(StreamEnd::Reset(7)),
        "REFUSED_STREAM"
    );
    assert_eq!(
        (h2.seen[plain].status, &h2.seen[plain].body[..]),
        (200, &b"hello"[..]),
        "an HTTP request to the same path goes to the HTTP route"
    );
    let hello = &h2.seen[hello];
    assert_eq!((hello.status, hello.end), (200, Some(StreamEnd::Complete)));
    // HelloReply{message: "Hello "}, framed: field 1, length 6.
    assert_eq!(hello.body, b"\0\0\0\0\x08\x0a\x06Hello ");
    let fields: Vec<(&str, &str)> = hello
        .fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        fields,
        [("content-type", "application/grpc"), ("grpc-status", "0")],
        "no route matched the greeter: answered at once, status OK in the trailers"
    );
    let stats = server.shutdown();
    assert_eq!((stats.requests, stats.injected), (3, 1));
}
