//! Reading one process from `/proc`: the parsers are pure functions of the files' text (tested on
//! text, no live process needed); [`read`] puts them together for a live pid.
//!
//! See proc(5). `/proc/PID/stat` gives CPU ticks, threads and RSS for the whole thread group;
//! context switches are per task in `/proc/PID/task/TID/status` (the group's `status` shows only
//! the main thread's), so they are summed over the tasks alive at the time of reading.

use std::fs;
use std::io;
use std::path::PathBuf;

/// The fields of `/proc/PID/stat` herd uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// `R` running, `S` sleeping, ..., `Z` zombie: exited, not yet reaped by its parent.
    pub state: char,
    /// CPU time in user mode, in clock ticks (`utime`, field 14).
    pub utime: u64,
    /// CPU time in kernel mode, in clock ticks (`stime`, field 15).
    pub stime: u64,
    /// `num_threads`, field 20.
    pub threads: u64,
    /// When the process started, in ticks after boot (field 22): with the pid, it names a process
    /// uniquely, so a pid reused by a new process is not mistaken for the one watched.
    pub start_ticks: u64,
    /// Resident set size in pages (field 24).
    pub rss_pages: u64,
}

/// Parses `/proc/PID/stat`. The command name (field 2) is in parentheses and may itself contain
/// spaces and parentheses, so the fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // rest starts at field 3 (state): field n is at index n - 3.
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    let field = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        state: f.first()?.chars().next()?,
        utime: field(14)?,
        stime: field(15)?,
        threads: field(20)?,
        start_ticks: field(22)?,
        rss_pages: field(24)?,
    })
}

/// Voluntary and involuntary context switches from a `status` file.
pub fn parse_ctx_switches(status: &str) -> Option<(u64, u64)> {
    let mut voluntary = None;
    let mut involuntary = None;
    for line in status.lines() {
        if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
            voluntary = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
            involuntary = v.trim().parse().ok();
        }
    }
    Some((voluntary?, involuntary?))
}

/// One reading of a live process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    pub stat: Stat,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    /// Open file descriptors; `None` when `/proc/PID/fd` cannot be read (another user's process).
    pub fds: Option<u64>,
}

impl Stat {
    /// A zombie (`Z`) or dead (`X`) process has exited; only its exit status is left to collect.
    pub fn exited(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

impl Reading {
    pub fn cpu_ticks(&self) -> u64 {
        self.stat.utime + self.stat.stime
    }
}

/// Reads a live process; `Err` with `NotFound` once it has exited (zombies included).
pub fn read(pid: u32) -> io::Result<Reading> {
    let dir = PathBuf::from(format!("/proc/{pid}"));
    let stat_text = fs::read_to_string(dir.join("stat"))?;
    let stat = parse_stat(&stat_text).ok_or_else(|| malformed(pid, "stat"))?;
    if stat.exited() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("process {pid} has exited"),
        ));
    }
    let (mut ctx_voluntary, mut ctx_involuntary) = (0, 0);
    // A thread can end between listing and reading: its switches are lost, never an error.
    for task in fs::read_dir(dir.join("task"))?.flatten() {
        if let Ok(s) = fs::read_to_string(task.path().join("status")) {
            if let Some((v, i)) = parse_ctx_switches(&s) {
                ctx_voluntary += v;
                ctx_involuntary += i;
            }
        }
    }
    let fds = fs::read_dir(dir.join("fd"))
        .ok()
        .map(|d| d.flatten().count() as u64);
    Ok(Reading {
        stat,
        ctx_voluntary,
        ctx_involuntary,
        fds,
    })
}

fn malformed(pid: u32, file: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("/proc/{pid}/{file} is not in the format proc(5) describes"),
    )
}

/// The process's start time in ticks after boot, which names it uniquely together with its
/// pid; `None` when there is no such process or it has exited.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
    (!stat.exited()).then_some(stat.start_ticks)
}

/// Every process whose name is `name`, oldest first (for nginx: the master, then its workers),
/// leaving out `except` (herd itself).
///
/// A process matches when its `comm` is the name (the kernel cuts `comm` to 15 bytes, so a
/// longer name matches its first 15 bytes), or when its executable's file name is the name.
/// Argument 0 is not used: nginx rewrites its workers' to "nginx: worker process".
pub fn find_by_name(name: &str, except: u32) -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<(u64, u32)> = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == except {
            continue;
        }
        let comm = fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let exe = fs::read_link(entry.path().join("exe")).ok();
        let exe_name = exe
            .as_deref()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str());
        if name_matches(name, comm.trim_end_matches('\n'), exe_name) {
            if let Some(start) = start_ticks(pid) {
                found.push((start, pid));
            }
        }
    }
    found.sort_unstable();
    found.into_iter().map(|(_, pid)| pid).collect()
}

/// The rule of [`find_by_name`], apart from the file system.
pub fn name_matches(name: &str, comm: &str, exe_name: Option<&str>) -> bool {
    if name.is_empty() {
        return false;
    }
    // comm is the executable's name cut to TASK_COMM_LEN - 1 = 15 bytes.
    let cut = if name.len() <= 15 {
        name
    } else {
        let mut end = 15;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        &name[..end]
    };
    comm == cut || exe_name == Some(name)
}

/// Clock ticks per second, for turning `utime`/`stime` into seconds.
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Bytes per page, for turning the RSS in pages into bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let plain = "10582 (cat) R 10578 10578 5255 0 -1 4194304 101 0 0 0 7 3 0 0 20 0 1 0 144270 3133440 417 18446744073709551615 94058116444160";
        assert_eq!(
            parse_stat(plain),
            Some(Stat {
                state: 'R',
                utime: 7,
                stime: 3,
                threads: 1,
                start_ticks: 144270,
                rss_pages: 417
            })
        );
        // A command name with spaces and a ')' in it, as a process may give itself.
        let odd = "42 (my (evil) name) S 1 42 42 0 -1 4194560 500 0 0 0 1500 250 0 0 20 0 8 0 999 123456 2048 18446744073709551615";
        let s = parse_stat(odd).unwrap();
        assert_eq!(
            (s.utime, s.stime, s.threads, s.rss_pages),
            (1500, 250, 8, 2048)
        );
        assert_eq!(s.start_ticks, 999);
        for bad in [
            "",
            "42 (x) S 1 2",
            "42 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22",
        ] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn context_switches_from_status() {
        let status = "Name:\tnginx\nThreads:\t1\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n";
        assert_eq!(parse_ctx_switches(status), Some((1234, 56)));
        assert_eq!(parse_ctx_switches("Name:\tnginx\n"), None);
    }

    #[test]
    fn names_match_comm_cut_to_15_bytes_or_the_executable() {
        let table = [
            ("nginx", "nginx", None, true),
            ("nginx", "nginx: worker", None, false),
            ("nginx", "bash", Some("nginx"), true),
            ("ngin", "nginx", Some("nginx"), false),
            ("a-very-long-server-name", "a-very-long-ser", None, true),
            (
                "a-very-long-server-name",
                "a-very-long-ser",
                Some("other"),
                true,
            ),
            ("a-very-long-server-nope", "a-very-long-sex", None, false),
            ("", "", None, false),
        ];
        for (name, comm, exe, want) in table {
            assert_eq!(
                name_matches(name, comm, exe),
                want,
                "{name} vs {comm} {exe:?}"
            );
        }
    }

    #[test]
    fn this_process_can_be_read() {
        let r = read(std::process::id()).unwrap();
        assert!(r.stat.threads >= 1);
        assert!(r.stat.rss_pages > 0);
        assert!(r.fds.unwrap() >= 3, "stdin, stdout, stderr at least");
        assert!(r.ctx_voluntary + r.ctx_involuntary > 0);
    }

    #[test]
    fn a_pid_that_does_not_exist_is_not_found() {
        // Above the kernel's PID_MAX_LIMIT (2^22), so no process can have it.
        let e = read(5_000_000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(start_ticks(5_000_000), None);
    }
}
