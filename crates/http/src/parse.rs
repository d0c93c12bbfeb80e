//! The HTTP/1.1 response parser, sans-IO: it is handed bytes as they arrive and never reads; the
//! engine's loop feeds it from its reads. The
//! head is parsed in place by httparse and the body counted without being copied: nothing is
//! allocated per response unless the request keeps it.

use crate::chunked::ChunkedDecoder;
use crate::error::excerpt;
use crate::head::{self, Framing, Head};
use herd_engine::{Failure, Parse, Request, Response};
use herd_metrics::ErrorKind;
use std::cell::RefCell;
use std::mem::MaybeUninit;

/// A head that needs more than this is treated as a broken server, not buffered without limit.
pub(crate) const MAX_HEAD: usize = 256 * 1024;
const MAX_HEADERS: usize = 64;
/// Heads up to this long are remembered (see [`Seen`]).
const SEEN_MAX: usize = 1024;

/// The last final head parsed on this thread, its bytes and what they said. A server sends the
/// same head over and over (all of it but `Date`, which changes once a second): a response that
/// starts with exactly these bytes has this head, and httparse need not check them again.
#[derive(Default)]
struct Seen {
    bytes: Vec<u8>,
    head_request: bool,
    head: Option<Head>,
    /// The head has no `Set-Cookie`: a parser that keeps only those keeps nothing of it.
    cookie_free: bool,
}

thread_local! {
    static SEEN: RefCell<Seen> = RefCell::default();
}

/// Reads one response. Small and allocation-free, so making one per exchange costs nothing.
#[derive(Clone, Debug)]
pub struct ResponseParser {
    state: State,
    /// The response to a HEAD request has no body whatever its headers say.
    head_request: bool,
    /// Copy headers and body into the [`Response`]; otherwise only count the body.
    keep: bool,
    /// Without `keep`: copy only the `Set-Cookie` headers (a cookie jar's need), no body.
    cookies: bool,
}

#[derive(Clone, Debug)]
enum State {
    /// Waiting for a complete head; interim (1xx) heads are skipped here.
    Head,
    /// A Content-Length body with this many bytes still to come.
    Length(u64),
    Chunked(ChunkedDecoder),
    /// A body that ends when the server closes the connection.
    UntilClose,
    Done,
}

impl ResponseParser {
    /// The parser for the response to `req` (a HEAD request's response has no body).
    #[inline]
    pub fn for_request(req: &Request) -> Self {
        // Requests built from raw bytes may not set `head`: their method line says it.
        let head_request = req.head || req.bytes.starts_with(b"HEAD ");
        let mut p = ResponseParser::new(head_request, req.keep_response && !req.keep_only_cookies);
        p.cookies = req.keep_response && req.keep_only_cookies;
        p
    }

    /// A parser for the response to a HEAD request (`head_request`) or not, copying headers and
    /// body into the [`Response`] when `keep`.
    #[inline]
    pub fn new(head_request: bool, keep: bool) -> Self {
        ResponseParser {
            state: State::Head,
            head_request,
            keep,
            cookies: false,
        }
    }

    /// Parses the head at the start of `bytes` and moves on to its body; `None` while the head
    /// is incomplete. An interim head leaves the parser waiting for the next one.
    fn head(&mut self, bytes: &[u8], resp: &mut Response) -> Result<Option<usize>, Failure> {
        if bytes.is_empty() {
            return Ok(None);
        }
        if !self.keep {
            let seen = SEEN.with_borrow(|seen| match seen.head {
                Some(head)
                    if seen.head_request == self.head_request
                        && (seen.cookie_free || !self.cookies)
                        && bytes.starts_with(&seen.bytes) =>
                {
                    Some((head, seen.bytes.len()))
                }
                _ => None,
            });
            if let Some((head, len)) = seen {
                self.start_body(head, resp);
                return Ok(Some(len));
            }
        }
        // Uninitialised: zeroing 64 headers costs more than parsing a small head.
        let mut headers = [MaybeUninit::<httparse::Header<'_>>::uninit(); MAX_HEADERS];
        let mut parsed = httparse::Response::new(&mut []);
        let config = httparse::ParserConfig::default();
        let len = match config.parse_response_with_uninit_headers(&mut parsed, bytes, &mut headers)
        {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if bytes.len() >= MAX_HEAD => {
                return Err(protocol(format!(
                    "response head larger than {} KiB: {}",
                    MAX_HEAD / 1024,
                    excerpt(bytes)
                )))
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(err) => {
                return Err(protocol(format!(
                    "invalid response head ({err}): {}",
                    excerpt(bytes)
                )))
            }
        };
        let (version, status) = (parsed.version.unwrap_or(1), parsed.code.unwrap_or(0));
        let head = head::interpret(version, status, parsed.headers, self.head_request)
            .map_err(|reason| protocol(format!("{reason} in response head {}", excerpt(bytes))))?;
        if head.is_interim() {
            return Ok(Some(len));
        }
        let is_cookie = |h: &&httparse::Header<'_>| h.name.eq_ignore_ascii_case("set-cookie");
        if self.keep || self.cookies {
            let keep = self.keep;
            resp.headers.extend(
                parsed
                    .headers
                    .iter()
                    .filter(|h| keep || is_cookie(h))
                    .map(|h| {
                        (
                            h.name.to_owned(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    }),
            );
        }
        self.start_body(head, resp);
        if len <= SEEN_MAX {
            let cookie_free = !parsed.headers.iter().any(|h| is_cookie(&h));
            SEEN.with_borrow_mut(|seen| {
                seen.bytes.clear();
                seen.bytes.extend_from_slice(&bytes[..len]);
                seen.head_request = self.head_request;
                seen.head = Some(head);
                seen.cookie_free = cookie_free;
            });
        }
        Ok(Some(len))
    }

    /// A final head was read: what it says of the response, and on to its body.
    fn start_body(&mut self, head: Head, resp: &mut Response) {
        resp.status = head.status;
        resp.keep_alive = head.keep_alive;
        self.state = match head.framing {
            Framing::Empty => State::Done,
            Framing::Length(total) => State::Length(total),
            Framing::Chunked => State::Chunked(ChunkedDecoder::new()),
            Framing::UntilClose => State::UntilClose,
        };
    }

    /// Takes all of `bytes` as body: only the close ends it.
    fn until_close(&self, bytes: &[u8], resp: &mut Response) {
        resp.body_len += bytes.len() as u64;
        if self.keep {
            resp.body.extend_from_slice(bytes);
        }
    }
}

impl Parse for ResponseParser {
    #[inline]
    fn for_request(req: &Request) -> Self {
        ResponseParser::for_request(req)
    }

    fn feed(&mut self, bytes: &[u8], resp: &mut Response) -> Result<(usize, bool), Failure> {
        let mut used = 0;
        loop {
            let rest = &bytes[used..];
            match &mut self.state {
                State::Head => match self.head(rest, resp)? {
                    Some(len) => used += len,
                    None => return Ok((used, false)),
                },
                State::Length(remaining) => {
                    let take = (*remaining).min(rest.len() as u64) as usize;
                    if self.keep {
                        resp.body.extend_from_slice(&rest[..take]);
                    }
                    resp.body_len += take as u64;
                    *remaining -= take as u64;
                    let done = *remaining == 0;
                    if done {
                        self.state = State::Done;
                    }
                    return Ok((used + take, done));
                }
                State::Chunked(decoder) => {
                    let (keep, body_len, body) = (self.keep, &mut resp.body_len, &mut resp.body);
                    let (took, done) = decoder
                        .decode(rest, |data| {
                            *body_len += data.len() as u64;
                            if keep {
                                body.extend_from_slice(data);
                            }
                        })
                        .map_err(|err| {
                            protocol(format!(
                                "{} in chunked body at {}",
                                err.reason,
                                excerpt(&rest[err.at..])
                            ))
                        })?;
                    if done {
                        self.state = State::Done;
                    }
                    return Ok((used + took, done));
                }
                State::UntilClose => {
                    self.until_close(rest, resp);
                    return Ok((bytes.len(), false));
                }
                State::Done => return Ok((used, true)),
            }
        }
    }

    fn closed(&mut self, unconsumed: &[u8], resp: &mut Response) -> Result<(), Failure> {
        let message = match self.state {
            State::Head if unconsumed.is_empty() => {
                "connection closed before the response began".to_owned()
            }
            State::Head => format!(
                "connection closed after {} bytes of the response head",
                unconsumed.len()
            ),
            // `body_len` counts this body alone: the response was reset before the exchange.
            State::Length(remaining) => format!(
                "connection closed after {} of {} body bytes",
                resp.body_len,
                resp.body_len + remaining
            ),
            State::Chunked(_) => format!(
                "connection closed after {} bytes of a chunked body",
                resp.body_len
            ),
            State::UntilClose => {
                self.until_close(unconsumed, resp);
                self.state = State::Done;
                return Ok(());
            }
            State::Done => return Ok(()),
        };
        Err(Failure::new(ErrorKind::Eof, message))
    }
}

fn protocol(message: String) -> Failure {
    Failure::new(ErrorKind::Protocol, message)
}

#[cfg(test)]
mod tests {
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
            let (used, done) = parser.feed(&pending, &mut resp)?;
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
            headers: resp.headers,
            body: resp.body,
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
        assert_eq!(parser.feed(longer, &mut resp), Ok((longer.len(), false)));
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
        assert_eq!(parser.feed(&wire, &mut resp), Ok((0, false)));
        wire.push(b'v');
        let failure = parser.feed(&wire, &mut resp).unwrap_err();
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
            let (used, done) = parser.feed(wire, &mut resp).unwrap();
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
                .feed(wire, &mut resp)
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
}
