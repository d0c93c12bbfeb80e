//! Ctrl-C and SIGTERM stop the run gracefully: sending stops, the summary is printed and the JSON
//! written with what was measured.

use herd_engine::Control;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

static SIGNALS: AtomicU64 = AtomicU64::new(0);

/// How many SIGINTs and SIGTERMs the process has had: the first stops the run, a later one
/// ends what herd does after it (the wait for a last scrape of `--metrics-listen`).
pub fn signals() -> u64 {
    SIGNALS.load(Ordering::Relaxed)
}

/// Cancels `control` on the first SIGINT or SIGTERM, from a small thread of its own. Returns
/// once the handlers are installed: on a loaded machine that thread may wait for a core while
/// the load already flows, and a Ctrl-C then would kill herd with nothing written.
pub fn cancel_on_signal(control: Arc<Control>) {
    let (ready, installed) = std::sync::mpsc::sync_channel::<()>(1);
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
                let _ = ready.send(());
                loop {
                    tokio::select! {
                        _ = int.recv() => {}
                        _ = term.recv() => {}
                    }
                    SIGNALS.fetch_add(1, Ordering::Relaxed);
                    control.cancel();
                }
            });
        });
    let installed = match spawned {
        // Bounded: a machine too loaded to start a thread in 10 s still gets its run.
        Ok(_) => installed
            .recv_timeout(std::time::Duration::from_secs(10))
            .is_ok(),
        Err(_) => false,
    };
    if !installed {
        eprintln!("herd: warning: Ctrl-C will not stop the run gracefully: its handler could not be installed");
    }
}
