//! Per-request deadlines without a timer per request. Each user owns a [`Slot`]; a request sets
//! its deadline there, and the worker's 10 ms ticker sweeps the slots and fires the ones that
//! are due (wrk checks its timeouts the same way, from a periodic timer). Registering a timer in
//! tokio's wheel and removing it again for every request cost more than the sweep, and the sweep
//! also carries the Ctrl-C cut-off, so one cheap future replaces a timer and a `Notify`.
//!
//! Timeouts therefore fire up to one tick after their deadline.

use crate::Failure;
use herd_metrics::ErrorKind;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::time::Instant;

/// Why a slot fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fired {
    /// The request's deadline passed.
    Deadline,
    /// The run was cut off (Ctrl-C after the grace period).
    Interrupted,
}

impl Fired {
    /// The failure of an exchange this cut short, `connecting` when it had no connection yet.
    pub fn failure(self, connecting: bool, timeout: Duration) -> Failure {
        match self {
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
        }
    }
}

/// One user's pending deadline and the waker of the exchange waiting on it.
#[derive(Default)]
pub(crate) struct Slot {
    deadline: Cell<Option<Instant>>,
    fired: Cell<Option<Fired>>,
    waker: Cell<Option<Waker>>,
}

impl Slot {
    pub fn arm(&self, deadline: Instant) {
        self.deadline.set(Some(deadline));
        self.fired.set(None);
    }

    pub fn disarm(&self) {
        self.deadline.set(None);
        self.fired.set(None);
        self.waker.set(None);
    }

    /// Fires the slot if it is armed and due at `now` (or unconditionally with `Interrupted`).
    pub fn sweep(&self, now: Instant, why: Fired) {
        let Some(d) = self.deadline.get() else { return };
        if why == Fired::Interrupted || now >= d {
            self.deadline.set(None);
            self.fired.set(Some(why));
            if let Some(w) = self.waker.take() {
                w.wake();
            }
        }
    }

    /// Resolves when the slot fires.
    pub fn expired(&self) -> Expired<'_> {
        Expired { slot: self }
    }
}

pub(crate) struct Expired<'a> {
    slot: &'a Slot,
}

impl Future for Expired<'_> {
    type Output = Fired;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fired> {
        if let Some(why) = self.slot.fired.get() {
            return Poll::Ready(why);
        }
        let waker = match self.slot.waker.take() {
            Some(w) if w.will_wake(cx.waker()) => w,
            _ => cx.waker().clone(),
        };
        self.slot.waker.set(Some(waker));
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_slot_fires_only_when_due_and_armed() {
        let slot = Slot::default();
        let t0 = Instant::now();
        slot.arm(t0 + Duration::from_millis(100));
        slot.sweep(t0 + Duration::from_millis(50), Fired::Deadline);
        let mut fut = std::pin::pin!(slot.expired());
        assert!(futures_poll(fut.as_mut()).is_pending());
        slot.sweep(t0 + Duration::from_millis(100), Fired::Deadline);
        assert_eq!(futures_poll(fut.as_mut()), Poll::Ready(Fired::Deadline));
        slot.disarm();
        slot.sweep(t0 + Duration::from_secs(9), Fired::Interrupted);
        assert!(
            futures_poll(std::pin::pin!(slot.expired())).is_pending(),
            "a disarmed slot never fires"
        );
    }

    fn futures_poll<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
        let waker = Waker::noop();
        f.poll(&mut Context::from_waker(waker))
    }
}
