//! `herd plot FILE -o OUT.png|svg`: bench2graph's successor. Reads herd's TSV/CSV/JSON or the
//! TSV autobench writes; draws with the report crate's plots.

use crate::exit::{self, Exit};
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

pub fn cmd(a: &PlotArgs) -> Result<i32, Exit> {
    herd_report::plot::plot_file(&a.input, &a.output).map_err(Exit::bad_input)?;
    eprintln!("herd plot: wrote {}", a.output.display());
    Ok(exit::OK)
}
