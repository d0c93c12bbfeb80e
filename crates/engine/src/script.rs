//! What a virtual user does in one iteration. A plain `herd run URL` is one request; a workload
//! file compiles to a script with steps, think times and extraction. The engine only calls
//! `iterate` when the schedule says an iteration starts.

use crate::{Request, Transport, UserCtx};
use std::future::Future;

pub trait Script: 'static {
    /// A virtual user's own state: cookies, variables, its data row.
    type User: 'static;

    /// Creates user number `id` (unique across threads).
    fn new_user(&self, id: u64) -> Self::User;

    /// Runs one iteration: one or more exchanges through `ctx`, which records them.
    fn iterate<'a, T: Transport>(
        &'a self,
        user: &'a mut Self::User,
        ctx: &'a mut UserCtx<T>,
    ) -> impl Future<Output = ()> + 'a;
}

/// The same pre-serialized request, every iteration: wrk's fast path, nothing built per request.
#[derive(Clone, Debug)]
pub struct Single(pub Request);

impl Script for Single {
    type User = ();

    fn new_user(&self, _id: u64) {}

    async fn iterate<'a, T: Transport>(&'a self, _user: &'a mut (), ctx: &'a mut UserCtx<T>) {
        let _ = ctx.exchange(&self.0).await;
    }
}
