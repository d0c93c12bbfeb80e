//! herd-compare's tests, one binary: the version policy of every result file, the comparison's
//! included, against comparisons of real runs (the rendered comparison is tested in
//! herd-report).

mod asked;
mod drain;
#[path = "../../../result/tests/result/fixtures.rs"]
mod fixtures;
mod versions;
