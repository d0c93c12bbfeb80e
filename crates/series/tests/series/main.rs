//! herd-series' tests, one binary: the sweep and capacity loops driven through a fake
//! [`herd_run::Runs`] (a server that answers everything up to its capacity and half of it
//! beyond), with no network and no cooldown: what the loops decide, what they tell their
//! observer, and how a failed run or Ctrl-C ends them.

mod capacity;
mod fake;
mod sweep;
