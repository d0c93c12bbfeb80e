//! Servers whose true limit is known, for `herd capacity` to find: a token bucket that admits
//! exactly N requests per second, and a server that serves at most K connections at once.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How the test server decides whether to answer 200 or 503.
pub enum Admit {
    /// A token bucket: `rate` tokens per second, at most `burst` saved up.
    PerSecond { rate: f64, burst: f64 },
    /// At most this many connections are served; requests on the others get 503. Each answer
    /// takes a millisecond, like a real server's work: an instant server would make herd's own
    /// CPU the limit, which herd rightly reports instead of a number.
    Connections(u64),
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// A tiny HTTP/1.1 server, a thread per connection, stopped on drop.
pub struct AdmissionServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl AdmissionServer {
    pub fn start(admit: Admit) -> AdmissionServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let burst = match admit {
            Admit::PerSecond { burst, .. } => burst,
            Admit::Connections(_) => 0.0,
        };
        let bucket = Arc::new(Mutex::new(Bucket {
            tokens: burst,
            last: Instant::now(),
        }));
        let admit = Arc::new(admit);
        let open = Arc::new(AtomicU64::new(0));
        let stop2 = Arc::clone(&stop);
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (admit, bucket, open) =
                    (Arc::clone(&admit), Arc::clone(&bucket), Arc::clone(&open));
                let n = open.fetch_add(1, Ordering::SeqCst) + 1;
                std::thread::spawn(move || {
                    serve(stream, &admit, &bucket, n);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        AdmissionServer {
            addr,
            stop,
            accept: Some(accept),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for AdmissionServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// Answers GET requests on one connection until the client closes it. `nth` is how many
/// connections were open when this one arrived.
fn serve(stream: TcpStream, admit: &Admit, bucket: &Mutex<Bucket>, nth: u64) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    let mut line = String::new();
    loop {
        // A request head: lines up to the empty one (herd's GETs carry no body).
        let mut got_any = false;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                if got_any {
                    break;
                }
                continue;
            }
            got_any = true;
        }
        let ok = match *admit {
            Admit::PerSecond { rate, burst } => {
                let mut b = bucket.lock().unwrap();
                let now = Instant::now();
                b.tokens = (b.tokens + now.duration_since(b.last).as_secs_f64() * rate).min(burst);
                b.last = now;
                if b.tokens >= 1.0 {
                    b.tokens -= 1.0;
                    true
                } else {
                    false
                }
            }
            Admit::Connections(k) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
                nth <= k
            }
        };
        let response: &[u8] = if ok {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        } else {
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"
        };
        if out.write_all(response).is_err() {
            return;
        }
    }
}
