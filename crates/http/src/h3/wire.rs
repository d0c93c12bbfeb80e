//! HTTP/3's wire: each connection is a UDP socket on the thread's mio poll and an
//! [`H3Connection`] kept here, beside the socket, so that the transport's `wait`
//! (transport.rs) can feed it datagrams and fire its timers (quinn's loss, ack and idle timers,
//! filed in a heap, join the loop's own wake-up on one timerfd). Only connections that had
//! something happen (a datagram, a timer, their session's use) are driven in a turn: the ready
//! list, not a scan of every connection. Their datagrams go out once per turn, at the top of
//! `wait`, several in one `sendmsg` with GSO where the kernel has it (quinn-udp, which also
//! reads GRO batches and falls back to one datagram a call where segmentation fails). The
//! connection's session (session.rs) hands it requests and turns its events into the loop's
//! notes.

use super::config::H3Config;
use super::connection::H3Connection;
use super::request::H3Request;
use crate::alarm::{Wakeup, ALARM};
use crate::{HttpError, Target, TlsOptions};
use herd_engine::{Failure, Request};
use herd_metrics::ErrorKind;
use mio::net::UdpSocket;
use mio::Poll;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, IoSliceMut};
use std::sync::Arc;
use std::time::Instant;

/// Distinct requests whose frames are kept (a workload's names; dynamic requests beyond this
/// are translated again).
const TRANSLATED: usize = 256;

/// A read's buffer: room for a GRO batch, which the kernel caps at 64 KiB.
const RECV_BUF: usize = 64 * 1024;

/// HTTP/3 toward one target, built once per run; [`H3Transport::wire`] gives each thread its own.
pub struct H3Transport {
    config: H3Config,
}

impl H3Transport {
    pub fn new(target: &Target, options: TlsOptions) -> Result<H3Transport, HttpError> {
        Ok(H3Transport {
            config: H3Config::new(target, options, super::IDLE_TIMEOUT)?,
        })
    }

    pub fn wire(&self) -> Result<H3Wire, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create a poll: {e}"))?;
        let wakeup = Wakeup::register(poll.registry(), ALARM);
        Ok(H3Wire {
            config: self.config.clone(),
            poll,
            events: mio::Events::with_capacity(1024),
            wakeup,
            slots: Vec::new(),
            free: Vec::new(),
            ready: Vec::new(),
            timers: BinaryHeap::new(),
            woken: Vec::new(),
            translated: Vec::new(),
            buf: vec![0; RECV_BUF],
            out: Vec::with_capacity(64 * 1024),
        })
    }
}

pub(crate) struct Slot {
    pub(super) socket: UdpSocket,
    pub(super) udp: UdpSocketState,
    pub(crate) h3: H3Connection,
    pub(super) token: usize,
    /// Why the socket failed (ICMP port unreachable), for the session to report.
    pub(crate) dead: Option<Failure>,
    pub(super) told: bool,
    /// On the ready list this turn.
    pub(super) ready: bool,
    /// The instant its timer is filed under in the wire's heap.
    pub(super) timer: Option<Instant>,
}

/// A connection: its place among the thread's slots.
pub struct H3Conn {
    pub(super) slot: usize,
}

pub struct H3Wire {
    pub(super) config: H3Config,
    pub(super) poll: Poll,
    pub(super) events: mio::Events,
    pub(super) wakeup: Wakeup,
    pub(super) slots: Vec<Option<Slot>>,
    pub(super) free: Vec<usize>,
    /// The slots to drive this turn: a datagram came, a timer fired, or their session used them.
    pub(super) ready: Vec<usize>,
    /// Each connection's next timer, by instant; an entry whose slot has since filed another
    /// instant is stale and skipped (and the heap rebuilt when stale entries pile up).
    pub(super) timers: BinaryHeap<Reverse<(Instant, usize)>>,
    /// The slots whose sockets the last poll woke.
    pub(super) woken: Vec<usize>,
    /// Requests already laid out as frames, by their shared bytes.
    pub(super) translated: Vec<(Arc<[u8]>, H3Request)>,
    pub(super) buf: Vec<u8>,
    pub(super) out: Vec<u8>,
}

impl H3Wire {
    /// Connection `conn`'s slot, put on the ready list: its session is about to use it.
    pub(crate) fn slot(&mut self, conn: &H3Conn) -> &mut Slot {
        let s = self.slots[conn.slot]
            .as_mut()
            .expect("a live connection's slot");
        if !s.ready {
            s.ready = true;
            self.ready.push(conn.slot);
        }
        s
    }

    /// `req` as frames: laid out once per distinct request (a workload's names), again for
    /// requests made anew each time beyond that.
    pub(crate) fn frames(&mut self, req: &Request) -> Result<H3Request, Failure> {
        if let Some((_, f)) = self
            .translated
            .iter()
            .find(|(b, _)| Arc::ptr_eq(b, &req.bytes))
        {
            return Ok(f
                .clone()
                .keeping_response(req.keep_response)
                .reading_llm(req.llm));
        }
        let frames = match &req.parts {
            Some(parts) => H3Request::from_parts(parts, req.head),
            None => H3Request::from_http1(&req.bytes, "https")
                .map_err(|e| Failure::new(ErrorKind::Other, e.to_string()))?,
        };
        if self.translated.len() >= TRANSLATED {
            self.translated.clear();
        }
        self.translated
            .push((Arc::clone(&req.bytes), frames.clone()));
        Ok(frames
            .keeping_response(req.keep_response)
            .reading_llm(req.llm))
    }

    /// Sends the ready connections' datagrams and files their next timers; empties the list.
    pub(super) fn flush(&mut self, now: Instant) {
        for i in self.ready.drain(..) {
            let Some(s) = self.slots[i].as_mut() else {
                continue;
            };
            s.ready = false;
            transmit(s, self.config.remote(), now, &mut self.out);
            let next = s.h3.poll_timeout();
            if next != s.timer {
                s.timer = next;
                if let Some(at) = next {
                    self.timers.push(Reverse((at, i)));
                }
            }
        }
        if self.timers.len() > 2 * self.slots.len() + 64 {
            self.timers = self
                .slots
                .iter()
                .enumerate()
                .filter_map(|(i, s)| Some(Reverse((s.as_ref()?.timer?, i))))
                .collect();
        }
    }

    /// The earliest timer still filed, stale entries dropped on the way.
    pub(super) fn next_timer(&mut self) -> Option<Instant> {
        while let Some(&Reverse((at, i))) = self.timers.peek() {
            if self.slots[i].as_ref().is_some_and(|s| s.timer == Some(at)) {
                return Some(at);
            }
            self.timers.pop();
        }
        None
    }

    pub(super) fn mark(&mut self, i: usize) {
        if let Some(s) = self.slots[i].as_mut() {
            if !s.ready {
                s.ready = true;
                self.ready.push(i);
            }
        }
    }

    /// Reads every datagram waiting on slot `i`'s socket into its connection.
    pub(super) fn receive(&mut self, i: usize, now: Instant) {
        let Some(s) = self.slots[i].as_mut() else {
            return;
        };
        loop {
            let mut meta = [RecvMeta::default()];
            let got = {
                let mut bufs = [IoSliceMut::new(&mut self.buf)];
                s.udp.recv((&s.socket).into(), &mut bufs, &mut meta)
            };
            match got {
                Ok(_) => {
                    let m = meta[0];
                    for d in self.buf[..m.len].chunks(m.stride.max(1)) {
                        s.h3.handle_datagram(now, d);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    s.dead.get_or_insert_with(unreachable);
                    break;
                }
                Err(_) => break,
            }
        }
        self.mark(i);
    }
}

/// Sends what connection `s` has to send: each of quinn's transmits in one `sendmsg`, its
/// datagrams segmented by the kernel (GSO), or one `send` a datagram where the kernel cannot.
/// A full socket buffer drops the rest of the turn's datagrams, which QUIC's loss recovery
/// resends.
pub(super) fn transmit(
    s: &mut Slot,
    remote: std::net::SocketAddr,
    now: Instant,
    out: &mut Vec<u8>,
) {
    while let Some(t) = s.h3.poll_transmit(now, s.udp.max_gso_segments(), out) {
        let contents = &out[..t.len];
        let gso = t.segment.filter(|&seg| seg < t.len);
        let sent = if gso.is_none() || s.udp.max_gso_segments() > 1 {
            let transmit = Transmit {
                destination: remote,
                ecn: None,
                contents,
                segment_size: gso,
                src_ip: None,
            };
            match s.udp.try_send((&s.socket).into(), &transmit) {
                // Segmentation failed (a device without it): quinn-udp stops asking for it, and
                // this turn's datagrams go one by one.
                Err(_) if gso.is_some() && s.udp.max_gso_segments() == 1 => {
                    send_each(&s.socket, contents, gso)
                }
                r => r,
            }
        } else {
            send_each(&s.socket, contents, gso)
        };
        match sent {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                s.dead.get_or_insert_with(unreachable);
                return;
            }
            Err(_) => return,
        }
    }
}

fn send_each(socket: &UdpSocket, contents: &[u8], segment: Option<usize>) -> io::Result<()> {
    for d in contents.chunks(segment.unwrap_or(contents.len()).max(1)) {
        socket.send(d)?;
    }
    Ok(())
}

fn unreachable() -> Failure {
    Failure::new(
        ErrorKind::ConnectRefused,
        "nothing listens on the server's UDP port (ICMP port unreachable)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the kernel cannot segment (no UDP GSO), a transmit quinn built as one buffer of
    /// equal datagrams must still leave as those datagrams, the last one shorter, never as one
    /// oversized datagram the server would drop.
    #[test]
    fn without_gso_a_segmented_transmit_leaves_datagram_by_datagram() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let contents: Vec<u8> = (0..2_500u32).map(|i| (i % 251) as u8).collect();

        send_each(&tx, &contents, Some(1_200)).unwrap();

        let mut got = Vec::new();
        let mut buf = [0u8; 4_096];
        while got.len() < 3 {
            let n = rx.recv(&mut buf).unwrap();
            got.push(buf[..n].to_vec());
        }
        assert_eq!(
            got.iter().map(Vec::len).collect::<Vec<_>>(),
            [1_200, 1_200, 100]
        );
        assert_eq!(got.concat(), contents);
    }
}
