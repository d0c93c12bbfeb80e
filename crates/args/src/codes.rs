//! The exit codes as `--help` tells them (k6's `exitcodes`); the CLI's `exit.rs` holds their
//! numbers and picks one as a command ends.

pub const HELP: &str = "\
Exit codes:
  0    the run completed (errors from the server are data, not a failure; a run whose every
       response was 4xx/5xx says so in a WARNING line and the JSON's `warnings`)
  2    bad input or cannot start (nothing was sent)
  3    a threshold failed, or `herd compare` found a regression
  4    measurement invalid: herd itself was the bottleneck
  5    herd capacity could not decide (noisy results, SLO never broke, too few requests,
       out of probes)
  6    nothing answered: no request got a response (refused, reset, timed out, or none sent)
  7    --start-at: ready after the start instant, nothing sent (--late skip plays the rest)
  8    herd capacity: no level tried meets the SLO, not even the lowest
  9    herd merge / k8s collect: a shard is missing (the numbers cover only those merged)
  130  interrupted (Ctrl-C); the summary and JSON are still written";

/// `herd run`'s codes: a run is never undecided, never short of an SLO, never a merge (5, 8, 9).
pub const RUN_HELP: &str = "\
Exit codes:
  0    the run completed (errors from the server are data, not a failure; a run whose every
       response was 4xx/5xx says so in a WARNING line and the JSON's `warnings`)
  2    bad input or cannot start (nothing was sent)
  3    a threshold failed
  4    measurement invalid: herd itself was the bottleneck
  6    nothing answered: no request got a response (refused, reset, timed out, or none sent)
  7    --start-at: ready after the start instant, nothing sent (--late skip plays the rest)
  130  interrupted (Ctrl-C); the summary and JSON are still written";

/// `herd compare`'s codes: it sends nothing, so run's 4 and 130 never apply.
pub const COMPARE_HELP: &str = "\
Exit codes:
  0    no key metric regressed (changes within --threshold or within noise)
  2    bad input: a file cannot be read (cut short, not JSON, not a herd run, another herd
       series, a damaged histogram: the message says which) or an output cannot be written
  3    a key metric (throughput, error rate, latency p50/p90/p99) regressed beyond --threshold
       and beyond noise";
