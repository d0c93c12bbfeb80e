//! TLS through rustls with the ring provider and Mozilla's roots (webpki-roots), so a run behaves
//! the same on every machine whatever its system store holds.

use crate::HttpError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Accept any server certificate: expired, self-signed, for another name. The handshake
    /// signatures are still checked, so the server must hold the key of the certificate it sent,
    /// but nothing says that certificate is the right one. For testing servers you control, never
    /// for measuring across a network you do not trust.
    pub insecure: bool,
    /// The local address connections are made from (ab's `-B`): several generators on one
    /// machine, each from its own loopback address, do not compete for local ports.
    pub source: Option<std::net::IpAddr>,
}

/// One config per run, shared by every connection of every worker: it holds the session cache,
/// so reconnects resume sessions instead of paying a full handshake.
pub(crate) fn client_config(options: TlsOptions) -> Result<Arc<ClientConfig>, HttpError> {
    let mut config = build(options, |b| b.with_safe_default_protocol_versions())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The config QUIC connections carry HTTP/3 with: TLS 1.3 only (QUIC has no other) and ALPN
/// `h3`. Its session cache resumes reconnects; early data stays off (see `H3Connection::ready`).
pub(crate) fn quic_client_config(options: TlsOptions) -> Result<Arc<ClientConfig>, HttpError> {
    let mut config = build(options, |b| {
        b.with_protocol_versions(&[&rustls::version::TLS13])
    })?;
    config.alpn_protocols = vec![b"h3".to_vec()];
    Ok(Arc::new(config))
}

type Versioned = rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>;

fn build(
    options: TlsOptions,
    versions: impl FnOnce(
        rustls::ConfigBuilder<ClientConfig, rustls::WantsVersions>,
    ) -> Result<Versioned, rustls::Error>,
) -> Result<ClientConfig, HttpError> {
    // Explicit rather than the process default, which depends on which crates enabled which
    // rustls features.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = versions(ClientConfig::builder_with_provider(provider.clone()))?;
    Ok(if options.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate { provider }))
            .with_no_client_auth()
    } else {
        let roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    })
}

/// The name the certificate must match, also sent as SNI (rustls sends none for IP addresses).
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, HttpError> {
    ServerName::try_from(host.to_owned()).map_err(|_| HttpError::ServerName {
        host: host.to_owned(),
    })
}

/// The verifier behind [`TlsOptions::insecure`].
#[derive(Debug)]
struct AcceptAnyCertificate {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
