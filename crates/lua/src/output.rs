//! What a run's scripts give back beside requests: what they printed and the errors they raised.

use std::sync::{Arc, Mutex};

/// What a script's print and io.write may add to a run's output; beyond it the rest is cut,
/// so a script printing on every request cannot exhaust memory.
const OUTPUT_LIMIT: usize = 1 << 20;

/// What the scripts printed, in order, shared by the states of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Output(Arc<Mutex<(String, bool)>>);

impl Output {
    pub fn push(&self, s: &str) {
        let mut o = self.0.lock().expect("output lock");
        if o.0.len() + s.len() <= OUTPUT_LIMIT {
            o.0.push_str(s);
        } else if !o.1 {
            o.1 = true;
            o.0.push_str("\n[herd: the script printed more than 1 MiB; the rest is left out]\n");
        }
    }

    pub(crate) fn take(&self) -> String {
        std::mem::take(&mut self.0.lock().expect("output lock").0)
    }
}

/// Lua errors during the run: counted as one error class, with the first message kept.
#[derive(Debug, Default)]
pub(crate) struct Tally(Mutex<(u64, Option<String>)>);

impl Tally {
    pub fn add(&self, message: String) {
        let mut t = self.0.lock().expect("tally lock");
        t.0 += 1;
        t.1.get_or_insert(message);
    }

    /// How many, and the first one's message.
    pub(crate) fn get(&self) -> (u64, Option<String>) {
        self.0.lock().expect("tally lock").clone()
    }

    /// Forgets them, for a new run.
    pub(crate) fn reset(&self) {
        *self.0.lock().expect("tally lock") = (0, None);
    }
}
