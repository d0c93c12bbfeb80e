//! What a shard prints besides its summary: its result as one framed block on standard error,
//! for `kubectl logs` and `herd k8s collect` (herd-run plays the shard: its wait for the start
//! instant, its stripe, its header).

use crate::exit::Exit;
use herd_result::RunResult;

/// Prints the result as one framed block on standard error, for `kubectl logs` (which shows
/// both streams) and `herd k8s collect`; standard output keeps what a person reads.
pub fn print_frame(result: &RunResult) -> Result<(), Exit> {
    let mut json = Vec::new();
    herd_result::write_json(result, &mut json)
        .map_err(|e| Exit::bad_input(format!("cannot encode the result: {e}")))?;
    let label = result.shard.as_ref().map(|h| h.label()).unwrap_or_default();
    eprint!("{}", herd_result::frame::frame(&json, &label));
    Ok(())
}

/// After a shard's run: a shard given no share says so (it sent nothing, and the merge counts
/// it), and its result goes out framed.
pub fn conclude(result: &RunResult) -> Result<(), Exit> {
    let Some(h) = &result.shard else {
        return Ok(());
    };
    if herd_run::conclude(result) == herd_run::Conclusion::NoShare {
        eprintln!(
            "herd: shard {} has no share of this run (fewer users or requests than shards): it sent nothing, and herd merge counts it",
            h.label()
        );
    }
    print_frame(result)
}
