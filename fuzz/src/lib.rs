//! Fuzzing of herd's parsers of what others wrote: HTTP responses (the head parser and the
//! chunked decoder, through `ResponseParser`), log lines of every supported format, workload
//! YAML with templates, result JSON (what `herd report`, `compare` and `merge` read), and the
//! Prometheus exposition format.
//!
//! cargo-fuzz needs a nightly compiler; herd builds on stable, so inputs come from a mutator
//! ([`mutate`]) seeded with the corpora under `fuzz/corpus/TARGET/` and a dictionary of each
//! format's tokens, not from coverage feedback. Each input must end without a panic, within a
//! time limit and an allocation limit (`herd-fuzz`, the driver, checks both).
//!
//! ```
//! let t = herd_fuzz::Target::by_name("exposition").unwrap();
//! t.run(b"# TYPE x counter\nx 1\n");
//! ```

pub mod mutate;
mod targets;

pub use targets::Target;

use std::path::{Path, PathBuf};

/// The corpus folder of a target in this repository.
pub fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target)
}

/// The seed inputs of a target, sorted by file name so a seeded run is reproducible.
pub fn corpus(target: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(target))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|f| std::fs::read(f).ok()).collect()
}
