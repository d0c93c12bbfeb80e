//! One connection and the HTTP/1.1 response codec that runs on it. The hot path writes the
//! pre-serialized request once, reads into a buffer owned by the connection, parses the head in
//! place with httparse and counts the body without copying it: no allocation per request unless
//! the request asks to keep the response.

use crate::chunked::ChunkedDecoder;
use crate::error::excerpt;
use crate::head::{self, Framing, Head};
use herd_engine::{Failure, Request, Response};
use herd_metrics::ErrorKind;
use std::io;
use std::mem::MaybeUninit;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::client::TlsStream;

/// Holds a typical response head and a good slice of body per read.
const BUFFER: usize = 16 * 1024;
/// Spare read buffers kept per worker thread.
const POOL: usize = 64;

thread_local! {
    /// Read buffers not lent to a connection. A connection needs one only while it reads a
    /// response: it waits for the socket to become readable without one, and gives it back when
    /// nothing of the next response is in it. 10,000 idle-waiting connections then cost a few
    /// buffers, not 160 MB of them.
    static BUFFERS: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn take_buffer() -> Vec<u8> {
    BUFFERS
        .with(|b| b.borrow_mut().pop())
        .unwrap_or_else(|| vec![0; BUFFER])
}

fn give_buffer(buf: Vec<u8>) {
    // Buffers grown for a huge head go back to the allocator.
    if buf.len() == BUFFER {
        BUFFERS.with(|b| {
            let mut pool = b.borrow_mut();
            if pool.len() < POOL {
                pool.push(buf);
            }
        });
    }
}
/// A head that needs more than this is treated as a broken server, not buffered without limit.
const MAX_HEAD: usize = 256 * 1024;
const MAX_HEADERS: usize = 64;

pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// An open connection to the target, plain or TLS, with its read buffer while it reads.
pub struct Conn {
    stream: Stream,
    /// Fully initialised, so reads need no unsafe; only `start..end` holds unconsumed bytes.
    /// Empty (no allocation) between responses unless bytes of the next one already arrived.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Conn {
    pub(crate) fn new(stream: Stream) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    /// Gives the read buffer back to the thread's pool when it holds nothing of the next
    /// response.
    fn release_buffer(&mut self) {
        if self.start == self.end && !self.buf.is_empty() {
            give_buffer(std::mem::take(&mut self.buf));
            self.start = 0;
            self.end = 0;
        }
    }

    /// Writes `req`, then reads one complete response into `resp`.
    pub(crate) async fn exchange(
        &mut self,
        req: &Request,
        resp: &mut Response,
    ) -> Result<(), Failure> {
        let result = self.exchange_inner(req, resp).await;
        self.release_buffer();
        result
    }

    async fn exchange_inner(&mut self, req: &Request, resp: &mut Response) -> Result<(), Failure> {
        if let Err(err) = self.write_all(&req.bytes).await {
            return Err(self.failure(&err));
        }
        // Bytes left over from the previous response (a server that answered ahead) belong to
        // this one: they count as received, and as its first byte, now that it is due.
        resp.bytes_received = (self.end - self.start) as u64;
        if resp.bytes_received > 0 {
            resp.first_byte = Some(Instant::now());
        }
        let head_request = req.head || req.bytes.starts_with(b"HEAD ");
        let head = loop {
            let head = self
                .read_head(req.keep_response, head_request, resp)
                .await?;
            if !head.is_interim() {
                break head;
            }
            resp.headers.clear();
        };
        resp.status = head.status;
        resp.keep_alive = head.keep_alive;
        match head.framing {
            Framing::Empty => {}
            Framing::Length(total) => self.read_sized_body(total, req.keep_response, resp).await?,
            Framing::Chunked => self.read_chunked_body(req.keep_response, resp).await?,
            Framing::UntilClose => self.read_body_until_close(req.keep_response, resp).await?,
        }
        // What is left belongs to the next response.
        resp.bytes_received -= (self.end - self.start) as u64;
        Ok(())
    }

    async fn read_head(
        &mut self,
        keep: bool,
        head_request: bool,
        resp: &mut Response,
    ) -> Result<Head, Failure> {
        loop {
            if self.start < self.end {
                let pending = &self.buf[self.start..self.end];
                // Uninitialised: zeroing 64 headers costs more than parsing a small head.
                let mut headers = [MaybeUninit::<httparse::Header<'_>>::uninit(); MAX_HEADERS];
                let mut parsed = httparse::Response::new(&mut []);
                let config = httparse::ParserConfig::default();
                match config.parse_response_with_uninit_headers(&mut parsed, pending, &mut headers)
                {
                    Ok(httparse::Status::Complete(len)) => {
                        let (version, status) =
                            (parsed.version.unwrap_or(1), parsed.code.unwrap_or(0));
                        let head = head::interpret(version, status, parsed.headers, head_request)
                            .map_err(|reason| {
                            protocol(format!("{reason} in response head {}", excerpt(pending)))
                        })?;
                        if keep {
                            resp.headers.extend(parsed.headers.iter().map(|h| {
                                (
                                    h.name.to_owned(),
                                    String::from_utf8_lossy(h.value).into_owned(),
                                )
                            }));
                        }
                        self.consume(len);
                        return Ok(head);
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(err) => {
                        return Err(protocol(format!(
                            "invalid response head ({err}): {}",
                            excerpt(pending)
                        )))
                    }
                }
            }
            let had = self.end - self.start;
            if self.read(resp).await? == 0 {
                return Err(Failure::new(
                    ErrorKind::Eof,
                    match had {
                        0 => "connection closed before the response began".to_owned(),
                        n => format!("connection closed after {n} bytes of the response head"),
                    },
                ));
            }
        }
    }

    async fn read_sized_body(
        &mut self,
        total: u64,
        keep: bool,
        resp: &mut Response,
    ) -> Result<(), Failure> {
        let mut remaining = total;
        loop {
            let pending = &self.buf[self.start..self.end];
            let take = remaining.min(pending.len() as u64) as usize;
            if keep {
                resp.body.extend_from_slice(&pending[..take]);
            }
            self.consume(take);
            remaining -= take as u64;
            resp.body_len = total - remaining;
            if remaining == 0 {
                return Ok(());
            }
            if self.read(resp).await? == 0 {
                return Err(Failure::new(
                    ErrorKind::Eof,
                    format!(
                        "connection closed after {} of {total} body bytes",
                        resp.body_len
                    ),
                ));
            }
        }
    }

    async fn read_chunked_body(&mut self, keep: bool, resp: &mut Response) -> Result<(), Failure> {
        let mut decoder = ChunkedDecoder::new();
        loop {
            let pending = &self.buf[self.start..self.end];
            let (body_len, body) = (&mut resp.body_len, &mut resp.body);
            let decoded = decoder.decode(pending, |data| {
                *body_len += data.len() as u64;
                if keep {
                    body.extend_from_slice(data);
                }
            });
            match decoded {
                Ok((used, done)) => {
                    self.consume(used);
                    if done {
                        return Ok(());
                    }
                }
                Err(err) => {
                    let at = &pending[err.at..];
                    return Err(protocol(format!(
                        "{} in chunked body at {}",
                        err.reason,
                        excerpt(at)
                    )));
                }
            }
            if self.read(resp).await? == 0 {
                return Err(Failure::new(
                    ErrorKind::Eof,
                    format!(
                        "connection closed after {} bytes of a chunked body",
                        resp.body_len
                    ),
                ));
            }
        }
    }

    async fn read_body_until_close(
        &mut self,
        keep: bool,
        resp: &mut Response,
    ) -> Result<(), Failure> {
        loop {
            let pending = &self.buf[self.start..self.end];
            resp.body_len += pending.len() as u64;
            if keep {
                resp.body.extend_from_slice(pending);
            }
            self.consume(pending.len());
            if self.read(resp).await? == 0 {
                return Ok(());
            }
        }
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads once into the free end of the buffer, recording arrival; `Ok(0)` means the server
    /// closed. Reading into all the free space, not just what the response still needs, lets
    /// tokio see a short read and skip the read that would return EAGAIN before the next
    /// response.
    async fn read(&mut self, resp: &mut Response) -> Result<usize, Failure> {
        if self.buf.is_empty() {
            // Wait for data before borrowing a buffer: most of a connection's life is waiting.
            if let Stream::Plain(s) = &self.stream {
                if let Err(err) = std::future::poll_fn(|cx| s.poll_read_ready(cx)).await {
                    return Err(self.failure(&err));
                }
            }
            self.buf = take_buffer();
        }
        if self.start > 0 {
            // Only a partial head can be left here (bodies are always consumed whole): small.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= MAX_HEAD {
                return Err(protocol(format!(
                    "response head larger than {} KiB: {}",
                    MAX_HEAD / 1024,
                    excerpt(&self.buf)
                )));
            }
            self.buf.resize((self.buf.len() * 2).min(MAX_HEAD), 0);
        }
        let free = &mut self.buf[self.end..];
        let read = match &mut self.stream {
            Stream::Plain(s) => s.read(free).await,
            Stream::Tls(s) => s.read(free).await,
        };
        match read {
            Ok(n) => {
                if n > 0 {
                    resp.first_byte.get_or_insert_with(Instant::now);
                    resp.bytes_received += n as u64;
                    self.end += n;
                }
                Ok(n)
            }
            // Many servers close TLS without close_notify, which rustls reports as
            // UnexpectedEof. Treat it as a close: callers know whether the response was
            // complete, and a close-delimited body over TLS would otherwise never end well.
            Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            Err(err) => Err(self.failure(&err)),
        }
    }

    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.stream {
            Stream::Plain(s) => s.write_all(bytes).await,
            Stream::Tls(s) => {
                s.write_all(bytes).await?;
                s.flush().await
            }
        }
    }

    fn failure(&self, err: &io::Error) -> Failure {
        // rustls reports record-layer trouble (bad MAC, alerts) as InvalidData.
        if matches!(self.stream, Stream::Tls(_)) && err.kind() == io::ErrorKind::InvalidData {
            Failure::new(ErrorKind::Tls, err.to_string())
        } else {
            Failure::io(err)
        }
    }
}

fn protocol(message: String) -> Failure {
    Failure::new(ErrorKind::Protocol, message)
}
