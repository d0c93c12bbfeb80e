//! What herd's [`Transport`](herd_engine::Transport) is made of: a run's [`HttpTransport`] (the
//! address, TLS config, proxy), each worker thread's [`Wire`] (a readiness poll and an alarm) and
//! each [`Conn`] (a socket, and for https the TLS session over it). Their I/O is in
//! `transport.rs`, which also picks each connection's session (`session.rs`): a session
//! drives a `Wire`, so the two are kept apart from the wire itself.

use crate::alarm::{Wakeup, ALARM};
use crate::protocol::Protocol;
use crate::proxy::{Proxy, Tunnel};
use crate::tls::{client_config, server_name, TlsOptions};
use crate::{HttpError, Scheme, Target};
use herd_engine::SystemClock;
use mio::net::TcpStream;
use mio::{Events, Poll};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

/// What a run's connections go to, built once and shared by the worker threads: the address,
/// and for https the TLS config (it holds the session cache, so reconnects resume sessions
/// instead of paying a full handshake) and the name the certificate must match.
#[derive(Clone)]
pub struct HttpTransport {
    addr: SocketAddr,
    protocol: Protocol,
    tls: Option<Tls>,
    source: Option<IpAddr>,
    /// Through a proxy, https: the `CONNECT` each new connection opens its tunnel with.
    tunnel: Option<Arc<[u8]>>,
    /// What `addr` is, for messages: "" (the target), or "the proxy ".
    via: &'static str,
}

#[derive(Clone)]
pub(crate) struct Tls {
    pub(crate) config: Arc<ClientConfig>,
    pub(crate) name: ServerName<'static>,
}

impl HttpTransport {
    pub fn new(target: &Target, tls: TlsOptions) -> Result<Self, HttpError> {
        let tls_setup = match target.scheme() {
            Scheme::Http => None,
            Scheme::Https => Some(Tls {
                config: client_config(&tls)?,
                name: server_name(target.host())?,
            }),
        };
        Ok(HttpTransport {
            addr: target.addr(),
            protocol: Protocol::Http1,
            tls: tls_setup,
            source: tls.source,
            tunnel: None,
            via: "",
        })
    }

    /// Speaks `protocol` on every connection; for HTTP/2 over https, TLS offers `h2` (then
    /// `http/1.1`) by ALPN, and a connection whose server picks anything else fails.
    pub fn speaking(mut self, protocol: Protocol) -> Self {
        if let (Some(tls), Protocol::Http2(_) | Protocol::WebSocketH2(..)) =
            (&mut self.tls, &protocol)
        {
            let mut config = ClientConfig::clone(&tls.config);
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            tls.config = Arc::new(config);
        }
        self.protocol = protocol;
        self
    }

    /// Connections go to `proxy`: for https and WebSockets each opens a tunnel to `target`
    /// first (TLS then runs end to end); for http the requests must be in absolute form
    /// ([`Proxy::absolute_form`]).
    pub fn through(mut self, proxy: &Proxy, target: &Target) -> Self {
        self.addr = proxy.addr;
        self.via = "the proxy ";
        // A WebSocket's Upgrade goes through a tunnel too, as browsers send ws:// through a
        // forward proxy: the proxy would not pass on the upgraded connection's frames.
        if target.scheme() == Scheme::Https || target.websocket() {
            self.tunnel = Some(proxy.connect_request(target));
        }
        self
    }

    /// The transport of one worker thread: its own poll and alarm.
    pub fn wire(&self) -> Result<Wire, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create an event loop: {e}"))?;
        let wakeup = Wakeup::register(poll.registry(), ALARM);
        Ok(Wire {
            poll,
            events: Events::with_capacity(1024),
            addr: self.addr,
            protocol: self.protocol.clone(),
            tls: self.tls.clone(),
            source: self.source,
            tunnel: self.tunnel.clone(),
            via: self.via,
            wakeup,
            clock: SystemClock,
        })
    }
}

/// One worker thread's connections and the poll that says which of them are ready.
pub struct Wire {
    pub(crate) poll: Poll,
    pub(crate) events: Events,
    pub(crate) addr: SocketAddr,
    pub(crate) protocol: Protocol,
    pub(crate) tls: Option<Tls>,
    pub(crate) source: Option<IpAddr>,
    pub(crate) tunnel: Option<Arc<[u8]>>,
    pub(crate) via: &'static str,
    /// Wakes the poll on time (None: the poll's millisecond timeout does).
    pub(crate) wakeup: Wakeup,
    pub(crate) clock: SystemClock,
}

impl Conn {
    /// The protocol TLS's ALPN settled on, once the handshake is done.
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        self.tls.as_ref().and_then(|t| t.alpn_protocol())
    }
}

/// A connection: the socket, and for https the TLS session over it.
pub struct Conn {
    pub(crate) sock: TcpStream,
    pub(crate) tls: Option<Box<ClientConnection>>,
    /// The TCP connection is established (a tunnel or the TLS handshake may still be going on).
    pub(crate) tcp_up: bool,
    /// When the way to the server came up (TCP, and the tunnel through a proxy): the connect
    /// phase ends there and the TLS handshake's begins.
    pub(crate) up_at: Option<Instant>,
    /// A proxy tunnel still being opened (before the TLS handshake).
    pub(crate) tunnel: Option<Box<Tunnel>>,
}
