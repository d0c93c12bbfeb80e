//! The layout the text summary's sections share: a column of labels, counted nouns.

use crate::format::count;
use std::fmt::{self, Write};

/// One labelled line; the labels form a column so the numbers line up.
pub(crate) fn line(out: &mut impl Write, label: &str, body: &str) -> fmt::Result {
    writeln!(out, "  {label:<10} {body}")
}

pub(crate) fn plural(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", count(n), if n == 1 { "" } else { "s" })
}
