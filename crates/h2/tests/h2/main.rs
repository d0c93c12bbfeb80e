//! herd's client session against nghttp2's own server session, in memory: no sockets, no
//! clock; every byte one side writes is the other's next input.

use herd_h2::{ClientSession, Event, H2Error, Request, ServerSession, Settings, StreamEnd};

mod streaming;

/// What the server does with a whole request.
enum Answer {
    Respond(u16, Vec<u8>),
    Reset(u32),
    /// Nothing: the stream stalls.
    Hold,
}

/// Both sides and what the client has seen so far.
struct Pair {
    client: ClientSession,
    server: ServerSession,
    seen: Vec<Event>,
    kept: Vec<u8>,
    /// Requests the server got: (stream id, path, body length).
    served: Vec<(i32, String, usize)>,
}

impl Pair {
    fn new(client: Settings, server: Settings) -> Pair {
        Pair {
            client: ClientSession::new(&client).unwrap(),
            server: ServerSession::new(&server).unwrap(),
            seen: Vec::new(),
            kept: Vec::new(),
            served: Vec::new(),
        }
    }

    fn get(&mut self, path: &str, exchange: usize) -> i32 {
        let request = Request {
            authority: b"mock.test",
            path: path.as_bytes(),
            ..Request::default()
        };
        self.client.submit(&request, exchange, false).unwrap()
    }

    /// Moves bytes both ways until neither side has anything to say (bounded: a session that
    /// kept talking would be a bug, not a reason to hang).
    fn pump(&mut self, answer: &mut dyn FnMut(&str, usize) -> Answer) {
        for _ in 0..1000 {
            let mut wire = Vec::new();
            self.client.send(&mut wire).unwrap();
            self.take_client_events();
            self.server.recv(&wire).unwrap();
            let requests: Vec<(i32, String, usize)> = self
                .server
                .events()
                .events
                .filter_map(|e| match e {
                    Event::Request {
                        stream_id,
                        path,
                        body_len,
                        ..
                    } => Some((
                        stream_id,
                        String::from_utf8_lossy(&path).into_owned(),
                        body_len,
                    )),
                    _ => None,
                })
                .collect();
            for (stream_id, path, body_len) in requests {
                match answer(&path, self.served.len()) {
                    Answer::Respond(status, body) => {
                        self.server
                            .respond(stream_id, status, &[(b"x-herd", b"yes")], &body)
                    }
                    Answer::Reset(code) => self.server.reset(stream_id, code),
                    Answer::Hold => Ok(()),
                }
                .unwrap();
                self.served.push((stream_id, path, body_len));
            }
            let mut back = Vec::new();
            self.server.send(&mut back).unwrap();
            self.server.events().events.for_each(drop);
            self.client.recv(&back).unwrap();
            self.take_client_events();
            if wire.is_empty() && back.is_empty() {
                return;
            }
        }
        panic!("the sessions kept talking for 1000 rounds");
    }

    fn take_client_events(&mut self) {
        let got = self.client.events();
        let base = self.kept.len();
        self.kept.extend_from_slice(got.kept);
        for event in got.events {
            self.seen.push(match event {
                Event::Header {
                    exchange,
                    name,
                    value,
                } => Event::Header {
                    exchange,
                    name: name.start + base..name.end + base,
                    value: value.start + base..value.end + base,
                },
                Event::Data {
                    exchange,
                    len,
                    kept,
                } => Event::Data {
                    exchange,
                    len,
                    kept: kept.map(|k| k.start + base..k.end + base),
                },
                other => other,
            });
        }
    }

    fn ends(&self) -> Vec<(usize, StreamEnd)> {
        let mut ends: Vec<_> = self
            .seen
            .iter()
            .filter_map(|e| match e {
                Event::Closed { exchange, end, .. } => Some((*exchange, *end)),
                _ => None,
            })
            .collect();
        ends.sort_by_key(|(exchange, _)| *exchange);
        ends
    }

    fn body_bytes(&self, exchange: usize) -> usize {
        self.seen
            .iter()
            .map(|e| match e {
                Event::Data {
                    exchange: x, len, ..
                } if *x == exchange => *len,
                _ => 0,
            })
            .sum()
    }
}

fn ok(body: usize) -> impl FnMut(&str, usize) -> Answer {
    move |_, _| Answer::Respond(200, vec![b'x'; body])
}

#[test]
fn ten_streams_on_one_connection_each_end_once_with_status_and_body_counted() {
    let mut pair = Pair::new(Settings::default(), Settings::default());
    for exchange in 0..10 {
        pair.get(&format!("/item/{exchange}"), exchange);
    }
    assert_eq!(pair.client.open_streams(), 10);
    pair.pump(&mut ok(1000));
    let statuses = pair
        .seen
        .iter()
        .filter(|e| matches!(e, Event::Status { status: 200, .. }))
        .count();
    assert_eq!(statuses, 10);
    assert_eq!(
        pair.ends(),
        (0..10)
            .map(|x| (x, StreamEnd::Complete))
            .collect::<Vec<_>>()
    );
    assert!((0..10).all(|x| pair.body_bytes(x) == 1000));
    assert_eq!(pair.client.open_streams(), 0);
    assert_eq!(pair.client.capacity(), 100, "the server's default limit");
    assert!(pair.kept.is_empty(), "nothing is kept unless asked");
}

#[test]
fn a_kept_stream_has_its_headers_and_body_and_a_request_body_arrives_whole() {
    let mut pair = Pair::new(Settings::default(), Settings::default());
    let headers: [(&[u8], &[u8]); 3] = [
        (b"Content-Type", b"text/plain"),
        (b"Connection", b"keep-alive"),
        (b"Host", b"ignored"),
    ];
    let request = Request {
        method: b"POST",
        authority: b"mock.test",
        path: b"/echo",
        headers: &headers,
        body: &[b'b'; 70_000],
        ..Request::default()
    };
    pair.client.submit(&request, 3, true).unwrap();
    pair.pump(&mut |_, _| Answer::Respond(201, b"made it".to_vec()));
    assert_eq!(pair.served, vec![(1, "/echo".to_string(), 70_000)]);
    let text = |r: &std::ops::Range<usize>| String::from_utf8_lossy(&pair.kept[r.clone()]);
    let headers: Vec<(String, String)> = pair
        .seen
        .iter()
        .filter_map(|e| match e {
            Event::Header { name, value, .. } => Some((text(name).into(), text(value).into())),
            _ => None,
        })
        .collect();
    assert!(
        headers.contains(&("x-herd".into(), "yes".into())),
        "{headers:?}"
    );
    let body: String = pair
        .seen
        .iter()
        .filter_map(|e| match e {
            Event::Data { kept: Some(k), .. } => Some(text(k).into_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(body, "made it");
    assert!(pair.seen.contains(&Event::Status {
        exchange: 3,
        status: 201
    }));
}

#[test]
fn streams_a_goaway_left_out_come_back_unprocessed_and_not_as_errors() {
    let mut pair = Pair::new(Settings::default(), Settings::default());
    for exchange in 0..3 {
        pair.get("/", exchange);
    }
    pair.pump(&mut |_, n| {
        if n == 0 {
            Answer::Respond(200, b"one".to_vec())
        } else {
            Answer::Reset(0x7)
        }
    });
    assert_eq!(
        pair.ends(),
        vec![
            (0, StreamEnd::Complete),
            (1, StreamEnd::Reset(0x7)),
            (2, StreamEnd::Reset(0x7))
        ],
        "REFUSED_STREAM by RST is the server's word, kept as it said it"
    );

    // nginx after keepalive_requests: it answers the streams up to the last it counts and
    // closes the rest unprocessed.
    let mut pair = Pair::new(Settings::default(), Settings::default());
    for exchange in 0..3 {
        pair.get("/", exchange);
    }
    pair.pump(&mut |_, _| Answer::Hold);
    pair.server.goaway(1, 0).unwrap();
    pair.server.respond(1, 200, &[], b"one").unwrap();
    pair.pump(&mut |_, _| Answer::Hold);
    assert!(pair.seen.contains(&Event::GoAway {
        last_stream_id: 1,
        code: 0
    }));
    assert_eq!(
        pair.ends(),
        vec![
            (0, StreamEnd::Complete),
            (1, StreamEnd::Unprocessed),
            (2, StreamEnd::Unprocessed)
        ]
    );
    assert_eq!(pair.body_bytes(0), 3);
    assert_eq!(pair.client.capacity(), 0, "no new streams after GOAWAY");
    assert!(matches!(
        pair.client.submit(&Request::default(), 9, false),
        Err(H2Error::Closed)
    ));
}

#[test]
fn a_server_allowing_one_stream_gets_them_one_at_a_time() {
    let one = Settings {
        max_concurrent_streams: 1,
        ..Settings::default()
    };
    let mut pair = Pair::new(Settings::default(), one);
    pair.get("/", 0);
    pair.pump(&mut ok(10));
    assert_eq!(
        pair.client.capacity(),
        1,
        "the server's SETTINGS are heeded"
    );
    // Submitted beyond the limit anyway, nghttp2 queues them rather than break the limit.
    for exchange in 1..4 {
        pair.get("/", exchange);
    }
    let mut at_once = 0;
    for _ in 0..20 {
        let mut wire = Vec::new();
        pair.client.send(&mut wire).unwrap();
        pair.server.recv(&wire).unwrap();
        let asked: Vec<i32> = pair
            .server
            .events()
            .events
            .filter_map(|e| match e {
                Event::Request { stream_id, .. } => Some(stream_id),
                _ => None,
            })
            .collect();
        at_once = at_once.max(pair.server.open_streams());
        for id in asked {
            pair.server.respond(id, 200, &[], b"k").unwrap();
        }
        let mut back = Vec::new();
        pair.server.send(&mut back).unwrap();
        pair.server.events().events.for_each(drop);
        pair.client.recv(&back).unwrap();
        pair.take_client_events();
    }
    assert_eq!(at_once, 1);
    assert_eq!(pair.ends().len(), 4);
    assert!(pair
        .ends()
        .iter()
        .all(|(_, end)| *end == StreamEnd::Complete));
}

#[test]
fn a_stalled_stream_cancelled_at_its_deadline_yields_no_late_event() {
    let mut pair = Pair::new(Settings::default(), Settings::default());
    pair.get("/stall", 0);
    pair.get("/fast", 1);
    pair.pump(&mut |path, _| {
        if path == "/stall" {
            Answer::Hold
        } else {
            Answer::Respond(200, b"ok".to_vec())
        }
    });
    assert_eq!(pair.ends(), vec![(1, StreamEnd::Complete)]);
    pair.client.cancel(1).unwrap();
    pair.pump(&mut ok(1));
    assert_eq!(
        pair.ends(),
        vec![(1, StreamEnd::Complete)],
        "no event after cancel"
    );
    assert_eq!(pair.client.open_streams(), 0);
    assert_eq!(pair.server.open_streams(), 0, "the server saw RST_STREAM");
}

#[test]
fn small_windows_still_carry_a_large_body_through_window_updates() {
    let small = Settings {
        stream_window: 16_384,
        connection_window: 65_535,
        max_concurrent_streams: 100,
        connect_protocol: false,
    };
    let mut pair = Pair::new(small, Settings::default());
    pair.get("/big", 0);
    pair.get("/big", 1);
    pair.pump(&mut ok(1 << 20));
    assert_eq!(pair.body_bytes(0), 1 << 20);
    assert_eq!(pair.body_bytes(1), 1 << 20);
    assert_eq!(pair.ends().len(), 2);
}

#[test]
fn bytes_that_are_not_http2_end_the_session_with_an_error() {
    let mut client = ClientSession::new(&Settings::default()).unwrap();
    let err = client
        .recv(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        .unwrap_err();
    assert!(
        matches!(err, H2Error::Broken { .. }),
        "an HTTP/1.1 server answering h2c: {err}"
    );
    assert!(!client.alive() || client.capacity() == 0);
}

/// A response whose body is not as long as its content-length says is malformed (RFC 9113
/// section 8.1.1): never a complete response. herd checks this itself, not through nghttp2's
/// checks of every header field; a HEAD's, a 204's and a 304's length describe no body here.
#[test]
fn a_body_shorter_or_longer_than_its_content_length_is_no_complete_response() {
    let mut pair = Pair::new(Settings::default(), Settings::default());
    for exchange in 0..5 {
        pair.get("/", exchange);
    }
    let head = Request {
        method: b"HEAD",
        authority: b"mock.test",
        path: b"/",
        ..Request::default()
    };
    pair.client.submit(&head, 5, false).unwrap();
    pair.pump(&mut |_, _| Answer::Hold);
    // `respond` says the body's own length first; a second content-length is the one kept.
    let said = |n: &'static [u8]| [(&b"content-length"[..], n)];
    pair.server.respond(1, 200, &said(b"10"), b"hello").unwrap();
    pair.server.respond(3, 200, &said(b"2"), b"hello").unwrap();
    pair.server.respond(5, 200, &said(b"5"), b"hello").unwrap();
    pair.server
        .respond(7, 200, &said(b"five"), b"hello")
        .unwrap();
    pair.server.respond(9, 304, &said(b"10"), b"").unwrap();
    pair.server.respond(11, 200, &said(b"10"), b"").unwrap();
    pair.pump(&mut |_, _| Answer::Hold);
    assert_eq!(
        pair.ends(),
        vec![
            (0, StreamEnd::BadLength { said: 10, got: 5 }),
            (1, StreamEnd::BadLength { said: 2, got: 5 }),
            (2, StreamEnd::Complete),
            (
                3,
                StreamEnd::BadLength {
                    said: u64::MAX,
                    got: 5
                }
            ),
            (4, StreamEnd::Complete),
            (5, StreamEnd::Complete),
        ]
    );
}
