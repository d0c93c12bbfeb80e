//! The load flags every command that sends load shares (`-c`, `--rate`, `-d`, `-n`, `--timeout`,
//! `-t`...), declared once in `herd run`'s words. A command that says a flag otherwise, or gives
//! it another default, has a row in a table of its own (`REPLAY`, `DEMO`, `SERIES`, `GRPC`), applied to
//! clap's declaration (`mut_args`): data, not a second copy of the flags.

use clap::{Arg, Args};
use herd_run::LoadFlags;
use std::time::Duration;

/// The load of one run: its level and its length, and what every run takes alike
/// ([`PerRunArgs`]). `herd run`, `herd replay` and `herd demo` take it.
#[derive(Args, Debug, Clone, Default)]
pub struct LoadArgs {
    /// Closed model: concurrent connections, each sending its next request when the last one
    /// answered. With --rate: the cap on connections, opened as the schedule needs them
    /// [default: 10, or 1000 with --rate]
    #[arg(short = 'c', long = "connections", value_name = "N", value_parser = crate::values::count::<u64>)]
    pub connections: Option<u64>,

    /// Open model: requests per second on a fixed schedule, whatever the server does; latency is
    /// measured from each request's intended send time
    #[arg(long, value_name = "R", value_parser = crate::values::rate)]
    pub rate: Option<f64>,

    /// How long to measure, e.g. 30s, 5m, 1h (after the warm-up) [default: 10s unless -n]
    #[arg(short = 'd', long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,

    /// Stop after this many requests (after the warm-up)
    #[arg(short = 'n', long = "requests", value_name = "N", value_parser = crate::values::count::<u64>)]
    pub requests: Option<u64>,

    /// HTTP/1.1 pipelining: keep up to K requests in flight on each connection, each response
    /// timed against its own request; -c connections then carry -c x K requests, refilled three
    /// quarters of a window at a time (nearly wrk's batches; the open model sends each when due)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub pipeline: Option<u16>,

    /// With --pipeline: pipeline methods that are not idempotent (POST, PATCH) too, which HTTP
    /// advises against
    #[arg(long = "pipeline-any-method", requires = "pipeline")]
    pub pipeline_any_method: bool,

    #[command(flatten)]
    pub per_run: PerRunArgs,
}

/// What every run of a command takes alike, a series' every step too: the arrivals' spacing,
/// connection reuse, the deadline, the warm-up and the threads.
#[derive(Args, Debug, Clone, Default)]
pub struct PerRunArgs {
    /// With --rate: how arrivals are spaced: constant (evenly), poisson (exponential gaps, a
    /// Poisson process: many independent visitors) or uniform (gaps uniform on [0, 2/R]);
    /// httperf's --period d|e|u [default: constant]
    #[arg(long, value_name = "PROCESS", value_parser = crate::values::arrivals)]
    pub arrivals: Option<herd_engine::Process>,

    /// What poisson or uniform arrivals are drawn from: the same seed sends at the same
    /// instants, on one machine or split into shards [default: 1]
    #[arg(long, value_name = "N", value_parser = crate::values::count::<u64>)]
    pub seed: Option<u64>,

    /// Requests per connection before it is replaced (httperf's --num-calls); 1 = a new
    /// connection per request [default: unlimited keep-alive]
    #[arg(long = "calls-per-conn", value_name = "K", value_parser = crate::values::count::<u64>)]
    pub calls_per_conn: Option<u64>,

    /// Per-request deadline, connect included: a stalled request ends as a timeout and its
    /// connection is replaced; wins over a workload file's `defaults: timeout` [default: 10s]
    #[arg(long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,

    /// Run this long first, measured but excluded from the results (start-up effects); wins
    /// over a workload file's `load: warmup` [default: 0s]
    #[arg(long, value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub warmup: Option<Duration>,

    /// Worker threads, each with its own event loop [default: one per core]
    #[arg(short = 't', long, value_name = "N", value_parser = crate::values::count::<usize>)]
    pub threads: Option<usize>,
}

impl LoadArgs {
    /// The load as herd-run reads it.
    pub fn flags(&self) -> LoadFlags {
        LoadFlags {
            connections: self.connections,
            rate: self.rate,
            duration: self.duration,
            requests: self.requests,
            pipeline: self.pipeline.map(|depth| herd_run::Pipeline {
                depth: depth as usize,
                any_method: self.pipeline_any_method,
            }),
            ..self.per_run.flags()
        }
    }
}

impl PerRunArgs {
    /// These flags as herd-run reads them, with no level or length.
    pub fn flags(&self) -> LoadFlags {
        LoadFlags {
            calls_per_conn: self.calls_per_conn,
            timeout: self.timeout,
            warmup: self.warmup,
            threads: self.threads,
            arrivals: self.arrivals,
            seed: self.seed,
            ..LoadFlags::default()
        }
    }
}

/// A flag a command says otherwise than `herd run`: by its id (the field's name), its words,
/// and the default, alias, spelling and visibility it has there.
struct Said {
    id: &'static str,
    help: &'static str,
    default: Option<&'static str>,
    alias: Option<&'static str>,
    /// Another long name (ghz's `--total` for `-n/--requests`).
    long: Option<&'static str>,
    /// Another short letter, or none (`Some(None)`): ghz's `-z` for `-d/--duration`.
    short: Option<Option<char>>,
    /// Taken but not listed: a flag the command refuses with a reason (gRPC's `--pipeline`).
    hide: bool,
}

const fn said(id: &'static str, help: &'static str) -> Said {
    Said {
        id,
        help,
        default: None,
        alias: None,
        long: None,
        short: None,
        hide: false,
    }
}

const fn with_default(id: &'static str, help: &'static str, default: &'static str) -> Said {
    Said {
        default: Some(default),
        ..said(id, help)
    }
}

/// `id` spelled `--long` and `-short` (none: `None`), as another tool spells it.
const fn spelled(
    id: &'static str,
    help: &'static str,
    long: Option<&'static str>,
    short: Option<char>,
) -> Said {
    Said {
        long,
        short: Some(short),
        ..said(id, help)
    }
}

/// `herd replay`: the log says the rate and the length; these flags bend it.
const REPLAY: &[Said] = &[
    said(
        "rate",
        "Ignore the log's timing: send its requests at this many per second",
    ),
    said("duration", "With --loop: how long to play"),
    with_default(
        "connections",
        "Most connections open at once (arrivals that find none free wait, then are dropped)",
        "1000",
    ),
    with_default("threads", "Worker threads", "1"),
    said(
        "timeout",
        "Per-request deadline, connect included [default: 10s]",
    ),
    said("insecure", "Do not verify TLS certificates"),
];

/// `herd demo`: a short open-model run against the mock server, with nothing to give.
const DEMO: &[Said] = &[
    with_default("duration", "How long to load the mock server", "5s"),
    with_default("rate", "Arrivals per second", "2000"),
    with_default(
        "connections",
        "The most connections the arrivals may open",
        "200",
    ),
    with_default("timeout", "Per-request deadline, connect included", "5s"),
    with_default("threads", "Worker threads", "1"),
];

/// `herd sweep` and `herd capacity`: each step's or probe's run.
const SERIES: &[Said] = &[
    said(
        "timeout",
        "Per-request deadline, connect included (autobench's --timeout); wins over a workload \
         file's `defaults: timeout` [default: 10s]",
    ),
    Said {
        alias: Some("num-calls"),
        ..said(
            "calls_per_conn",
            "Requests per connection before it is replaced (httperf's --num-calls) [default: \
             keep-alive]",
        )
    },
    said(
        "warmup",
        "Run this long before each measurement, excluded from it [default: 0s]",
    ),
    said(
        "arrivals",
        "Open model: how each step's arrivals are spaced around its rate: constant, poisson or \
         uniform, as `herd run --arrivals` [default: constant]",
    ),
    said(
        "seed",
        "What poisson or uniform arrivals are drawn from, as `herd run --seed` [default: 1]",
    ),
];

/// `herd grpc`: ghz's spellings and defaults (`-z` how long, `-n/--total`, `-r/--rps`, `-t` the
/// timeout; `-c` is ghz's calls in flight, `--connections` the HTTP/2 connections they share).
const GRPC: &[Said] = &[
    spelled(
        "connections",
        "HTTP/2 connections the calls share [default: 1]",
        None,
        None,
    ),
    spelled(
        "duration",
        "How long to call, e.g. 10s, 1m; -n is then ignored, as in ghz",
        None,
        Some('z'),
    ),
    spelled(
        "requests",
        "Calls to make [default: 200, unless -z]",
        Some("total"),
        Some('n'),
    ),
    Said {
        alias: Some("rate"),
        ..spelled(
            "rate",
            "Open model: calls per second on a fixed schedule, latency from each call's \
             intended send (no coordinated omission)",
            Some("rps"),
            Some('r'),
        )
    },
    spelled(
        "timeout",
        "How long herd waits for a call before counting it a timeout [default: 20s]",
        None,
        Some('t'),
    ),
    spelled(
        "threads",
        "Worker threads, each with its own event loop [default: one per core]",
        None,
        None,
    ),
    Said {
        alias: Some("skip-tls"),
        ..spelled(
            "insecure",
            "TLS without verifying the server's certificate (ghz's --skipTLS)",
            Some("skipTLS"),
            Some('k'),
        )
    },
    // HTTP/1.1's: herd-run refuses them over HTTP/2, with why.
    Said {
        hide: true,
        ..said("pipeline", "HTTP/1.1 pipelining (refused: gRPC is HTTP/2)")
    },
    Said {
        hide: true,
        ..said(
            "pipeline_any_method",
            "With --pipeline: pipeline methods that are not idempotent",
        )
    },
];

fn apply(table: &[Said], arg: Arg) -> Arg {
    let Some(s) = table.iter().find(|s| arg.get_id() == s.id) else {
        return arg;
    };
    let mut arg = arg.help(s.help).long_help(None::<&str>);
    if let Some(d) = s.default {
        arg = arg.default_value(d);
    }
    if let Some(a) = s.alias {
        arg = arg.visible_alias(a);
    }
    if let Some(long) = s.long {
        arg = arg.long(long);
    }
    if let Some(short) = s.short {
        arg = arg.short(short);
    }
    arg.hide(s.hide)
}

/// `herd replay`'s load flags (clap's `mut_args`).
pub fn replay(arg: Arg) -> Arg {
    apply(REPLAY, arg)
}

/// `herd demo`'s load flags (clap's `mut_args`).
pub fn demo(arg: Arg) -> Arg {
    apply(DEMO, arg)
}

/// `herd sweep`'s and `herd capacity`'s per-run flags (clap's `mut_args`).
pub fn series(arg: Arg) -> Arg {
    apply(SERIES, arg)
}

/// `herd grpc`'s load and reach flags, in ghz's words (clap's `mut_args`).
pub fn grpc(arg: Arg) -> Arg {
    apply(GRPC, arg)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every row names a flag its command has: a renamed field would leave a row that says
    /// nothing.
    #[test]
    fn every_flag_said_otherwise_exists_and_takes_its_words() {
        let mut cli = crate::Cli::command();
        cli.build();
        for (command, table) in [
            ("replay", super::REPLAY),
            ("demo", super::DEMO),
            ("sweep", super::SERIES),
            ("capacity", super::SERIES),
            ("grpc", super::GRPC),
        ] {
            let sub = cli.find_subcommand(command).expect(command);
            for s in table {
                let arg = sub
                    .get_arguments()
                    .find(|a| a.get_id() == s.id)
                    .unwrap_or_else(|| panic!("herd {command} has no {}", s.id));
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                assert_eq!(help, s.help, "herd {command} {}", s.id);
                if let Some(d) = s.default {
                    let given = arg.get_default_values().first().and_then(|v| v.to_str());
                    assert_eq!(given, Some(d), "herd {command} {}", s.id);
                }
                if let Some(alias) = s.alias {
                    let aliases = arg.get_visible_aliases().unwrap_or_default();
                    assert!(aliases.contains(&alias), "herd {command} {}", s.id);
                }
                if let Some(long) = s.long {
                    assert_eq!(arg.get_long(), Some(long), "herd {command} {}", s.id);
                }
                if let Some(short) = s.short {
                    assert_eq!(arg.get_short(), short, "herd {command} {}", s.id);
                }
                assert_eq!(arg.is_hide_set(), s.hide, "herd {command} {}", s.id);
            }
        }
    }
}
