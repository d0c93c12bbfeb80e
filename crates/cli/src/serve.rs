//! `herd serve`: run the mock target server until interrupted.

use herd_args::serve::ServeArgs;

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    herd_mock::serve_flags_until_signal(args.flags(), |said| eprintln!("{said}"))?;
    Ok(())
}
