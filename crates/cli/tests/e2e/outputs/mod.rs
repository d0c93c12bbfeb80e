//! herd run's outputs, each read by the tool its users read it with: the JSON written as the run
//! goes (a `kill -9` mid-run, then `herd report` and `herd compare`), the HdrHistogram log (the
//! Python `hdrhistogram` package), JUnit (Python's `junitparser`), CSV and Markdown.

mod every_command;
mod files;
mod killed;
mod metrics_doc;
pub(crate) mod otlp;
mod prometheus;
pub(crate) mod requests_log;
