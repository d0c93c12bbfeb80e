//! `herd run URL`, `herd run -f urls.txt` and `herd run FILE.yaml`: flags -> a `RunSpec`;
//! herd-run checks and plays it, herd-live's sinks take its stream; here the signals and the
//! end through `outputs::finish`.

use crate::args::RunArgs;
use crate::exit::Exit;
use crate::interrupt;
use herd_engine::Control;
use herd_run::{RunSpec, Source};
use std::sync::Arc;

/// The run `herd run`'s flags describe: a workload file, a URL file or a URL.
pub fn spec(a: &RunArgs) -> RunSpec {
    let file = a.workload_file();
    let source = match (&file, &a.urls_file) {
        (Some(path), _) => Source::Workload {
            path: path.clone(),
            target: a.target.clone(),
        },
        (None, None) if a.script.is_some() => Source::Script {
            url: a.url.clone().unwrap_or_default(),
            script: a.script.clone().unwrap_or_default(),
            args: a.script_args.clone(),
        },
        (None, Some(path)) => Source::UrlFile { path: path.clone() },
        (None, None) => Source::Url {
            url: a.url.clone().unwrap_or_default(),
        },
    };
    let mut spec = a
        .reach
        .spec(source, &a.request, a.load.flags(), a.http.flags());
    spec.request.form = a.form.clone();
    spec.request.ws = herd_run::WsFlags {
        send: a.send.clone(),
        message_rate: a.message_rate,
        matching: a.matching.clone(),
    };
    spec
}

pub fn cmd(a: &RunArgs) -> Result<i32, Exit> {
    crate::env_values::apply(&a.env)?;
    if let (Some(file), true) = (a.workload_file(), a.script.is_some()) {
        return Err(Exit::bad_input(format!(
            "-s/--script drives a URL, not a workload file ({}): give the URL the script \
             loads",
            file.display()
        )));
    }
    if let (None, Some(url)) = (a.workload_file(), &a.target) {
        return Err(Exit::bad_input(format!(
            "--target {url} aims a workload file at another host: give the file (herd run \
             shop.yaml --target {url}), or give a URL alone"
        )));
    }
    let mut spec = spec(a);
    spec.shard = a.reach.shard.resolve()?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    play(&prepared, &a.outputs)
}

/// Plays a prepared run with every output `outputs` asks for, and ends it the one way.
pub fn play(
    prepared: &herd_run::Prepared,
    outputs: &crate::outputs::OutputArgs,
) -> Result<i32, Exit> {
    play_keeping(prepared, outputs).map(|(code, _)| code)
}

/// [`play`], the result kept for what a command prints after the summary. The result is
/// stored (`--store`, `$HERD_STORE`) once every sink has it.
pub fn play_keeping(
    prepared: &herd_run::Prepared,
    outputs: &crate::outputs::OutputArgs,
) -> Result<(i32, herd_result::RunResult), Exit> {
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let mut sinks = outputs
        .open(&control, None)?
        .for_run(herd_live::line::Planned::of(&prepared.plan()));
    let mut result = prepared.run(None, &control, &mut sinks)?;
    let code = crate::outputs::finish(&mut result, &mut sinks)?;
    crate::store_cmd::keep(&outputs.keep, &result)?;
    Ok((code, result))
}
