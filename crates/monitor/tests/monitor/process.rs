//! The /proc sampler against real processes this test starts: one that burns CPU, one that
//! allocates, one that opens files, a group by name, and one that exits mid-watch.
//!
//! The children are this test binary run again in a "child role" (`child_role` below), told
//! what to do over stdin and answering on stdout, so every assertion waits for the child to say
//! it has done its part: nothing depends on how fast this machine is.

use herd_monitor::{prepare, ProcessSampler, ProcessTarget, WatchPlan};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROLE: &str = "HERD_MONITOR_TEST_CHILD";
const SAY: &str = "herd-child:";
/// A child left alone ends itself after this, so a failed test leaves nothing running.
const CHILD_LIFETIME: Duration = Duration::from_secs(60);

/// Not a test of its own: the body of the child processes. Without the variable it returns.
#[test]
fn child_role() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let said = |what: &str| {
        println!("{SAY} {what}");
        std::io::stdout().flush().unwrap();
    };
    let stdin_closed = Arc::new(AtomicBool::new(false));
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    {
        let closed = Arc::clone(&stdin_closed);
        std::thread::spawn(move || {
            for _line in std::io::stdin().lock().lines().map_while(Result::ok) {
                let _ = go_tx.send(());
            }
            closed.store(true, Ordering::SeqCst);
            let _ = go_tx.send(());
        });
    }
    let deadline = Instant::now() + CHILD_LIFETIME;
    said("ready");
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    let _ = go_rx.recv_timeout(CHILD_LIFETIME);
    match role.as_str() {
        "burn" => {
            let mut x = 0u64;
            while !stdin_closed.load(Ordering::SeqCst) && Instant::now() < deadline {
                for i in 0..100_000u64 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
                }
            }
        }
        "alloc" => {
            // 100 MB, every page written so it is resident, not just reserved.
            let mut v = vec![0u8; 100 << 20];
            for i in (0..v.len()).step_by(4096) {
                v[i] = 1;
            }
            keep.push(Box::new(std::hint::black_box(v)));
            said("done");
        }
        "files" => {
            for _ in 0..200 {
                keep.push(Box::new(std::fs::File::open("/dev/null").unwrap()));
            }
            said("done");
        }
        other => panic!("unknown child role {other}"),
    }
    while !stdin_closed.load(Ordering::SeqCst) && Instant::now() < deadline {
        let _ = go_rx.recv_timeout(Duration::from_millis(100));
    }
    drop(keep);
}

/// A child in a role; killed and reaped on drop.
struct Kid {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Kid {
    fn start(role: &str) -> Kid {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "process::child_role",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ROLE, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the child role");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut kid = Kid {
            child,
            stdin,
            stdout,
        };
        kid.expect("ready");
        kid
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn go(&mut self) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "go").unwrap();
        stdin.flush().unwrap();
    }

    fn expect(&mut self, what: &str) {
        let want = format!("{SAY} {what}");
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the child ended before saying {what:?}");
            // libtest may print "test process::child_role ... " on the same line first.
            if line.trim_end().ends_with(&want) {
                return;
            }
        }
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sampler(pid: u32) -> ProcessSampler {
    ProcessSampler::new(ProcessTarget::Pid(pid), std::process::id()).unwrap()
}

#[test]
fn cpu_of_a_process_that_burns_it() {
    let mut kid = Kid::start("burn");
    let mut s = sampler(kid.pid());
    let start = s.start(Instant::now()).expect("the child is alive");
    kid.go();
    // Sample until the child has used 0.3 s of CPU: however busy this machine is, it gets there.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut samples = Vec::new();
    let first_cpu = loop {
        std::thread::sleep(Duration::from_millis(200));
        let x = s.sample(Instant::now()).expect("the child is alive");
        samples.push(x);
        if samples.len() == 1 {
            continue;
        }
        if x.cpu_seconds - samples[0].cpu_seconds >= 0.3 {
            break samples[0].cpu_seconds;
        }
        assert!(Instant::now() < deadline, "the child used no CPU in 30 s");
    };
    let last = samples.last().unwrap();
    // The percentages, weighted by their intervals, add up to the CPU time used (to the tick).
    let mut from_percent = 0.0;
    let mut before = samples[0].gauges.at;
    for x in &samples[1..] {
        from_percent += x.cpu_percent / 100.0 * (x.gauges.at - before).as_secs_f64();
        before = x.gauges.at;
    }
    let used = last.cpu_seconds - first_cpu;
    assert!(
        (from_percent - used).abs() < 0.05,
        "{from_percent} vs {used}"
    );
    assert!(samples.iter().any(|x| x.cpu_percent > 1.0), "{samples:#?}");
    assert_eq!(start.processes, 1);
    assert!(last.gauges.threads >= 2, "main thread and the stdin reader");
}

#[test]
fn rss_of_a_process_that_allocates_100_mb() {
    let mut kid = Kid::start("alloc");
    let mut s = sampler(kid.pid());
    let before = s.start(Instant::now()).unwrap();
    kid.go();
    kid.expect("done");
    let after = s.sample(Instant::now()).unwrap();
    let growth = after.gauges.rss_bytes as i64 - before.rss_bytes as i64;
    assert!(growth >= 80 << 20, "RSS grew by {growth} bytes only");
}

#[test]
fn fds_of_a_process_that_opens_files() {
    let mut kid = Kid::start("files");
    let mut s = sampler(kid.pid());
    let before = s.start(Instant::now()).unwrap().fds.unwrap();
    kid.go();
    kid.expect("done");
    let after = s.sample(Instant::now()).unwrap().gauges.fds.unwrap();
    assert!(before < 50, "{before} fds before");
    assert!(after >= before + 200, "{before} -> {after}");
}

/// `sleep` under a name nothing else on this machine has: a symlink, because a process's name
/// (comm) is the name it was executed by, and a copy would have to be written and then executed,
/// which races with other tests forking (ETXTBSY).
struct Sleepers {
    name: String,
    dir: std::path::PathBuf,
    children: Vec<Child>,
}

impl Sleepers {
    fn start(n: usize) -> Sleepers {
        // comm holds 15 bytes: keep the name within them so comm and name agree.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let k = NEXT.fetch_add(1, Ordering::SeqCst);
        let name = format!("hs{}-{k}", std::process::id() % 10_000_000);
        let dir = std::env::temp_dir().join(format!("herd-monitor-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(&name);
        let sleep = ["/bin/sleep", "/usr/bin/sleep"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .expect("coreutils sleep");
        std::os::unix::fs::symlink(sleep, &exe).unwrap();
        let children = (0..n)
            .map(|_| Command::new(&exe).arg("60").spawn().unwrap())
            .collect();
        Sleepers {
            name,
            dir,
            children,
        }
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_name_counts_every_process_of_it_and_notes_one_that_exits() {
    let mut sleepers = Sleepers::start(2);
    let pids: Vec<u32> = sleepers.children.iter().map(Child::id).collect();
    let mut s = ProcessSampler::new(
        ProcessTarget::Name(sleepers.name.clone()),
        std::process::id(),
    )
    .unwrap();
    let start = s.start(Instant::now()).unwrap();
    assert_eq!(start.processes, 2);
    let mut seen = s.pids().to_vec();
    seen.sort_unstable();
    let mut want = pids.clone();
    want.sort_unstable();
    assert_eq!(seen, want);
    assert_eq!(s.pid(), pids[0], "the oldest process names the series");

    let mut first = sleepers.children.remove(0);
    first.kill().unwrap();
    first.wait().unwrap();
    let x = s.sample(Instant::now()).unwrap();
    assert_eq!(x.gauges.processes, 1);
    let notes: Vec<&str> = s.notes().iter().map(|n| n.text.as_str()).collect();
    assert_eq!(notes, [format!("pid {} exited", pids[0])]);
}

#[test]
fn missing_targets_are_refused_before_the_watch_starts() {
    let plan = WatchPlan {
        processes: vec![
            ProcessTarget::Pid(5_000_000),
            ProcessTarget::Name("no-such-process-herd".into()),
        ],
        ..WatchPlan::default()
    };
    let problems: Vec<String> = prepare(&plan)
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("no process has pid 5000000"),
        "{problems:?}"
    );
    assert!(problems[1].contains("no-such-process-herd"), "{problems:?}");
}

#[test]
fn a_process_that_exits_mid_watch_ends_its_series_with_a_note() {
    let mut sleepers = Sleepers::start(1);
    let pid = sleepers.children[0].id();
    let plan = WatchPlan {
        processes: vec![ProcessTarget::Pid(pid)],
        interval: Duration::from_millis(50),
        ..WatchPlan::default()
    };
    let watcher = prepare(&plan).unwrap().start(Instant::now()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut child = sleepers.children.remove(0);
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let seen = watcher.stop();
    let p = &seen.processes[0];
    assert_eq!(p.pid, pid);
    assert!(p.start.is_some());
    assert!(!p.samples.is_empty(), "sampled while it ran");
    let notes: Vec<&str> = p.notes.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(
        notes,
        [
            format!("pid {pid} exited").as_str(),
            "the series ends: the process is gone"
        ]
    );
    // On the time axis: increasing, after the start.
    let ts: Vec<f64> = p.samples.iter().map(|x| seen.t(x.gauges.at)).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "{ts:?}");
    assert!(ts[0] > 0.0);
}

#[test]
fn fresh_readings_are_handed_once_each_while_the_watch_goes_on() {
    let sleepers = Sleepers::start(1);
    let pid = sleepers.children[0].id();
    let plan = WatchPlan {
        processes: vec![ProcessTarget::Pid(pid)],
        interval: Duration::from_millis(20),
        ..WatchPlan::default()
    };
    let watcher = prepare(&plan).unwrap().start(Instant::now()).unwrap();
    let mut handed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while handed.len() < 3 && Instant::now() < deadline {
        let fresh = watcher.fresh();
        assert_eq!(fresh.processes.len(), 1);
        assert_eq!(fresh.processes[0].pid, pid);
        handed.extend(fresh.processes[0].samples.iter().map(|s| s.gauges.at));
        std::thread::sleep(Duration::from_millis(5));
    }
    let seen = watcher.stop();
    let all: Vec<Instant> = seen.processes[0]
        .samples
        .iter()
        .map(|s| s.gauges.at)
        .collect();
    assert!(
        handed.len() >= 3,
        "readings reach the live outputs as taken"
    );
    assert_eq!(
        all[..handed.len()],
        handed[..],
        "each reading once, in order"
    );
}
