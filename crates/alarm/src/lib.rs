//! Waking a mio event loop at an instant, to the microsecond: epoll's timeout counts whole
//! milliseconds, and an arrival or a deadline a millisecond late is most of the latency measured
//! against a fast server (herd's client), or a 50 ms `latency` toxic holding bytes up to 51 ms
//! (herd's proxy). A timerfd registered in the same poll wakes it on time for the cost of one
//! system call when the wake-up instant changes.
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use herd_alarm::Wakeup;
//! use mio::{Events, Poll, Token};
//!
//! const ALARM: Token = Token(usize::MAX);
//! let mut poll = Poll::new().unwrap();
//! let mut wakeup = Wakeup::register(poll.registry(), ALARM);
//! let mut events = Events::with_capacity(64);
//! let now = Instant::now();
//! let timeout = wakeup.timeout(now + Duration::from_micros(250), now);
//! poll.poll(&mut events, Some(timeout)).unwrap();
//! if events.iter().any(|e| e.token() == ALARM) {
//!     wakeup.fired();
//! }
//! ```

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};
use timerfd::{ClockId, SetTimeFlags, TimerFd, TimerState};

/// A one-shot timer on a timerfd (CLOCK_MONOTONIC, the clock `Instant` reads), for any event
/// loop: it becomes readable when it expires.
pub struct Alarm {
    fd: TimerFd,
}

impl Alarm {
    /// `None` where a timerfd cannot be had; callers then fall back to a coarser timer.
    pub fn new() -> Option<Alarm> {
        let fd = TimerFd::new_custom(ClockId::Monotonic, true, true).ok()?;
        Some(Alarm { fd })
    }

    /// Expires `left` from now, replacing any earlier setting. A zero setting would disarm a
    /// timerfd, so an instant already due expires after a nanosecond; one beyond a day is set
    /// for a day (the kernel refuses what overflows its clock, and the poll wakes long before).
    pub fn set(&mut self, left: Duration) {
        let left = left.clamp(Duration::from_nanos(1), Duration::from_secs(86_400));
        self.fd
            .set_state(TimerState::Oneshot(left), SetTimeFlags::Default);
    }

    /// Consumes an expiry, if there was one (a wake-up may be spurious).
    pub fn take(&self) {
        self.fd.read();
    }
}

impl AsRawFd for Alarm {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// If the alarm fails to wake the poll, the poll's own timeout does, this much later.
const BACKSTOP: Duration = Duration::from_millis(5);

/// A loop's wake-up: its alarm, registered in the loop's poll when a timerfd can be had, and
/// the instant it is armed for (set again only when that instant changes).
pub struct Wakeup {
    alarm: Option<Alarm>,
    armed: Option<Instant>,
    /// How long [`Wakeup::wait`] first sleeps on its own (zero: never).
    nap: Duration,
    /// This thread's timer slack is down to a microsecond (a sleep's default slack, 50 µs,
    /// would be longer than most naps).
    slack: bool,
}

impl Wakeup {
    /// An alarm registered in `registry` under `token` (one the loop gives nothing else);
    /// without one, waits fall back to the poll's millisecond timeout.
    pub fn register(registry: &Registry, token: Token) -> Self {
        let alarm = Alarm::new().filter(|a| {
            let fd = a.as_raw_fd();
            registry
                .register(&mut SourceFd(&fd), token, Interest::READABLE)
                .is_ok()
        });
        Wakeup {
            alarm,
            armed: None,
            nap: Duration::ZERO,
            slack: false,
        }
    }

    /// The poll timeout for a wait until `until`, the alarm armed for it.
    pub fn timeout(&mut self, until: Instant, now: Instant) -> Duration {
        let left = until.saturating_duration_since(now);
        match &mut self.alarm {
            _ if left.is_zero() => Duration::ZERO,
            Some(alarm) => {
                if self.armed != Some(until) {
                    alarm.set(left);
                    self.armed = Some(until);
                }
                left + BACKSTOP
            }
            None => left,
        }
    }

    /// From now on [`Wakeup::wait`] naps `nap` before it would block: it sleeps on this thread's
    /// own timer, then looks. What comes meanwhile is read together, and the peers' writes do
    /// not have to wake this thread (on loopback the writer's CPU pays for that wake-up). Zero:
    /// never. Set it on the thread that waits.
    pub fn nap(&mut self, nap: Duration) {
        if !nap.is_zero() && !self.slack {
            // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer and touches no memory.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong) };
            self.slack = true;
        }
        self.nap = nap;
    }

    /// Waits on `poll` until an event or `until`, the alarm armed for it. With a nap set and
    /// more than the nap left, it first looks without blocking, then sleeps the nap and looks
    /// again; only then does it block.
    pub fn wait(&mut self, poll: &mut Poll, events: &mut Events, until: Instant) -> io::Result<()> {
        if !self.nap.is_zero() && until.saturating_duration_since(Instant::now()) > self.nap {
            if ready(poll, events)? {
                return Ok(());
            }
            std::thread::sleep(self.nap);
            if ready(poll, events)? {
                return Ok(());
            }
        }
        let timeout = self.timeout(until, Instant::now());
        match poll.poll(events, Some(timeout)) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => Err(e),
            _ => Ok(()),
        }
    }

    /// The alarm's event came: its expiry is consumed, and the next wait arms it again.
    pub fn fired(&mut self) {
        if let Some(alarm) = &self.alarm {
            alarm.take();
        }
        self.armed = None;
    }
}

/// Whether `poll` has events now, without blocking.
fn ready(poll: &mut Poll, events: &mut Events) -> io::Result<bool> {
    match poll.poll(events, Some(Duration::ZERO)) {
        Ok(()) => Ok(!events.is_empty()),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll};

    #[test]
    fn a_wait_that_naps_still_sees_what_was_ready_and_still_ends_on_time() {
        let mut poll = Poll::new().unwrap();
        let mut wakeup = Wakeup::register(poll.registry(), Token(7));
        wakeup.nap(Duration::from_micros(50));
        let mut events = Events::with_capacity(4);
        let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut b = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        poll.registry()
            .register(&mut b, Token(1), Interest::READABLE)
            .unwrap();
        a.send_to(b"x", b.local_addr().unwrap()).unwrap();
        let far = Instant::now() + Duration::from_secs(30);
        let mut wait_for = |token: Token, until: Instant| {
            while Instant::now() < far {
                wakeup.wait(&mut poll, &mut events, until).unwrap();
                if events.iter().any(|e| e.token() == token) {
                    return true;
                }
            }
            false
        };
        assert!(wait_for(Token(1), far), "the datagram's event was lost");
        // Nothing more comes: the wait naps, then blocks until the alarm.
        let mut buf = [0u8; 8];
        b.recv_from(&mut buf).unwrap();
        let until = Instant::now() + Duration::from_millis(3);
        assert!(wait_for(Token(7), until), "the timerfd never woke the poll");
        assert!(Instant::now() >= until);
    }

    #[test]
    fn the_alarm_wakes_the_poll_before_the_backstop() {
        let mut poll = Poll::new().unwrap();
        let token = Token(7);
        let mut wakeup = Wakeup::register(poll.registry(), token);
        let mut events = Events::with_capacity(4);
        let start = Instant::now();
        let until = start + Duration::from_millis(2);
        let timeout = wakeup.timeout(until, start);
        assert!(timeout >= Duration::from_millis(2));
        let mut woke = false;
        while !woke && start.elapsed() < Duration::from_secs(2) {
            poll.poll(&mut events, Some(timeout)).unwrap();
            woke = events.iter().any(|e| e.token() == token);
        }
        assert!(woke, "the timerfd never woke the poll");
        assert!(Instant::now() >= until);
        wakeup.fired();
        assert_eq!(wakeup.timeout(start, Instant::now()), Duration::ZERO);
    }
}
