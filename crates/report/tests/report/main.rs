//! herd-report's tests, one binary: what people read, rendered from real results (the fixtures
//! under crates/result/tests/fixtures were written by herd against `herd serve` and nginx, see
//! their README.md): the text summary, HTML pages of runs, sweeps, capacity searches and
//! comparisons, and plots.

#[path = "../../../result/tests/result/fixture.rs"]
mod fixture;
#[path = "../../../result/tests/result/fixtures.rs"]
mod fixtures;

mod compare;
mod html;
#[cfg(feature = "png")]
mod plot;
mod series;
mod server_text;
mod text;
mod watched;
