//! One second's outcomes per request name: what a per-name series of a dashboard, a metrics
//! endpoint or the JSON stream is built from.
//!
//! Names are a workload's, usually a handful; a URL file of thousands of URLs makes each URL a
//! name. A second keeps the first [`NAMED_PER_SECOND`] names apart and folds the rest into one
//! entry, [`OTHER_NAME`]: the per-second stream and every label set built on it stay bounded
//! whatever the input (Locust's `MAX_REQUEST_NAMES`). The run's totals per name keep every name.

use crate::stats::micros;
use crate::{CompactHistogram, Outcome};

/// Names kept apart in a second; names with a higher index count as [`OTHER_NAME`].
pub const NAMED_PER_SECOND: u32 = 100;

/// The entry the names past [`NAMED_PER_SECOND`] fold into.
pub const OTHER_NAME: u32 = u32::MAX;

/// One name's share of one second.
#[derive(Clone, Debug, Default)]
pub struct NameSecond {
    /// The request name's index, or [`OTHER_NAME`].
    pub name: u32,
    pub ok: u64,
    pub failed: u64,
    pub errors: u64,
    /// Latency of its responses, microseconds (sparse: a name sees few distinct values a second).
    pub latency: CompactHistogram,
}

impl NameSecond {
    pub fn requests(&self) -> u64 {
        self.ok + self.failed + self.errors
    }
}

/// The names seen in one second, sorted by index.
#[derive(Clone, Debug, Default)]
pub struct ByName(Vec<NameSecond>);

impl ByName {
    pub fn record(&mut self, o: &Outcome) {
        let e = self.entry(o.name);
        match o.result {
            Ok(crate::Verdict::Ok) => e.ok += 1,
            Ok(crate::Verdict::Failed) => e.failed += 1,
            Err(_) => e.errors += 1,
        }
        if o.result.is_ok() {
            e.latency.saturating_record(micros(o.latency));
        }
    }

    fn entry(&mut self, name: u32) -> &mut NameSecond {
        let name = if name < NAMED_PER_SECOND {
            name
        } else {
            OTHER_NAME
        };
        let i = match self.0.binary_search_by_key(&name, |e| e.name) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(
                    i,
                    NameSecond {
                        name,
                        ..NameSecond::default()
                    },
                );
                i
            }
        };
        &mut self.0[i]
    }

    pub fn merge(&mut self, other: &ByName) {
        for o in &other.0 {
            let e = self.entry(o.name);
            e.ok += o.ok;
            e.failed += o.failed;
            e.errors += o.errors;
            e.latency.add(&o.latency);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &NameSecond> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets every name: a sealed second keeps only its totals.
    pub fn clear(&mut self) {
        self.0 = Vec::new();
    }

    pub fn held_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<NameSecond>()
            + self.0.iter().map(|e| e.latency.heap_bytes()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, Verdict};
    use std::time::Duration;

    #[test]
    fn names_past_the_cap_fold_into_one_entry() {
        let mut b = ByName::default();
        for name in 0..5_000u32 {
            let ms = Duration::from_millis(1 + u64::from(name % 7));
            b.record(&Outcome::completed(name, ms, ms, 200, Verdict::Ok));
        }
        b.record(&Outcome::error(
            3,
            Duration::from_secs(1),
            ErrorKind::Timeout,
        ));
        let entries: Vec<_> = b.iter().collect();
        assert_eq!(entries.len(), NAMED_PER_SECOND as usize + 1);
        assert_eq!((entries[3].ok, entries[3].errors), (1, 1));
        let other = entries.last().unwrap();
        assert_eq!((other.name, other.ok), (OTHER_NAME, 4_900));
        let mut all = ByName::default();
        all.merge(&b);
        all.merge(&b);
        assert_eq!(all.iter().last().unwrap().latency.len(), 9_800);
    }
}
