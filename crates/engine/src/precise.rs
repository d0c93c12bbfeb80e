//! Waiting for an arrival's intended time more precisely than tokio's timer wheel, which ticks
//! in milliseconds and rounds every deadline up to the next tick: arrivals would leave up to a
//! millisecond late, and against a fast server that millisecond is most of the latency measured
//! from the intended time. A timerfd wakes the dispatcher within microseconds for the cost of
//! two system calls per wait; when herd is behind, it does not wait at all.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::time::Instant;

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

/// An [`Alarm`] registered with the worker's tokio event loop.
pub(crate) struct PreciseTimer {
    fd: AsyncFd<Alarm>,
}

impl PreciseTimer {
    /// `None` where a timerfd cannot be had; callers then use tokio's timer.
    pub fn new() -> Option<PreciseTimer> {
        let alarm = Alarm::new()?;
        // SAFETY: an Alarm owns its descriptor, which stays open, and the same one, for as long
        // as the AsyncFd owns the Alarm.
        unsafe { AsyncFd::register_with_interest(alarm, Interest::READABLE) }
            .ok()
            .map(|fd| PreciseTimer { fd })
    }

    /// Returns at `at` (at once if it has passed).
    pub async fn sleep_until(&self, at: Instant) {
        loop {
            let left = at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            if !self.fd.get_ref().set(left) {
                tokio::time::sleep_until(at).await;
                return;
            }
            let Ok(mut guard) = self.fd.readable().await else {
                tokio::time::sleep_until(at).await;
                return;
            };
            if !self.fd.get_ref().take() {
                // Nothing to read yet (a spurious wake-up): wait for readiness again.
                guard.clear_ready();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_wakes_early_and_a_past_deadline_returns_at_once() {
        let Some(timer) = PreciseTimer::new() else {
            return;
        };
        for _ in 0..20 {
            let at = Instant::now() + Duration::from_micros(300);
            timer.sleep_until(at).await;
            assert!(Instant::now() >= at, "never early");
        }
        // How late it wakes is a benchmark figure (bench/), not a test: it depends on the machine.
        timer
            .sleep_until(Instant::now() - Duration::from_millis(1))
            .await;
    }
}
