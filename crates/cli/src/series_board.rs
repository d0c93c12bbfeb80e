//! `--dashboard` for a series of runs (`herd sweep`, `herd capacity`): the flags, and the page
//! that follows each run live and grows a table of the levels as they finish.

use crate::exit::Exit;
use herd_engine::Control;
use herd_live::dashboard::{Options, SeriesDashboard};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

#[derive(clap::Args, Debug, Default, Clone)]
pub struct BoardArgs {
    /// Serve a live dashboard: the run going on, and a table of the levels growing level by
    /// level, at http://ADDR/ [default: 127.0.0.1:5665; a port alone means 127.0.0.1; write
    /// --dashboard=ADDR]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = herd_live::dashboard::DEFAULT_ADDR, value_parser = crate::serve::parse_listen, help_heading = "Outputs")]
    pub dashboard: Option<SocketAddr>,
    /// Let the dashboard's page stop the series, as Ctrl-C does (the levels done are kept); on
    /// an address other than loopback a stop needs the token in the address herd prints
    #[arg(
        long = "dashboard-control",
        requires = "dashboard",
        help_heading = "Outputs"
    )]
    pub dashboard_control: bool,
}

impl BoardArgs {
    /// The dashboard, listening already (a taken port stops the series before anything is
    /// sent), when `--dashboard` asks for one. `what` heads the page; `json` is where the
    /// result will be, for the page's last words.
    pub fn listen(
        &self,
        what: String,
        named: bool,
        unit: &'static str,
        control: &Arc<Control>,
        json: Option<&Path>,
    ) -> Result<Option<SeriesDashboard>, Exit> {
        let Some(addr) = self.dashboard else {
            return Ok(None);
        };
        let report_hint = match json {
            Some(p) => format!(
                "Save the final report with the link above, or make it later: herd report {} -o report.html",
                p.display()
            ),
            None => "Save the final report with the link above (with --json FILE, herd report FILE makes it again later)".to_owned(),
        };
        let options = Options {
            addr,
            control: self.dashboard_control.then(|| Arc::clone(control)),
            report_hint,
        };
        let board = SeriesDashboard::listen(options, what, named, unit).map_err(|e| {
            Exit::bad_input(format!(
                "--dashboard {addr}: cannot listen there: {}; pick another address or port (--dashboard=127.0.0.1:0 takes any free port)\nnothing was sent",
                e.source
            ))
        })?;
        eprintln!("herd: dashboard at {}", board.url());
        Ok(Some(board))
    }
}
