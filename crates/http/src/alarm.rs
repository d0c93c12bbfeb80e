//! Waking the event loop at an instant, to the microsecond: epoll's timeout counts whole
//! milliseconds, and an arrival or a deadline a millisecond late is most of the latency measured
//! against a fast server. A timerfd registered in the same poll wakes it on time for the cost of
//! one system call when the wake-up instant changes.

use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;
use timerfd::{ClockId, SetTimeFlags, TimerFd, TimerState};

/// A one-shot timer on a timerfd (CLOCK_MONOTONIC, the clock `Instant` reads), for any event
/// loop: it becomes readable when it expires.
pub(crate) struct Alarm {
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
