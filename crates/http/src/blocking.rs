//! One exchange at a time, blocking until it ends: for probing a target before a run (`herd
//! doctor`) and for testing the transport against scripted servers. Runs go through the
//! engine's loop instead.

use crate::wire::{Conn, Wire};
use herd_engine::{Event, Failure, Io, Parse, Request, Response, Transport};
use herd_metrics::ErrorKind;
use std::time::{Duration, Instant};

impl Wire {
    /// Opens a connection (TCP, then TLS for https) within `limit`.
    pub fn open(&mut self, limit: Duration) -> Result<Conn, Failure> {
        let deadline = Instant::now() + limit;
        let mut conn = self.connect(0)?;
        let mut events = Vec::new();
        loop {
            if self.establish(&mut conn)? {
                return Ok(conn);
            }
            self.until(deadline, &mut events, "no connection")?;
        }
    }

    /// Writes `req` on `conn` and reads one full response into `resp` (reset first) within
    /// `limit`. `resp.bytes_received` counts what arrived even when the exchange fails.
    pub fn exchange(
        &mut self,
        conn: &mut Conn,
        req: &Request,
        resp: &mut Response,
        pending: &mut Vec<u8>,
        limit: Duration,
    ) -> Result<(), Failure> {
        let deadline = Instant::now() + limit;
        let mut events = Vec::new();
        resp.reset();
        let mut done = 0;
        while done < req.bytes.len() {
            match self.write(conn, &req.bytes[done..])? {
                Io::Done(n) => done += n,
                Io::Closed => return Err(Failure::new(ErrorKind::Reset, "closed while writing")),
                Io::Blocked => self.until(deadline, &mut events, "request not written")?,
            }
        }
        let mut parser = crate::ResponseParser::for_request(req);
        resp.bytes_received = pending.len() as u64;
        if !pending.is_empty() {
            resp.first_byte = Some(Instant::now());
        }
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if !pending.is_empty() {
                let (used, complete) = parser.feed(pending, Instant::now(), resp)?;
                pending.drain(..used);
                if complete {
                    resp.bytes_received -= pending.len() as u64;
                    return Ok(());
                }
            }
            match self.read(conn, &mut buf)? {
                Io::Done(n) => {
                    resp.first_byte.get_or_insert_with(Instant::now);
                    resp.bytes_received += n as u64;
                    pending.extend_from_slice(&buf[..n]);
                }
                Io::Closed => {
                    let r = parser.closed(pending, resp);
                    pending.clear();
                    resp.keep_alive = false;
                    return r;
                }
                Io::Blocked => {
                    self.flush(conn)?;
                    self.until(deadline, &mut events, "no complete response")?
                }
            }
        }
    }

    fn until(
        &mut self,
        deadline: Instant,
        events: &mut Vec<Event>,
        what: &str,
    ) -> Result<(), Failure> {
        if Instant::now() >= deadline {
            return Err(Failure::new(ErrorKind::Timeout, format!("{what} in time")));
        }
        events.clear();
        self.wait(deadline, events)
    }
}
