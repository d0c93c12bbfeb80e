//! Reports of real results: HTML pages of runs, sweeps, capacity searches and comparisons, the
//! comparison's verdict, and reading results herd can and cannot show. The fixtures under
//! `tests/fixtures` were written by herd against `herd serve` and nginx (see
//! tests/fixtures/README.md).

mod compare;
mod documents;
mod fixtures;
mod html;
mod schemas;
mod series;
mod versions;
mod watched;
