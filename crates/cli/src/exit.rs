//! The documented exit codes (k6's `exitcodes`): scripts branch on these, so they never change;
//! `--help` tells them in herd-args' words (`herd_args::codes`).

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
/// Nothing answered: no request got a response (every connection refused, reset or timed out,
/// or nothing was sent). The run measured no server, so a CI job must not read it as a pass.
pub const NO_RESPONSE: i32 = 6;
/// `--start-at`: the instance was ready after the start instant (and `--late fail`): it sent
/// nothing, and `herd merge` reports its shard missing. Kubernetes manifests fail the index on it.
pub const LATE_START: i32 = 7;
/// `herd capacity` found that no level it tried meets the SLO: even the lowest broke it.
pub const SLO_UNMET: i32 = 8;
/// `herd merge` / `herd k8s collect`: a shard is missing; the merged numbers cover only the
/// shards present (nothing is scaled up), so a CI job must not read them as the whole load.
pub const PARTIAL: i32 = 9;
/// Interrupted (Ctrl-C); what was measured was still reported and saved.
pub const INTERRUPTED: i32 = 130;

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

impl From<herd_run::RunError> for Exit {
    /// Nothing was sent: bad input, herd could not start, a shard was ready too late, or
    /// Ctrl-C came first.
    fn from(e: herd_run::RunError) -> Self {
        use herd_run::RunError;
        let code = match &e {
            RunError::Late(_) => LATE_START,
            RunError::Interrupted(_) => INTERRUPTED,
            RunError::Invalid(_) | RunError::Start(_) => return Exit::bad_input(e.to_string()),
        };
        Exit {
            code,
            message: e.to_string(),
        }
    }
}

/// The exit code of how a command ended: the one place a conclusion becomes a code.
pub fn code(c: herd_run::Conclusion) -> i32 {
    use herd_run::Conclusion;
    match c {
        Conclusion::Ok | Conclusion::NoShare => OK,
        Conclusion::ThresholdsFailed => THRESHOLDS_FAILED,
        Conclusion::GeneratorLimited => GENERATOR_LIMITED,
        Conclusion::NothingAnswered => NO_RESPONSE,
        Conclusion::Interrupted => INTERRUPTED,
        Conclusion::Partial => PARTIAL,
        Conclusion::Undecided => UNDECIDED,
        Conclusion::SloUnmet => SLO_UNMET,
    }
}
