//! A subcommand's arguments, declared to clap only when that subcommand is the one given.
//!
//! clap's derive declares every subcommand's arguments before it parses any: `herd run` ran the
//! code that declares `sweep`'s, `replay`'s, `model`'s and the others' too, ~0.2 MB of machine
//! code paged in and resident for the whole run for nothing (bench.py rss). `Command::defer`
//! runs a subcommand's declaration when clap needs it: when it is the one parsed, or for its
//! help.

use clap::{ArgMatches, Args, Command, FromArgMatches};

#[derive(Debug)]
pub struct Deferred<T>(pub T);

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: Command) -> Command {
        cmd.defer(|cmd| keep_about(cmd, T::augment_args))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.defer(|cmd| keep_about(cmd, T::augment_args_for_update))
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

/// Declares the arguments, keeping the subcommand's description: deferred, the declaration
/// runs after the subcommand's own attributes were applied, and a flattened struct's doc
/// comment would take its place.
fn keep_about(cmd: Command, declare: fn(Command) -> Command) -> Command {
    let about = cmd.get_about().cloned();
    let long_about = cmd.get_long_about().cloned();
    let cmd = declare(cmd);
    let cmd = match about {
        Some(about) => cmd.about(about),
        None => cmd.about(None::<&str>),
    };
    match long_about {
        Some(long_about) => cmd.long_about(long_about),
        None => cmd.long_about(None::<&str>),
    }
}

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Deferred)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

impl<T> std::ops::Deref for Deferred<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn only_the_subcommand_given_is_declared_and_each_keeps_its_description() {
        let mut cli = crate::Cli::command();
        let run = cli.find_subcommand("run").expect("run");
        assert_eq!(
            run.get_arguments().count(),
            0,
            "declared before it was needed"
        );
        cli.build();
        let run = cli.find_subcommand("run").expect("run");
        assert!(run.get_arguments().any(|a| a.get_long() == Some("rate")));
        let about = run.get_about().map(ToString::to_string).unwrap_or_default();
        assert!(about.starts_with("Load a URL"), "{about}");
        for sub in cli.get_subcommands() {
            assert!(
                sub.get_about().is_some(),
                "{} lost its description",
                sub.get_name()
            );
        }
    }
}
