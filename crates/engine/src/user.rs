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

/// When one exchange started, was sent and ended, for its [`Outcome`].
pub(crate) struct Span {
    pub measure_start: Instant,
    /// Latency is measured from here.
    pub intended: Instant,
    /// When the request was written; `None` when it never was.
    pub sent: Option<Instant>,
    pub done: Instant,
    /// Time to open the connection, when the exchange opened one.
    pub connect: Option<Duration>,
}

/// The outcome of one exchange, the same in both workers: a full response in `resp` with the
/// script's verdict, or the failure.
pub(crate) fn outcome(
    req: &Request,
    resp: &Response,
    span: Span,
    result: Result<(Verdict, Option<String>), Failure>,
) -> Outcome {
    let (status, result, message, body_bytes) = match result {
        Ok((verdict, message)) => (resp.status, Ok(verdict), message, resp.body_len),
        Err(f) => (0, Err(f.kind), Some(f.message), 0),
    };
    Outcome {
        name: req.name,
        at: span.done.saturating_duration_since(span.measure_start),
        latency: span.done - span.intended,
        service: span.sent.map(|s| span.done - s),
        connect: span.connect,
        status,
        result,
        message,
        bytes_sent: if span.sent.is_some() {
            req.bytes.len() as u64
        } else {
            0
        },
        bytes_received: resp.bytes_received,
        body_bytes,
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
        let (sent, connect, result) = match result {
            Ok((sent, connect)) => (Some(sent), connect, Ok(judge(&self.response))),
            Err((failure, sent, connect)) => (sent, connect, Err(failure)),
        };
        let ret = result.as_ref().map(|_| ()).map_err(|f| f.kind);
        let span = Span {
            measure_start: local.measure_start,
            intended,
            sent,
            done,
            connect,
        };
        let outcome = outcome(req, &self.response, span, result);
        local.finish(self.iteration.unwrap_or(intended), done, &outcome);
        ret.map(|()| &self.response)
    }

    /// The deadline fired (or the run was cut off) while connecting or exchanging.
    fn expired(&mut self, why: Fired) -> Attempt {
        let connecting = std::mem::take(&mut self.connecting);
        self.drop_conn();
        let failure = why.failure(connecting, self.local.timeout);
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
