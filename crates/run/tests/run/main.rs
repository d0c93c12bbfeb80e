//! herd-run's tests, one test binary (ripgrep's layout), as every crate's: a spec prepared, a
//! prepared run against the mock server, and how a run's end is concluded (`run`).

mod run;
