//! `herd demo`'s flags: `herd run`'s load with the demo's defaults, and the outputs; the run
//! they make of the mock server's URL.

use clap::Args;
use herd_run::{RunSpec, Source};

/// `herd run`'s load flags, with the demo's defaults (`load::DEMO`).
#[derive(Args, Debug)]
#[command(mut_args = crate::load::demo)]
pub struct DemoArgs {
    #[command(flatten)]
    pub load: crate::load::LoadArgs,
    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}

impl DemoArgs {
    /// The run of the mock server at `url`: the demo's load, every other flag's default.
    pub fn spec(&self, url: String) -> RunSpec {
        crate::run::ReachArgs::default().spec(
            Source::url(url),
            &crate::run::RequestArgs::default(),
            self.load.flags(),
            herd_run::HttpFlags::default(),
        )
    }
}
