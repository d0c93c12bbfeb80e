//! One connection, driving the sans-IO [`ResponseParser`](crate::ResponseParser) from its reads.
//! The hot path writes the pre-serialized request once, reads into a buffer lent to the
//! connection and feeds the parser in place: no allocation per request unless the request asks
//! to keep the response.

use crate::parse::{HttpCodec, MAX_HEAD};
use herd_engine::{Codec, Failure, Parse, Request, Response};
use herd_metrics::ErrorKind;
use std::io;
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
        let mut parser = HttpCodec.parser(req);
        loop {
            let (used, done) = parser.feed(&self.buf[self.start..self.end], resp)?;
            self.consume(used);
            if done {
                break;
            }
            if self.read(resp).await? == 0 {
                parser.closed(&self.buf[self.start..self.end], resp)?;
                self.consume(self.end - self.start);
                break;
            }
        }
        // What is left belongs to the next response.
        resp.bytes_received -= (self.end - self.start) as u64;
        Ok(())
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
            // A head that outgrew the buffer. The parser fails one of MAX_HEAD bytes, so the
            // buffer never fills at that size; if it did, the read below would return 0 and end
            // the exchange as a close rather than spin.
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
