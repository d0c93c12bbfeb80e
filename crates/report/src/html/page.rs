//! The page around the sections: one self-contained HTML file with its stylesheet (screen and
//! print) and the small hover script inline, so it opens anywhere with no network.

use std::fmt::Write;

pub(crate) const STYLE: &str = include_str!("report.css");
pub(crate) const SCRIPT: &str = include_str!("hover.js");

/// A report page being written: sections in order, then [`Page::finish`].
pub struct Page {
    body: String,
    title: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page {
            body: String::new(),
            title: title.to_owned(),
        }
    }

    /// Appends raw HTML (already escaped where it needs to be).
    pub fn push(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// A `<section>` with a heading; `id` names it for links and tests.
    pub fn section(&mut self, id: &str, heading: &str, inner: &str) {
        let _ = writeln!(
            self.body,
            "<section id=\"{id}\"><h2>{}</h2>{inner}</section>",
            esc(heading)
        );
    }

    pub fn finish(self, footer: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"herd {}\">\n<title>{}</title>\n\
             <style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n{}<footer>{}</footer>\n</main>\n\
             <script>\n{SCRIPT}</script>\n</body>\n</html>\n",
            crate::HERD_VERSION,
            esc(&self.title),
            self.body,
            footer
        )
    }
}

/// Escapes text for HTML element content and double-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A table from a header row and body rows of already-escaped cells; `numeric` right-aligns
/// every column after the first.
pub fn table(class: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = format!("<table class=\"{class}\"><thead><tr>");
    for h in header {
        let _ = write!(t, "<th>{}</th>", esc(h));
    }
    t.push_str("</tr></thead><tbody>");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            let _ = write!(t, "<td>{c}</td>");
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table>");
    t
}

/// A definition list of label/value pairs (values already escaped).
pub fn facts(pairs: &[(&str, String)]) -> String {
    let mut s = String::from("<dl class=\"facts\">");
    for (k, v) in pairs {
        let _ = write!(s, "<div><dt>{}</dt><dd>{v}</dd></div>", esc(k));
    }
    s.push_str("</dl>");
    s
}

/// The footer every report carries.
pub fn footer(source: &str) -> String {
    format!(
        "Made by herd {} from {}. Self-contained: no network is used to view or print this page.",
        crate::HERD_VERSION,
        esc(source)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_html_needs() {
        assert_eq!(
            esc(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn a_page_is_self_contained() {
        let mut p = Page::new("t <1>");
        p.section("s", "Heading", "<p>x</p>");
        let html = p.finish("f");
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>t &lt;1&gt;</title>"));
        assert!(html.contains("@media print"));
        for external in ["src=\"http", "href=\"http", "@import", "url(http"] {
            assert!(!html.contains(external), "{external}");
        }
    }
}
