//! One user of the loop: its script state, where it is in its iteration, and the exchange it
//! waits for. A user owns no connection: its exchanges go to a connection of the table
//! (`links.rs`), the one it used last when that one has room (so one user to one connection
//! behaves as it always did), else the least busy one, else a new one.

use super::links::{LinkRef, OptU64};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Between steps: in the loop's resume list.
    Free,
    /// Waiting on the timer heap (think time, a stage that has no room for it yet, or the pause
    /// after an iteration that did nothing).
    Waiting,
    /// Open model: no arrival for it yet.
    Idle,
    /// Its exchange is under way (waiting for a connection, on the wire, or read).
    Busy,
    /// No more iterations for this user.
    Done,
}

/// What a user resumes with when it leaves the resume list or the timer heap.
#[derive(Debug)]
pub(super) enum Resume {
    /// A new iteration (closed model).
    Begin,
    /// Its exchange failed: the script hears of it. Boxed: a user is held per connection (ten
    /// thousand of them), and an inline failure (its message) would widen every one by 24 bytes
    /// for the rare user that has one.
    Failed(Box<crate::Failure>),
    /// Its think time is over.
    Woke,
}

pub(super) struct User<U> {
    pub script: U,
    pub state: State,
    pub resume: Resume,
    /// When the current iteration was intended: whether its outcomes fall in the warm-up is
    /// decided once per iteration, never split across the line.
    pub iteration: Instant,
    /// When its next request is meant to start: latency is measured from here.
    pub intended: Instant,
    /// The iteration has sent something or paused (an empty one is followed by a pause).
    pub busy: bool,
    /// Generation of the user's pending timer: an entry of another generation is stale.
    pub timer: u32,
    /// Open model: the schedule index of the arrival the current iteration answers.
    pub arrival: OptU64,
    /// The connection it used last, tried first for the next request.
    pub link: LinkRef,
    /// Closed model: measured iterations it has begun, and how many it may (its share of
    /// `-n`; `None` when the users share one count, under stages, or there is no `-n`).
    pub counted: u64,
    pub quota: OptU64,
}

impl<U> User<U> {
    pub fn new(script: U, now: Instant, quota: Option<u64>) -> Self {
        User {
            script,
            state: State::Free,
            resume: Resume::Begin,
            iteration: now,
            intended: now,
            busy: false,
            timer: 0,
            arrival: OptU64::NONE,
            link: LinkRef::NONE,
            counted: 0,
            quota: quota.into(),
        }
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// A closed-model run holds a user, an exchange and a connection slot per connection, ten
    /// thousand of each in `bench.py rss`: a field that widens one is memory per connection
    /// (bench/RESULTS.md, session 10). The slot's session and connection come on top.
    #[test]
    fn the_per_connection_slots_stay_as_small_as_measured() {
        use std::mem::size_of;
        assert!(
            size_of::<super::User<()>>() <= 88,
            "{}",
            size_of::<super::User<()>>()
        );
        // 104 -> 112: the request's `last` (a workload's `ws: close`), its fifth flag past
        // the 48 bytes its pointers and name filled.
        let exchange = size_of::<super::super::exchanges::Exchange>();
        assert!(exchange <= 112, "{exchange}");
        let link = size_of::<super::super::links::Link<(), ()>>();
        assert!(link <= 104, "{link}");
    }
}
