//! The open-file limit: raised to the hard limit at start, and checked against the connections
//! asked for before anything is sent (httperf's FD_SETSIZE trap, seed 001, done right).

use crate::exit::Exit;

/// Descriptors herd needs beyond its connections: stdio, epoll, timers, files it writes.
pub(crate) const SPARE_FDS: u64 = 64;

/// Raises the soft limit to the hard limit and checks that `connections` fit.
pub fn ensure_fds(connections: u64) -> Result<u64, Exit> {
    let needed = connections + SPARE_FDS;
    let (soft, hard) =
        get().map_err(|e| Exit::bad_input(format!("cannot read the open-file limit: {e}")))?;
    let soft = if soft < hard {
        set(hard).map(|_| hard).unwrap_or(soft)
    } else {
        soft
    };
    if needed > soft {
        return Err(Exit::bad_input(format!(
            "herd needs {needed} open files for {connections} connections, but this process may open only {soft} \
             (hard limit {hard}).\n  fix: raise the limit before running, e.g. `ulimit -n {needed}` in the shell, \
             LimitNOFILE={needed} in a systemd unit, or nofile in /etc/security/limits.conf; \
             or ask for fewer connections (-c)"
        )));
    }
    Ok(soft)
}

pub(crate) fn get() -> std::io::Result<(u64, u64)> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((rl.rlim_cur, rl.rlim_max))
}

fn set(soft: u64) -> std::io::Result<()> {
    let (_, hard) = get()?;
    let rl = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
