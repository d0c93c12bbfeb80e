//! The wires' wake-up (herd-alarm's timerfd in the wire's poll) and the token its events carry.

pub(crate) use herd_alarm::Wakeup;
use mio::Token;

/// The token a wire's alarm events carry; connections' tokens are the engine's (never all ones).
pub(crate) const ALARM: Token = Token(usize::MAX);
