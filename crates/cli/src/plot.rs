//! `herd plot FILE -o OUT.png|svg`: bench2graph's successor. Reads herd's TSV/CSV/JSON or the
//! TSV autobench writes; draws with the report crate's plots.

use crate::exit::{self, Exit};
use herd_args::plot::PlotArgs;

pub fn cmd(a: &PlotArgs) -> Result<i32, Exit> {
    herd_report::plot::plot_file(&a.input, &a.output).map_err(Exit::bad_input)?;
    eprintln!("herd plot: wrote {}", a.output.display());
    Ok(exit::OK)
}
