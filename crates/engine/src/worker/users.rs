//! What a user does next: a new iteration (closed model) or the next arrival (open model), the
//! script's next step, pauses on the timer heap, the open model's dispatch, and the end of a
//! user's part in the run.

use super::open::{Dispatch, Hand, PER_PASS};
use super::user::{Resume, State, User};
use super::{Loop, IDLE_ITERATION};
use crate::script::{Action, Ctx, Last};
use crate::Session;
use crate::{Load, Script, Transport};
use std::cmp::Reverse;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl<T: Transport, S: Script> Loop<'_, T, S> {
    /// User `i` of this thread: its id across the whole run (threads and shards).
    pub(super) fn user_id(&self, i: usize) -> u64 {
        let local = i as u64 * self.threads as u64 + self.k as u64;
        self.shared.plan.global(local)
    }

    /// Adds a user, not yet connected; returns its index.
    pub(super) fn add_user(&mut self, now: Instant) -> usize {
        let id = self.user_id(self.users.len());
        let state = self.script.new_user(id);
        let quota = self.quota(self.users.len());
        self.users.push(User::new(state, now, quota));
        self.active += 1;
        self.users.len() - 1
    }

    /// Takes user `i` on from where it was freed.
    pub(super) fn resume(&mut self, i: usize, now: Instant) {
        if self.users[i].state != State::Free {
            return;
        }
        match std::mem::replace(&mut self.users[i].resume, Resume::Begin) {
            Resume::Begin => self.begin(i, now),
            Resume::Woke => self.step(i, Last::Woke, now),
            Resume::Failed(f) => self.step(i, Last::Failed(&f), now),
        }
        self.flush_kicks(now);
    }

    /// Starts user `i`'s next iteration at `now` (closed model), parks it until a stage has
    /// room for it, or ends it because the run is over.
    pub(super) fn begin(&mut self, i: usize, now: Instant) {
        if self.open.is_some() {
            return self.next_arrival(i, now);
        }
        if self.stopping || self.end.is_some_and(|e| now >= e) {
            return self.retire(i);
        }
        if let Some(p) = self.shared.plan.profile() {
            // Stages: this user runs only while the target number of users exceeds its id (its
            // id in the whole run: the shards' users add up to the unsharded plan's).
            let id = self.user_id(i);
            let t = now.saturating_duration_since(self.start);
            if p.value_at(t) < id as f64 + 1.0 {
                match p.next_active(id, t).map(|d| self.start + d) {
                    Some(at) if self.end.is_none_or(|e| at < e) => {
                        self.users[i].resume = Resume::Begin;
                        return self.park(i, at);
                    }
                    _ => return self.retire(i),
                }
            }
        }
        if self
            .limit
            .is_some_and(|l| self.exchanges.in_flight() >= (self.cap * l) as u64)
        {
            // The servers take fewer in flight than the users asked for: it waits for a place
            // before its iteration begins, as h2load opens no stream over the server's limit.
            self.users[i].state = State::Idle;
            self.sleepers.push(i as u32);
            return;
        }
        if now >= self.measure_start {
            if let Some(n) = self.shared.plan.requests {
                if !self.take_counted(i, n) {
                    return self.retire(i);
                }
            }
        }
        self.iterate(i, now, now);
    }

    /// Closed model with `-n n`: whether user `i` may start one more measured iteration.
    /// Under stages users come and go: the iterations go to whoever asks first; otherwise
    /// each user has its share, [`Loop::quota`].
    fn take_counted(&mut self, i: usize, n: u64) -> bool {
        match self.users[i].quota.get() {
            Some(quota) => {
                let u = &mut self.users[i];
                u.counted += 1;
                u.counted <= quota
            }
            None => {
                let n = self.shared.plan.share(n);
                self.shared.issued.fetch_add(1, Ordering::Relaxed) < n
            }
        }
    }

    /// Closed model with `-n` and a fixed number of users: the measured iterations of this
    /// thread's user `i`. h2load's rule: this shard's `n` is handed out evenly, n/C to each of
    /// its C users and one more to the first n%C, so every user walks a URL list or a scenario
    /// as often as its neighbours however fast its own responses come.
    fn quota(&self, i: usize) -> Option<u64> {
        let plan = &self.shared.plan;
        let Load::Closed { users } = plan.load else {
            return None;
        };
        let n = plan.requests.filter(|_| plan.stages.is_empty())?;
        let (n, users) = (plan.share(n), plan.share(users).max(1));
        let local = (i * self.threads + self.k) as u64;
        Some(n / users + u64::from(local < n % users))
    }

    /// Open model: user `i` is free; it takes the oldest waiting arrival, waits for one, or
    /// ends.
    pub(super) fn next_arrival(&mut self, i: usize, now: Instant) {
        let Some(o) = self.open.as_mut() else { return };
        if let Some((g, at)) = o.waiting() {
            self.users[i].arrival = Some(g).into();
            return self.iterate(i, at, now);
        }
        if o.closed || self.stopping {
            self.retire(i);
        } else {
            self.users[i].state = State::Idle;
            o.idle.push_back(i);
        }
    }

    /// Starts user `i`'s iteration intended at `intended`, at `now`.
    pub(super) fn iterate(&mut self, i: usize, intended: Instant, now: Instant) {
        let u = &mut self.users[i];
        u.iteration = intended;
        u.intended = intended;
        u.busy = false;
        self.step(i, Last::Start, now);
    }

    /// What the script is told about user `i` at `now`: whether its iteration is measured (the
    /// warm-up rule) and, in the open model, when its arrival was due.
    pub(super) fn ctx(&self, i: usize, now: Instant) -> Ctx {
        Ctx {
            now,
            measured: self.users[i].iteration >= self.measure_start,
            arrival: self.users[i].arrival.get(),
        }
    }

    /// Asks user `i`'s script what comes next, and sets it going (the caller drives it).
    pub(super) fn step(&mut self, i: usize, last: Last<'_>, now: Instant) {
        let ctx = self.ctx(i, now);
        let u = &mut self.users[i];
        let action = self.script.next(&mut u.script, last, ctx);
        match action {
            Action::Send(req) => {
                // No request meant for after the end starts; one meant for before it (an
                // arrival the loop hands out a little late) still goes, and the drain waits
                // for it.
                if self.stopping || self.end.is_some_and(|e| u.intended >= e) {
                    // The run is over: no request starts after its end. An arrival taken from
                    // the queue that never left counts as dropped, like those still queued.
                    if let (Last::Start, true, Some(o)) = (last, ctx.measured, self.open.as_mut()) {
                        o.dropped += 1;
                    }
                    return self.retire(i);
                }
                u.busy = true;
                self.send(i, req, now);
            }
            Action::Think(d) => {
                u.busy |= !d.is_zero();
                let at = now + d;
                if self.stopping || self.end.is_some_and(|e| at >= e) {
                    // A pause that outlasts the run ends the user's part in it.
                    return self.retire(i);
                }
                u.resume = Resume::Woke;
                // The next request is measured from the end of the pause.
                u.intended = at;
                self.park(i, at);
            }
            Action::Done if !u.busy => {
                u.resume = Resume::Begin;
                self.park(i, now + IDLE_ITERATION);
            }
            Action::Done => self.begin(i, now),
            Action::Stop => self.retire(i),
        }
    }

    /// Users that wait for a place before their iteration begins ([`Loop::limit`]) begin as
    /// places free; all of them once no limit is known.
    pub(super) fn wake_sleepers(&mut self, now: Instant) {
        let places = self.limit.map_or(u64::MAX, |l| (self.cap * l) as u64);
        let mut busy = self.exchanges.in_flight() + self.resume.len() as u64;
        while busy < places {
            if let Some(i) = self.sleepers.pop() {
                let u = &mut self.users[i as usize];
                if u.state != State::Idle {
                    continue;
                }
                u.state = State::Free;
                u.resume = Resume::Begin;
                self.resume.push(i as usize);
            } else if self.unborn > 0 {
                // Counted active since the start: made now, it begins.
                self.unborn -= 1;
                self.active -= 1;
                let i = self.add_user(now);
                self.resume.push(i);
            } else {
                break;
            }
            busy += 1;
        }
    }

    /// The servers' limit on a connection's exchanges in flight, as the sessions say it now
    /// ([`crate::Session::limit`]); `None` when none is below the window.
    pub(super) fn learn_limit(&mut self) {
        // All connections go to one server; one that says no limit (its SETTINGS came, above
        // the window) outweighs one still on nghttp2's guess.
        let said = self
            .links
            .slots
            .iter()
            .filter_map(|k| k.session.as_ref())
            .map(|s| s.limit().unwrap_or(usize::MAX))
            .max();
        let Some(said) = said else {
            return; // no connection to ask: what was learnt holds
        };
        self.limit = (said < self.window).then_some(said);
        if self.limit.is_some() {
            self.limit_seen = self.limit;
        }
    }

    /// User `i` waits on the timer heap until `at`, then resumes.
    pub(super) fn park(&mut self, i: usize, at: Instant) {
        let u = &mut self.users[i];
        u.state = State::Waiting;
        u.timer = u.timer.wrapping_add(1);
        self.timers.push(Reverse((at, i as u32, u.timer)));
    }

    /// Resumes every user whose timer is due at `now`.
    pub(super) fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((at, i, gen))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let i = i as usize;
            let u = &mut self.users[i];
            if u.state != State::Waiting || u.timer != gen {
                continue; // stale
            }
            u.state = State::Free;
            self.resume(i, now);
        }
    }

    /// User `i` takes no more iterations.
    pub(super) fn retire(&mut self, i: usize) {
        if !self.sockets.is_empty() {
            self.close_socket(i);
        }
        // A user that owned its connection closes it as it leaves (after the server's close,
        // when its last response announced one: the user may leave in the very note that
        // brought it, before the close is read); shared ones stay.
        if !self.sharing {
            if let Some((l, g)) = self.users[i].link.take() {
                let idle = self.links.get(l, g).is_some_and(|k| {
                    !k.linger && k.session.as_ref().is_some_and(|s| s.in_flight() == 0)
                });
                if idle {
                    let now = self.now();
                    self.let_go(l, g, now);
                }
            }
        }
        let u = &mut self.users[i];
        if u.state != State::Done {
            u.state = State::Done;
            self.active -= 1;
        }
    }

    /// No iteration starts any more: users between requests end now, those in flight when
    /// their exchange does.
    pub(super) fn stop(&mut self) {
        self.stopping = true;
        self.active -= std::mem::take(&mut self.unborn);
        for i in 0..self.users.len() {
            if matches!(self.users[i].state, State::Waiting | State::Idle) {
                self.retire(i);
            }
        }
        if let Some(o) = self.open.as_mut() {
            o.idle.clear();
        }
    }

    /// Open model: hands every arrival that is due to a free user, a new one, or the queue (at
    /// most a batch per pass).
    pub(super) fn dispatch(&mut self) {
        // The closed model, or Ctrl-C: no clock read on every pass of the loop for nothing.
        if self.open.is_none() || self.stopping {
            return;
        }
        for _ in 0..PER_PASS {
            let now = self.now();
            let end = self.end;
            let Some(o) = self.open.as_mut() else {
                return;
            };
            let Some((g, at)) = o.due(now, end) else {
                return;
            };
            let lag = Dispatch::lag(now, at);
            o.send_lag.saturating_record(lag);
            self.second_lag.saturating_record(lag);
            let i = match o.hand(g, at, self.users.len(), now) {
                Hand::Held => continue,
                Hand::Dropped => return,
                Hand::Idle(i) => i,
                Hand::New => self.add_user(now),
            };
            self.users[i].state = State::Free;
            self.users[i].arrival = Some(g).into();
            self.iterate(i, at, now);
            self.flush_kicks(now);
        }
    }

    /// Open model: closes the queue once the schedule and the run are over, or at Ctrl-C;
    /// idle users end, busy ones when their exchange does.
    pub(super) fn close_queue(&mut self, now: Instant) {
        let Some(o) = self.open.as_mut() else {
            return;
        };
        if o.closed || !(self.stopping || o.over(now, self.end)) {
            return;
        }
        // The backlog the schedule ended with, before what still waits is dropped.
        let sec = now.saturating_duration_since(self.measure_start).as_secs();
        self.note_backlog(now, sec);
        let Some(o) = self.open.as_mut() else {
            return;
        };
        for i in o.close(self.measure_start, now, self.cancelled_at.is_some()) {
            self.retire(i);
        }
    }

    /// A schedule of messages (`Plan::in_turn`): records the send backlog at `now` into second
    /// `sec`, the messages due that wait for a free socket and those its sockets hold
    /// unwritten. Once a second: it walks the connections.
    pub(super) fn note_backlog(&mut self, now: Instant, sec: u64) {
        let Some(o) = self.open.as_ref().filter(|_| self.shared.plan.in_turn) else {
            return;
        };
        if now < self.measure_start {
            return;
        }
        let mut b = herd_metrics::Backlog {
            messages: o.queued() as u64,
            bytes: 0,
        };
        for s in self.links.slots.iter().filter_map(|k| k.session.as_ref()) {
            b.add(s.unsent());
        }
        self.recorder.record_backlog(sec, b);
    }
}
