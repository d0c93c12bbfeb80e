use std::cell::RefCell;
use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tokio::task::LocalSet;

use crate::conn::{serve_http1, INITIAL_BUF};
use crate::counters::{bump, Counters};
use crate::delay::Delays;
use crate::response::Table;
use crate::route::default_routes;
use crate::worker::Worker;
use crate::{Config, MockError};

const BACKLOG: i32 = 1024;

/// A running mock server. It owns its threads: dropping it (or [`Server::shutdown`]) stops
/// them, closes every connection and waits for them to finish.
pub struct Server {
    addr: SocketAddr,
    stop: Option<watch::Sender<bool>>,
    threads: Vec<JoinHandle<()>>,
    counters: Vec<Arc<Counters>>,
}

/// Totals since the server started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted.
    pub connections: u64,
    /// Requests read (whatever they were answered with, including injected errors).
    pub requests: u64,
    /// Requests that got an injected error: a fault, or a 500 from `error_rate`.
    pub injected: u64,
}

impl Server {
    /// Binds the listen address and starts `config.threads` worker threads, each with its own
    /// single-threaded tokio runtime. Returns once the server accepts connections; it never
    /// touches the caller's runtime, so it works from sync code, tests and async code alike.
    ///
    /// An empty `config.routes` means [`default_routes`].
    pub fn start(config: Config) -> Result<Server, MockError> {
        if config.threads == 0 {
            return Err(MockError::InvalidConfig(
                "threads must be at least 1".into(),
            ));
        }
        let routes = if config.routes.is_empty() {
            default_routes()
        } else {
            config.routes
        };
        let table = Arc::new(Table::compile(&routes)?);
        let acceptor = config.tls.as_ref().map(crate::tls::acceptor).transpose()?;
        let listeners = bind(config.listen, config.threads)?;
        let addr = listeners[0].local_addr().map_err(|error| MockError::Bind {
            addr: config.listen,
            error,
        })?;

        let (stop, stopped) = watch::channel(false);
        let mut server = Server {
            addr,
            stop: Some(stop),
            threads: Vec::new(),
            counters: Vec::new(),
        };
        for (index, listener) in listeners.into_iter().enumerate() {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
                .map_err(MockError::Worker)?;
            let counters = Arc::new(Counters::default());
            server.counters.push(counters.clone());
            let worker = WorkerSeed {
                acceptor: acceptor.clone(),
                table: table.clone(),
                counters,
                seed: thread_seed(config.seed, index),
            };
            let stopped = stopped.clone();
            let handle = thread::Builder::new()
                .name(format!("herd-mock-{index}"))
                .spawn(move || run_worker(runtime, listener, worker, stopped))
                .map_err(MockError::Worker)?; // dropping `server` stops the threads already started
            server.threads.push(handle);
        }
        Ok(server)
    }

    /// The address the server listens on, with the real port when the config asked for port 0.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn stats(&self) -> ServerStats {
        let total = |field: fn(&Counters) -> &AtomicU64| {
            self.counters
                .iter()
                .map(|c| field(c).load(Ordering::Relaxed))
                .sum()
        };
        ServerStats {
            connections: total(|c| &c.connections),
            requests: total(|c| &c.requests),
            injected: total(|c| &c.injected),
        }
    }

    /// Stops accepting, closes every connection (stalled and delayed ones included), joins the
    /// worker threads, and returns the final totals.
    pub fn shutdown(mut self) -> ServerStats {
        self.stop();
        self.stats()
    }

    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        for thread in self.threads.drain(..) {
            // A worker can only panic on a bug; its connections are gone either way.
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .field("threads", &self.threads.len())
            .finish()
    }
}

/// What a worker thread needs to build its [`Worker`], which is not `Send`.
struct WorkerSeed {
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    table: Arc<Table>,
    counters: Arc<Counters>,
    seed: u64,
}

/// Spreads one user seed over the threads; thread 0 uses it as given.
fn thread_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn run_worker(
    runtime: Runtime,
    listener: StdListener,
    seed: WorkerSeed,
    mut stopped: watch::Receiver<bool>,
) {
    let local = LocalSet::new();
    local.block_on(&runtime, async move {
        let Ok(listener) = TcpListener::from_std(listener) else {
            return;
        };
        let acceptor = seed.acceptor;
        let worker = Rc::new(Worker {
            table: seed.table,
            counters: seed.counters,
            rng: RefCell::new(SmallRng::seed_from_u64(seed.seed)),
            delays: Delays::new(),
            grpc_failures: Default::default(),
        });
        tokio::task::spawn_local(Rc::clone(&worker.delays).drive());
        loop {
            tokio::select! {
                biased;
                // Also ends when the Server is gone without saying stop.
                _ = stopped.changed() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        bump(&worker.counters.connections);
                        match &acceptor {
                            Some(tls) => tokio::task::spawn_local(crate::tls::serve(stream, tls.clone(), worker.clone())),
                            None => tokio::task::spawn_local(serve(stream, worker.clone())),
                        };
                    }
                    // Out of file descriptors, most likely: give connections time to close
                    // instead of spinning on an accept that keeps failing.
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                },
            }
        }
    });
    // Dropping the LocalSet drops every connection task, closing their sockets; it must happen
    // inside the runtime they are registered with.
    let _entered = runtime.enter();
    drop(local);
}

/// Binds one listening socket per thread, all on the same address.
///
/// On Linux each gets SO_REUSEPORT so the kernel spreads connections over the threads (as
/// nginx's `reuseport`). That option would also let us share the port with some other server
/// without a word, so a fixed port is first bound once without it, to report "in use" properly.
fn bind(addr: SocketAddr, count: usize) -> Result<Vec<StdListener>, MockError> {
    let error = |error: io::Error| MockError::Bind { addr, error };
    if addr.port() != 0 {
        let probe = new_socket(addr).map_err(error)?;
        probe.bind(&addr.into()).map_err(error)?;
    }
    let mut listeners: Vec<StdListener> = Vec::with_capacity(count);
    let mut bound = addr;
    for _ in 0..count {
        let listener = if cfg!(target_os = "linux") || listeners.is_empty() {
            let socket = new_socket(bound).map_err(error)?;
            #[cfg(target_os = "linux")]
            socket.set_reuse_port(true).map_err(error)?;
            socket.bind(&bound.into()).map_err(error)?;
            socket.listen(BACKLOG).map_err(error)?;
            StdListener::from(socket)
        } else {
            // Elsewhere SO_REUSEPORT does not balance: share one listener between threads.
            listeners[0].try_clone().map_err(error)?
        };
        // With port 0 the first bind picks the port; the other threads join it.
        bound = listener.local_addr().map_err(error)?;
        listeners.push(listener);
    }
    Ok(listeners)
}

fn new_socket(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Restarting on a port whose last connections sit in TIME_WAIT must work.
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// A plain connection: HTTP/1.1, or h2c when it opens with HTTP/2's preface.
async fn serve(mut stream: TcpStream, worker: Rc<Worker>) {
    // Responses go out in one write each batch; Nagle would only hold the last one back.
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0; INITIAL_BUF];
    let mut end = 0;
    // A client that opens with HTTP/2's preface speaks h2c with prior knowledge (RFC 9113
    // section 3.3): one port serves both, as nghttpd and h2load expect.
    loop {
        match stream.read(&mut buf[end..]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => end += n,
        }
        let seen = end.min(crate::h2::PREFACE.len());
        if buf[..seen] != crate::h2::PREFACE[..seen] {
            break;
        }
        if seen == crate::h2::PREFACE.len() {
            buf.truncate(end);
            return crate::h2::serve(stream, buf, worker).await;
        }
    }
    serve_http1(stream, buf, end, worker).await;
}
