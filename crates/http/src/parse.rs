//! The HTTP/1.1 response parser, sans-IO: it is handed bytes as they arrive and never reads; the
//! engine's loop feeds it from its reads. The
//! head is parsed in place by httparse and the body counted without being copied: nothing is
//! allocated per response unless the request keeps it.

use crate::chunked::ChunkedDecoder;
use crate::error::excerpt;
use crate::head::{self, Framing, Head};
use crate::sse;
use herd_engine::{EventStream, Failure, Parse, Request, Response};
use herd_metrics::ErrorKind;
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::time::Instant;

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
    /// An event-stream body is read as an LLM's tokens (`--sse llm`).
    llm: bool,
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
        p.llm = req.llm;
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
            llm: false,
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
        if head.event_stream && head.framing != Framing::Empty {
            resp.events = Some(Box::new(EventStream::new(self.llm)));
        }
        self.state = match head.framing {
            Framing::Empty => State::Done,
            Framing::Length(total) => State::Length(total),
            Framing::Chunked => State::Chunked(ChunkedDecoder::new()),
            Framing::UntilClose => State::UntilClose,
        };
    }

    /// Takes all of `bytes` as body: only the close ends it.
    fn until_close(&self, bytes: &[u8], now: Instant, resp: &mut Response) {
        resp.body_len += bytes.len() as u64;
        if let Some(ev) = &mut resp.events {
            sse::scan(ev, bytes, now);
        }
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

    fn feed(
        &mut self,
        bytes: &[u8],
        now: Instant,
        resp: &mut Response,
    ) -> Result<(usize, bool), Failure> {
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
                    if let Some(ev) = &mut resp.events {
                        sse::scan(ev, &rest[..take], now);
                    }
                    *remaining -= take as u64;
                    let done = *remaining == 0;
                    if done {
                        self.state = State::Done;
                    }
                    return Ok((used + take, done));
                }
                State::Chunked(decoder) => {
                    let (keep, body_len, body) = (self.keep, &mut resp.body_len, &mut resp.body);
                    let events = &mut resp.events;
                    let (took, done) = decoder
                        .decode(rest, |data| {
                            *body_len += data.len() as u64;
                            if let Some(ev) = events {
                                sse::scan(ev, data, now);
                            }
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
                    self.until_close(rest, now, resp);
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
                self.until_close(unconsumed, Instant::now(), resp);
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
mod tests;
