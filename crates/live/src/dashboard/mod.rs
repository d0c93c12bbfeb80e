//! The live web dashboard (`--dashboard`): one page, no external assets, updated every second
//! over Server-Sent Events with the run's numbers and the report's charts, the plan's target
//! against what happened; at the end it says so and offers the final report. Like every output
//! it is a [`Sink`] of the stream of closed seconds: the sink only adds each second to the
//! [`View`]; the page is drawn on the server's threads, once a second, and only while a browser
//! watches. `--record FILE` writes the same events as NDJSON ([`recording`]), which
//! `herd report FILE` turns into the same page afterwards.

mod control;
mod event;
mod html;
mod page;
pub mod recording;
mod series;
mod server;
mod view;

pub use control::new_token;
pub use event::{Event, LevelRow, Levels, SecondEvent};
pub use series::{SeriesLive, StepFeed};
pub use view::{View, WINDOW};

use crate::{RunStart, Sink, SinkError};
use control::Stopper;
use herd_engine::Record;
use herd_result::RunResult;
use server::{Server, Shared};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The default address, k6's dashboard's port.
pub const DEFAULT_ADDR: &str = "127.0.0.1:5665";
/// How long herd waits after the end for the browsers watching to be told it ended.
pub const GRACE: Duration = Duration::from_secs(3);

/// How the dashboard is served.
pub struct Options {
    pub addr: SocketAddr,
    /// `--dashboard-control`: the page may stop the run (the run's own control, as Ctrl-C).
    pub control: Option<Arc<herd_engine::Control>>,
    /// Where the final report is, or how to make one, as the page says at the end.
    pub report_hint: String,
}

pub struct Dashboard {
    shared: Arc<Shared>,
    server: Server,
    token: Option<String>,
    /// The run's request names, scenarios and checks, told at its start.
    labels: herd_run::Labels,
}

impl Dashboard {
    /// Listens now, so a taken port stops the run before anything is sent. A control on an
    /// address other machines can reach gets a random token, part of [`Dashboard::url`].
    pub fn listen(o: Options) -> Result<Self, SinkError> {
        let err = |e| SinkError::new("--dashboard", Path::new(&o.addr.to_string()), e);
        let token = match (&o.control, o.addr.ip().is_loopback()) {
            (Some(_), false) => Some(new_token().map_err(err)?),
            _ => None,
        };
        let listener = TcpListener::bind(o.addr).map_err(err)?;
        let shared = Arc::new(Shared::default());
        shared.lock().report_hint = o.report_hint;
        let stopper = o.control.map(|control| Stopper {
            control,
            token: token.clone(),
        });
        let server = Server::start(listener, Arc::clone(&shared), stopper).map_err(err)?;
        Ok(Dashboard {
            shared,
            server,
            token,
            labels: herd_run::Labels::default(),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// The page's address, with the token when a stop needs one.
    pub fn url(&self) -> String {
        let token = self
            .token
            .as_ref()
            .map(|t| format!("?token={t}"))
            .unwrap_or_default();
        format!("http://{}/{token}", self.local_addr())
    }

    fn apply(&mut self, e: &Event) {
        self.shared.change(|s| s.view.apply(e));
    }
}

impl Sink for Dashboard {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        self.labels = start.labels.clone();
        self.apply(&Event::Start(start.header()));
        Ok(())
    }

    fn record(
        &mut self,
        r: &Record,
        server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        let mut second = SecondEvent::new(r, &self.labels);
        second.line.server = server.cloned();
        self.apply(&Event::Second(second));
        Ok(())
    }

    fn fault(&mut self, window: &herd_result::FaultWindow) {
        self.apply(&Event::Fault(window.clone()));
    }

    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        let report: Arc<str> = herd_report::html::render_run(result).into();
        self.shared.change(|s| {
            s.view.apply(&Event::End(Box::new(result.clone())));
            s.report = Some(report);
        });
        Ok(())
    }

    fn linger(&mut self) {
        self.shared.await_told(GRACE);
    }
}

/// The page of a finished (or cut short) run, without the script: what `herd report` makes of
/// a recording.
pub fn static_page(view: &View, report_hint: &str) -> String {
    page::page(&html::fragment(&view.frame(), report_hint), false, false)
}

#[cfg(test)]
mod tests;
