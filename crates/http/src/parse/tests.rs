//! The HTTP/1.1 parser's tests: every response cut at every read boundary parses the same;
//! heads seen before, pipelining, a close mid-response, malformed and oversized heads.

use super::*;

/// What a parse produced, comparable in one `assert_eq!`.
#[derive(Debug, PartialEq)]
struct Parsed {
    status: u16,
    body_len: u64,
    keep_alive: bool,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Complete only once the server closed (a body delimited by the close).
    by_close: bool,
    /// Bytes after the response, left for the next one.
    left: Vec<u8>,
}

/// Drives a parser as a connection would, delivering `wire` in pieces cut at `cuts` and then
/// closing.
fn parse_in_pieces(
    wire: &[u8],
    cuts: &[usize],
    head_request: bool,
    keep: bool,
) -> Result<Parsed, Failure> {
    let mut parser = ResponseParser::new(head_request, keep);
    let mut resp = Response::default();
    let mut pending = Vec::new();
    let mut start = 0;
    let mut by_close = false;
    for &end in cuts.iter().chain([&wire.len()]) {
        pending.extend_from_slice(&wire[start..end]);
        start = end;
        let (used, done) = parser.feed(&pending, std::time::Instant::now(), &mut resp)?;
        pending.drain(..used);
        if done {
            break;
        }
    }
    if start == wire.len() && !matches!(parser.state, State::Done) {
        parser.closed(&pending, &mut resp)?;
        pending.clear();
        by_close = true;
    }
    pending.extend_from_slice(&wire[start..]);
    Ok(Parsed {
        status: resp.status,
        body_len: resp.body_len,
        keep_alive: resp.keep_alive,
        headers: resp.headers.into(),
        body: resp.body.into(),
        by_close,
        left: pending,
    })
}

/// Parses `wire` whole, then split once at every position, then byte by byte, and checks
/// that every way gives the same result.
fn parse_every_way(wire: &[u8], head_request: bool, keep: bool) -> Result<Parsed, Failure> {
    let whole = parse_in_pieces(wire, &[], head_request, keep);
    for cut in 0..=wire.len() {
        let split = parse_in_pieces(wire, &[cut], head_request, keep);
        assert_eq!(split, whole, "cut at {cut}: {:?}", wire.escape_ascii());
    }
    let every_byte: Vec<usize> = (1..wire.len()).collect();
    let bytewise = parse_in_pieces(wire, &every_byte, head_request, keep);
    assert_eq!(bytewise, whole, "byte by byte: {:?}", wire.escape_ascii());
    whole
}

fn parsed(status: u16, body_len: u64, keep_alive: bool, by_close: bool) -> Parsed {
    Parsed {
        status,
        body_len,
        keep_alive,
        headers: Vec::new(),
        body: Vec::new(),
        by_close,
        left: Vec::new(),
    }
}

#[test]
fn parses_the_same_whatever_the_read_boundaries() {
    // (wire, HEAD request?, expected)
    let table: [(&[u8], bool, Parsed); 9] = [
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            false,
            parsed(200, 5, true, false),
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            false,
            parsed(200, 0, true, false),
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
            false,
            parsed(200, 5, true, false),
        ),
        (
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close",
            false,
            parsed(200, 11, false, true),
        ),
        (
            b"HTTP/1.1 200 OK\r\n\r\n",
            false,
            parsed(200, 0, false, true),
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
            true,
            parsed(200, 0, true, false),
        ),
        (
            b"HTTP/1.1 204 No Content\r\n\r\n",
            false,
            parsed(204, 0, true, false),
        ),
        (
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
            false,
            parsed(304, 0, true, false),
        ),
        (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
            false,
            parsed(200, 2, false, false),
        ),
    ];
    for (wire, head_request, expected) in table {
        let got = parse_every_way(wire, head_request, false).unwrap();
        assert_eq!(got, expected, "{:?}", wire.escape_ascii());
    }
}

#[test]
fn a_head_seen_before_reads_the_same_and_a_head_request_still_has_no_body() {
    // The same head bytes mean a 5-byte body after GET and none after HEAD, whichever came
    // first on this thread; and a head that only starts like the last one is parsed anew.
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    for _ in 0..2 {
        assert_eq!(
            parse_in_pieces(wire, &[], false, false),
            Ok(parsed(200, 5, true, false))
        );
        let mut as_head = parsed(200, 0, true, false);
        as_head.left = b"hello".to_vec();
        assert_eq!(parse_in_pieces(wire, &[], true, false), Ok(as_head));
    }
    let longer = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n";
    let mut resp = Response::default();
    let mut parser = ResponseParser::new(false, false);
    assert_eq!(
        parser.feed(longer, std::time::Instant::now(), &mut resp),
        Ok((longer.len(), false))
    );
    assert!(matches!(parser.state, State::Length(50)));
}

#[test]
fn switching_protocols_is_final() {
    let wire = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\nframes";
    let mut got = parsed(101, 0, false, false);
    got.left = b"frames".to_vec();
    assert_eq!(parse_every_way(wire, false, false).unwrap(), got);
}

#[test]
fn keep_copies_headers_and_body_of_the_final_response() {
    // (wire, headers as "name: value" lines, body)
    let table: [(&[u8], &str, &[u8]); 3] = [
        (
            b"HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Id: \xff7\r\n\r\nhello",
            "Content-Length: 5\nX-Id: \u{fffd}7\n",
            b"hello",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            "Transfer-Encoding: chunked\n",
            b"abcde",
        ),
        (b"HTTP/1.1 200 OK\r\n\r\nto the end", "", b"to the end"),
    ];
    for (wire, headers, body) in table {
        let kept = parse_every_way(wire, false, true).unwrap();
        let lines: String = kept
            .headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}\n"))
            .collect();
        assert_eq!((lines.as_str(), kept.body.as_slice()), (headers, body));
        let counted = parse_every_way(wire, false, false).unwrap();
        assert_eq!(counted.body_len, body.len() as u64);
        assert!(counted.headers.is_empty() && counted.body.is_empty());
    }
}

#[test]
fn a_pipelined_response_is_left_for_the_next_parser() {
    let first = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".as_slice();
    let second = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".as_slice();
    for (a, b) in [(first, second), (second, first)] {
        let wire = [a, b].concat();
        let got = parse_every_way(&wire, false, false).unwrap();
        assert_eq!((got.status, got.by_close), (200, false));
        assert_eq!(got.left, b);
        let next = parse_every_way(&got.left, false, false).unwrap();
        assert_eq!((next.status, next.left.len()), (200, 0));
    }
}

#[test]
fn closed_says_how_far_the_response_got() {
    let table: [(&[u8], &str); 6] = [
        (b"", "connection closed before the response began"),
        (
            b"HTTP/1.1 100 Continue\r\n\r\n",
            "connection closed before the response began",
        ),
        (
            b"HTTP/1.1 200 OK\r\nCont",
            "connection closed after 21 bytes of the response head",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
            "connection closed after 3 of 10 body bytes",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
            "connection closed after 0 of 10 body bytes",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            "connection closed after 3 bytes of a chunked body",
        ),
    ];
    for (wire, message) in table {
        let failure = parse_every_way(wire, false, false).unwrap_err();
        assert_eq!(failure, Failure::new(ErrorKind::Eof, message));
    }
}

#[test]
fn malformed_responses_are_protocol_errors_quoting_what_came() {
    let table: [(&[u8], &str); 4] = [
        (
            b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
            r#"invalid response head (invalid HTTP version): "SSH-2.0-OpenSSH_9.6\r\n\r\n""#,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
            r#"bad Content-Length in response head "HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n""#,
        ),
        (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1,2\r\n\r\n",
            r#"conflicting Content-Length values in response head "HTTP/1.1 200 OK\r\nContent-Length: 1,2\r\n\r\n""#,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
            r#"bad chunk size in chunked body at "xyz\r\n""#,
        ),
    ];
    for (wire, message) in table {
        let failure = parse_in_pieces(wire, &[], false, false).unwrap_err();
        assert_eq!(failure, Failure::new(ErrorKind::Protocol, message));
    }
}

#[test]
fn a_head_of_256_kib_still_partial_is_a_protocol_error() {
    let mut wire = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
    wire.resize(MAX_HEAD - 1, b'v');
    let mut parser = ResponseParser::new(false, false);
    let mut resp = Response::default();
    assert_eq!(
        parser.feed(&wire, std::time::Instant::now(), &mut resp),
        Ok((0, false))
    );
    wire.push(b'v');
    let failure = parser
        .feed(&wire, std::time::Instant::now(), &mut resp)
        .unwrap_err();
    assert_eq!(failure.kind, ErrorKind::Protocol);
    assert!(
        failure
            .message
            .starts_with("response head larger than 256 KiB: \"HTTP/1.1 200 OK"),
        "{}",
        failure.message
    );
}

#[test]
fn the_parser_stays_small_enough_to_make_per_exchange() {
    assert!(std::mem::size_of::<ResponseParser>() <= 32);
}

#[test]
fn the_codec_reads_head_from_the_request_or_its_method_line() {
    let body_len = |req: &Request| {
        let mut parser = ResponseParser::for_request(req);
        let mut resp = Response::default();
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let (used, done) = parser
            .feed(wire, std::time::Instant::now(), &mut resp)
            .unwrap();
        assert!(done);
        (used, resp.body_len)
    };
    let get = Request::new(b"GET / HTTP/1.1\r\n\r\n".as_slice());
    let head = Request::new(b"HEAD / HTTP/1.1\r\n\r\n".as_slice());
    let flagged = Request {
        head: true,
        ..get.clone()
    };
    assert_eq!(body_len(&get), (40, 2));
    assert_eq!(body_len(&head), (38, 0));
    assert_eq!(body_len(&flagged), (38, 0));
}

#[test]
fn a_cookie_jar_alone_keeps_only_set_cookie_and_no_body() {
    let mut req = Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]);
    req.keep_response = true;
    req.keep_only_cookies = true;
    let with = b"HTTP/1.1 200 OK\r\nSet-Cookie: sid=1\r\nContent-Length: 2\r\nX-A: b\r\n\r\nhi";
    let without = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: b\r\n\r\nhi";
    let cookie = vec![("Set-Cookie".to_owned(), "sid=1".to_owned())];
    // Twice each: the second of a head seen before takes the short way, and still keeps
    // the cookie it carries.
    for (wire, headers) in [(&with[..], &cookie), (&with[..], &cookie)]
        .into_iter()
        .chain([(&without[..], &vec![]), (&without[..], &vec![])])
    {
        let mut resp = Response::default();
        let (used, done) = ResponseParser::for_request(&req)
            .feed(wire, std::time::Instant::now(), &mut resp)
            .unwrap();
        assert_eq!((used, done), (wire.len(), true));
        assert_eq!(&resp.headers, headers);
        assert_eq!(
            (resp.body_len, resp.body.len()),
            (2, 0),
            "counted, not kept"
        );
    }
}
