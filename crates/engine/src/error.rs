//! How a run fails before it measures anything: a plan that cannot run, a worker that cannot
//! start or failed, a spill that cannot be written, or a server that speaks another protocol.

use crate::plan::PlanError;
use herd_spill::SpillError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("the plan cannot run: {0}")]
    Plan(#[from] PlanError),
    #[error("cannot start worker thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("a worker thread failed: {0}")]
    Worker(String),
    #[error(transparent)]
    Spill(#[from] SpillError),
    /// A connection proved the run cannot work as asked (the server speaks another protocol):
    /// the run stopped at once; the message says what to change.
    #[error("{0}")]
    Mismatch(String),
}
