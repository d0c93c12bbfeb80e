//! `herd demo`: the embedded default. Starts the mock server in-process on a free port and runs
//! a short open-model test against it, so a new user sees a full summary with nothing installed.

use crate::exit::Exit;
use crate::progress::Live;
use crate::run::{execute, finish, prepare_run};
use crate::{args::RunArgs, interrupt};
use clap::Args;
use herd_engine::Control;
use herd_mock::{Config, Route, Server};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// How long to load the mock server
    #[arg(short = 'd', long, default_value = "5s", value_parser = crate::args::parse_duration)]
    pub duration: Duration,
    /// Arrivals per second
    #[arg(long, default_value_t = 2000.0)]
    pub rate: f64,
    /// Write the JSON result here too
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
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
    let args = RunArgs {
        url: Some(url.clone()),
        urls_file: None,
        connections: Some(200),
        rate: Some(a.rate),
        duration: Some(a.duration),
        requests: None,
        calls_per_conn: None,
        method: None,
        headers: Vec::new(),
        body: None,
        body_file: None,
        timeout: Duration::from_secs(5),
        warmup: Duration::ZERO,
        threads: Some(1),
        json: a.json.clone(),
        insecure: false,
        bind: None,
        quiet: false,
        watch: Default::default(),
        shard: Default::default(),
    };
    let prepared = prepare_run(&args)?;
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let result = execute(&prepared, control, &mut Live::new(false));
    let served = server.stats();
    server.shutdown();
    let code = finish(&result?, args.json.as_deref())?;
    eprintln!(
        "\nherd demo: the mock server answered {} requests. Next: `herd serve --route '/slow latency=normal:100ms:20ms'` \
         in one terminal, `herd run --rate 500 -d 30s http://127.0.0.1:8080/slow` in another.",
        served.requests
    );
    Ok(code)
}
