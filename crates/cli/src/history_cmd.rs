//! `herd history ls|show|trend|detect|baseline`: questions answered from a store of runs
//! (herd-store). Arguments, tables and files only; the answers are the store's.

use crate::exit::{self, Exit};
use crate::history_select::{self, labels_text, store_err, write_json};
use crate::history_trend;
use crate::report_format::{emit, format_for, Format};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// List stored runs, oldest first
    Ls(LsArgs),
    /// One stored run, as `herd report` shows a result (-o run.html for its page)
    Show(ShowArgs),
    /// A metric over the runs, as a table, or a chart page with -o trend.html
    Trend(history_trend::TrendArgs),
    /// The runs where a metric's level changed (E-Divisive means, a permutation test, and the
    /// runs' own noise), each named with its labels
    Detect(history_trend::DetectArgs),
    /// Pin a run as the baseline `herd compare --baseline` compares with
    Baseline(BaselineArgs),
}

#[derive(Args, Debug)]
pub struct LsArgs {
    #[command(flatten)]
    pub select: history_select::Select,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The run's id (`herd history ls`)
    pub id: i64,
    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Write the report to this file (.html, .pdf, .txt)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the run's result as JSON (`herd run --json`'s format)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub command: BaselineCommand,
}

#[derive(Subcommand, Debug)]
pub enum BaselineCommand {
    /// Pin run ID as the baseline of the runs with these labels
    Set(BaselineSetArgs),
}

#[derive(Args, Debug)]
pub struct BaselineSetArgs {
    /// The run's id (`herd history ls`)
    pub id: i64,
    /// The labels it is the baseline for (`herd compare --baseline 'KEY=VALUE'`); none: any run
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

pub fn cmd(a: &HistoryArgs) -> Result<i32, Exit> {
    match &a.command {
        HistoryCommand::Ls(a) => ls(a),
        HistoryCommand::Show(a) => show(a),
        HistoryCommand::Trend(a) => history_trend::trend(a),
        HistoryCommand::Detect(a) => history_trend::detect(a),
        HistoryCommand::Baseline(a) => baseline(a),
    }
}

fn ls(a: &LsArgs) -> Result<i32, Exit> {
    let (mut store, filter) = a.select.open()?;
    let runs = store.list(&filter).map_err(store_err)?;
    let mut out = format!(
        "{:>6}  {:<24}  {:<28}  {:<16}  labels\n",
        "id", "started", "target", "workload hash"
    );
    for r in &runs {
        out.push_str(&format!(
            "{:>6}  {:<24}  {:<28}  {:<16}  {}\n",
            r.id,
            r.started_at,
            r.target,
            r.workload_hash,
            labels_text(r)
        ));
    }
    out.push_str(&format!(
        "{} run{}\n",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    ));
    print!("{out}");
    if let Some(path) = &a.select.json {
        write_json(path, &runs)?;
    }
    Ok(exit::OK)
}

fn show(a: &ShowArgs) -> Result<i32, Exit> {
    let (mut store, _) = crate::store_cmd::open(a.store.as_deref())?;
    let r = store.run(a.id).map_err(store_err)?;
    let format = format_for(None, a.output.as_deref());
    let out = match format {
        Format::Text => {
            let mut text = String::new();
            let _ = herd_report::render_text(&r, &mut text);
            text
        }
        Format::Html | Format::Pdf => herd_report::html::render_run(&r),
    };
    if let Some(path) = &a.json {
        let mut buf = Vec::new();
        herd_result::write_json(&r, &mut buf).map_err(|e| Exit::bad_input(e.to_string()))?;
        crate::sweep::write_file(path, &buf)?;
    }
    emit(&out, format, a.output.as_deref())?;
    Ok(exit::OK)
}

fn baseline(a: &BaselineArgs) -> Result<i32, Exit> {
    let BaselineCommand::Set(a) = &a.command;
    let (mut store, at) = crate::store_cmd::open(a.store.as_deref())?;
    let selector = a.labels.join(",");
    store.set_baseline(&selector, a.id).map_err(store_err)?;
    let canonical = herd_store::canonical(&selector).map_err(store_err)?;
    println!(
        "run #{} is the baseline of {} in {at}",
        a.id,
        if canonical.is_empty() {
            "every run".to_owned()
        } else {
            format!("runs labelled {canonical}")
        }
    );
    Ok(exit::OK)
}
