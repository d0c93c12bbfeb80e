//! `herd replay LOG... --target URL`: a log's requests sent with their recorded timing (herd-run
//! reads the logs and plays them as any run, with every output of `herd run`); `--dry-run`
//! prints what would be sent and its per-second shape.

use crate::exit::{self, Exit};
use herd_args::replay::ReplayArgs;
use herd_logs::replay_preview::preview;

pub fn cmd(a: &ReplayArgs) -> Result<i32, Exit> {
    let options = a.options().map_err(Exit::bad_input)?;
    let format = a.files.spec().map_err(Exit::bad_input)?;
    if a.dry_run {
        let files = &a.files;
        let preview = preview(
            &files.logs,
            &format,
            files.fields.as_deref(),
            &options,
            a.show,
        )
        .map_err(|e| Exit::bad_input(e.to_string()))?;
        print!("{}", preview.shown);
        crate::logs_cmd::warn_bad(&preview.stats);
        print!("{}", preview.shape(a.speed));
        return Ok(exit::OK);
    }
    let Some(url) = a.target.clone() else {
        return Err(Exit::bad_input(
            "give --target URL (where to send the log's requests), or --dry-run to see them",
        ));
    };
    let mut spec = a.spec(url, format, options);
    spec.shard = crate::outputs::shard(&a.reach.shard)?;
    let prepared = crate::outputs::prepared(spec.prepare(), &a.outputs)?;
    let read = prepared.replay_read().cloned().unwrap_or_default();
    crate::logs_cmd::warn_bad(&read.stats);
    let (code, result) = crate::run::play_keeping(&prepared, &a.outputs)?;
    if let Some(table) = herd_report::render_replay_comparison(&result) {
        print!("{table}");
    }
    println!("{}", read.skipped.line(read.invalid));
    Ok(code)
}
