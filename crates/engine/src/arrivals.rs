//! Where a user's next iteration comes from. Both load models run the same user loop; only this
//! differs: in the closed model a user starts its next iteration at once (while stages keep it
//! active), in the open model it takes the next arrival the dispatcher queued, keeping that
//! arrival's intended time.

use crate::stages::Profile;
use crate::worker::{Local, Shared};
use crate::{Script, Transport, UserCtx};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::time::{sleep_until, Instant};

pub(crate) enum Arrivals {
    Closed {
        end: Option<Instant>,
        limit: Option<u64>,
        profile: Option<Profile>,
    },
    Open,
}

pub(crate) async fn user_loop<T: Transport, S: Script>(
    local: Rc<Local<T>>,
    script: Rc<S>,
    arrivals: Rc<Arrivals>,
    shared: Arc<Shared>,
    id: u64,
) {
    let mut user = script.new_user(id);
    let mut ctx = UserCtx::new(Rc::clone(&local));
    while let Some((intended, now)) = next_arrival(&local, &arrivals, &shared, id).await {
        ctx.begin(intended, now);
        script.iterate(&mut user, &mut ctx).await;
    }
}

async fn next_arrival<T: Transport>(
    local: &Local<T>,
    arrivals: &Arrivals,
    shared: &Shared,
    user: u64,
) -> Option<(Instant, Instant)> {
    if local.control.is_cancelled() {
        return None;
    }
    match arrivals {
        Arrivals::Closed {
            end,
            limit,
            profile,
        } => {
            // `work` waited for the run's start before any user existed: an iteration begun
            // earlier would count as warm-up even when there is none.
            let mut now = Instant::now();
            if let Some(p) = profile {
                // Stages: this user runs only while the target number of users exceeds its id.
                let t = now.saturating_duration_since(shared.start);
                if p.value_at(t) < user as f64 + 1.0 {
                    let at = shared.start + p.next_active(user, t)?;
                    if end.is_some_and(|e| at >= e) {
                        return None;
                    }
                    tokio::select! {
                        biased;
                        _ = local.control.cancelled() => return None,
                        _ = sleep_until(at) => {}
                    }
                    now = Instant::now();
                }
            }
            if end.is_some_and(|e| now >= e) {
                return None;
            }
            if now >= local.measure_start {
                if let Some(n) = limit {
                    if shared.issued.fetch_add(1, Ordering::Relaxed) >= *n {
                        return None;
                    }
                }
            }
            Some((now, now))
        }
        Arrivals::Open => loop {
            if let Some(at) = local.queue.borrow_mut().pop_front() {
                local.handed.set(local.handed.get().saturating_sub(1));
                return Some((at, Instant::now()));
            }
            if local.closed.get() || local.control.is_cancelled() {
                return None;
            }
            local.idle.set(local.idle.get() + 1);
            local.wake.notified().await;
        },
    }
}
