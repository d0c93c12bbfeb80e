use crate::requests_log::RequestsLog;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Stops a run from outside (Ctrl-C, SIGTERM): sending stops at once, in-flight requests get a
/// short grace. Worker loops look at it on every pass, so it takes effect within one wake-up.
#[derive(Debug, Default)]
pub struct Control {
    cancelled: AtomicBool,
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
}

/// What a run is handed from outside besides its plan: the handle that stops it, and the tap
/// each measured request goes to (`--requests-log`). Given to one run: a series gives each of
/// its runs its own tap, and the stop handle they share.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    pub control: Arc<Control>,
    /// Where each measured request goes; `None`: nowhere, at no cost.
    pub requests_log: Option<Arc<RequestsLog>>,
}

impl From<Arc<Control>> for Hooks {
    fn from(control: Arc<Control>) -> Hooks {
        Hooks {
            control,
            requests_log: None,
        }
    }
}
