//! Waking the event loop at an instant, to the microsecond: epoll's timeout counts whole
//! milliseconds, and an arrival or a deadline a millisecond late is most of the latency measured
//! against a fast server. A timerfd registered in the same poll wakes it on time for the cost of
//! one system call when the wake-up instant changes.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A one-shot timer on a timerfd (CLOCK_MONOTONIC, the clock `Instant` reads), for any event
/// loop: it becomes readable when it expires.
pub(crate) struct Alarm {
    fd: OwnedFd,
}

impl Alarm {
    /// `None` where a timerfd cannot be had; callers then fall back to a coarser timer.
    pub fn new() -> Option<Alarm> {
        // SAFETY: timerfd_create has no memory arguments; the result is checked.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Some(Alarm { fd })
    }

    /// Expires `left` from now (replacing any earlier setting); `false` if that failed.
    /// `left` must not be zero: a zero setting disarms a timerfd.
    pub fn set(&self, left: Duration) -> bool {
        let left = left.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a valid descriptor and a pointer to a live itimerspec; old value not wanted.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        rc == 0
    }

    /// Consumes an expiry; `false` when there was none yet (a spurious wake-up).
    pub fn take(&self) -> bool {
        let mut expirations = [0u8; 8];
        // SAFETY: reading 8 bytes into a buffer of 8 bytes from a descriptor we own.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                expirations.as_mut_ptr().cast(),
                expirations.len(),
            )
        };
        n == 8
    }
}

impl AsRawFd for Alarm {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
