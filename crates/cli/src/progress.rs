//! The live line on a terminal while a run goes on; nothing at all when output is piped.

use herd_engine::Progress;
use std::io::{IsTerminal, Write};

pub struct Live {
    on: bool,
    shown: bool,
}

impl Live {
    /// Shows progress only when both stdout and stderr are terminals.
    pub fn new(quiet: bool) -> Self {
        Live {
            on: !quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    pub fn update(&mut self, p: &Progress) {
        if !self.on {
            return;
        }
        let (rps, p99) = match &p.last {
            Some(s) => (
                s.requests().to_string(),
                format!("{:.1} ms", s.latency.value_at_quantile(0.99) as f64 / 1e3),
            ),
            None => ("-".into(), "-".into()),
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K  {:>5.0}s  {} requests  {} errors  last second: {} req/s, p99 {}",
            p.elapsed.as_secs_f64(),
            p.requests,
            p.errors,
            rps,
            p99
        );
        let _ = err.flush();
        self.shown = true;
    }

    pub fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}
