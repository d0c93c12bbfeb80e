//! The documented exit codes (k6's `exitcodes`): scripts branch on these, so they never change.

/// The run completed (whatever the server answered).
pub const OK: i32 = 0;
/// Bad input or herd cannot start (flags, files, URL, limits); nothing was sent.
pub const BAD_INPUT: i32 = 2;
/// The run completed but a threshold failed; or `herd compare` found a regression.
pub const THRESHOLDS_FAILED: i32 = 3;
/// The measurement is invalid: herd itself, not the server, was the bottleneck.
pub const GENERATOR_LIMITED: i32 = 4;
/// `herd capacity` could not decide: the results were too noisy, the SLO never broke, even the
/// longest probe had too few requests to judge, or the probe budget ran out. No number was
/// printed.
pub const UNDECIDED: i32 = 5;
/// `herd capacity` found that no level it tried meets the SLO: even the lowest broke it.
pub const SLO_UNMET: i32 = 6;
/// Interrupted (Ctrl-C); what was measured was still reported and saved.
pub const INTERRUPTED: i32 = 130;

pub const HELP: &str = "\
Exit codes:
  0    the run completed (errors from the server are data, not a failure)
  2    bad input or cannot start (nothing was sent)
  3    a threshold failed, or `herd compare` found a regression
  4    measurement invalid: herd itself was the bottleneck
  5    herd capacity could not decide (noisy results, SLO never broke, too few requests,
       out of probes)
  6    herd capacity: no level tried meets the SLO, not even the lowest
  130  interrupted (Ctrl-C); the summary and JSON are still written";

/// An error that already carries its exit code and a message for the user.
#[derive(Debug)]
pub struct Exit {
    pub code: i32,
    pub message: String,
}

impl Exit {
    pub fn bad_input(message: impl Into<String>) -> Self {
        Exit {
            code: BAD_INPUT,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}
