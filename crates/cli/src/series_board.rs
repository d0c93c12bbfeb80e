//! `--dashboard` for a series of runs (`herd sweep`, `herd capacity`): the flags, and the page
//! that follows each run live and grows a table of the levels as they finish.

use crate::exit::Exit;
use herd_engine::Control;
use herd_live::dashboard::record::Recording;
use herd_live::dashboard::{Dashboard, Levels, Options, SeriesLive};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
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
    /// Record the dashboard's events (each run's seconds as they close, each level as it ends)
    /// as NDJSON to FILE; `herd report FILE -o page.html` makes the dashboard's page of it
    #[arg(long, value_name = "FILE", help_heading = "Outputs")]
    pub record: Option<PathBuf>,
}

impl BoardArgs {
    /// The series' live outputs, ready (a taken port, a file that cannot be written: the
    /// series stops before anything is sent), when `--dashboard` or `--record` asks for them.
    /// `what` heads the page; `json` is where the result will be, for the page's last words.
    pub fn start(
        &self,
        levels: Levels,
        control: &Arc<Control>,
        json: Option<&Path>,
    ) -> Result<Option<SeriesLive>, Exit> {
        if self.dashboard.is_none() && self.record.is_none() {
            return Ok(None);
        }
        let board = match self.dashboard {
            Some(addr) => Some(self.listen(addr, control, json)?),
            None => None,
        };
        let record = self.record.as_deref().map(Recording::create);
        let live = SeriesLive::start(board, record, levels)
            .map_err(|e| Exit::bad_input(format!("{e}\nnothing was sent")))?;
        if let Some(url) = live.url() {
            eprintln!("herd: dashboard at {url}");
        }
        Ok(Some(live))
    }

    fn listen(
        &self,
        addr: SocketAddr,
        control: &Arc<Control>,
        json: Option<&Path>,
    ) -> Result<Dashboard, Exit> {
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
        Dashboard::listen(options).map_err(|e| {
            Exit::bad_input(format!(
                "--dashboard {addr}: cannot listen there: {}; pick another address or port (--dashboard=127.0.0.1:0 takes any free port)\nnothing was sent",
                e.source
            ))
        })
    }
}

/// Tells the series' outputs it ended; a recording that could not be written is said, not fatal.
pub fn finish(live: Option<&SeriesLive>, report: impl FnOnce() -> String, interrupted: bool) {
    if let Some(live) = live {
        if let Some(e) = live.finish(report(), interrupted) {
            eprintln!("herd: {e}");
        }
    }
}
