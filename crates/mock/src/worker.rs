//! What the connections of one worker thread share, and the byte stream each is served on.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use rand::rngs::SmallRng;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::counters::Counters;
use crate::delay::Delays;
use crate::response::Table;

/// State shared by all connections of one worker thread.
pub(crate) struct Worker {
    pub(crate) table: Arc<Table>,
    pub(crate) counters: Arc<Counters>,
    /// One stream per thread: with a single thread, the n-th request always gets the same draw.
    pub(crate) rng: RefCell<SmallRng>,
    /// Route latencies, timed to the microsecond.
    pub(crate) delays: Rc<Delays>,
    /// Failing gRPC calls so far: a route's `grpc-status` codes are taken in turn.
    pub(crate) grpc_failures: Cell<u64>,
}

/// A connection's byte stream, plain TCP or TLS over it.
pub(crate) trait Socket: AsyncRead + AsyncWrite + Unpin {
    /// The TCP socket beneath, for what only it can do (an abortive close).
    fn tcp(&self) -> &TcpStream;
}

impl Socket for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl Socket for tokio_rustls::server::TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }
}
