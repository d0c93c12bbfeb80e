//! The follower between a real client and server session (nghttp2 on both sides, through
//! herd-h2), the bytes cut into pieces of every size so that frames and heads straddle reads.

use super::*;
use herd_h2::{ClientSession, Event, Request, ServerSession, Settings, StreamEnd};

/// How each of the client's requests ended, in the order submitted; and whether the proxy
/// closed the connection.
fn exchange(
    paths: &[&str],
    hit: &dyn Fn(&Req, u32) -> Option<H2Hit>,
    piece: usize,
) -> (Vec<String>, bool, Found) {
    let mut client = ClientSession::new(&Settings::default()).unwrap();
    let mut server = ServerSession::new(&Settings::default()).unwrap();
    let mut conn = H2Conn::new(0);
    for (i, p) in paths.iter().enumerate() {
        let req = Request {
            authority: b"example.test",
            path: p.as_bytes(),
            ..Request::default()
        };
        client.submit(&req, i, false).unwrap();
    }
    let mut found = Found::default();
    let mut ends = vec![String::from("open"); paths.len()];
    let mut closed = false;
    let mut seen = 0;
    for _round in 0..4 {
        let (mut wire, mut to_server, mut to_client) = (Vec::new(), Vec::new(), Vec::new());
        client.send(&mut wire).unwrap();
        let mut choose = |r: &Req| {
            seen += 1;
            hit(r, seen)
        };
        for piece in wire.chunks(piece) {
            conn.up(piece, &mut choose, &mut to_server, &mut found);
            closed |= conn.down_now(&mut to_client);
        }
        server.recv(&to_server).unwrap();
        let asked: Vec<i32> = server
            .events()
            .events
            .filter_map(|e| match e {
                Event::Request { stream_id, .. } => Some(stream_id),
                _ => None,
            })
            .collect();
        for s in asked {
            // A stream the proxy reset on the server's side may be gone already.
            let _ = server.respond(s, 200, &[], b"hello");
        }
        let mut answers = Vec::new();
        server.send(&mut answers).unwrap();
        for piece in answers.chunks(piece) {
            closed |= conn.down(piece, &mut to_client);
        }
        client.recv(&to_client).unwrap();
        for e in client.events().events {
            if let Event::Closed { exchange, end, .. } = e {
                ends[exchange] = match end {
                    StreamEnd::Complete => "complete".into(),
                    StreamEnd::Reset(code) => format!("reset {code}"),
                    StreamEnd::Unprocessed => "unprocessed".into(),
                    other => format!("{other:?}"),
                };
            }
        }
    }
    (ends, closed, found)
}

#[test]
fn a_reset_hits_only_the_chosen_stream_whatever_the_reads() {
    let rst = |r: &Req, _: u32| {
        (r.path == "/b").then_some(H2Hit {
            action: H2Action::RstStream,
            code: 7,
        })
    };
    for piece in [1, 3, 9, 10, 64, 100_000] {
        let (ends, closed, found) = exchange(&["/a", "/b", "/c", "/b"], &rst, piece);
        assert_eq!(
            ends,
            ["complete", "reset 7", "complete", "reset 7"],
            "pieces of {piece}"
        );
        assert!(!closed);
        assert_eq!(
            found,
            Found {
                resets: 2,
                goaways: 0
            }
        );
    }
}

#[test]
fn a_goaway_names_the_last_stream_sent_on_and_closes_once_it_is_answered() {
    let goaway = |_: &Req, nth: u32| {
        (nth == 3).then_some(H2Hit {
            action: H2Action::Goaway,
            code: 0,
        })
    };
    for piece in [1, 7, 100_000] {
        let (ends, closed, found) = exchange(&["/1", "/2", "/3", "/4"], &goaway, piece);
        assert_eq!(
            ends,
            ["complete", "complete", "unprocessed", "unprocessed"],
            "pieces of {piece}"
        );
        assert!(closed, "pieces of {piece}");
        assert_eq!(
            found,
            Found {
                resets: 0,
                goaways: 1
            }
        );
    }
}

#[test]
fn with_no_fault_every_byte_passes_as_it_came() {
    let mut client = ClientSession::new(&Settings::default()).unwrap();
    for i in 0..3 {
        client.submit(&Request::default(), i, false).unwrap();
    }
    let mut wire = Vec::new();
    client.send(&mut wire).unwrap();
    let mut conn = H2Conn::new(5);
    let (mut out, mut found) = (Vec::new(), Found::default());
    conn.up(&wire[5..], &mut |_| None, &mut out, &mut found);
    assert_eq!(out, &wire[5..]);
    assert_eq!(conn.open.len(), 3);
}
