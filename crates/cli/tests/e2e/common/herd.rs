//! The `herd` binary run from a test: a command line built and run (`Herd`), what it did
//! (`Ran`), and the plain helpers underneath.

use super::{assert_matches_schema, kill, read_json, SIGINT};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

pub fn herd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herd"))
}

/// Runs herd to the end (its own flags bound the run) and returns its output.
pub fn run_herd(args: &[&str]) -> Output {
    herd()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn herd")
}

/// Runs herd with `args` and checks that it refused them as bad input: exit 2, and standard
/// error says `want`. Returns the output for the caller's own checks.
pub fn refused(args: &[&str], want: &str) -> Output {
    let out = run_herd(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: should say {want:?}:\n{err}");
    out
}

/// A `herd` command line to run and read back (ripgrep's `TestCommand`): arguments, an optional
/// `--json` result file, and checks on what it printed and wrote.
#[derive(Clone)]
pub struct Herd {
    args: Vec<String>,
    json: Option<PathBuf>,
    env: Vec<(String, String)>,
}

/// What a [`Herd`] run did.
pub struct Ran {
    pub out: Output,
    json: Option<PathBuf>,
}

impl Herd {
    pub fn new(args: &[&str]) -> Herd {
        Herd {
            args: args.iter().map(|a| a.to_string()).collect(),
            json: None,
            env: Vec::new(),
        }
    }

    /// More arguments, after those given so far.
    pub fn args(mut self, more: &[&str]) -> Herd {
        self.args.extend(more.iter().map(|a| a.to_string()));
        self
    }

    /// Sets an environment variable for the run.
    pub fn env(mut self, name: &str, value: &str) -> Herd {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// `FLAG PATH`: a file herd writes or reads (`--tsv`, `--csv`, `-o`, ...).
    pub fn file(self, flag: &str, path: &Path) -> Herd {
        self.args(&[flag, path.to_str().unwrap()])
    }

    /// Also writes the result to `path` (`--json`), read back by [`Ran::json`].
    pub fn json(mut self, path: &Path) -> Herd {
        self.json = Some(path.to_owned());
        self
    }

    /// A sweep's steps as short as its test allows: `--step-duration D --cooldown 0s -t 1`.
    pub fn steps(self, duration: &str) -> Herd {
        self.args(&["--step-duration", duration, "--cooldown", "0s", "-t", "1"])
    }

    /// A capacity search's probes as short as its test allows: `--probe-duration D --cooldown 0s
    /// -t 1`.
    pub fn probes(self, duration: &str) -> Herd {
        self.args(&["--probe-duration", duration, "--cooldown", "0s", "-t", "1"])
    }

    fn command(&self) -> Command {
        let mut cmd = herd();
        cmd.args(&self.args);
        if let Some(j) = &self.json {
            cmd.arg("--json").arg(j);
        }
        // A toxiproxy of whoever runs the tests would take a workload's faults.
        cmd.env_remove("TOXIPROXY_URL");
        // The OpenTelemetry variables of whoever runs the tests would turn on OTLP pushes.
        for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("OTEL_")) {
            cmd.env_remove(name);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::null());
        cmd
    }

    pub fn run(self) -> Ran {
        let out = self.command().output().expect("spawn herd");
        Ran {
            out,
            json: self.json,
        }
    }

    /// Starts herd, its stdout and stderr piped (for `wait_with_output`).
    pub fn spawn(self) -> Child {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn herd")
    }

    /// Starts herd and reads its stdout until a line satisfies `ready`; returns the child, the
    /// lines still to come and every line read so far. A reader thread does the reading, so the
    /// wait is bounded (60 s).
    pub fn spawn_until(
        self,
        ready: impl Fn(&str) -> bool,
    ) -> (Child, Receiver<String>, Vec<String>) {
        let mut child = self.spawn();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("no ready line within 60 s ({e}): {seen:?}")
                });
            seen.push(line);
            if ready(seen.last().unwrap()) {
                return (child, rx, seen);
            }
        }
    }
}

impl Ran {
    /// Asserts the exit code, showing what herd said when it differs.
    pub fn code(&self, want: i32) -> &Ran {
        assert_eq!(
            self.out.status.code(),
            Some(want),
            "stdout:\n{}\nstderr:\n{}",
            stdout(&self.out),
            stderr(&self.out)
        );
        self
    }

    /// Asserts herd refused an output `path` in a directory that does not exist, as bad input
    /// (exit 2) whose message names the path and the fix (`mkdir -p`).
    pub fn refused_path(&self, path: &Path) -> &Ran {
        let err = self.stderr();
        assert_eq!(self.out.status.code(), Some(2), "{}: {err}", path.display());
        assert!(
            err.contains(path.to_str().unwrap()) && err.contains("mkdir -p"),
            "{}: {err}",
            path.display()
        );
        self
    }

    /// Asserts the run measured (exit 0), or measured and judged itself generator-limited
    /// (exit 4): a loaded test machine, not what a test of an output is about.
    pub fn measured(&self) -> &Ran {
        if self.out.status.code() != Some(4) {
            self.code(0);
        }
        self
    }

    pub fn stdout(&self) -> String {
        stdout(&self.out)
    }

    pub fn stderr(&self) -> String {
        stderr(&self.out)
    }

    /// The result file, checked against the result schema.
    pub fn json(&self) -> serde_json::Value {
        self.json_of("result.schema.json")
    }

    /// The `--json` file, checked against `schema/SCHEMA` (`sweep.schema.json`, ...).
    pub fn json_of(&self, schema: &str) -> serde_json::Value {
        let path = self
            .json
            .as_deref()
            .expect("the run was given a --json file");
        let r = read_json(path);
        assert_matches_schema(schema, &r);
        r
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Ctrl-C to a series (sweep or capacity) started with [`Herd::spawn_until`]: it exits 130, its
/// result file matches `schema` and says `interrupted`, and what it printed after the signal says
/// so too. Returns the result for the test's own checks.
pub fn interrupt_series(
    child: Child,
    rest: Receiver<String>,
    json: &Path,
    schema: &str,
) -> serde_json::Value {
    kill(child.id(), SIGINT);
    let out = child.wait_with_output().unwrap();
    let text: Vec<String> = rest.try_iter().collect();
    assert_eq!(out.status.code(), Some(130), "{text:?}\n{}", stderr(&out));
    let r = read_json(json);
    assert_matches_schema(schema, &r);
    assert_eq!(r["interrupted"], true);
    assert!(text.iter().any(|l| l.contains("interrupted")), "{text:?}");
    r
}
