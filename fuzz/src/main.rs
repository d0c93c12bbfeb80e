//! `herd-fuzz [TARGET...] [--inputs N] [--seed S] [--time-limit-ms MS] [--mem-limit-mb MB]`:
//! runs each target (default: all) on its corpus and then on N mutants of it, and fails on the
//! first panic, an input taking more CPU time than the limit (a hang: still running at ten times
//! it, on the wall clock), or one that allocates more than the memory limit. The failing input
//! is written to fuzz/artifacts/TARGET-failure. Run it in release mode:
//! `cargo run --release -p herd-fuzz -- --inputs 10000000`.

use herd_fuzz::mutate::{mutate, MAX_LEN};
use herd_fuzz::{corpus, Target};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counts live bytes, and refuses one input more than the limit: the process then aborts, and
/// the abort handler saves the input.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        if live > LIMIT.load(Relaxed) {
            LIVE.fetch_sub(layout.size(), Relaxed);
            return std::ptr::null_mut();
        }
        PEAK.fetch_max(live, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The input being run, where the abort handler and the watchdog can reach it without
/// allocating: a fixed buffer and its length.
static mut CURRENT: [u8; MAX_LEN + 1] = [0; MAX_LEN + 1];
static CURRENT_LEN: AtomicUsize = AtomicUsize::new(0);
static mut ARTIFACT: *const libc::c_char = std::ptr::null();

fn set_current(input: &[u8]) {
    // Only the fuzzing thread writes; readers run when it is stuck or aborting.
    unsafe {
        let buf = &mut *std::ptr::addr_of_mut!(CURRENT);
        buf[..input.len()].copy_from_slice(input);
    }
    CURRENT_LEN.store(input.len(), Relaxed);
}

/// Writes the current input to the artifact path with system calls only (safe in a handler).
fn save_current() {
    unsafe {
        let path = ARTIFACT;
        if path.is_null() {
            return;
        }
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o644);
        if fd >= 0 {
            let buf = &*std::ptr::addr_of!(CURRENT);
            libc::write(fd, buf.as_ptr().cast(), CURRENT_LEN.load(Relaxed));
            libc::close(fd);
        }
    }
}

extern "C" fn on_abort(_: libc::c_int) {
    save_current();
    let msg = b"herd-fuzz: aborted (an allocation over the memory limit?); input saved\n";
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(3);
    }
}

/// The CPU time this thread has used. An input is judged slow by the CPU it took, not the wall
/// clock: on a shared machine (a fuzzer runs `nice`d beside builds) a thread waits for a core
/// for seconds, and a 1 ms input read as 1.8 s. A hang is still caught on the wall clock, at
/// ten times the limit, by the watchdog.
fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime fills the timespec it is given; the clock id is Linux's.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

struct Options {
    targets: Vec<Target>,
    inputs: u64,
    seed: u64,
    time_limit: Duration,
    mem_limit: usize,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        targets: Vec::new(),
        inputs: 100_000,
        seed: 1,
        time_limit: Duration::from_millis(1000),
        mem_limit: 512 << 20,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = args.next().ok_or(format!("{name} needs a value"))?;
            v.replace('_', "")
                .parse()
                .map_err(|_| format!("{name}: `{v}` is not a whole number"))
        };
        match a.as_str() {
            "--inputs" => o.inputs = value("--inputs")?,
            "--seed" => o.seed = value("--seed")?,
            "--time-limit-ms" => o.time_limit = Duration::from_millis(value("--time-limit-ms")?),
            "--mem-limit-mb" => o.mem_limit = (value("--mem-limit-mb")? as usize) << 20,
            name => o.targets.push(Target::by_name(name).ok_or_else(|| {
                let names: Vec<&str> = Target::all().iter().map(|t| t.name()).collect();
                format!("`{name}` is not a target: {}", names.join(", "))
            })?),
        }
    }
    if o.targets.is_empty() {
        o.targets = Target::all().to_vec();
    }
    Ok(o)
}

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("herd-fuzz: {e}");
            std::process::exit(2);
        }
    };
    let artifacts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    let _ = std::fs::create_dir_all(&artifacts);
    unsafe {
        libc::signal(libc::SIGABRT, on_abort as *const () as libc::sighandler_t);
    }
    // The watchdog: an input still running at 10 x the time limit is a hang.
    let started = Arc::new(AtomicU64::new(u64::MAX));
    let epoch = Instant::now();
    let hang = o.time_limit * 10;
    {
        let started = started.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let s = started.load(Relaxed);
            if s != u64::MAX && epoch.elapsed().as_millis() as u64 > s + hang.as_millis() as u64 {
                save_current();
                eprintln!("herd-fuzz: an input ran over {hang:?}: a hang; input saved");
                std::process::exit(4);
            }
        });
    }
    let failed = AtomicBool::new(false);
    for &target in &o.targets {
        let path = CString::new(
            artifacts
                .join(format!("{}-failure", target.name()))
                .to_string_lossy()
                .as_bytes(),
        )
        .expect("no NUL in the path");
        unsafe { ARTIFACT = path.into_raw() };
        let seeds = corpus(target.name());
        if seeds.is_empty() {
            eprintln!(
                "herd-fuzz: {}: no corpus in fuzz/corpus/{}",
                target.name(),
                target.name()
            );
            std::process::exit(2);
        }
        let mut rng = SmallRng::seed_from_u64(o.seed);
        let clock = Instant::now();
        let (mut slowest, mut peak) = (Duration::ZERO, 0usize);
        let total = seeds.len() as u64 + o.inputs;
        let mut ran = 0;
        for i in 0..total {
            let input = match seeds.get(i as usize) {
                Some(s) => s[..s.len().min(MAX_LEN)].to_vec(),
                None => {
                    let seed = &seeds[rng.gen_range(0..seeds.len())];
                    let other = &seeds[rng.gen_range(0..seeds.len())];
                    mutate(&mut rng, seed, other, target.dictionary())
                }
            };
            if i > 0 && i % 1_000_000 == 0 {
                // Progress a long run can be stopped at, with what it has shown so far.
                println!(
                    "{}: {i} inputs in {:.0} s, no failure so far",
                    target.name(),
                    clock.elapsed().as_secs_f64()
                );
            }
            set_current(&input);
            let base = LIVE.load(Relaxed);
            PEAK.store(base, Relaxed);
            LIMIT.store(base.saturating_add(o.mem_limit), Relaxed);
            let t0 = thread_cpu();
            started.store(epoch.elapsed().as_millis() as u64, Relaxed);
            let outcome = std::panic::catch_unwind(|| target.run(&input));
            started.store(u64::MAX, Relaxed);
            let took = thread_cpu().saturating_sub(t0);
            ran = i + 1;
            LIMIT.store(usize::MAX, Relaxed);
            slowest = slowest.max(took);
            peak = peak.max(PEAK.load(Relaxed).saturating_sub(base));
            let problem = if outcome.is_err() {
                Some("panicked".to_owned())
            } else if took > o.time_limit {
                Some(format!(
                    "took {took:?}, over the limit of {:?}",
                    o.time_limit
                ))
            } else {
                None
            };
            if let Some(p) = problem {
                save_current();
                eprintln!(
                    "herd-fuzz: {}: input {i} {p}; saved as fuzz/artifacts/{}-failure",
                    target.name(),
                    target.name()
                );
                failed.store(true, Relaxed);
                break;
            }
        }
        let secs = clock.elapsed().as_secs_f64();
        println!(
            "{}: {ran} inputs ({} seeds) in {secs:.1} s ({:.0}/s), {}; slowest input {:.2} ms of CPU, most memory one input held {:.1} MiB",
            target.name(),
            seeds.len(),
            ran as f64 / secs.max(1e-9),
            if failed.load(Relaxed) { "FAILED (above)" } else { "no failure" },
            slowest.as_secs_f64() * 1000.0,
            peak as f64 / (1 << 20) as f64
        );
    }
    if failed.load(Relaxed) {
        std::process::exit(1);
    }
}
