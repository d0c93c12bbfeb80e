//! `herd completions SHELL` and `herd man [SUBCOMMAND]`'s flags.

use clap::Args;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell), e.g. `herd completions bash > /etc/bash_completion.d/herd`,
    /// `herd completions zsh > "${fpath[1]}/_herd"`,
    /// `herd completions fish > ~/.config/fish/completions/herd.fish`
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print (herd-run(1) for `run`) [default: herd(1)], e.g.
    /// `herd man run > herd-run.1; man ./herd-run.1`
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}
