//! One virtual user's connection and the recording of each exchange it makes.

use crate::deadline::{Fired, Slot};
use crate::worker::Local;
use crate::{Failure, Request, Response, Transport};
use herd_metrics::{ErrorKind, Outcome, Verdict};
use std::rc::Rc;
use std::time::Duration;
use tokio::time::Instant;

/// Idle time after which a reused connection that fails with nothing received is taken to have
/// been closed by the server's keep-alive timeout, not to have failed the request.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(1);

/// What a script uses to make requests: it owns the user's connection, applies the timeout,
/// the calls-per-connection limit and the stale keep-alive retry, and records every outcome.
pub struct UserCtx<T: Transport> {
    local: Rc<Local<T>>,
    conn: Option<T::Conn>,
    uses: u64,
    /// When the connection last finished an exchange: a reused connection idle this long may
    /// have been closed by the server in the meantime.
    last_used: Instant,
    intended: Option<Instant>,
    /// A clock reading taken just before the exchange, reused instead of reading the clock again.
    now: Option<Instant>,
    /// This user's deadline, swept by the worker's ticker.
    slot: Rc<Slot>,
    /// Set while connecting, so a deadline that fires then is a `connect_timeout`.
    connecting: bool,
    /// The current iteration started after the warm-up: what a script counts itself (scenario
    /// iterations, checks) follows the same rule as the requests.
    measured: bool,
    /// When the current iteration was intended: whether its outcomes fall in the warm-up is
    /// decided once per iteration, so an iteration is never split across the boundary.
    iteration: Option<Instant>,
    response: Response,
}

/// How the script judges a full response: the default is "ok when status < 400".
pub fn default_verdict(r: &Response) -> (Verdict, Option<String>) {
    if r.status < 400 {
        (Verdict::Ok, None)
    } else {
        (Verdict::Failed, None)
    }
}

type Attempt = Result<(Instant, Option<Duration>), (Failure, Option<Instant>, Option<Duration>)>;

impl<T: Transport> UserCtx<T> {
    pub(crate) fn new(local: Rc<Local<T>>) -> Self {
        let slot = local.register_slot();
        UserCtx {
            local,
            conn: None,
            uses: 0,
            last_used: Instant::now(),
            intended: None,
            now: None,
            slot,
            connecting: false,
            measured: false,
            iteration: None,
            response: Response::default(),
        }
    }

    /// Marks the start of an iteration: its first request is measured from `intended`; `now` is
    /// a clock reading taken when the iteration was handed out.
    pub(crate) fn begin(&mut self, intended: Instant, now: Instant) {
        self.intended = Some(intended);
        self.now = Some(now);
        self.iteration = Some(intended);
        self.measured = intended >= self.local.measure_start;
    }

    /// Whether the current iteration is measured (it was intended after the warm-up). Scripts
    /// that keep their own counts use it to leave the warm-up out, as the engine does.
    pub fn measured(&self) -> bool {
        self.measured
    }

    /// Sleeps (think time) on the engine's clock; the next request is measured from its end.
    pub async fn think(&mut self, d: Duration) {
        tokio::time::sleep(d).await;
        self.intended = None;
        self.now = None;
    }

    /// Sends `req` and records the outcome with the default verdict.
    pub async fn exchange(&mut self, req: &Request) -> Result<&Response, ErrorKind> {
        self.exchange_with(req, default_verdict).await
    }

    /// Sends `req`; `judge` decides ok or failed for a full response (checks), with a message.
    pub async fn exchange_with(
        &mut self,
        req: &Request,
        judge: impl FnOnce(&Response) -> (Verdict, Option<String>),
    ) -> Result<&Response, ErrorKind> {
        let local = Rc::clone(&self.local);
        let start = self.now.take().unwrap_or_else(Instant::now);
        let intended = self.intended.take().unwrap_or(start);
        local.in_flight.set(local.in_flight.get() + 1);
        let slot = Rc::clone(&self.slot);
        slot.arm(start + local.timeout);
        let result = tokio::select! {
            biased;
            r = self.attempt(req, start) => r,
            why = slot.expired() => self.expired(why),
        };
        slot.disarm();
        local.in_flight.set(local.in_flight.get() - 1);
        let done = Instant::now();
        let mut outcome = Outcome {
            name: req.name,
            at: done.saturating_duration_since(local.measure_start),
            latency: done - intended,
            service: None,
            connect: None,
            status: 0,
            result: Err(ErrorKind::Other),
            message: None,
            bytes_sent: 0,
            bytes_received: self.response.bytes_received,
            body_bytes: 0,
        };
        let ret = match result {
            Ok((sent, connect)) => {
                let (verdict, message) = judge(&self.response);
                outcome.service = Some(done - sent);
                outcome.connect = connect;
                outcome.status = self.response.status;
                outcome.result = Ok(verdict);
                outcome.message = message;
                outcome.bytes_sent = req.bytes.len() as u64;
                outcome.body_bytes = self.response.body_len;
                Ok(())
            }
            Err((failure, sent, connect)) => {
                outcome.service = sent.map(|s| done - s);
                outcome.connect = connect;
                outcome.bytes_sent = if sent.is_some() {
                    req.bytes.len() as u64
                } else {
                    0
                };
                outcome.result = Err(failure.kind);
                outcome.message = Some(failure.message);
                Err(failure.kind)
            }
        };
        local.finish(self.iteration.unwrap_or(intended), done, &outcome);
        ret.map(|()| &self.response)
    }

    /// The deadline fired (or the run was cut off) while connecting or exchanging.
    fn expired(&mut self, why: Fired) -> Attempt {
        let connecting = std::mem::take(&mut self.connecting);
        self.drop_conn();
        let timeout = self.local.timeout;
        let failure = match why {
            Fired::Interrupted => {
                Failure::new(ErrorKind::Other, "in flight when the run was interrupted")
            }
            Fired::Deadline if connecting => Failure::new(
                ErrorKind::ConnectTimeout,
                format!("no connection within {timeout:?}"),
            ),
            Fired::Deadline => Failure::new(
                ErrorKind::Timeout,
                format!("no complete response within {timeout:?}"),
            ),
        };
        // The send instant is not known here; a cut-off request counts as sent unless it was
        // still connecting.
        let sent = (!connecting).then(Instant::now);
        Err((failure, sent, None))
    }

    /// Connects if needed and exchanges; returns when the request was sent and the connect time.
    async fn attempt(&mut self, req: &Request, start: Instant) -> Attempt {
        let local = Rc::clone(&self.local);
        let mut retried = false;
        loop {
            let mut connect = None;
            let mut sent = start;
            if self.conn.is_none() {
                let t0 = if retried { Instant::now() } else { start };
                self.connecting = true;
                let c = local.transport.connect().await;
                self.connecting = false;
                match c {
                    Ok(c) => {
                        self.conn = Some(c);
                        self.uses = 0;
                        sent = Instant::now();
                        connect = Some(sent - t0);
                        local.connection_opened();
                    }
                    Err(f) => return Err((f, None, None)),
                }
            }
            let stale_candidate =
                connect.is_none() && start.saturating_duration_since(self.last_used) >= STALE_AFTER;
            let conn = self.conn.as_mut().expect("connected above");
            self.response.reset();
            match local
                .transport
                .exchange(conn, req, &mut self.response)
                .await
            {
                Ok(()) => {
                    self.uses += 1;
                    self.last_used = start;
                    let spent = local.calls_per_conn.is_some_and(|k| self.uses >= k);
                    if !self.response.keep_alive || spent {
                        self.drop_conn();
                    }
                    return Ok((sent, connect));
                }
                Err(f) => {
                    self.drop_conn();
                    // A keep-alive connection the server closed while it sat idle fails at once
                    // with nothing received; clients retry that once on a fresh connection. A
                    // connection in steady use that resets is the server's error and counts.
                    let stale = stale_candidate
                        && !retried
                        && self.response.bytes_received == 0
                        && matches!(f.kind, ErrorKind::Eof | ErrorKind::Reset);
                    if stale {
                        retried = true;
                        continue;
                    }
                    return Err((f, Some(sent), connect));
                }
            }
        }
    }

    fn drop_conn(&mut self) {
        if self.conn.take().is_some() {
            self.local.connection_closed();
        }
    }
}

impl<T: Transport> Drop for UserCtx<T> {
    fn drop(&mut self) {
        self.drop_conn();
    }
}
