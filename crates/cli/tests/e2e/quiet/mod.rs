//! The end-to-end tests that put no load on the machine: they render stored results (in a real
//! browser too), check help and messages, and render and validate files. None sends requests
//! to a server, none times anything, and each writes only its own temporary directory, so
//! scripts/check runs them in parallel (`cargo test --test e2e -- quiet::`) before the load
//! tests, which run one at a time (`-- --skip quiet:: --test-threads=1`). A test that runs
//! `herd run`, `sweep`, `capacity`, `replay`, `proxy` or a server belongs outside this module.

pub(crate) mod browser;
mod help;
pub(crate) mod k8s;
mod k8s_secrets;
mod reading;
