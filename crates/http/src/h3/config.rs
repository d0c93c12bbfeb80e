//! What every QUIC connection toward one target shares, built once per run: the rustls config
//! (TLS 1.3, ALPN `h3`, the session cache that makes 0-RTT possible on reconnects), quinn's
//! transport settings and the address.

use crate::tls::{quic_client_config, server_name};
use crate::{HttpError, Scheme, Target, TlsOptions};
use quinn_proto as quic;
use quinn_proto::crypto::rustls::QuicClientConfig;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long a QUIC connection may hear nothing from the server before it is given up: the
/// time a server that went away silently takes to be classed `quic_timeout`.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The QUIC and TLS setup toward one target, shared by every connection of every worker.
#[derive(Clone)]
pub struct H3Config {
    pub(crate) client: quic::ClientConfig,
    pub(crate) endpoint: Arc<quic::EndpointConfig>,
    pub(crate) remote: SocketAddr,
    pub(crate) server_name: String,
    pub(crate) source: Option<std::net::IpAddr>,
    /// The run's session tickets, which tell the cipher suite the handshakes settled on.
    pub(crate) tickets: Arc<super::Tickets>,
}

impl std::fmt::Debug for H3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H3Config")
            .field("remote", &self.remote)
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl H3Config {
    /// HTTP/3 toward `target`, which must be an https:// URL (QUIC has no cleartext form).
    pub fn new(
        target: &Target,
        options: TlsOptions,
        idle_timeout: Duration,
    ) -> Result<H3Config, HttpError> {
        if target.scheme() != Scheme::Https {
            return Err(HttpError::H3Cleartext {
                suggestion: format!("https://{}{}", target.authority(), target.path_and_query()),
            });
        }
        server_name(target.host())?; // the same check, and message, as https
        let (tls, tickets) = quic_client_config(&options)?;
        let crypto = QuicClientConfig::try_from(tls).map_err(|e| HttpError::Quic(e.to_string()))?;
        let mut client = quic::ClientConfig::new(Arc::new(crypto));
        let mut transport = quic::TransportConfig::default();
        let idle = quic::IdleTimeout::try_from(idle_timeout)
            .map_err(|_| HttpError::Quic(format!("idle timeout {idle_timeout:?} is too long")))?;
        transport.max_idle_timeout(Some(idle));
        // A load generator reads responses as fast as they come: windows large enough that
        // flow control never paces a large body on loopback or a LAN.
        transport.stream_receive_window(quic::VarInt::from_u32(8 << 20));
        transport.receive_window(quic::VarInt::from_u32(32 << 20));
        client.transport_config(Arc::new(transport));
        Ok(H3Config {
            client,
            endpoint: Arc::new(quic::EndpointConfig::default()),
            remote: target.addr(),
            server_name: target.host().trim_matches(['[', ']']).to_owned(),
            source: options.source,
            tickets,
        })
    }

    /// The server's UDP address.
    /// TLS 1.3 session tickets held for the next connections' resumption (a server sends a
    /// connection its ticket after the handshake, at its own pace).
    pub fn tickets_held(&self) -> usize {
        self.tickets.held()
    }

    pub fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// The local address to bind a connection's UDP socket to (`--source`, else any).
    pub fn local(&self) -> SocketAddr {
        let ip = self.source.unwrap_or(match self.remote {
            SocketAddr::V4(_) => std::net::Ipv4Addr::UNSPECIFIED.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::UNSPECIFIED.into(),
        });
        SocketAddr::new(ip, 0)
    }
}
