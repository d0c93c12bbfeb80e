//! The logs crate's tests, one test binary (ripgrep's layout), as every crate's: reading logs
//! as users have them (`read`); the hand-written ones are in `tests/fixtures`.

mod read;
