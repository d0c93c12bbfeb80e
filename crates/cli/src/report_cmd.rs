//! `herd report FILE`: a stored result as text, a self-contained HTML page, or a PDF.

use crate::exit::{self, Exit};
use crate::report_format::{emit, format_for, Format};
use herd_args::report::ReportArgs;
use herd_report::html;
use herd_report::output::run_report;
use herd_result::{read_document, Document};

pub fn cmd(a: &ReportArgs) -> Result<i32, Exit> {
    let format = format_for(a.format, a.output.as_deref());
    if format == Format::Pdf && a.output.is_none() {
        return Err(Exit::bad_input(
            "--format pdf needs a file to write: add -o report.pdf",
        ));
    }
    if let Some(logs) = crate::logs_cmd::read_logs_json(&a.file) {
        let out = match format {
            Format::Text => herd_logs::text::render(&logs?, 15),
            Format::Html | Format::Pdf => herd_logs::html::render(&logs?),
        };
        emit(&out, format, a.output.as_deref())?;
        return Ok(exit::OK);
    }
    if let Some(view) = herd_live::dashboard::recording::read(&a.file)
        .map_err(|e| Exit::bad_input(e.to_string()))?
    {
        return recording(a, &view, format);
    }
    let doc = read_document(&a.file).map_err(|e| Exit::bad_input(e.to_string()))?;
    let out = match (format, &doc) {
        (Format::Text, Document::Run(r)) => run_report(r, format),
        (Format::Text, doc) => {
            let kind = doc.kind();
            return Err(Exit::bad_input(format!(
                "{} is a `{kind}` result: its report is a page of curves, write it with -o {kind}.html",
                a.file.display()
            )));
        }
        (Format::Html | Format::Pdf, doc) => html::render_document(doc),
    };
    emit(&out, format, a.output.as_deref())?;
    Ok(exit::OK)
}

/// A recording (`herd run --record`): its dashboard page, or the text summary of its result.
fn recording(
    a: &ReportArgs,
    view: &herd_live::dashboard::View,
    format: Format,
) -> Result<i32, Exit> {
    let out = match (format, view.end()) {
        (Format::Text, Some(r)) => run_report(r, format),
        (Format::Text, None) if view.series().is_some() => {
            return Err(Exit::bad_input(format!(
                "{} is a recording of a series of runs: its report is the dashboard's page, write it with -o dashboard.html (the series' own report: herd report on its --json)",
                a.file.display()
            )))
        }
        (Format::Text, None) => {
            return Err(Exit::bad_input(format!(
                "{} is a recording cut short before its run ended: its report is the dashboard's page, write it with -o dashboard.html",
                a.file.display()
            )))
        }
        (Format::Html | Format::Pdf, _) => herd_live::dashboard::static_page(
            view,
            &format!("Made from the recording {}.", a.file.display()),
        ),
    };
    emit(&out, format, a.output.as_deref())?;
    Ok(exit::OK)
}
