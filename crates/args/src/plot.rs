//! `herd plot FILE -o OUT.png|svg`'s flags (bench2graph's successor).

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A sweep table (herd's or autobench's TSV/CSV), or a herd JSON result (sweep, capacity, run)
    pub input: PathBuf,

    /// The picture to write: .png or .svg
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}
