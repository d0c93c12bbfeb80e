//! Waking the relay loop at an instant, to the microsecond: epoll's timeout counts whole
//! milliseconds, which would make a 50 ms `latency` toxic hold bytes up to 51 ms. A timerfd
//! registered in the loop's poll wakes it on time (herd's client does the same, http/alarm.rs).

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use timerfd::{ClockId, SetTimeFlags, TimerFd, TimerState};

pub(crate) const ALARM: Token = Token(usize::MAX - 1);
/// If the alarm fails to wake the poll, the poll's own timeout does, this much later.
const BACKSTOP: Duration = Duration::from_millis(5);

/// The loop's alarm (when a timerfd can be had) and the instant it is armed for.
pub(crate) struct Wakeup {
    alarm: Option<TimerFd>,
    armed: Option<Instant>,
}

impl Wakeup {
    pub fn register(registry: &Registry) -> Wakeup {
        let alarm = TimerFd::new_custom(ClockId::Monotonic, true, true)
            .ok()
            .filter(|a| {
                let fd = a.as_raw_fd();
                registry
                    .register(&mut SourceFd(&fd), ALARM, Interest::READABLE)
                    .is_ok()
            });
        Wakeup { alarm, armed: None }
    }

    /// The poll timeout for a wait until `until`, the alarm armed for it.
    pub fn timeout(&mut self, until: Instant, now: Instant) -> Duration {
        let left = until.saturating_duration_since(now);
        match &mut self.alarm {
            _ if left.is_zero() => Duration::ZERO,
            Some(alarm) => {
                if self.armed != Some(until) {
                    // A zero setting would disarm a timerfd; a day is as far as it needs to go.
                    let set = left.clamp(Duration::from_nanos(1), Duration::from_secs(86_400));
                    alarm.set_state(TimerState::Oneshot(set), SetTimeFlags::Default);
                    self.armed = Some(until);
                }
                left + BACKSTOP
            }
            None => left,
        }
    }

    /// The alarm's event came: its expiry is consumed, and the next wait arms it again.
    pub fn fired(&mut self) {
        if let Some(alarm) = &self.alarm {
            alarm.read();
        }
        self.armed = None;
    }
}
