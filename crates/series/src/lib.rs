//! Series of runs: `herd sweep` (the same targets at rising levels) and `herd capacity` (the
//! highest level within an SLO). A series asks a [`herd_run::Runs`] for "a run at rate R" or "a
//! run with N users" and never looks inside; what it decides lives here beside the loop that
//! acts on it: the capacity [`capacity::Search`] (a pure state machine), the evidence a verdict
//! needs ([`capacity::evidence`]), and the sweep's stop rule applied step by step
//! ([`sweep::Saturation`]). What a series tells as it goes goes to one [`herd_run::Sink`], the
//! same kind a single run tells its events to: each step's beginning ([`herd_run::Sink::step`]),
//! its run's events, its end ([`herd_run::Sink::stepped`]) and the series so far; the results
//! are herd-result's `SweepResult` and `CapacityResult`.
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
use std::time::{Duration, Instant};

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
