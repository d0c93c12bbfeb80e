//! A very small HTTP/1.1 server on std for the metrics endpoint: one thread, one request per
//! connection, `GET /metrics` and nothing else worth serving. Scrapes come once every few
//! seconds; a web framework would be the larger part of herd for that.

use super::exposition::Exposition;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Scrapes served of the finished run, and the signal that one came.
    scraped: Arc<(Mutex<u64>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    pub fn start(addr: SocketAddr, state: Arc<Mutex<Exposition>>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let scraped = Arc::new((Mutex::new(0u64), Condvar::new()));
        let thread = {
            let (stop, scraped) = (Arc::clone(&stop), Arc::clone(&scraped));
            std::thread::Builder::new()
                .name("herd-metrics".into())
                .spawn(move || serve(listener, state, stop, scraped))?
        };
        Ok(MetricsServer {
            addr,
            stop,
            scraped,
            thread: Some(thread),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits until a scrape has read the finished run, or `grace` passed.
    pub fn await_last_scrape(&self, grace: Duration) {
        let (count, cv) = &*self.scraped;
        let deadline = Instant::now() + grace;
        let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
        while *n == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            n = cv
                .wait_timeout(n, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept call so the thread sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    listener: TcpListener,
    state: Arc<Mutex<Exposition>>,
    stop: Arc<AtomicBool>,
    scraped: Arc<(Mutex<u64>, Condvar)>,
) {
    for conn in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut conn) = conn else { continue };
        let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = conn.set_write_timeout(Some(Duration::from_secs(2)));
        let Some(path) = request_path(&mut conn) else {
            continue;
        };
        let (status, kind, body, finished) = match path.as_str() {
            "/metrics" => {
                let e = state.lock().unwrap_or_else(|e| e.into_inner());
                (
                    "200 OK",
                    "text/plain; version=0.0.4; charset=utf-8",
                    e.render(),
                    e.finished,
                )
            }
            "/" => (
                "200 OK",
                "text/html; charset=utf-8",
                "<a href=\"/metrics\">/metrics</a>\n".to_owned(),
                false,
            ),
            _ => (
                "404 Not Found",
                "text/plain",
                "herd serves /metrics\n".to_owned(),
                false,
            ),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let sent = conn
            .write_all(head.as_bytes())
            .and_then(|()| conn.write_all(body.as_bytes()));
        let _ = conn.shutdown(Shutdown::Write);
        if finished && sent.is_ok() {
            let (count, cv) = &*scraped;
            *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            cv.notify_all();
        }
    }
}

/// The path of a `GET` request, its head read up to 8 KiB; `None` for anything else.
fn request_path(conn: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut chunk).ok()?;
        if n == 0 || buf.len() > 8192 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let line = buf.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split_whitespace();
    if parts.next()? != "GET" {
        return None;
    }
    let target = parts.next()?;
    Some(target.split('?').next().unwrap_or(target).to_owned())
}
