//! `-e NAME=VALUE` (k6's `--env`): values for `{{env.NAME}}` in workload files and `os.getenv`
//! in scripts, given on the command line so tokens and passwords stay out of files. They are
//! set in herd's own environment before anything else runs, so every reader sees one
//! environment, with `-e` winning over what the shell exported.

use crate::exit::Exit;

/// Checks every `NAME=VALUE` and sets them; all the bad ones are reported at once.
pub fn apply(given: &[String]) -> Result<(), Exit> {
    let mut problems = Vec::new();
    let mut pairs = Vec::new();
    for g in given {
        match g.split_once('=') {
            Some((name, value)) if valid_name(name) => pairs.push((name, value)),
            _ => problems.push(format!(
                "-e {g:?}: expected NAME=VALUE with a NAME of letters, digits and _, e.g. \
                 -e API_TOKEN=abc123"
            )),
        }
    }
    if !problems.is_empty() {
        return Err(Exit::bad_input(problems.join("\n")));
    }
    for (name, value) in pairs {
        // Before any thread starts: nothing else reads the environment concurrently.
        std::env::set_var(name, value);
    }
    Ok(())
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_a_shell_accepts() {
        assert!(valid_name("API_TOKEN") && valid_name("_x1"));
        assert!(!valid_name("") && !valid_name("1X") && !valid_name("A-B"));
        let e = apply(&["TOKEN".into(), "A-B=1".into()]).unwrap_err();
        assert_eq!(e.message.lines().count(), 2, "{}", e.message);
    }
}
