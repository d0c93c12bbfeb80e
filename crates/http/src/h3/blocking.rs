//! One HTTP/3 connection on a blocking UDP socket, one exchange at a time: for probing a target
//! and for tests. Runs go through the engine's loop instead.

use super::config::H3Config;
use super::connection::H3Connection;
use super::event::{H3Event, Handshake};
use super::request::H3Request;
use herd_engine::{Failure, Response};
use herd_metrics::ErrorKind;
use std::io;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

pub struct H3Client {
    socket: UdpSocket,
    conn: H3Connection,
    out: Vec<u8>,
    buf: Vec<u8>,
    next_token: usize,
}

impl H3Client {
    /// Opens a connection to `config`'s server and finishes its handshake within `limit`.
    pub fn connect(config: &H3Config, limit: Duration) -> Result<(H3Client, Handshake), Failure> {
        let deadline = Instant::now() + limit;
        let mut client = H3Client::start(config)?;
        loop {
            if let Some(ev) = client.conn.poll_event() {
                match ev {
                    H3Event::Connected(handshake) => return Ok((client, handshake)),
                    H3Event::Closed(failure) => {
                        return Err(failure.unwrap_or_else(|| {
                            Failure::new(ErrorKind::QuicClosed, "closed during the handshake")
                        }))
                    }
                    _ => continue,
                }
            }
            client.turn(deadline, "no QUIC handshake")?;
        }
    }

    /// Starts a connection to `config`'s server without waiting for its handshake: the first
    /// [`exchange`](Self::exchange) goes in 0-RTT when a resumed session allows it.
    pub fn start(config: &H3Config) -> Result<H3Client, Failure> {
        let socket = UdpSocket::bind(config.local()).map_err(|e| Failure::io(&e))?;
        // Connected, so the kernel drops other senders' datagrams and reports an ICMP "port
        // unreachable" as ECONNREFUSED: nothing listens on the server's UDP port.
        socket
            .connect(config.remote())
            .map_err(|e| Failure::io(&e))?;
        let conn = H3Connection::connect(config, Instant::now())?;
        Ok(H3Client {
            socket,
            conn,
            out: Vec::with_capacity(64 * 1024),
            buf: vec![0; 64 * 1024],
            next_token: 0,
        })
    }

    /// How the handshake went, once it is over.
    pub fn handshake(&self) -> Option<Handshake> {
        self.conn.handshake()
    }

    /// Sends `req` and reads its whole response within `limit`.
    pub fn exchange(&mut self, req: &H3Request, limit: Duration) -> Result<Response, Failure> {
        let deadline = Instant::now() + limit;
        let token = self.next_token;
        self.next_token += 1;
        while !self.conn.send(token, req, Instant::now())? {
            self.turn(deadline, "no room for a request")?;
        }
        loop {
            while let Some(ev) = self.conn.poll_event() {
                match ev {
                    H3Event::Done { token: t, response } if t == token => return Ok(response),
                    H3Event::Failed {
                        token: t, failure, ..
                    } if t == token => return Err(failure),
                    H3Event::Closed(Some(failure)) => return Err(failure),
                    _ => {}
                }
            }
            self.turn(deadline, "no complete response")?;
        }
    }

    /// Closes the connection, sending its CONNECTION_CLOSE.
    pub fn close(mut self) {
        self.conn.close(Instant::now());
        let _ = self.flush();
    }

    /// One loop turn: send what is due, wait for a datagram or quinn's next timer, handle it.
    fn turn(&mut self, deadline: Instant, what: &str) -> Result<(), Failure> {
        self.flush()?;
        let now = Instant::now();
        if now >= deadline {
            return Err(Failure::new(ErrorKind::Timeout, what));
        }
        let timer = self.conn.poll_timeout();
        let until = timer.map_or(deadline, |t| t.min(deadline));
        let wait = until
            .saturating_duration_since(now)
            .max(Duration::from_micros(1));
        self.socket
            .set_read_timeout(Some(wait))
            .map_err(|e| Failure::io(&e))?;
        match self.socket.recv(&mut self.buf) {
            Ok(n) => {
                self.conn.handle_datagram(Instant::now(), &self.buf[..n]);
                // Drain what else arrived before sending, so one send answers them all.
                self.socket
                    .set_nonblocking(true)
                    .map_err(|e| Failure::io(&e))?;
                while let Ok(n) = self.socket.recv(&mut self.buf) {
                    self.conn.handle_datagram(Instant::now(), &self.buf[..n]);
                }
                self.socket
                    .set_nonblocking(false)
                    .map_err(|e| Failure::io(&e))?;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(unreachable_or(e)),
        }
        let now = Instant::now();
        if self.conn.poll_timeout().is_some_and(|t| t <= now) {
            self.conn.handle_timeout(now);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Failure> {
        while let Some(out) = self.conn.poll_transmit(Instant::now(), 1, &mut self.out) {
            let bytes = &self.out[..out.len];
            for datagram in bytes.chunks(out.segment.unwrap_or(out.len).max(1)) {
                if let Err(e) = self.socket.send(datagram) {
                    return Err(unreachable_or(e));
                }
            }
        }
        Ok(())
    }
}

fn unreachable_or(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::ConnectionRefused {
        Failure::new(
            ErrorKind::ConnectRefused,
            "nothing listens on the server's UDP port (ICMP port unreachable)",
        )
    } else {
        Failure::io(&e)
    }
}
