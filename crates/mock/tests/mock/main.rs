//! The mock server's tests, one test binary (ripgrep's layout): HTTP/1.1 as a client sees it,
//! routes and their spec language, faults, auth, its lifecycle, garbage input. `common` holds
//! the plain blocking client they share and `common::alone` for the tests that look at the
//! whole process.

mod common;

mod auth;
mod events;
mod faults;
mod garbage_input;
mod h2;
mod http;
mod lifecycle;
mod route_spec;
mod shutdown;
