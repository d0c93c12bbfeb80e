//! Series of runs: `herd sweep` (the same targets at rising levels) and `herd capacity` (the
//! highest level within an SLO). A series asks a [`herd_run::Runs`] for "a run at rate R" or "a
//! run with N users" and never looks inside; what it decides lives here beside the loop that
//! acts on it: the capacity [`capacity::Search`] (a pure state machine), the evidence a verdict
//! needs ([`capacity::evidence`]), and the sweep's stop rule applied step by step
//! ([`sweep::Saturation`]). What a series tells as it goes (the live tables) goes through an
//! [`Observer`]; the results are herd-result's `SweepResult` and `CapacityResult`.
//!
//! ```
//! use herd_result::capacity::{Measured, Slo};
//! use herd_result::Summary;
//! use herd_series::capacity::{Action, Search, SearchConfig};
//! use std::time::Duration;
//!
//! let mut search = Search::new(SearchConfig {
//!     slo: Slo::parse("p99 < 100ms, errors < 1%").unwrap(),
//!     start: 50.0,
//!     max: 1e6,
//!     min: 1.0,
//!     precision: 0.05,
//!     max_probes: 20,
//!     probe: Duration::from_secs(5),
//!     min_requests: 500,
//!     longest: Duration::from_secs(60),
//!     users: false,
//! });
//! let Action::Probe(first) = search.next(None) else { unreachable!() };
//! assert_eq!(first.level, 50.0);
//! // It held, on requests enough to say so: the search ramps up.
//! let held = Measured {
//!     requests: 100_000,
//!     latency_ms: Summary { count: 100_000, p99: 20.0, ..Summary::default() },
//!     ..Measured::default()
//! };
//! let Action::Probe(next) = search.next(Some(&held)) else { unreachable!() };
//! assert!(next.level > first.level);
//! ```

pub mod capacity;
pub mod levels;
pub mod sweep;

use herd_engine::Control;
use herd_result::capacity::{CapacityResult, Measured};
use herd_result::sweep::{SweepResult, SweepTarget};
use herd_result::RunResult;
use std::time::{Duration, Instant};

/// What a series tells as it goes: the CLI makes each run's outputs and prints its live tables
/// from these. Every method does nothing by default.
pub trait Observer {
    /// What takes the stream of the next run (its outputs: herd-live's sinks).
    fn live(&mut self) -> &mut dyn herd_run::Observer {
        // `()` is a zero-sized type: leaking a box of it allocates nothing.
        Box::leak(Box::new(()))
    }
    /// A sweep ran `target` at `level`; the run's outputs may add to its result.
    fn ran(&mut self, _level: f64, _target: &SweepTarget, _run: &mut RunResult) {}
    /// A capacity search ran its `n`th probe (from 1) and judged it on `measured`; the run's
    /// outputs may add to its result.
    fn probed(
        &mut self,
        _n: usize,
        _judged: &capacity::Judged,
        _measured: &Measured,
        _run: &mut RunResult,
    ) {
    }
    /// After each complete step, the sweep as it would read if nothing more ran (marked
    /// interrupted: its later levels did not run). `--json` is rewritten from it as the sweep
    /// goes, so a kill leaves every step that ran, readable by `herd report`.
    fn swept(&mut self, _so_far: &dyn Fn() -> SweepResult) {}
    /// After each probe, the capacity search as it would read if nothing more ran (marked
    /// interrupted), for the same purpose.
    fn searched(&mut self, _so_far: &dyn Fn() -> CapacityResult) {}
}

impl Observer for () {}

/// Sleeps `d` unless interrupted; `false` when interrupted.
pub fn pause(d: Duration, control: &Control) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if control.is_cancelled() {
            return false;
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
    !control.is_cancelled()
}
