//! The fake server the workload tests run against: real HTTP/1.1 answers read by the real
//! parser, on a virtual clock (think times and rates take no real time); workloads compiled
//! from text, beside files of their own.

use herd_engine::fake::VirtualClock;
use herd_engine::{run, Clock, Control, Event, Failure, Io, Transport};
use herd_http::ResponseParser;
use herd_workload::Workload;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub type Reply = (u16, Vec<(String, String)>, String);

/// 200 with `body` and no headers.
pub fn ok(body: &str) -> Reply {
    (200, Vec::new(), body.to_owned())
}
/// The fake server: request text and index in, reply out.
type Answer = dyn Fn(&str, usize) -> Reply + Send + Sync;

/// Answers at once by request line, in real HTTP/1.1 read by the real parser, on a virtual
/// clock (think times and rates take no real time); remembers every request's bytes and
/// buffer address.
#[derive(Clone)]
pub struct Fake {
    pub seen: Arc<Mutex<Vec<(String, usize)>>>,
    answer: Arc<Answer>,
    clock: Arc<VirtualClock>,
}

impl Fake {
    pub fn new(answer: impl Fn(&str, usize) -> Reply + Send + Sync + 'static) -> Self {
        Fake {
            seen: Arc::default(),
            answer: Arc::new(answer),
            clock: VirtualClock::new(),
        }
    }
    pub fn requests(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(r, _)| r.clone())
            .collect()
    }
    pub fn wire(&self) -> Wire {
        Wire {
            fake: self.clone(),
            conns: HashMap::new(),
            next: 0,
        }
    }
}

pub struct Wire {
    fake: Fake,
    /// connection id -> (token, bytes waiting to be read, announced)
    conns: HashMap<u64, (usize, Vec<u8>, bool)>,
    next: u64,
}

impl Transport for Wire {
    type Conn = u64;
    type Session = herd_engine::Ordered<ResponseParser>;
    fn connect(&mut self, token: usize) -> Result<u64, Failure> {
        self.next += 1;
        self.conns.insert(self.next, (token, Vec::new(), false));
        Ok(self.next)
    }
    fn establish(&mut self, _: &mut u64) -> Result<bool, Failure> {
        Ok(true)
    }
    fn write(&mut self, c: &mut u64, bytes: &[u8]) -> Result<Io, Failure> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let n = {
            let mut seen = self.fake.seen.lock().unwrap();
            seen.push((text.clone(), bytes.as_ptr() as usize));
            seen.len() - 1
        };
        let (status, headers, body) = (self.fake.answer)(&text, n);
        let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
        for (k, v) in headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&body);
        let conn = self.conns.get_mut(c).expect("open");
        conn.1.extend_from_slice(out.as_bytes());
        conn.2 = false;
        Ok(Io::Done(bytes.len()))
    }
    fn read(&mut self, c: &mut u64, buf: &mut [u8]) -> Result<Io, Failure> {
        let conn = self.conns.get_mut(c).expect("open");
        if conn.1.is_empty() {
            return Ok(Io::Blocked);
        }
        let n = conn.1.len().min(buf.len());
        buf[..n].copy_from_slice(&conn.1[..n]);
        conn.1.drain(..n);
        Ok(Io::Done(n))
    }
    fn close(&mut self, c: u64) {
        self.conns.remove(&c);
    }
    fn wait(&mut self, until: Instant, events: &mut Vec<Event>) -> Result<(), Failure> {
        let mut any = false;
        for (token, inbox, announced) in self.conns.values_mut() {
            if !inbox.is_empty() && !*announced {
                *announced = true;
                any = true;
                events.push(Event {
                    token: *token,
                    readable: true,
                    writable: true,
                    closed: false,
                });
            }
        }
        if !any {
            self.fake.clock.advance_to(until);
        }
        Ok(())
    }
    fn session(&self, _conn: &u64, window: usize, started: Instant) -> Self::Session {
        herd_engine::Ordered::new(window, started)
    }
    fn clock(&self) -> &dyn Clock {
        &*self.fake.clock
    }
}

/// Runs `w`'s plan on one thread against `fake`.
pub fn run_on(w: &Workload, fake: Fake) -> herd_engine::RunOutput<herd_workload::Tally> {
    let plan = w.plan(1);
    let clock = Arc::clone(&fake.clock);
    run(
        &plan,
        clock,
        |_| Ok(fake.wire()),
        |_| w.script(),
        Arc::new(Control::new()),
        |_| {},
    )
    .expect("the plan runs")
}

/// Compiles `src` as `w.yaml` in the current directory, or panics with its diagnostics.
pub fn compile(src: &str) -> Workload {
    Workload::compile(src, Path::new("w.yaml"), Path::new(".")).unwrap_or_else(|d| panic!("{d}"))
}

/// Compiles `src` beside `files` (name, contents) in a directory of its own, then removes it.
pub fn compile_in(src: &str, files: &[(&str, &str)]) -> Workload {
    let dir = fresh_dir("workload");
    for (name, contents) in files {
        std::fs::write(dir.join(name), contents).unwrap();
    }
    let w = Workload::compile(src, Path::new("w.yaml"), &dir).unwrap_or_else(|d| panic!("{d}"));
    let _ = std::fs::remove_dir_all(&dir);
    w
}

/// A new, empty directory for one test: the tests run in parallel in one process, and a file
/// shared between them could be read while another test rewrites it.
pub fn fresh_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("herd-{name}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
