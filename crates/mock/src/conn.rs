//! One client connection: read, parse, answer, repeat.
//!
//! Every request already in the read buffer is answered into one output buffer, which is
//! written before the next read: a pipelining client gets its responses in order and in as
//! few writes as possible, and a request-response client costs one read and one write.

use std::rc::Rc;
use std::time::Duration;

use rand::Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::auth::authorized;
use crate::counters::bump;
use crate::request::{self, Framing, Head};
use crate::response::{end_head, write_head, Compiled, Failure, Lookup, Persist, Table, GARBAGE};
use crate::route::Fault;
use crate::worker::{Socket, Worker};

/// First read buffer size; it doubles while a request head does not fit, up to [`MAX_HEAD`].
pub(crate) const INITIAL_BUF: usize = 8 << 10;
/// Largest request head (or chunk-size line, or trailer section) accepted; beyond it, 431.
const MAX_HEAD: usize = 64 << 10;
const MAX_HEADERS: usize = 64;
/// Past this much buffered output, write before parsing further pipelined requests.
const FLUSH_AT: usize = 64 << 10;
/// Largest body an echo route sends back; the rest of a request body is still read.
const MAX_ECHO_BODY: usize = 1 << 20;
/// How long a closing connection keeps reading what the client still sends, so that the
/// kernel answers with FIN rather than RST and the client sees our last response.
const LINGER: Duration = Duration::from_secs(5);

mod websocket;

/// Why a connection stopped being served.
enum End {
    /// The client closed, or the socket failed: nothing left to say.
    Gone,
    /// Close politely after flushing (Connection: close, HTTP/1.0, garbage, truncate).
    Close,
    /// Answer with a fixed error, then close.
    Reject(Rejection),
    Reset,
    Stall,
}

enum Rejection {
    Malformed,
    TooLarge,
}

/// The request's `Sec-WebSocket-Key`, when it asks to upgrade to a WebSocket.
fn upgrade_key(headers: &[httparse::Header<'_>]) -> Option<String> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
    };
    get("upgrade")
        .filter(|u| u.eq_ignore_ascii_case("websocket"))
        .and(get("sec-websocket-key"))
}

/// Serves HTTP/1.1 on `stream`, `buf[..end]` being what was read from it already.
pub(crate) async fn serve_http1<S: Socket>(
    stream: S,
    buf: Vec<u8>,
    end: usize,
    worker: Rc<Worker>,
) {
    let mut conn = Conn {
        stream,
        buf,
        start: 0,
        end,
        out: Vec::with_capacity(INITIAL_BUF),
        echo: Vec::new(),
        answered: 0,
    };
    let end = conn.run(&worker).await;
    conn.finish(end, &worker.table).await;
}

struct Conn<S> {
    stream: S,
    /// Bytes read but not yet consumed are `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    out: Vec<u8>,
    /// The request being echoed, for echo routes.
    echo: Vec<u8>,
    /// Requests answered on this connection, for `close-after`.
    answered: u32,
}

/// A request head parsed out of the buffer, reduced to what outlives the borrow of the buffer.
struct Parsed<'t> {
    /// A WebSocket route's `Sec-WebSocket-Key`, when the request asked to upgrade.
    ws_key: Option<String>,
    head: Head,
    len: usize,
    lookup: Lookup<'t>,
    /// False when the route wants a token and the request has no valid one.
    authorized: bool,
}

impl<S: Socket> Conn<S> {
    async fn run(&mut self, w: &Worker) -> End {
        loop {
            while self.start < self.end {
                match self.next(w).await {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(end) => return end,
                }
            }
            if let Err(end) = self.fill().await {
                return end;
            }
        }
    }

    /// Answers the next buffered request; `Ok(false)` when its head is not complete yet.
    async fn next(&mut self, w: &Worker) -> Result<bool, End> {
        let Parsed {
            ws_key,
            head,
            len,
            lookup,
            authorized,
        } = match self.parse(&w.table)? {
            Some(parsed) => parsed,
            None => return Ok(false),
        };
        let echo = matches!(lookup, Lookup::Found(route) if route.echo);
        if echo {
            self.echo.clear();
            self.echo
                .extend_from_slice(&self.buf[self.start..self.start + len]);
        }
        self.start += len;
        bump(&w.counters.requests);

        if head.expect_continue && head.framing != Framing::None {
            self.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        self.discard_body(head.framing, echo).await?;

        let persist = match (head.keep_alive, head.http10) {
            (false, _) => Persist::Close,
            (true, true) => Persist::KeepAlive,
            (true, false) => Persist::Implicit,
        };
        let fixed = match lookup {
            Lookup::Found(route) if !authorized => &route.unauthorized,
            Lookup::Found(route) if authorized && ws_key.is_some() => {
                let key = ws_key.unwrap_or_default();
                return Err(self.websocket(w, route, &key).await);
            }
            Lookup::Found(route) => return self.answer(w, route, &head, persist).await,
            Lookup::NotFound => &w.table.not_found,
            Lookup::MethodNotAllowed => &w.table.method_not_allowed,
        };
        fixed.write(&mut self.out, persist, head.head_only);
        self.after(&head).await
    }

    /// Ends a request: close if it asked to, write if much output is pending.
    async fn after(&mut self, head: &Head) -> Result<bool, End> {
        if !head.keep_alive {
            return Err(End::Close);
        }
        if self.out.len() >= FLUSH_AT {
            self.flush().await?;
        }
        Ok(true)
    }

    fn parse<'t>(&self, table: &'t Table) -> Result<Option<Parsed<'t>>, End> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&self.buf[self.start..self.end]) {
            Ok(httparse::Status::Complete(len)) => {
                let head = request::inspect(&req).map_err(|_| End::Reject(Rejection::Malformed))?;
                // httparse fills method and path in every complete request.
                let lookup =
                    table.lookup(req.method.unwrap_or_default(), req.path.unwrap_or_default());
                let authorized = match &lookup {
                    Lookup::Found(route) => {
                        let value = req
                            .headers
                            .iter()
                            .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                            .map(|h| h.value);
                        authorized(route, value)
                    }
                    _ => true,
                };
                let ws_key = match &lookup {
                    Lookup::Found(route) if route.websocket => upgrade_key(req.headers),
                    _ => None,
                };
                Ok(Some(Parsed {
                    ws_key,
                    head,
                    len,
                    lookup,
                    authorized,
                }))
            }
            Ok(httparse::Status::Partial) => Ok(None),
            Err(httparse::Error::TooManyHeaders) => Err(End::Reject(Rejection::TooLarge)),
            Err(_) => Err(End::Reject(Rejection::Malformed)),
        }
    }

    async fn answer(
        &mut self,
        w: &Worker,
        route: &Compiled,
        head: &Head,
        persist: Persist,
    ) -> Result<bool, End> {
        if route.close_after.is_some_and(|n| self.answered >= n) {
            return Err(End::Close);
        }
        self.answered += 1;
        let (failed, delay) = {
            let mut rng = w.rng.borrow_mut();
            let failed = route.error_rate > 0.0 && rng.gen_bool(route.error_rate);
            (failed, route.delay.sample(&mut *rng))
        };
        if !delay.is_zero() {
            // Earlier pipelined answers are ready now; don't make them wait for this one.
            self.flush().await?;
            w.delays.sleep(delay).await;
        }
        if failed {
            bump(&w.counters.injected);
            match route.failure {
                Failure::Status(ref prepared) => {
                    prepared.write(&mut self.out, persist, head.head_only)
                }
                Failure::Fault(fault) => return Err(self.inject(fault, route)),
            }
        } else if let Some(events) = &route.events {
            self.stream_events(w, route, events, persist).await?;
        } else if route.echo {
            write_head(&mut self.out, route.status, &route.headers, self.echo.len());
            end_head(&mut self.out, persist);
            if !head.head_only {
                self.out.extend_from_slice(&self.echo);
            }
        } else {
            route.ok.write(&mut self.out, persist, head.head_only);
        }
        self.after(head).await
    }

    /// Sends `events` as they are due, each flushed on its own.
    async fn stream_events(
        &mut self,
        w: &Worker,
        route: &Compiled,
        events: &crate::events::Compiled,
        persist: Persist,
    ) -> Result<(), End> {
        events.head(&mut self.out, route.status, &route.headers);
        end_head(&mut self.out, persist);
        self.flush().await?;
        // A batch's slot, held to the stream's end: waiting for it is part of the first
        // token's wait. The semaphore is never closed, so the permit always comes.
        let _slot = match &events.slots {
            Some(s) => s.clone().acquire_owned().await.ok(),
            None => None,
        };
        for i in 0..events.count {
            let wait = {
                let mut rng = w.rng.borrow_mut();
                let d = if i == 0 { &events.first } else { &events.gap };
                d.sample(&mut *rng)
            };
            if !wait.is_zero() {
                w.delays.sleep(wait).await;
            }
            events.event(i, &mut self.out);
            self.flush().await?;
        }
        events.end(&mut self.out);
        self.flush().await
    }

    fn inject(&mut self, fault: Fault, route: &Compiled) -> End {
        match fault {
            Fault::Reset | Fault::Refuse => End::Reset,
            Fault::Close => End::Close,
            Fault::Stall => End::Stall,
            Fault::Garbage => {
                self.out.extend_from_slice(GARBAGE);
                End::Close
            }
            Fault::Truncate => {
                self.out.extend_from_slice(&route.truncated);
                End::Close
            }
        }
    }

    /// Reads past the request body, keeping up to [`MAX_ECHO_BODY`] of it when `keep` is set.
    async fn discard_body(&mut self, framing: Framing, keep: bool) -> Result<(), End> {
        match framing {
            Framing::None => Ok(()),
            Framing::Length(n) => self.skip(n, keep).await,
            Framing::Chunked => loop {
                let size = loop {
                    match httparse::parse_chunk_size(&self.buf[self.start..self.end]) {
                        Ok(httparse::Status::Complete((used, size))) => {
                            self.start += used;
                            break size;
                        }
                        Ok(httparse::Status::Partial) => self.fill().await?,
                        Err(_) => return Err(End::Reject(Rejection::Malformed)),
                    }
                };
                if size == 0 {
                    return self.skip_trailers().await;
                }
                self.skip(size, keep).await?;
                self.expect_crlf().await?;
            },
        }
    }

    async fn skip(&mut self, mut n: u64, keep: bool) -> Result<(), End> {
        loop {
            let take = (self.end - self.start).min(usize::try_from(n).unwrap_or(usize::MAX));
            if keep {
                let room = MAX_ECHO_BODY.saturating_sub(self.echo.len()).min(take);
                self.echo
                    .extend_from_slice(&self.buf[self.start..self.start + room]);
            }
            self.start += take;
            n -= take as u64;
            if n == 0 {
                return Ok(());
            }
            self.fill().await?;
        }
    }

    async fn expect_crlf(&mut self) -> Result<(), End> {
        while self.end - self.start < 2 {
            self.fill().await?;
        }
        if &self.buf[self.start..self.start + 2] != b"\r\n" {
            return Err(End::Reject(Rejection::Malformed));
        }
        self.start += 2;
        Ok(())
    }

    /// Skips trailer fields up to and including the empty line that ends a chunked body.
    async fn skip_trailers(&mut self) -> Result<(), End> {
        loop {
            match self.buf[self.start..self.end]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                Some(0) => {
                    self.start += 2;
                    return Ok(());
                }
                Some(line) => self.start += line + 2,
                None => self.fill().await?,
            }
        }
    }

    /// Writes pending output, then reads more input after what is buffered.
    async fn fill(&mut self) -> Result<(), End> {
        self.flush().await?;
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else if self.buf.len() < MAX_HEAD {
                self.buf.resize(self.buf.len() * 2, 0);
            } else {
                return Err(End::Reject(Rejection::TooLarge));
            }
        }
        match self.stream.read(&mut self.buf[self.end..]).await {
            Ok(0) | Err(_) => Err(End::Gone),
            Ok(n) => {
                self.end += n;
                Ok(())
            }
        }
    }

    async fn flush(&mut self) -> Result<(), End> {
        if !self.out.is_empty() {
            self.stream
                .write_all(&self.out)
                .await
                .map_err(|_| End::Gone)?;
            self.out.clear();
        }
        Ok(())
    }

    async fn finish(mut self, end: End, table: &Table) {
        match end {
            End::Gone => {}
            End::Close => self.linger().await,
            End::Reject(why) => {
                let answer = match why {
                    Rejection::Malformed => &table.bad_request,
                    Rejection::TooLarge => &table.too_large,
                };
                answer.write(&mut self.out, Persist::Close, false);
                self.linger().await;
            }
            End::Reset => {
                if self.flush().await.is_ok() {
                    // SO_LINGER 0 turns close() into an RST instead of a FIN.
                    let _ =
                        socket2::SockRef::from(self.stream.tcp()).set_linger(Some(Duration::ZERO));
                }
            }
            End::Stall => {
                if self.flush().await.is_ok() {
                    // Read (and drop) until the client gives up, so it is not reset early.
                    while matches!(self.stream.read(&mut self.buf).await, Ok(n) if n > 0) {}
                }
            }
        }
    }

    /// Flushes, sends FIN, then reads until the client closes too (or [`LINGER`] passes):
    /// closing with unread input would make the kernel send RST and could destroy our answer
    /// before the client reads it.
    async fn linger(&mut self) {
        if self.flush().await.is_err() || self.stream.shutdown().await.is_err() {
            return;
        }
        let drain =
            async { while matches!(self.stream.read(&mut self.buf).await, Ok(n) if n > 0) {} };
        let _ = tokio::time::timeout(LINGER, drain).await;
    }
}
