//! The relay loop's wake-up (herd-alarm's timerfd in the loop's poll: epoll's millisecond
//! timeout would make a 50 ms `latency` toxic hold bytes up to 51 ms) and its token.

pub(crate) use herd_alarm::Wakeup;
use mio::Token;

pub(crate) const ALARM: Token = Token(usize::MAX - 1);
