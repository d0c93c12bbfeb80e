//! Reports of real results: HTML pages of runs, sweeps and comparisons, the comparison's
//! verdict, and reading results herd can and cannot show. The fixtures under `tests/fixtures`
//! were written by `herd run --json` against `herd serve` (see tests/fixtures/README.md).

mod compare;
mod documents;
mod fixtures;
mod html;
mod series;
