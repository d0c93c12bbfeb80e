//! `herd compare BASE NEW...`'s flags: the runs, or stored ones (--baseline), and the threshold.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The base run's JSON, then the runs to compare with it (with --baseline: only the runs
    /// to compare)
    #[arg(value_name = "RESULT.json", num_args = 1.., required = true)]
    pub files: Vec<PathBuf>,

    /// Compare with stored runs instead of a base file: those with these labels
    /// (KEY=VALUE,KEY=VALUE) and the same load, from --store or $HERD_STORE; the run pinned by
    /// `herd history baseline set`, or with --last N the last N merged exactly
    #[arg(long, value_name = "LABELS")]
    pub baseline: Option<String>,

    /// With --baseline: the last N matching runs, merged into one base
    #[arg(long, value_name = "N", requires = "baseline", value_parser = crate::values::count::<usize>)]
    pub last: Option<usize>,

    /// The store --baseline reads: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL", requires = "baseline")]
    pub store: Option<String>,

    /// How much worse a key metric may get before it counts as a regression (when beyond
    /// noise too), e.g. 10% or 5
    #[arg(long, value_name = "PERCENT", default_value = "10%", value_parser = crate::values::threshold)]
    pub threshold: f64,

    /// Also write the runs overlaid in one report: HTML, or PDF for a .pdf file
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write the comparison and its verdict as JSON (schema/compare.schema.json)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}
