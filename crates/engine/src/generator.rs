//! The generator watching itself: CPU time per thread, and the verdict on whether the run
//! measured the server or herd's own limits ("don't fall prey to measuring client performance
//! instead of server performance", httperf's author).

use herd_monitor::system::{port_budget, ports_held, tw_reuse_applies, PortBudget, TIME_WAIT_S};
use herd_result::format::count;
use std::time::Duration;

/// CPU time used by the calling thread.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    pub user: Duration,
    pub sys: Duration,
}

impl ThreadCpu {
    pub fn now() -> Self {
        thread_rusage().map_or_else(ThreadCpu::default, |ru| ThreadCpu::of(&ru))
    }

    /// User and system time of `ru`.
    pub(crate) fn of(ru: &libc::rusage) -> Self {
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
        ThreadCpu {
            user: tv(ru.ru_utime),
            sys: tv(ru.ru_stime),
        }
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

/// The calling thread's resource usage (getrusage), `None` where it fails.
pub(crate) fn thread_rusage() -> Option<libc::rusage> {
    // SAFETY: getrusage only writes the struct we pass; zeroed is a valid rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a live rusage; RUSAGE_THREAD is a documented constant.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (rc == 0).then_some(ru)
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
    /// The busiest worker thread's CPU over the run, percent of one core (0 for a run shorter
    /// than a second, where start-up dominates it).
    pub cpu_percent: f64,
    /// The same share whatever the run's length: whether herd's CPU, not the server, kept the
    /// connections busy when arrivals were dropped.
    pub busy_percent: f64,
    pub fd_errors: u64,
    pub addr_errors: u64,
    /// Scheduled requests never sent because every allowed connection was busy: the server's
    /// saturation at the connection cap, noted, never a verdict against herd.
    pub dropped: u64,
    /// The connection cap (open model), for the note.
    pub max_connections: u64,
    /// Peak open file descriptors against the limit.
    pub fds_peak: Option<u64>,
    pub fd_limit: Option<u64>,
    /// Peak TCP sockets in the ephemeral range machine-wide (every program's, TIME_WAIT
    /// included) against the size of the range: pressure worth a warning, never a verdict.
    pub ports_peak: Option<u64>,
    pub port_range: Option<u64>,
    /// herd's own connections: opened over the run, the most open at once, and how long the
    /// workers ran; from these, the ports herd itself held toward its target.
    pub connections_opened: u64,
    /// Of those, closed by the server first (its side keeps their TIME_WAIT).
    pub server_closed: u64,
    pub peak_connections: u64,
    pub wall: Duration,
    /// `net.ipv4.tcp_tw_reuse`, and whether the target is on loopback (`None`: not known).
    pub tw_reuse: Option<u8>,
    pub loopback: Option<bool>,
}

impl Health {
    /// Connections per second herd closed first (each leaves a port in TIME_WAIT on herd's
    /// side): all it opened but those open at the peak and those the server closed first
    /// (`--calls-per-conn`: herd asks with `Connection: close` and waits for the server's close).
    fn churn(&self) -> f64 {
        let s = self.wall.as_secs_f64();
        if s > 0.0 {
            self.connections_opened
                .saturating_sub(self.peak_connections)
                .saturating_sub(self.server_closed) as f64
                / s
        } else {
            0.0
        }
    }

    /// Local ports herd's own connections held toward the target at the end of the run.
    fn own_ports(&self) -> u64 {
        ports_held(self.churn(), self.wall.as_secs_f64(), self.peak_connections)
    }

    /// Whether the kernel reuses herd's TIME_WAIT ports for its next connections; `None` when
    /// that depends on what is not known.
    fn reuse(&self) -> Option<bool> {
        self.tw_reuse
            .and_then(|v| tw_reuse_applies(v, self.loopback))
    }

    fn own_ports_text(&self, held: u64) -> String {
        format!(
            "~{} ({} closed/s x {:.0} s in TIME_WAIT + {} open)",
            count(held),
            count(self.churn().round() as u64),
            self.wall.as_secs_f64().min(TIME_WAIT_S),
            count(self.peak_connections)
        )
    }
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
    // Arrivals dropped because every allowed connection was busy are the server's saturation
    // (it held those connections), unless herd's own CPU was what kept them busy: then they
    // are herd's, even in a run too short for the CPU rule above. `warnings` notes the others.
    if h.dropped > 0 && h.cpu_percent <= b.cpu_percent && h.busy_percent > b.cpu_percent {
        reasons.push(format!(
            "{} scheduled requests were never sent while a herd worker thread was {:.0}% busy: \
             herd's CPU, not the server, kept the connections busy; add threads (-t) or cores",
            count(h.dropped),
            h.busy_percent
        ));
    }
    if let (Some(peak), Some(limit)) = (h.fds_peak, h.fd_limit) {
        if limit > 0 && peak * 10 >= limit * 9 {
            reasons.push(format!(
                "{} of {} file descriptors were open: raise `ulimit -n`",
                count(peak),
                count(limit)
            ));
        }
    }
    // herd's own ports, not the machine's: the kernel picks a local port per destination, so
    // other programs' sockets (TIME_WAIT of earlier runs included) do not take herd's ports.
    if let Some(range) = h.port_range {
        let held = h.own_ports();
        if port_budget(held, range) == PortBudget::Exhausted && h.reuse() == Some(false) {
            reasons.push(format!(
                "herd's own connections held {} local ports toward the target, more than the {} of \
                 net.ipv4.ip_local_port_range: enable net.ipv4.tcp_tw_reuse, widen the range, or reuse \
                 connections (larger --calls-per-conn)",
                h.own_ports_text(held),
                count(range)
            ));
        }
    }
    if h.fd_errors > 0 {
        reasons.push(format!(
            "{} requests found no free file descriptor: raise `ulimit -n`",
            count(h.fd_errors)
        ));
    }
    if h.addr_errors > 0 {
        reasons.push(format!(
            "{} connections found no free local port: widen net.ipv4.ip_local_port_range or reuse connections",
            count(h.addr_errors)
        ));
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons)
    }
}

/// What the reader should know but that did not limit the run: herd's own ports close to the
/// range, and ports busy machine-wide (other programs, TIME_WAIT of earlier runs).
pub fn warnings(h: &Health) -> Vec<String> {
    let mut out = Vec::new();
    if h.dropped > 0 && h.busy_percent <= Bounds::default().cpu_percent {
        out.push(format!(
            "{} scheduled requests were never sent: the server held all {} allowed connections busy \
             when they were due. That is the server's saturation at this connection cap, not herd's \
             limit; they count as not ok",
            count(h.dropped),
            count(h.max_connections)
        ));
    }
    let Some(range) = h.port_range else {
        return out;
    };
    let held = h.own_ports();
    let own = h.own_ports_text(held);
    let range_text = count(range);
    match (port_budget(held, range), h.reuse()) {
        (PortBudget::Fits, _) | (PortBudget::Exhausted, Some(false)) => {}
        (PortBudget::Exhausted, reuse) => out.push(format!(
            "herd's own connections held {own} local ports toward the target, more than the {range_text} \
             of the range: only TIME_WAIT reuse (net.ipv4.tcp_tw_reuse{}) kept them coming; widen \
             net.ipv4.ip_local_port_range or reuse connections for headroom",
            if reuse.is_none() { ", if it applies" } else { "" }
        )),
        (PortBudget::Tight, _) => out.push(format!(
            "herd's own connections held {own} of {range_text} local ports toward the target: close to \
             the limit; widen net.ipv4.ip_local_port_range or reuse connections"
        )),
    }
    if let Some(peak) = h.ports_peak {
        if range > 0 && peak * 10 >= range * 8 {
            out.push(format!(
                "{} of {range_text} local ports were in use machine-wide (every program's sockets, \
                 TIME_WAIT included; herd's own {own}): not herd's limit, since ports are taken per \
                 destination, but any program's new connections to a busy destination may fail",
                count(peak)
            ));
        }
    }
    out
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
    fn requests_waiting_for_connections_the_server_holds_are_the_servers_saturation() {
        let h = Health {
            dropped: 12,
            max_connections: 50,
            ..Health::default()
        };
        assert_eq!(verdict(&h, &Bounds::default()), Ok(()));
        let w = warnings(&h);
        assert!(
            w[0].starts_with("12 scheduled requests were never sent: the server held all 50")
                && w[0].contains("not herd's limit"),
            "{w:?}"
        );
        // A thread pegged by an impossible rate in a short probe: herd's own limit.
        let pegged = Health {
            busy_percent: 99.0,
            ..h
        };
        let r = verdict(&pegged, &Bounds::default()).unwrap_err();
        assert!(r[0].contains("99% busy") && r[0].contains("-t"), "{r:?}");
        assert!(warnings(&pegged).is_empty());
    }

    #[test]
    fn exhaustion_is_named_with_its_fix() {
        let b = Bounds::default();
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
    }

    #[test]
    fn ports_are_judged_by_herds_own_connections_and_machine_pressure_only_warns() {
        let b = Bounds::default();
        let secs = Duration::from_secs;
        // 2 keep-alive connections while 29,104 sockets of the machine sit in the range.
        let keep_alive = Health {
            ports_peak: Some(29_104),
            port_range: Some(28_232),
            connections_opened: 2,
            peak_connections: 2,
            wall: secs(10),
            tw_reuse: Some(2),
            loopback: Some(false),
            ..Health::default()
        };
        assert_eq!(verdict(&keep_alive, &b), Ok(()));
        let w = warnings(&keep_alive);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("29,104 of 28,232 local ports were in use machine-wide"),
            "{w:?}"
        );
        assert!(w[0].contains("herd's own ~2 "), "{w:?}");
        // Ports that failed to bind are the proof: limited, whatever the estimate says.
        let refused_ports = Health {
            addr_errors: 7,
            ..keep_alive.clone()
        };
        assert!(verdict(&refused_ports, &b).unwrap_err()[0].contains("no free local port"));
        // herd's own churn: 2,000 new connections/s for 2 minutes, no TIME_WAIT reuse.
        let churn = Health {
            ports_peak: Some(1_000),
            connections_opened: 241_000,
            peak_connections: 1_000,
            wall: secs(120),
            ..keep_alive.clone()
        };
        let r = verdict(&churn, &b).unwrap_err();
        assert!(
            r[0].contains("~121,000 (2,000 closed/s x 60 s in TIME_WAIT + 1,000 open)"),
            "{r:?}"
        );
        // The same churn on loopback, where tcp_tw_reuse=2 applies: ok, with a warning.
        let lo = Health {
            loopback: Some(true),
            ..churn.clone()
        };
        assert_eq!(verdict(&lo, &b), Ok(()));
        assert!(warnings(&lo)[0].contains("only TIME_WAIT reuse"));
        // Where reuse may apply but the target's address is not known: a warning, not a verdict.
        let unknown = Health {
            loopback: None,
            ..churn.clone()
        };
        assert_eq!(verdict(&unknown, &b), Ok(()));
        assert!(warnings(&unknown)[0].contains("if it applies"));
        // A short run has closed only its own few seconds' worth: 2,000/s for 5 s fits.
        let short = Health {
            connections_opened: 11_000,
            wall: secs(5),
            ..churn.clone()
        };
        assert_eq!(verdict(&short, &b), Ok(()));
        // 400/s for a minute: 25,000 of 28,232, tight.
        let tight = Health {
            connections_opened: 25_000,
            peak_connections: 1_000,
            wall: secs(60),
            ..churn
        };
        assert_eq!(verdict(&tight, &b), Ok(()));
        assert!(warnings(&tight)[0].contains("close to the limit"));
    }

    #[test]
    fn connections_the_server_closed_first_hold_no_ports_on_herds_side() {
        // --calls-per-conn 1 at 1,000 new connections/s for 60 s: herd sends `Connection:
        // close` and the server closes first, so `ss` shows no TIME_WAIT on herd's side. It
        // once warned of ~60,000 ports held.
        let h = Health {
            ports_peak: Some(1_000),
            port_range: Some(28_232),
            connections_opened: 60_000,
            server_closed: 59_990,
            peak_connections: 10,
            wall: Duration::from_secs(60),
            tw_reuse: Some(0),
            loopback: Some(true),
            ..Health::default()
        };
        assert_eq!(verdict(&h, &Bounds::default()), Ok(()));
        assert!(warnings(&h).is_empty(), "{:?}", warnings(&h));
        // The same churn closed by herd is its own TIME_WAIT.
        let herd_closed = Health {
            server_closed: 0,
            ..h
        };
        assert!(verdict(&herd_closed, &Bounds::default()).is_err());
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
