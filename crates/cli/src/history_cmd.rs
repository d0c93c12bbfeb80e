//! `herd history ls|show|trend|detect|baseline`: questions answered from a store of runs
//! (herd-history): where the answers go.

use crate::exit::{self, Exit};
use crate::report_format::{emit, format_for};
use herd_args::history::{
    BaselineArgs, BaselineCommand, DetectArgs, HistoryArgs, HistoryCommand, LsArgs, Select,
    ShowArgs, TrendArgs,
};
use herd_history::{Changes, Trend};
use herd_store::{Filter, Store};

/// The filter first (a bad --since is said before a missing store), then the store.
fn open(select: &Select) -> Result<(Store, Filter), Exit> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let filter = select.filters().filter(now).map_err(store_err)?;
    let (store, _) = crate::store_cmd::open(select.store.as_deref())?;
    Ok((store, filter))
}

fn store_err(e: impl std::fmt::Display) -> Exit {
    Exit::bad_input(e.to_string())
}

fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<(), Exit> {
    herd_history::write_json(path, value).map_err(store_err)
}

pub fn cmd(a: &HistoryArgs) -> Result<i32, Exit> {
    match &a.command {
        HistoryCommand::Ls(a) => ls(a),
        HistoryCommand::Show(a) => show(a),
        HistoryCommand::Trend(a) => trend(a),
        HistoryCommand::Detect(a) => detect(a),
        HistoryCommand::Baseline(a) => baseline(a),
    }
}

fn ls(a: &LsArgs) -> Result<i32, Exit> {
    let (mut store, filter) = open(&a.select)?;
    let (text, runs) = herd_history::list(&mut store, &filter).map_err(store_err)?;
    print!("{text}");
    if let Some(path) = &a.select.json {
        write_json(path, &runs)?;
    }
    Ok(exit::OK)
}

fn show(a: &ShowArgs) -> Result<i32, Exit> {
    let (mut store, _) = crate::store_cmd::open(a.store.as_deref())?;
    let r = store.run(a.id).map_err(store_err)?;
    let format = format_for(None, a.output.as_deref());
    let out = herd_report::output::run_report(&r, format);
    if let Some(path) = &a.json {
        herd_result::write_json_file(&r, path).map_err(Exit::bad_input)?;
    }
    emit(&out, format, a.output.as_deref())?;
    Ok(exit::OK)
}

fn baseline(a: &BaselineArgs) -> Result<i32, Exit> {
    let BaselineCommand::Set(a) = &a.command;
    let (mut store, at) = crate::store_cmd::open(a.store.as_deref())?;
    let said = herd_history::set_baseline(&mut store, &at, a.id, &a.labels).map_err(store_err)?;
    println!("{said}");
    Ok(exit::OK)
}

fn trend(a: &TrendArgs) -> Result<i32, Exit> {
    let name = a.name.clone().unwrap_or_default();
    for m in &a.metric {
        herd_history::check_metric(m).map_err(store_err)?;
    }
    let (mut store, filter) = open(&a.select)?;
    let t = Trend::ask(&mut store, &filter, &a.metric, &name).map_err(store_err)?;
    print!("{}", t.text());
    if let Some(path) = &a.select.json {
        write_json(path, &t.json())?;
    }
    if let Some(path) = &a.output {
        t.write_page(&mut store, path).map_err(store_err)?;
    }
    Ok(exit::OK)
}

fn detect(a: &DetectArgs) -> Result<i32, Exit> {
    let name = a.name.clone().unwrap_or_default();
    herd_history::check_metric(&a.metric).map_err(store_err)?;
    let (mut store, filter) = open(&a.select)?;
    let c = Changes::ask(&mut store, &filter, &a.metric, &name, a.seed).map_err(store_err)?;
    print!("{}", c.text());
    if let Some(path) = &a.select.json {
        write_json(path, &c.json())?;
    }
    Ok(exit::OK)
}
