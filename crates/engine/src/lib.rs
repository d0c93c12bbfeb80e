//! herd's load engine: a [`Plan`] in, outcomes recorded, a [`RunOutput`] back.
//!
//! The engine knows nothing of HTTP, flags or printing. It runs one event loop per worker thread
//! (wrk's model); each loop owns its users, connections and [`metrics::Recorder`], and the
//! recorders are merged exactly at the end. Both load models share one user loop:
//!
//! - closed: N users, each starting its next iteration when the last one ended;
//! - open: arrivals on a fixed [`schedule::Schedule`], handed to free users; a request waiting
//!   for a connection keeps its intended time, so latency is measured from when it *should* have
//!   been sent (no coordinated omission) and service time from when it was.
//!
//! What happens on the wire is behind the [`Transport`] seam; what a user does in an iteration is
//! a [`Script`].
//!
//! ```no_run
//! use herd_engine::{run, Control, Load, Plan, Request, Single, Transport};
//! fn hundred_per_second<T: Transport>(transport: impl Fn(usize) -> T + Sync) {
//!     let plan = Plan { load: Load::Open { rate: 100.0, max_connections: 50 }, ..Plan::default() };
//!     let req = Request::new(&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..]);
//!     let out = run(&plan, transport, |_| Single(req.clone()), Control::new().into(), |_| {}).unwrap();
//!     println!("{} ok", out.total.ok);
//! }
//! ```

mod arrivals;
mod control;
mod deadline;
mod direct;
pub mod generator;
pub mod health;
pub mod plan;
mod precise;
mod run;
pub mod schedule;
mod script;
pub mod segment;
pub mod stages;
mod ticker;
pub mod transport;
mod user;
mod worker;

pub use control::Control;
pub use health::HealthSample;
pub use herd_metrics as metrics;
pub use plan::{Load, Plan, PlanError};
pub use run::{
    direct_supports, run, run_direct, run_local, GeneratorReport, Progress, RunError, RunOutput,
};
pub use script::{Script, Single};
pub use segment::{Ratio, Rows, SegmentError, Sequence, Shard, Stripe};
pub use stages::{Profile, Stage};
pub use transport::{Codec, Failure, Parse, Request, Response, Transport};
pub use user::{default_verdict, UserCtx};
