use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// Stops a run from outside (Ctrl-C): sending stops at once, in-flight requests get a short grace.
#[derive(Debug, Default)]
pub struct Control {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once [`Control::cancel`] has been called (at once if it already was).
    pub async fn cancelled(&self) {
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }
}
