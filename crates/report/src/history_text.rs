//! `herd history`'s answers as text: a table of columns aligned to their widest cell, and a
//! change point in one phrase. Plain data in, so the report needs nothing of the store.

/// The rows under the header, each column as wide as its widest cell, two spaces apart, no
/// trailing space.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s: String = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}  "))
            .collect();
        s.truncate(s.trim_end().len());
        s + "\n"
    };
    let mut out = line(header);
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// A metric's change: `p99 +20.0% (10.000 -> 12.000), confidence 99.0%` (`size` and
/// `confidence` as fractions).
pub fn change(metric: &str, size: f64, before: f64, after: f64, confidence: f64) -> String {
    format!(
        "{metric} {:+.1}% ({before:.3} -> {after:.3}), confidence {:.1}%",
        size * 100.0,
        confidence * 100.0
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up_under_their_widest_cell() {
        let header = vec!["id".to_owned(), "p99".to_owned()];
        let rows = vec![vec!["12".to_owned(), "1.500".to_owned()]];
        assert_eq!(super::table(&header, &rows), "id  p99\n12  1.500\n");
        assert_eq!(
            super::change("p99", 0.2, 10.0, 12.0, 0.99),
            "p99 +20.0% (10.000 -> 12.000), confidence 99.0%"
        );
    }
}
