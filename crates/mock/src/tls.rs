//! TLS for `herd serve --tls`: rustls (ring, as herd's client), ALPN offering h2 and http/1.1,
//! and a self-signed certificate for localhost when no files are given.

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

use crate::conn::serve_http1;
use crate::worker::Worker;
use crate::MockError;

/// A client that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the server's certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// Made at start for `localhost`, `127.0.0.1` and `::1`; clients must not verify it (herd's
    /// `--insecure`, h2load verifies nothing).
    SelfSigned,
    /// PEM files: the certificate chain and its private key.
    Files { cert: PathBuf, key: PathBuf },
}

pub(crate) fn acceptor(tls: &Tls) -> Result<TlsAcceptor, MockError> {
    let bad = |what: String| MockError::InvalidConfig(format!("TLS: {what}"));
    let (chain, key): (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) = match tls {
        Tls::SelfSigned => {
            let names = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
            let made = rcgen::generate_simple_self_signed(names)
                .map_err(|e| bad(format!("cannot make a self-signed certificate: {e}")))?;
            let key = PrivateKeyDer::try_from(made.key_pair.serialize_der())
                .map_err(|e| bad(e.to_string()))?;
            (vec![made.cert.der().clone()], key)
        }
        Tls::Files { cert, key } => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| bad(format!("certificate file {}: {e}", cert.display())))?;
            if chain.is_empty() {
                return Err(bad(format!(
                    "certificate file {} holds no CERTIFICATE block",
                    cert.display()
                )));
            }
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| bad(format!("key file {}: {e}", key.display())))?;
            (chain, key)
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| bad(format!("the key does not fit the certificate: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Completes the handshake, then serves what ALPN chose: HTTP/2 for `h2`, else HTTP/1.1.
pub(crate) async fn serve(stream: TcpStream, acceptor: TlsAcceptor, worker: Rc<Worker>) {
    let _ = stream.set_nodelay(true);
    let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await else {
        return;
    };
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    if h2 {
        crate::h2::serve(tls, Vec::new(), worker).await;
    } else {
        serve_http1(tls, vec![0; 8 << 10], 0, worker).await;
    }
}
