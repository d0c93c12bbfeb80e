//! `herd demo`: the embedded default. Starts the mock server in-process on a free port and runs
//! a short open-model test against it, so a new user sees a full summary with nothing installed.

use crate::exit::Exit;
use herd_args::demo::DemoArgs;
use herd_mock::{Config, Route, Server};

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
        a.load.rate.unwrap_or_default(),
        humantime::format_duration(a.load.duration.unwrap_or_default())
    );
    let spec = a.spec(url);
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
