//! herd's [`Transport`]: HTTP/1.1 over TCP, or over TLS for `https` targets, on a readiness poll
//! per worker thread (mio, edge-triggered, each socket registered once). TLS is driven in the
//! same loop: rustls's `ClientConnection` does no I/O itself, so a TLS connection is the socket
//! plus the session its bytes pass through, behind the same read and write steps as a plain one
//! (wrk's ssl.c does the same in about ninety lines).

use crate::alarm::ALARM;
use crate::proxy::Tunnel;
use crate::session::HttpSession;
use crate::wire::{Conn, Wire};
use herd_engine::{Clock, Event, Failure, Io, Request, Transport};
use herd_metrics::ErrorKind;
use mio::net::TcpStream;
use mio::{Interest, Token};
use rustls::ClientConnection;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Transport for Wire {
    type Conn = Conn;
    type Session = HttpSession;

    fn connect(&mut self, token: usize) -> Result<Conn, Failure> {
        let addr = self.addr;
        let mut sock = match self.source {
            None => TcpStream::connect(addr),
            Some(ip) => connect_from(ip, addr),
        }
        .map_err(|e| connect_failure(self.via, addr, &e))?;
        self.poll
            .registry()
            .register(
                &mut sock,
                Token(token),
                Interest::READABLE | Interest::WRITABLE,
            )
            .map_err(|e| connect_failure(self.via, addr, &e))?;
        let tls = match &self.tls {
            None => None,
            Some(t) => Some(Box::new(
                ClientConnection::new(Arc::clone(&t.config), t.name.clone())
                    .map_err(|e| tls_failure(addr, &e.to_string()))?,
            )),
        };
        Ok(Conn {
            sock,
            tls,
            tcp_up: false,
            up_at: None,
            tunnel: self.tunnel.clone().map(|r| Box::new(Tunnel::new(r))),
        })
    }

    fn establish(&mut self, c: &mut Conn) -> Result<bool, Failure> {
        let addr = self.addr;
        if !c.tcp_up {
            match c.sock.take_error() {
                Ok(None) => {}
                Ok(Some(e)) | Err(e) => return Err(connect_failure(self.via, addr, &e)),
            }
            match c.sock.peer_addr() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(false),
                Err(e) => return Err(connect_failure(self.via, addr, &e)),
            }
            // Requests go out in one write; Nagle would only hold them back.
            let _ = c.sock.set_nodelay(true);
            c.tcp_up = true;
        }
        if let Some(t) = c.tunnel.as_mut() {
            match t.drive(&mut c.sock) {
                Ok(true) => c.tunnel = None,
                Ok(false) => return Ok(false),
                Err(why) => {
                    return Err(Failure::new(
                        ErrorKind::Other,
                        format!("proxy tunnel through {addr}: {why}"),
                    ))
                }
            }
        }
        let Some(tls) = c.tls.as_mut() else {
            return Ok(true);
        };
        c.up_at.get_or_insert_with(|| self.clock.now());
        loop {
            if send_tls(tls, &mut c.sock).map_err(|e| tls_io_failure(addr, &e))? {
                return Ok(false);
            }
            if !tls.is_handshaking() {
                return Ok(true);
            }
            match tls.read_tls(&mut c.sock) {
                Ok(0) => {
                    return Err(tls_failure(
                        addr,
                        "the server closed the connection during the handshake",
                    ))
                }
                Ok(_) => {
                    tls.process_new_packets()
                        .map_err(|e| crate::handshake::failure(addr, &e))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(tls_io_failure(addr, &e)),
            }
        }
    }

    #[inline]
    fn write(&mut self, c: &mut Conn, bytes: &[u8]) -> Result<Io, Failure> {
        let Some(tls) = c.tls.as_mut() else {
            loop {
                return match (&c.sock).write(bytes) {
                    Ok(0) => Ok(Io::Closed),
                    Ok(n) => Ok(Io::Done(n)),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Io::Blocked),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(Failure::io(&e)),
                };
            }
        };
        let n = tls.writer().write(bytes).map_err(|e| Failure::io(&e))?;
        send_tls(tls, &mut c.sock).map_err(|e| Failure::io(&e))?;
        Ok(if n == 0 { Io::Blocked } else { Io::Done(n) })
    }

    fn flush(&mut self, c: &mut Conn) -> Result<(), Failure> {
        if let Some(tls) = c.tls.as_mut() {
            send_tls(tls, &mut c.sock).map_err(|e| Failure::io(&e))?;
        }
        Ok(())
    }

    #[inline]
    fn read(&mut self, c: &mut Conn, buf: &mut [u8]) -> Result<Io, Failure> {
        let Some(tls) = c.tls.as_mut() else {
            loop {
                return match (&c.sock).read(buf) {
                    Ok(0) => Ok(Io::Closed),
                    Ok(n) => Ok(Io::Done(n)),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Io::Blocked),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(Failure::io(&e)),
                };
            }
        };
        let addr = self.addr;
        let mut eof = false;
        // A read shorter than `buf` must mean the socket is empty (the loop waits for the next
        // readiness edge then), as for a plain socket: rustls hands out one TLS record (16 KiB
        // at most) at a time, so `buf` is filled from record after record until the socket
        // would block. Stopping after one record left a 64 KiB response's other records in a
        // socket whose edge had already come: the exchange waited for its deadline.
        let mut filled = 0;
        let done = |filled: usize, otherwise: Io| {
            Ok(if filled > 0 {
                Io::Done(filled)
            } else {
                otherwise
            })
        };
        loop {
            send_tls(tls, &mut c.sock).map_err(|e| Failure::io(&e))?;
            match tls.reader().read(&mut buf[filled..]) {
                Ok(0) => return done(filled, Io::Closed),
                Ok(n) => {
                    filled += n;
                    if filled == buf.len() {
                        return Ok(Io::Done(filled));
                    }
                    continue;
                }
                // No close_notify: many servers just close; the response's framing decides.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return done(filled, Io::Closed)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) if filled > 0 => return Ok(Io::Done(filled)),
                Err(e) => return Err(Failure::io(&e)),
            }
            if eof {
                return done(filled, Io::Closed);
            }
            match tls.read_tls(&mut c.sock) {
                Ok(0) => eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return done(filled, Io::Blocked)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // What was read goes first; the next read meets the failure again.
                Err(_) if filled > 0 => return Ok(Io::Done(filled)),
                Err(e) => return Err(Failure::io(&e)),
            }
            if let Err(e) = tls.process_new_packets() {
                if filled > 0 {
                    return Ok(Io::Done(filled));
                }
                return Err(crate::handshake::failure(addr, &e));
            }
        }
    }

    fn close(&mut self, c: Conn) {
        // Closing the socket takes it out of the poll set.
        drop(c);
    }

    fn wait(&mut self, until: Instant, out: &mut Vec<Event>) -> Result<(), Failure> {
        self.wakeup
            .wait(&mut self.poll, &mut self.events, until)
            .map_err(|e| Failure::io(&e))?;
        for ev in self.events.iter() {
            if ev.token() == ALARM {
                self.wakeup.fired();
                continue;
            }
            let failed = ev.is_error();
            out.push(Event {
                token: ev.token().0,
                readable: ev.is_readable() || ev.is_read_closed() || failed,
                writable: ev.is_writable() || ev.is_write_closed() || failed,
                closed: ev.is_read_closed() || failed,
            });
        }
        Ok(())
    }

    fn coalesce(&mut self, nap: Duration) {
        self.wakeup.nap(nap);
    }

    fn session(&self, conn: &Conn, window: usize, started: Instant) -> Self::Session {
        HttpSession::new(&self.protocol, conn.tls.is_some(), window, started)
    }

    fn socket(&self, _conn: &Conn, req: &Request, started: Instant) -> Option<HttpSession> {
        // HTTP/1.1's Upgrade, on a connection that speaks HTTP/1.1 (ALPN offers h2 only for
        // HTTP/2's runs, which the run refuses with sockets).
        matches!(self.protocol, crate::Protocol::Http1)
            .then(|| HttpSession::WebSocket(Box::new(crate::ws::WsSession::upgrade(req, started))))
    }

    fn connected_at(&self, conn: &Conn) -> Option<Instant> {
        conn.up_at
    }

    fn negotiated(&self, conn: &Conn) -> Option<herd_engine::Negotiated> {
        conn.tls.as_deref().and_then(crate::tls::negotiated)
    }

    #[inline]
    fn clock(&self) -> &dyn Clock {
        &self.clock
    }
}

/// Writes what the TLS session has for the socket; `Ok(true)` when the socket could not take
/// all of it (the rest goes on its next writable event).
fn send_tls(tls: &mut ClientConnection, sock: &mut TcpStream) -> io::Result<bool> {
    while tls.wants_write() {
        match tls.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// A non-blocking connect to `addr` from local address `ip` (any port).
fn connect_from(ip: IpAddr, addr: SocketAddr) -> io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::new(ip, 0).into())?;
    match s.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(s.into()))
}

fn connect_failure(via: &str, addr: SocketAddr, e: &io::Error) -> Failure {
    Failure::new(
        ErrorKind::from_io(e),
        format!("connect to {via}{addr}: {e}"),
    )
}

fn tls_io_failure(addr: SocketAddr, e: &io::Error) -> Failure {
    match ErrorKind::from_io(e) {
        ErrorKind::Other => tls_failure(addr, &e.to_string()),
        kind => Failure::new(kind, format!("TLS handshake with {addr}: {e}")),
    }
}

/// A TLS failure, with a hint when the port most likely speaks plain HTTP (the "record" rustls
/// got was an HTTP response to bytes it could not read).
fn tls_failure(addr: SocketAddr, why: &str) -> Failure {
    let plain = why.contains("InvalidContentType")
        || why.contains("corrupt message")
        || why.contains("closed the connection during the handshake");
    let hint = if plain {
        ": is this port serving plain HTTP? Try the URL with http:// instead of https://"
    } else {
        ""
    };
    Failure::new(
        ErrorKind::Tls,
        format!("TLS handshake with {addr}: {why}{hint}"),
    )
}
