//! herd-result's tests, one binary: the run result built from recorded outcomes, checked
//! against its schema, stored and read back; results real runs wrote (`tests/fixtures`, written
//! by herd against `herd serve` and nginx, see tests/fixtures/README.md) read as what they are
//! and checked against the sweep and capacity schemas; autobench's table and the knee rule.

mod build;
mod documents;
mod fixture;
mod fixtures;
mod json;
mod schema;
mod schemas;
mod server;
mod short_steps;
mod streams;
mod table;
