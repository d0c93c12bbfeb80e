//! The generator watching itself: CPU time per thread, and the verdict on whether the run
//! measured the server or herd's own limits ("don't fall prey to measuring client performance
//! instead of server performance", httperf's author).

use std::time::Duration;

/// CPU time used by the calling thread.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    pub user: Duration,
    pub sys: Duration,
}

impl ThreadCpu {
    pub fn now() -> Self {
        rusage(libc::RUSAGE_THREAD)
    }

    pub fn since(&self, earlier: &ThreadCpu) -> ThreadCpu {
        ThreadCpu {
            user: self.user.saturating_sub(earlier.user),
            sys: self.sys.saturating_sub(earlier.sys),
        }
    }

    pub fn total(&self) -> Duration {
        self.user + self.sys
    }
}

fn rusage(who: libc::c_int) -> ThreadCpu {
    // SAFETY: getrusage only writes the struct we pass; zeroed is a valid rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a live rusage; `who` is one of the documented constants.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return ThreadCpu::default();
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    ThreadCpu {
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
    }
}

/// Bounds beyond which a run is judged generator-limited.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Send lag p99 (how late herd sent against its own schedule).
    pub send_lag_p99: Duration,
    /// Share of the worker threads' time spent on CPU.
    pub cpu_percent: f64,
}

impl Default for Bounds {
    /// A generator that cannot keep its schedule falls behind by seconds; the operating system
    /// preempting it on a busy machine costs tens of milliseconds. 50 ms tells the two apart
    /// without crying wolf over a scheduling hiccup.
    fn default() -> Self {
        Bounds {
            send_lag_p99: Duration::from_millis(50),
            cpu_percent: 95.0,
        }
    }
}

/// What the generator observed of itself during a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Health {
    pub open_model: bool,
    pub send_lag_p99: Duration,
    /// The busiest worker thread's CPU over the run, percent of one core.
    pub cpu_percent: f64,
    pub fd_errors: u64,
    pub addr_errors: u64,
    /// Scheduled requests never sent because every allowed connection was busy.
    pub dropped: u64,
    /// The connection cap (open model), for the advice.
    pub max_connections: u64,
    /// Peak open file descriptors against the limit.
    pub fds_peak: Option<u64>,
    pub fd_limit: Option<u64>,
    /// Peak ephemeral ports in use against the size of the range.
    pub ports_peak: Option<u64>,
    pub port_range: Option<u64>,
}

/// `Ok(())` when the run measured the server; otherwise the reasons herd itself was the limit.
pub fn verdict(h: &Health, b: &Bounds) -> Result<(), Vec<String>> {
    let mut reasons = Vec::new();
    if h.send_lag_p99 > b.send_lag_p99 {
        reasons.push(format!(
            "send lag p99 {:.1} ms exceeds {} ms: herd could not keep its own schedule",
            h.send_lag_p99.as_secs_f64() * 1e3,
            b.send_lag_p99.as_millis()
        ));
    }
    if h.cpu_percent > b.cpu_percent {
        reasons.push(format!(
            "a herd worker thread was {:.0}% busy: herd's CPU, not the server, set the pace; add threads (-t) or cores",
            h.cpu_percent
        ));
    }
    if h.dropped > 0 {
        reasons.push(format!(
            "{} scheduled requests were never sent: all {} allowed connections were busy when they were due; raise -c",
            h.dropped, h.max_connections
        ));
    }
    if let (Some(peak), Some(limit)) = (h.fds_peak, h.fd_limit) {
        if limit > 0 && peak * 10 >= limit * 9 {
            reasons.push(format!(
                "{peak} of {limit} file descriptors were open: raise `ulimit -n`"
            ));
        }
    }
    if let (Some(peak), Some(range)) = (h.ports_peak, h.port_range) {
        if range > 0 && peak * 10 >= range * 8 {
            reasons.push(format!(
                "{peak} of {range} ephemeral ports were in use: widen net.ipv4.ip_local_port_range, \
                 enable net.ipv4.tcp_tw_reuse, or reuse connections (drop --calls-per-conn)"
            ));
        }
    }
    if h.fd_errors > 0 {
        reasons.push(format!(
            "{} requests found no free file descriptor: raise `ulimit -n`",
            h.fd_errors
        ));
    }
    if h.addr_errors > 0 {
        reasons.push(format!(
            "{} connections found no free local port: widen net.ipv4.ip_local_port_range or reuse connections",
            h.addr_errors
        ));
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthy_run_passes_and_each_limit_is_named() {
        let b = Bounds::default();
        let ok = Health {
            open_model: true,
            send_lag_p99: Duration::from_millis(1),
            cpu_percent: 40.0,
            ..Health::default()
        };
        assert_eq!(verdict(&ok, &b), Ok(()));
        let late = Health {
            send_lag_p99: Duration::from_millis(80),
            ..ok.clone()
        };
        assert!(verdict(&late, &b).unwrap_err()[0].contains("send lag"));
        let busy = Health {
            cpu_percent: 99.0,
            ..ok.clone()
        };
        assert!(verdict(&busy, &b).unwrap_err()[0].contains("busy"));
        let fds = Health { fd_errors: 3, ..ok };
        assert!(verdict(&fds, &b).unwrap_err()[0].contains("ulimit"));
    }

    #[test]
    fn a_saturated_worker_thread_is_named_in_either_model() {
        let h = Health {
            open_model: false,
            cpu_percent: 99.0,
            ..Health::default()
        };
        assert!(verdict(&h, &Bounds::default()).unwrap_err()[0].contains("99% busy"));
        let h = Health {
            open_model: false,
            cpu_percent: 60.0,
            ..Health::default()
        };
        assert_eq!(verdict(&h, &Bounds::default()), Ok(()));
    }

    #[test]
    fn drops_and_exhaustion_are_named_with_their_fix() {
        let b = Bounds::default();
        let h = Health {
            dropped: 12,
            max_connections: 50,
            ..Health::default()
        };
        assert!(verdict(&h, &b).unwrap_err()[0].contains("raise -c"));
        let h = Health {
            fds_peak: Some(950),
            fd_limit: Some(1024),
            ..Health::default()
        };
        assert!(verdict(&h, &b).unwrap_err()[0].contains("ulimit -n"));
        let h = Health {
            fds_peak: Some(100),
            fd_limit: Some(1024),
            ..Health::default()
        };
        assert_eq!(verdict(&h, &b), Ok(()));
        let h = Health {
            ports_peak: Some(25_000),
            port_range: Some(28_232),
            ..Health::default()
        };
        assert!(verdict(&h, &b).unwrap_err()[0].contains("ip_local_port_range"));
    }

    #[test]
    fn thread_cpu_moves_forward() {
        let a = ThreadCpu::now();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = ThreadCpu::now();
        assert!(b.since(&a).total() > Duration::ZERO);
    }
}
