//! Ctrl-C and SIGTERM stop the run gracefully: sending stops, the summary is printed and the JSON
//! written with what was measured.

use herd_engine::Control;
use std::sync::Arc;

/// Cancels `control` on the first SIGINT or SIGTERM, from a small thread of its own.
pub fn cancel_on_signal(control: Arc<Control>) {
    let spawned = std::thread::Builder::new()
        .name("herd-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                use tokio::signal::unix::{signal, SignalKind};
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
                control.cancel();
            });
        });
    if let Err(e) = spawned {
        eprintln!("herd: warning: Ctrl-C will not stop the run gracefully: {e}");
    }
}
