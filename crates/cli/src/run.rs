//! `herd run URL`, `herd run -f urls.txt` and `herd run FILE.yaml`: herd-args makes the flags a
//! `RunSpec`; herd-run checks and plays it, herd-live's sinks take its stream; here the signals
//! and the end through `outputs::finish`.

use crate::exit::Exit;
use crate::interrupt;
use herd_args::outputs::OutputArgs;
use herd_args::run::RunArgs;
use herd_engine::Control;
use std::sync::Arc;

pub fn cmd(a: &RunArgs) -> Result<i32, Exit> {
    crate::env_values::apply(&a.env)?;
    if let Some(refused) = a.refused() {
        return Err(Exit::bad_input(refused));
    }
    let mut spec = a.spec();
    spec.shard = crate::outputs::shard(&a.reach.shard)?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    play(&prepared, &a.outputs)
}

/// Plays a prepared run with every output `outputs` asks for, and ends it the one way.
pub fn play(prepared: &herd_run::Prepared, outputs: &OutputArgs) -> Result<i32, Exit> {
    play_keeping(prepared, outputs).map(|(code, _)| code)
}

/// [`play`], the result kept for what a command prints after the summary. The result is
/// stored (`--store`, `$HERD_STORE`) once every sink has it.
pub fn play_keeping(
    prepared: &herd_run::Prepared,
    outputs: &OutputArgs,
) -> Result<(i32, herd_result::RunResult), Exit> {
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let mut sinks = crate::outputs::open(outputs, &control, None)?
        .for_run(herd_live::line::Planned::of(&prepared.plan()));
    let mut result = prepared.run(None, &control, &mut sinks)?;
    let code = crate::outputs::finish(&mut result, &mut sinks)?;
    crate::store_cmd::keep(&outputs.keep, &result)?;
    Ok((code, result))
}
