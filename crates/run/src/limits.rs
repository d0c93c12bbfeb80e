//! The open-file limit: raised to the hard limit at start, and checked against the connections
//! asked for before anything is sent (httperf's FD_SETSIZE trap, seed 001, done right).

use crate::RunError;
use herd_monitor::system::{fd_limit as get, set_fd_soft_limit as set};

/// Descriptors herd needs beyond its connections: stdio, epoll, timers, files it writes.
pub const SPARE_FDS: u64 = 64;

/// Raises the soft limit to the hard limit and checks that `connections` fit; `fewer` says how
/// this kind of run asks for fewer (a flag, or a line of the workload file).
pub fn ensure_fds(connections: u64, fewer: &str) -> Result<u64, RunError> {
    let needed = connections + SPARE_FDS;
    let (soft, hard) =
        get().map_err(|e| RunError::Start(format!("cannot read the open-file limit: {e}")))?;
    let soft = if soft < hard {
        set(hard).map(|_| hard).unwrap_or(soft)
    } else {
        soft
    };
    if needed > soft {
        return Err(RunError::Start(format!(
            "herd needs {needed} open files for {connections} connections, but this process may open only {soft} \
             (hard limit {hard}).\n  fix: raise the limit before running, e.g. `ulimit -n {needed}` in the shell, \
             LimitNOFILE={needed} in a systemd unit, or nofile in /etc/security/limits.conf; \
             or {fewer}"
        )));
    }
    Ok(soft)
}
