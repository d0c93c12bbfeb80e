//! The monitor crate's tests, one test binary (ripgrep's layout): the /proc sampler against real
//! processes this binary starts (itself again, in a child role), and the Prometheus scraper
//! against a real node_exporter.

mod process;
mod prometheus;
