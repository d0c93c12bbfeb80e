use crate::conn::{Conn, Stream};
use crate::tls::{client_config, server_name, TlsOptions};
use crate::{HttpError, Scheme, Target};
use herd_engine::{Failure, Request, Response, Transport};
use herd_metrics::ErrorKind;
use rustls::pki_types::ServerName;
use std::net::SocketAddr;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// herd's [`Transport`]: HTTP/1.1 over TCP, or over TLS for `https` targets. Build it once and
/// clone it for each worker thread: clones share the TLS config and its session cache.
#[derive(Clone)]
pub struct HttpTransport {
    addr: SocketAddr,
    tls: Option<Tls>,
}

#[derive(Clone)]
struct Tls {
    connector: TlsConnector,
    server_name: ServerName<'static>,
}

impl HttpTransport {
    pub fn new(target: &Target, tls: TlsOptions) -> Result<Self, HttpError> {
        let tls = match target.scheme() {
            Scheme::Http => None,
            Scheme::Https => Some(Tls {
                connector: TlsConnector::from(client_config(tls)?),
                server_name: server_name(target.host())?,
            }),
        };
        Ok(HttpTransport {
            addr: target.addr(),
            tls,
        })
    }
}

impl HttpTransport {
    /// The address of a plain-HTTP target, which the direct worker can drive with
    /// [`crate::HttpCodec`]; `None` for https.
    pub fn plain_addr(&self) -> Option<SocketAddr> {
        self.tls.is_none().then_some(self.addr)
    }
}

impl Transport for HttpTransport {
    type Conn = Conn;

    async fn connect(&self) -> Result<Conn, Failure> {
        let tcp = TcpStream::connect(self.addr).await.map_err(|err| {
            Failure::new(
                ErrorKind::from_io(&err),
                format!("connect to {}: {err}", self.addr),
            )
        })?;
        // Requests go out in one write; Nagle would only hold them back.
        tcp.set_nodelay(true).map_err(|err| Failure::io(&err))?;
        let stream = match &self.tls {
            None => Stream::Plain(tcp),
            Some(tls) => {
                let tls = tls
                    .connector
                    .connect(tls.server_name.clone(), tcp)
                    .await
                    .map_err(|err| {
                        Failure::new(
                            ErrorKind::Tls,
                            format!("TLS handshake with {}: {err}", self.addr),
                        )
                    })?;
                Stream::Tls(Box::new(tls))
            }
        };
        Ok(Conn::new(stream))
    }

    async fn exchange(
        &self,
        conn: &mut Conn,
        req: &Request,
        resp: &mut Response,
    ) -> Result<(), Failure> {
        conn.exchange(req, resp).await
    }
}
