//! Delays that end on time. tokio's timer ticks in milliseconds and rounds every deadline up to
//! the next tick, and its event loop rounds its own wait up again: a route asking for 2 ms
//! answered in 2 to 4 ms, about a millisecond late on average. That is most of a fast route's
//! latency, and a mock is there to take as long as it is told. Each worker thread keeps its
//! pending delays in a heap and one timerfd armed for the earliest of them: a delay costs a heap
//! push and, when it becomes the earliest, one `timerfd_settime`. Where no timerfd can be had,
//! tokio's timer does it, late as before.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use timerfd::{ClockId, SetTimeFlags, TimerFd, TimerState};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::time::Instant;

/// One worker thread's delays.
pub(crate) struct Delays {
    fd: Option<AsyncFd<Fd>>,
    state: RefCell<State>,
}

/// The timerfd, settable through a shared reference.
struct Fd(RefCell<TimerFd>);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.borrow().as_raw_fd()
    }
}

#[derive(Default)]
struct State {
    /// Deadlines of the delays waiting, earliest first (with their ids).
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    /// Who to wake for each delay still waiting; a delay dropped early leaves its heap entry to
    /// expire unseen.
    wakers: HashMap<u64, Waker>,
    next_id: u64,
    /// The deadline the timerfd is set for.
    armed: Option<Instant>,
}

impl Delays {
    /// Must be called inside the worker's runtime (the timerfd registers with it); run
    /// [`Delays::drive`] beside the connections.
    pub fn new() -> Rc<Delays> {
        let fd = TimerFd::new_custom(ClockId::Monotonic, true, true)
            .ok()
            .and_then(|t| {
                // SAFETY: `Fd` owns the TimerFd, whose descriptor stays open, and the same one,
                // for as long as the AsyncFd owns the `Fd`.
                unsafe { AsyncFd::register_with_interest(Fd(RefCell::new(t)), Interest::READABLE) }
                    .ok()
            });
        Rc::new(Delays {
            fd,
            state: RefCell::default(),
        })
    }

    /// Waits `d`, to within the kernel's wake-up latency.
    pub async fn sleep(&self, d: Duration) {
        if self.fd.is_none() {
            return tokio::time::sleep(d).await;
        }
        Sleep {
            delays: self,
            deadline: Instant::now() + d,
            id: None,
        }
        .await
    }

    /// Wakes the delays as they fall due; runs until the worker's tasks are dropped.
    pub async fn drive(self: Rc<Self>) {
        let Some(fd) = &self.fd else {
            return;
        };
        loop {
            let Ok(mut ready) = fd.readable().await else {
                return;
            };
            // A non-blocking read: the expiries since the last one, 0 once there are none.
            while fd.get_ref().0.borrow().read() > 0 {}
            ready.clear_ready();
            self.fire(Instant::now());
        }
    }

    /// Wakes every delay due at `now` and sets the timer for the next one.
    fn fire(&self, now: Instant) {
        let mut s = self.state.borrow_mut();
        s.armed = None;
        while let Some(&Reverse((at, id))) = s.heap.peek() {
            if at > now {
                self.arm(&mut s, at, now);
                break;
            }
            s.heap.pop();
            if let Some(w) = s.wakers.remove(&id) {
                w.wake();
            }
        }
    }

    /// Sets the timer for `at` unless it is already set for sooner.
    fn arm(&self, s: &mut State, at: Instant, now: Instant) {
        let Some(fd) = &self.fd else {
            return;
        };
        if s.armed.is_some_and(|a| a <= at) {
            return;
        }
        // A zero setting would disarm the timer.
        let left = at
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        fd.get_ref()
            .0
            .borrow_mut()
            .set_state(TimerState::Oneshot(left), SetTimeFlags::Default);
        s.armed = Some(at);
    }
}

struct Sleep<'a> {
    delays: &'a Delays,
    deadline: Instant,
    id: Option<u64>,
}

impl Future for Sleep<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        let delays = self.delays;
        let mut s = delays.state.borrow_mut();
        if now >= self.deadline {
            if let Some(id) = self.id.take() {
                s.wakers.remove(&id);
            }
            return Poll::Ready(());
        }
        match self.id {
            Some(id) => {
                s.wakers.insert(id, cx.waker().clone());
            }
            None => {
                let id = s.next_id;
                s.next_id += 1;
                s.heap.push(Reverse((self.deadline, id)));
                s.wakers.insert(id, cx.waker().clone());
                self.id = Some(id);
                delays.arm(&mut s, self.deadline, now);
            }
        }
        Poll::Pending
    }
}

impl Drop for Sleep<'_> {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut s)) = (self.id, self.delays.state.try_borrow_mut()) {
            s.wakers.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a current-thread runtime with the delays driven, as a mock worker does.
    fn on_worker<F: Future<Output = ()>>(f: impl FnOnce(Rc<Delays>) -> F) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async move {
            let delays = Delays::new();
            tokio::task::spawn_local(Rc::clone(&delays).drive());
            f(delays).await;
        });
    }

    #[test]
    fn a_delay_never_ends_early_and_many_end_in_order() {
        on_worker(|delays| async move {
            let mut ends = Vec::new();
            // Out of order, and a dropped one in the middle: each still ends at its own time.
            let waits = [7u64, 2, 5, 3];
            let tasks: Vec<_> = waits
                .iter()
                .map(|&ms| {
                    let d = Rc::clone(&delays);
                    tokio::task::spawn_local(async move {
                        let due = Instant::now() + Duration::from_millis(ms);
                        d.sleep(Duration::from_millis(ms)).await;
                        (due, Instant::now())
                    })
                })
                .collect();
            // Registered, then dropped before anyone waits for it (on a busy machine it may
            // already be due: either way the others must not notice).
            let mut cancelled = Box::pin(delays.sleep(Duration::from_millis(4)));
            std::future::poll_fn(|cx| {
                let _ = cancelled.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
            drop(cancelled);
            for t in tasks {
                ends.push(t.await.unwrap());
            }
            for (due, end) in &ends {
                assert!(end >= due, "{:?} early", *due - *end);
            }
            // They end in the order they were due (even those woken together, late, on a busy
            // machine: the heap hands them out in order).
            let by_due = {
                let mut v = ends.clone();
                v.sort_by_key(|(due, _)| *due);
                v
            };
            ends.sort_by_key(|(_, end)| *end);
            assert_eq!(ends, by_due);
        });
    }
}
