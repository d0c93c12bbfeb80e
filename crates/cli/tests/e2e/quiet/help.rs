//! The help a user reads: `herd run -h` a short page and `--help` the full one (ripgrep's
//! split), the exit codes `run` can return, headings that say what their flags are for, and
//! the shell completions and man pages made from the same flag definitions.

use crate::common::*;
use std::process::Command;

/// The long flags a help page lists: its entries, `  -c, --connections <N>` or
/// `      --rate <R>` (a wrapped description is indented further).
fn flags(page: &str) -> Vec<String> {
    page.lines()
        .filter_map(|l| {
            let long_only = l.starts_with("      --") && !l.starts_with("       ");
            let short_and_long =
                l.starts_with("  -") && !l.starts_with("   ") && l.get(4..8) == Some(", --");
            if !(long_only || short_and_long) {
                return None;
            }
            let rest = &l[6..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (name.len() > 2).then_some(name)
        })
        .collect()
}

#[test]
fn run_h_is_a_short_page_and_help_the_full_one() {
    let short = stdout(&run_herd(&["run", "-h"]));
    let long = stdout(&run_herd(&["run", "--help"]));
    let (s, l) = (flags(&short), flags(&long));
    for common in [
        "--connections",
        "--rate",
        "--duration",
        "--header",
        "--http2",
        "--json",
    ] {
        assert!(s.iter().any(|f| f == common), "-h lacks {common}:\n{short}");
    }
    for rare in [
        "--watch-pid",
        "--shard",
        "--otlp",
        "--h2-window",
        "--resolve",
    ] {
        assert!(!s.iter().any(|f| f == rare), "-h shows {rare}:\n{short}");
        assert!(l.iter().any(|f| f == rare), "--help lacks {rare}");
    }
    assert!(
        s.len() * 2 < l.len(),
        "{} flags in -h, {} in --help",
        s.len(),
        l.len()
    );
    assert!(
        short.lines().count() < 80,
        "-h is {} lines",
        short.lines().count()
    );
    assert!(
        short.contains("--help"),
        "-h says where the rest is:\n{short}"
    );
}

#[test]
fn run_help_lists_only_the_exit_codes_run_can_return() {
    let long = stdout(&run_herd(&["run", "--help"]));
    let codes = long
        .split("Exit codes:")
        .nth(1)
        .expect("an exit codes section");
    let listed: Vec<&str> = codes
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .filter(|w| w.parse::<u32>().is_ok())
        .collect();
    assert_eq!(listed, ["0", "2", "3", "4", "6", "7", "130"], "{codes}");
    assert!(
        !codes.contains("herd capacity") && !codes.contains("herd merge"),
        "{codes}"
    );
}

#[test]
fn shard_flags_sit_under_their_own_heading() {
    let long = stdout(&run_herd(&["run", "--help"]));
    let heading_of = |flag: &str| {
        let at = long
            .find(&format!("  {flag} "))
            .or_else(|| long.find(&format!("  {flag}\n")))
            .unwrap_or_else(|| panic!("no {flag}"));
        long[..at]
            .lines()
            .rev()
            .find(|l| !l.starts_with(' ') && l.ends_with(':'))
            .unwrap_or_default()
            .to_owned()
    };
    for flag in ["--shard", "--start-at", "--late"] {
        let h = heading_of(flag);
        assert!(h.starts_with("Shards"), "{flag} under {h:?}");
    }
    assert_eq!(heading_of("--watch-pid"), "Watching the server:");
    for flag in ["--store", "--label"] {
        assert_eq!(heading_of(flag), "Outputs:", "{flag}");
    }
    // The flags declared after the shard's group went under its heading.
    for flag in ["-e, --env", "--http2", "--h2-window"] {
        assert_eq!(heading_of(flag), "Options:", "{flag}");
    }
}

#[test]
fn completions_load_in_bash_and_name_runs_flags_in_each_shell() {
    let dir = TempDir::new("completions");
    for shell in ["bash", "zsh", "fish"] {
        let out = run_herd(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for flag in ["connections", "rate", "watch-pid", "shard"] {
            assert!(script.contains(flag), "{shell}: no {flag}");
        }
        std::fs::write(dir.path(shell), &script).unwrap();
    }
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; complete -p herd",
            dir.path("bash").display()
        ))
        .output()
        .unwrap();
    assert!(
        stdout(&loaded).contains("herd"),
        "bash did not load it: {}",
        stderr(&loaded)
    );
    refused(&["completions", "tcsh"], "tcsh");
}

#[test]
fn man_pages_render_with_man_and_list_every_run_flag() {
    let dir = TempDir::new("man");
    let long = stdout(&run_herd(&["run", "--help"]));
    for (args, title) in [(vec!["man"], "herd"), (vec!["man", "run"], "herd-run")] {
        let out = run_herd(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let file = dir.path(&format!("{title}.1"));
        std::fs::write(&file, &out.stdout).unwrap();
        let shown = Command::new("man")
            .args(["-l", "-P", "cat"])
            .arg(&file)
            .env("MANWIDTH", "100")
            .output()
            .expect("man (scripts/check installs man-db)");
        let text = stdout(&shown);
        assert!(text.contains(title), "{title}: {text}");
        if title == "herd-run" {
            for flag in flags(&long) {
                assert!(text.contains(&flag), "herd-run(1) lacks {flag}");
            }
        }
    }
    refused(&["man", "runn"], "no subcommand `runn`");
}

#[test]
fn completions_and_man_pages_piped_into_head_end_quietly() {
    for args in [["completions", "bash"], ["man", "run"]] {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "set -o pipefail; {} {} {} | head -c 10 >/dev/null; echo \"exit ${{PIPESTATUS[0]}}\"",
                env!("CARGO_BIN_EXE_herd"),
                args[0],
                args[1]
            ))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let code = stdout(&out);
        assert!(
            code.trim() == "exit 0" || code.trim() == "exit 141",
            "{args:?}: {code}"
        );
    }
}

/// Docs that drift: a flag a command's `--help` lists and its page never names leaves a user
/// with the help's one line. Every flag of every command is named on the command's own page
/// (long, or short as in `-o FILE`), or, for the flags shared with `herd run` (the request,
/// protocol, TLS, watching and output groups), has its row in docs/run.md's table and the page
/// sends the reader there.
#[test]
fn every_flag_of_every_command_is_named_in_its_docs() {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/");
    let read = |page: &str| std::fs::read_to_string(format!("{docs}{page}")).unwrap();
    let run_rows: String = read("run.md")
        .lines()
        .filter(|l| l.starts_with("| `-"))
        .collect::<Vec<_>>()
        .join("\n");
    let names = |text: &str, flag: &str| {
        text.match_indices(flag).any(|(i, _)| {
            let after = text[i + flag.len()..].chars().next().unwrap_or(' ');
            !(after.is_ascii_alphanumeric() || after == '-')
        })
    };
    let mut missing = Vec::new();
    for (cmd, pages) in [
        ("validate", &["workload.md"][..]),
        ("serve", &["serve.md"]),
        ("demo", &["run.md"]),
        ("report", &["report.md"]),
        ("compare", &["compare.md", "history.md"]),
        ("doctor", &["run.md"]),
        ("sweep", &["sweep.md"]),
        ("capacity", &["capacity.md"]),
        ("plot", &["plot.md"]),
        ("merge", &["distributed.md"]),
        ("k8s render", &["distributed.md"]),
        ("k8s collect", &["distributed.md"]),
        ("store add", &["history.md"]),
        ("history ls", &["history.md"]),
        ("history show", &["history.md"]),
        ("history trend", &["history.md"]),
        ("history detect", &["history.md"]),
        ("history baseline", &["history.md"]),
        ("logs", &["logs.md"]),
        ("model", &["logs.md", "har.md"]),
        ("replay", &["logs.md"]),
        ("grpc", &["grpc.md"]),
        ("proxy", &["proxy.md"]),
    ] {
        let text: String = pages.iter().map(|p| read(p)).collect();
        let sends_to_run = pages[0] == "run.md" || text.contains("](run.md");
        let args: Vec<&str> = cmd.split(' ').chain(["--help"]).collect();
        for line in stdout(&run_herd(&args)).lines() {
            // `  -o, --output <FILE>` or `      --top <N>`.
            let (short, rest) = match line.get(..8) {
                Some(l) if l.starts_with("  -") && &l[4..] == ", --" => {
                    (Some(&line[2..4]), &line[6..])
                }
                Some("      --") => (None, &line[6..]),
                _ => continue,
            };
            let long: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if long == "--help" || long.len() < 3 {
                continue;
            }
            let short_named = short.is_some_and(|s| {
                text.contains(&format!("`{s} "))
                    || text.contains(&format!("`{s}`"))
                    || text.contains(&format!(" {s} "))
            });
            if !(names(&text, &long) || short_named || sends_to_run && names(&run_rows, &long)) {
                missing.push(format!("herd {cmd} {long} (in {})", pages.join(" or ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in the docs:\n{}",
        missing.join("\n")
    );
}
