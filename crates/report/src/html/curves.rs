//! What the pages of series of runs share (a sweep, a capacity search): the verdict box with
//! its answer in words, and how a step's generator verdict reads in a table.

use super::page::esc;
use std::fmt::Write;

/// A chip under the verdict: `class` is `ok`, `warn`, `bad` or empty.
pub struct Chip {
    pub class: &'static str,
    pub text: String,
}

pub fn chip(class: &'static str, text: impl Into<String>) -> Chip {
    Chip {
        class,
        text: text.into(),
    }
}

/// The verdict box: a word, the answer in sentences, chips, and details.
pub fn verdict(
    class: &str,
    word: &str,
    answer: &[String],
    chips: &[Chip],
    details: &[String],
) -> String {
    let mut out = format!(
        "<section id=\"verdict\" class=\"verdict {class}\"><div class=\"word\">{}</div>",
        esc(word)
    );
    for line in answer {
        let _ = write!(out, "<p class=\"answer\">{}</p>", esc(line));
    }
    out.push_str("<div class=\"chips\">");
    for c in chips {
        let _ = write!(
            out,
            "<span class=\"chip {}\">{}</span>",
            c.class,
            esc(&c.text)
        );
    }
    out.push_str("</div>");
    if !details.is_empty() {
        out.push_str("<ul>");
        for d in details {
            let _ = write!(out, "<li>{}</li>", esc(d));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
    out
}

/// How a step's generator verdict reads in a table cell: `ok`, or a warning with the reasons
/// on hover.
pub fn generator_cell(limited: bool, reasons: &[String], what: &str) -> String {
    if limited {
        format!(
            "<span class=\"limited\" title=\"{}\">LIMITED: herd, not the {what}</span>",
            esc(&reasons.join("; "))
        )
    } else {
        "ok".to_owned()
    }
}
