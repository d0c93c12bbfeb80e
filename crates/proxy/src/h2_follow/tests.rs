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
            conn.up(piece, &mut choose, Some(&mut to_server), &mut found);
            closed |= conn.down_now(&mut to_client);
        }
        server.recv(&to_server).unwrap();
        let asked: Vec<(i32, bool)> = server
            .events()
            .events
            .filter_map(|e| match e {
                Event::Request {
                    stream_id, path, ..
                } => Some((stream_id, &*path == b"/e")),
                _ => None,
            })
            .collect();
        for (s, empty) in asked {
            // `/e`: a response of headers alone (END_STREAM on its HEADERS).
            let (status, body): (u16, &[u8]) = if empty { (204, b"") } else { (200, b"hello") };
            server.respond(s, status, &[], body).unwrap();
        }
        let mut answers = Vec::new();
        server.send(&mut answers).unwrap();
        for piece in answers.chunks(piece) {
            closed |= conn.down(piece, Some(&mut to_client), &mut found);
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
        (r.path == "/b" || r.path == "/e").then_some(H2Hit {
            action: H2Action::RstStream,
            code: 7,
        })
    };
    for piece in [1, 3, 9, 10, 64, 100_000] {
        let (ends, closed, found) = exchange(&["/a", "/b", "/c", "/b", "/e"], &rst, piece);
        assert_eq!(
            ends,
            ["complete", "reset 7", "complete", "reset 7", "reset 7"],
            "pieces of {piece}"
        );
        assert!(!closed);
        assert_eq!(
            found,
            Found {
                resets: 3,
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
    conn.up(&wire[5..], &mut |_| None, Some(&mut out), &mut found);
    assert_eq!(out, &wire[5..]);
    assert_eq!(conn.open.len(), 3);
    // Quiet (no toxic): followed without a copy, the streams known all the same.
    let mut quiet = H2Conn::new(0);
    for piece in wire.chunks(7) {
        quiet.up(piece, &mut |_| None, None, &mut found);
    }
    assert_eq!(
        (quiet.open.len(), quiet.highest, quiet.block.len()),
        (3, 5, 0)
    );
}

#[test]
fn a_toxic_arriving_inside_a_header_block_leaves_that_block_whole_and_acts_after_it() {
    let mut client = ClientSession::new(&Settings::default()).unwrap();
    for i in 0..3 {
        client.submit(&Request::default(), i, false).unwrap();
    }
    let mut wire = Vec::new();
    client.send(&mut wire).unwrap();
    // Where stream 3's HEADERS frame starts: after the preface, SETTINGS (and a window
    // update), and stream 1's HEADERS.
    let mut at = PREFACE.len();
    let mut starts = Vec::new();
    while at + 9 <= wire.len() {
        let len = u32::from_be_bytes([0, wire[at], wire[at + 1], wire[at + 2]]) as usize;
        if wire[at + 3] == HEADERS {
            starts.push(at);
        }
        at += 9 + len;
    }
    let cut = starts[1] + 12;
    let mut conn = H2Conn::new(0);
    let mut found = Found::default();
    conn.up(&wire[..cut], &mut |_| None, None, &mut found);
    let mut out = Vec::new();
    let mut asked = 0;
    let mut rst = |_: &Req| {
        asked += 1;
        Some(H2Hit {
            action: H2Action::RstStream,
            code: 2,
        })
    };
    conn.up(&wire[cut..], &mut rst, Some(&mut out), &mut found);
    assert_eq!(
        asked, 1,
        "only stream 5, the first block whole under the toxic"
    );
    // What went on: the rest of stream 3's block once, then stream 5's; its reset waits for
    // the end of its response.
    assert_eq!(out, &wire[cut..]);
    assert_eq!(conn.resetting, [(5, 2)]);
}
