use std::sync::atomic::{AtomicBool, Ordering};

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
