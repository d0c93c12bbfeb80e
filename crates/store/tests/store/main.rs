//! herd-store against real databases: SQLite files in temporary directories and a
//! PostgreSQL cluster each test starts itself (skipped, saying so, only when PostgreSQL's
//! binaries are absent).

mod common;
mod detect;
mod merge;
mod postgres;
mod sqlite;
