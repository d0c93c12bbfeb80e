//! herd's load engine: a [`Plan`] in, outcomes recorded, a [`RunOutput`] back.
//!
//! The engine knows nothing of HTTP, flags or printing. It runs one readiness loop per worker
//! thread (wrk's model); each loop owns its users, connections and [`metrics::Recorder`], and
//! the recorders are merged exactly at the end. Every run takes the same loop: both load models,
//! stages, think times and scripts, plain and TLS connections:
//!
//! - closed: N users, each starting its next iteration when the last one ended;
//! - open: arrivals on a fixed [`schedule::Schedule`], handed to free users; a request waiting
//!   for a connection keeps its intended time, so latency is measured from when it *should* have
//!   been sent (no coordinated omission) and service time from when it was.
//!
//! What happens on the wire is behind the [`Transport`] seam (connect, write, read, close and a
//! readiness wait, as wrk's `struct sock`); what a user does next is a synchronous [`Script`]
//! the loop calls whenever the user is free. Time comes from a [`Clock`], so the loop is tested
//! on a virtual one.
//!
//! ```no_run
//! use herd_engine::{run, Control, Load, Plan, Request, Single, SystemClock, Transport};
//! use std::sync::Arc;
//! fn hundred_per_second<T: Transport>(transport: impl Fn(usize) -> Result<T, String> + Sync) {
//!     let plan = Plan { load: Load::Open { rate: 100.0, max_connections: 50 }, ..Plan::default() };
//!     let req = Request::new(&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..]);
//!     let out = run(&plan, Arc::new(SystemClock), transport, |_| Single(req.clone()),
//!         Arc::new(Control::new()), |_| {}).unwrap();
//!     println!("{} ok", out.total.ok);
//! }
//! ```

mod buf;
mod control;
mod error;
mod events;
#[cfg(feature = "fake")]
pub mod fake;
pub mod generator;
pub mod health;
mod in_flight;
mod merge;
mod message;
mod ordered;
mod output;
pub mod plan;
pub mod process;
mod protocols;
pub mod requests_log;
mod run;
pub mod schedule;
mod script;
pub mod segment;
mod session;
mod share;
pub mod stages;
mod stream;
mod ticker;
mod transport;
mod worker;

pub use buf::Buf;
pub use control::{Control, Hooks};
pub use error::RunError;
pub use events::EventStream;
pub use health::HealthSample;
pub use herd_metrics as metrics;
pub use message::{Body, Failure, Paced, Parts, Request, Response, SocketRole, ThinVec};
pub use ordered::Ordered;
pub use output::Record;
pub use plan::{Load, Plan, PlanError};
pub use process::Process;
pub use protocols::{HandshakeTimes, Handshakes, Negotiated, ProtocolUse, Resumption, TlsUse};
pub use requests_log::RequestsLog;
pub use run::{run, GeneratorReport, Naps, Progress, RunOutput, KEPT_S};
pub use script::{default_verdict, Action, Ctx, Last, Script, ScriptReport, Single};
pub use segment::{Ratio, Rows, SegmentError, Sequence, Shard, Stripe};
pub use session::{Failed, Note, Opened, Ready, Ticket};
pub use share::{ScriptSecond, SecondLoad};
pub use stages::{Profile, Stage};
pub use stream::target_at;
pub use transport::{Clock, Effort, Event, Io, Parse, Session, SystemClock, Transport};
