//! `herd demo`: the embedded default. Starts the mock server in-process on a free port and runs
//! a short open-model test against it, so a new user sees a full summary with nothing installed.

use crate::exit::Exit;
use clap::Args;
use herd_mock::{Config, Route, Server};
use herd_run::{LoadFlags, RunSpec, Source};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// How long to load the mock server
    #[arg(short = 'd', long, default_value = "5s", value_parser = crate::values::duration)]
    pub duration: Duration,
    /// Arrivals per second
    #[arg(long, default_value_t = 2000.0)]
    pub rate: f64,
    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
}

const ROUTE: &str = "/* latency=lognormal:2ms:0.5 size=2kb";

pub fn cmd(a: &DemoArgs) -> Result<i32, Exit> {
    let route = Route::parse(ROUTE).map_err(|e| Exit::bad_input(e.to_string()))?;
    let server = Server::start(Config {
        threads: 1,
        routes: vec![route],
        ..Config::default()
    })
    .map_err(|e| Exit::bad_input(format!("cannot start the mock server: {e}")))?;
    let url = format!("http://{}/", server.local_addr());
    eprintln!("herd demo: mock server on {url} (route `{ROUTE}`)");
    eprintln!(
        "herd demo: open model, {} req/s for {}, latency measured from each request's intended send time\n",
        a.rate,
        humantime::format_duration(a.duration)
    );
    let spec = RunSpec {
        load: LoadFlags {
            connections: Some(200),
            rate: Some(a.rate),
            duration: Some(a.duration),
            timeout: Some(Duration::from_secs(5)),
            threads: Some(1),
            ..LoadFlags::default()
        },
        ..RunSpec::new(Source::url(url.clone()))
    };
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    let code = crate::run::play(&prepared, &a.outputs)?;
    let served = server.stats();
    server.shutdown();
    eprintln!(
        "\nherd demo: the mock server answered {} requests. Next: `herd serve --route '/slow latency=normal:100ms:20ms'` \
         in one terminal, `herd run --rate 500 -d 30s http://127.0.0.1:8080/slow` in another.",
        herd_result::format::count(served.requests)
    );
    Ok(code)
}
