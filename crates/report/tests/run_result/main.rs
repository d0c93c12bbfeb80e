//! The run result end to end: built from recorded outcomes, checked against the schema, stored
//! and read back, and rendered as text.

mod build;
mod fixture;
mod json;
mod schema;
mod server;
mod text;
