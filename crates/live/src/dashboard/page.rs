//! The page around the view: the report's stylesheet and the dashboard's own, the report's
//! hover script (each chart's value at the hovered second), and, while a run is live, a script
//! that swaps the view in at each event. Nothing is fetched from elsewhere.

const STYLE: &str = include_str!("dashboard.css");
const SCRIPT: &str = include_str!("dashboard.js");

/// The page with `fragment` as its view. `live`: served by a running herd (the script follows
/// the events); `control`: the page has a button that stops the run.
pub fn page(fragment: &str, live: bool, control: bool) -> String {
    let button = if control {
        "<button id=\"stop\" type=\"button\">Stop the run</button>"
    } else {
        ""
    };
    // The report's hover script, run again whenever the live script swaps the charts in.
    let hover = herd_report::html::hover_script();
    let follow = if live { SCRIPT } else { "herdHover();\n" };
    let script = format!("<script>\nfunction herdHover() {{\n{hover}}}\n{follow}</script>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"herd {}\">\n<title>herd dashboard</title>\n\
         <style>\n{}{STYLE}</style>\n</head>\n<body data-live=\"{live}\">\n<main>\n\
         <header><h1>herd dashboard</h1>{button}\
         <p id=\"final\" hidden><a id=\"report-link\" download=\"herd-report.html\">\
         Save the final report (HTML)</a></p></header>\n\
         <div id=\"view\">\n{fragment}</div>\n</main>\n{script}</body>\n</html>\n",
        herd_result::HERD_VERSION,
        herd_report::html::stylesheet(),
    )
}
