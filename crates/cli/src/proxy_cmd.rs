//! `herd proxy`: the fault proxy (herd-proxy) until interrupted, driven through toxiproxy's API.

use herd_args::proxy::ProxyArgs;
use herd_proxy::Server;

pub fn run(args: &ProxyArgs) -> anyhow::Result<()> {
    let flags = args.flags();
    let server = Server::start(flags.config().map_err(anyhow::Error::msg)?)?;
    print!("{}", server.banner(args.seed));
    loop {
        std::thread::park();
    }
}
