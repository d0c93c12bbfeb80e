use crate::requests_log::RequestsLog;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Stops a run from outside (Ctrl-C, SIGTERM): sending stops at once, in-flight requests get a
/// short grace. Worker loops look at it on every pass, so it takes effect within one wake-up.
#[derive(Debug, Default)]
pub struct Control {
    cancelled: AtomicBool,
    /// Where each measured request goes (`--requests-log`); read once as a run starts, so a
    /// series can give each of its runs its own.
    requests_log: Mutex<Option<Arc<RequestsLog>>>,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Sends a line for each measured request of the runs started from now on to `log`
    /// (`None`: no more lines).
    pub fn log_requests(&self, log: Option<Arc<RequestsLog>>) {
        *self.requests_log.lock().unwrap_or_else(|e| e.into_inner()) = log;
    }

    pub(crate) fn requests_log(&self) -> Option<Arc<RequestsLog>> {
        self.requests_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
