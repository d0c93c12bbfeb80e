//! The dashboard's small HTTP/1.1 server on std: a thread accepting, a thread per browser.
//! `GET /` is the page with the view as it stands, `GET /events` the Server-Sent Events that
//! replace it at each closed second, `POST /stop` stops the run when allowed, `GET /report` the
//! final report. A handful of browsers, once a second: a web framework would be the larger part
//! of herd for that.

use super::control::Stopper;
use super::page::page;
use super::view::View;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Browsers served at once; more get 503 (each holds a thread for its event stream).
const MAX_CLIENTS: usize = 32;
/// A comment line this often keeps proxies from closing an idle stream and finds closed tabs.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// What the sink and the browsers' threads share.
#[derive(Default)]
pub struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
pub struct State {
    pub view: View,
    /// Where the final report is, or how to make one: said on the page at the end.
    pub report_hint: String,
    /// The final report's page, once the run ended.
    pub report: Option<Arc<str>>,
    /// Bumped at each change: what the browsers have been sent is compared with it.
    version: u64,
    /// The view as HTML and the version it was made at: made once per second however many
    /// browsers watch, and never when none does.
    cache: Option<(u64, Arc<str>)>,
    /// Browsers with an event stream open (a stream ends once it told the run ended).
    pub watching: usize,
    closing: bool,
}

impl State {
    /// The view changed: the browsers are sent it again.
    pub fn changed(&mut self) {
        self.version += 1;
    }

    /// The view as HTML, when the cache has the current version.
    fn cached(&self) -> Option<Arc<str>> {
        match &self.cache {
            Some((v, html)) if *v == self.version => Some(Arc::clone(html)),
            _ => None,
        }
    }
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The view as HTML at version `seconds`, made once per version. The sink adds seconds
    /// while the page is drawn: only a copy is taken under the lock, and drawn outside it.
    fn fragment(&self, s: MutexGuard<'_, State>) -> (u64, Arc<str>) {
        let version = s.version;
        if let Some(html) = s.cached() {
            return (version, html);
        }
        let (frame, hint) = (s.view.frame(), s.report_hint.clone());
        drop(s);
        let html: Arc<str> = super::html::fragment(&frame, &hint).into();
        let mut s = self.lock();
        if s.cache.as_ref().is_none_or(|(v, _)| *v < version) {
            s.cache = Some((version, Arc::clone(&html)));
        }
        (version, html)
    }

    /// Changes the state under the lock, then tells the browsers.
    pub fn change(&self, f: impl FnOnce(&mut State)) {
        {
            let mut s = self.lock();
            f(&mut s);
            s.changed();
        }
        self.notify();
    }

    /// Wakes every browser's stream: the view changed.
    pub fn notify(&self) {
        self.changed.notify_all();
    }

    /// Waits until every browser watching has been told the run ended, or `grace` passed;
    /// then closes the streams still open.
    pub fn await_told(&self, grace: Duration) {
        let deadline = std::time::Instant::now() + grace;
        let mut s = self.lock();
        while s.watching > 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            s = self
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        s.closing = true;
        drop(s);
        self.notify();
    }
}

pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(
        listener: TcpListener,
        shared: Arc<Shared>,
        stopper: Option<Stopper>,
    ) -> std::io::Result<Server> {
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("herd-dashboard".into())
                .spawn(move || accept(listener, shared, stopper, stop))?
        };
        Ok(Server {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept call so the thread sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept(
    listener: TcpListener,
    shared: Arc<Shared>,
    stopper: Option<Stopper>,
    stop: Arc<AtomicBool>,
) {
    let clients = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut conn) = conn else { continue };
        let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
        if clients.fetch_add(1, Ordering::Relaxed) >= MAX_CLIENTS {
            clients.fetch_sub(1, Ordering::Relaxed);
            respond(
                &mut conn,
                "503 Service Unavailable",
                "text/plain",
                b"too many browsers\n",
            );
            continue;
        }
        let (shared, stopper, count) = (Arc::clone(&shared), stopper.clone(), Arc::clone(&clients));
        let spawned = std::thread::Builder::new()
            .name("herd-dashboard-client".into())
            .spawn(move || {
                serve(conn, &shared, stopper.as_ref());
                count.fetch_sub(1, Ordering::Relaxed);
            });
        if spawned.is_err() {
            clients.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A request's head, as far as the dashboard reads it.
struct Head {
    method: String,
    path: String,
    query: String,
    control: bool,
    bearer: Option<String>,
}

fn serve(mut conn: TcpStream, shared: &Shared, stopper: Option<&Stopper>) {
    let Some(head) = read_head(&mut conn) else {
        respond(
            &mut conn,
            "400 Bad Request",
            "text/plain",
            b"a bad request\n",
        );
        return;
    };
    match (head.method.as_str(), head.path.as_str()) {
        ("GET", "/") => {
            let watching = shared.lock().watching;
            let (_, fragment) = shared.fragment(shared.lock());
            let body = page(&fragment, true, stopper.is_some());
            // How many browsers follow the run: a script (or a test) can wait for one.
            let extra = format!("X-Herd-Watching: {watching}\r\n");
            respond_with(
                &mut conn,
                "200 OK",
                "text/html; charset=utf-8",
                &extra,
                body.as_bytes(),
            );
        }
        ("GET", "/events") => events(conn, shared),
        ("GET", "/report") => match shared.lock().report.clone() {
            Some(html) => respond(
                &mut conn,
                "200 OK",
                "text/html; charset=utf-8",
                html.as_bytes(),
            ),
            None => respond(
                &mut conn,
                "404 Not Found",
                "text/plain",
                b"the run has not finished yet\n",
            ),
        },
        ("POST", "/stop") => {
            let (status, text) =
                super::control::stop(stopper, &head.query, head.bearer.as_deref(), head.control);
            respond(
                &mut conn,
                status,
                "text/plain; charset=utf-8",
                text.as_bytes(),
            );
        }
        _ => respond(
            &mut conn,
            "404 Not Found",
            "text/plain",
            b"herd's dashboard serves /, /events, /report and POST /stop\n",
        ),
    }
}

/// The event stream of one browser: the whole view at once (a late joiner sees everything so
/// far), then the view again at each closed second, and at the end the final report.
fn events(mut conn: TcpStream, shared: &Shared) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                Connection: close\r\n\r\n";
    if conn.write_all(head.as_bytes()).is_err() {
        return;
    }
    shared.lock().watching += 1;
    let mut sent = None;
    loop {
        let (message, report) = {
            let mut s = shared.lock();
            let mut idle = false;
            while !s.closing && sent == Some(s.version) && !idle {
                let (g, t) = shared
                    .changed
                    .wait_timeout(s, KEEPALIVE)
                    .unwrap_or_else(|e| e.into_inner());
                s = g;
                idle = t.timed_out();
            }
            if sent == Some(s.version) {
                if s.closing {
                    break;
                }
                (": still running\n\n".to_owned(), None)
            } else {
                // The report is taken with the view it goes with: the end's.
                let report = s.report.clone().filter(|_| s.view.ended());
                let (version, html) = shared.fragment(s);
                sent = Some(version);
                (event("view", &html), report)
            }
        };
        if conn.write_all(message.as_bytes()).is_err() {
            break;
        }
        if let Some(report) = report {
            let end = event("report", &report) + &event("end", "finished");
            let _ = conn.write_all(end.as_bytes());
            let _ = conn.shutdown(Shutdown::Write);
            break;
        }
    }
    shared.lock().watching -= 1;
    shared.notify();
}

/// One Server-Sent Event: each line of `data` on a `data:` line of its own.
fn event(name: &str, data: &str) -> String {
    let mut out = format!("event: {name}\n");
    for line in data.lines() {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

fn respond(conn: &mut TcpStream, status: &str, kind: &str, body: &[u8]) {
    respond_with(conn, status, kind, "", body);
}

/// As [`respond`], with `extra` header lines (each ending in CRLF).
fn respond_with(conn: &mut TcpStream, status: &str, kind: &str, extra: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{extra}\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn
        .write_all(head.as_bytes())
        .and_then(|()| conn.write_all(body));
    let _ = conn.shutdown(Shutdown::Write);
}

/// The request's head, read up to 16 KiB (a body is not read: /stop takes none).
fn read_head(conn: &mut TcpStream) -> Option<Head> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = conn.read(&mut chunk).ok()?;
        if n == 0 || buf.len() > 16 * 1024 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 48];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(_)) => {
                let target = req.path?;
                let (path, query) = target.split_once('?').unwrap_or((target, ""));
                let header = |name: &str| {
                    req.headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .and_then(|h| std::str::from_utf8(h.value).ok())
                };
                return Some(Head {
                    method: req.method?.to_owned(),
                    path: path.to_owned(),
                    query: query.to_owned(),
                    control: header("x-herd-control") == Some("stop"),
                    bearer: header("authorization")
                        .and_then(|v| v.strip_prefix("Bearer "))
                        .map(str::to_owned),
                });
            }
            Ok(httparse::Status::Partial) => continue,
            Err(_) => return None,
        }
    }
}
