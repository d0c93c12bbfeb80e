//! TLS through rustls with the ring provider and Mozilla's roots (webpki-roots), so a run behaves
//! the same on every machine whatever its system store holds.

use crate::HttpError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Accept any server certificate: expired, self-signed, for another name. The handshake
    /// signatures are still checked, so the server must hold the key of the certificate it sent,
    /// but nothing says that certificate is the right one. For testing servers you control, never
    /// for measuring across a network you do not trust.
    pub insecure: bool,
    /// The local address connections are made from (ab's `-B`): several generators on one
    /// machine, each from its own loopback address, do not compete for local ports.
    pub source: Option<std::net::IpAddr>,
    /// CA certificates and a client identity read from files (`--cacert`, `--cert`, `--key`).
    pub files: Option<Arc<TlsFiles>>,
}

/// What a run's TLS trusts and presents beyond the defaults, read once before the run: the CA
/// certificates a server's certificate is checked against (in place of Mozilla's roots) and a
/// client certificate with its key, for servers that verify clients (nginx's
/// `ssl_verify_client on`).
#[derive(Debug)]
pub struct TlsFiles {
    roots: Option<RootCertStore>,
    identity: Option<Arc<CertifiedKey>>,
}

impl PartialEq for TlsFiles {
    /// Files are read once per run: the same reading is the same files.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for TlsFiles {}

impl TlsFiles {
    /// Reads the PEM files; `key` defaults to the certificate's own file (curl's habit).
    pub fn read(
        cacert: Option<&Path>,
        cert: Option<&Path>,
        key: Option<&Path>,
    ) -> Result<TlsFiles, HttpError> {
        let bad = |flag, path: &Path, reason: String| HttpError::TlsFile {
            flag,
            path: path.display().to_string(),
            reason,
        };
        let certs = |flag, path: &Path| -> Result<Vec<CertificateDer<'static>>, HttpError> {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| bad(flag, path, e.to_string()))?;
            if certs.is_empty() {
                return Err(bad(flag, path, "no PEM certificate in it".to_owned()));
            }
            Ok(certs)
        };
        let roots = match cacert {
            None => None,
            Some(path) => {
                let mut store = RootCertStore::empty();
                for c in certs("--cacert", path)? {
                    store
                        .add(c)
                        .map_err(|e| bad("--cacert", path, e.to_string()))?;
                }
                Some(store)
            }
        };
        let identity = match cert {
            None => None,
            Some(path) => {
                let chain = certs("--cert", path)?;
                let (flag, key_path) = match key {
                    Some(k) => ("--key", k),
                    None => ("--cert", path),
                };
                let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| {
                    bad(
                        flag,
                        key_path,
                        format!("no private key read ({e}); give it with --key"),
                    )
                })?;
                Some(Arc::new(identity(chain, key, (flag, key_path), path)?))
            }
        };
        Ok(TlsFiles { roots, identity })
    }
}

/// The client certificate `chain` (read from `cert`) with its `key` (read from the file the flag
/// names). rustls's own check that they belong together parses the certificate with webpki,
/// which refuses X.509 v1 (what `openssl x509 -req` makes without extensions), though servers
/// (nginx, curl's) take it; the key's public half is looked for in the certificate instead.
fn identity(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    (flag, key_path): (&'static str, &Path),
    cert: &Path,
) -> Result<CertifiedKey, HttpError> {
    let signing = rustls::crypto::ring::default_provider()
        .key_provider
        .load_private_key(key)
        .map_err(|_| HttpError::TlsFile {
            flag,
            path: key_path.display().to_string(),
            reason: "not a key herd can sign with (RSA, ECDSA P-256 or P-384, or Ed25519)"
                .to_owned(),
        })?;
    let certified = CertifiedKey::new(chain, signing);
    let belongs = match certified.keys_match() {
        Ok(()) => true,
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => false,
        // webpki could not read the certificate (a v1 one) or the key's public half is
        // unknown: a certificate holds its SubjectPublicKeyInfo as it is, byte for byte.
        Err(_) => match certified.key.public_key() {
            Some(spki) => certified
                .end_entity_cert()
                .is_ok_and(|c| contains(c.as_ref(), spki.as_ref())),
            None => true,
        },
    };
    if !belongs {
        return Err(HttpError::TlsFile {
            flag: "--key",
            path: key_path.display().to_string(),
            reason: format!(
                "does not match --cert {}: give the key the certificate was made for",
                cert.display()
            ),
        });
    }
    Ok(certified)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// One config per run, shared by every connection of every worker: it holds the session cache,
/// so reconnects resume sessions instead of paying a full handshake.
pub(crate) fn client_config(options: &TlsOptions) -> Result<Arc<ClientConfig>, HttpError> {
    let mut config = build(options, |b| b.with_safe_default_protocol_versions(), None)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A config for one HTTP/2 connection made outside the run's transport (a gRPC server's
/// reflection, asked before the run): ALPN `h2`, the run's trust and client certificate.
pub fn h2_client_config(options: &TlsOptions) -> Result<Arc<ClientConfig>, HttpError> {
    let mut config = build(options, |b| b.with_safe_default_protocol_versions(), None)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// The config QUIC connections carry HTTP/3 with: TLS 1.3 only (QUIC has no other) and ALPN
/// `h3`. Its session cache resumes reconnects, and early data is on: a resumed connection sends
/// its first replayable requests in 0-RTT. Its certificate checks are counted on each thread,
/// which tells a full handshake from a resumed one (`h3::resumption`).
pub(crate) fn quic_client_config(
    options: &TlsOptions,
) -> Result<(Arc<ClientConfig>, Arc<crate::h3::Tickets>), HttpError> {
    let mut config = build(
        options,
        |b| b.with_protocol_versions(&[&rustls::version::TLS13]),
        Some(crate::h3::counting_checks),
    )?;
    config.alpn_protocols = vec![b"h3".to_vec()];
    config.enable_early_data = true;
    let tickets = crate::h3::ticket_store();
    config.resumption = rustls::client::Resumption::store(tickets.clone());
    Ok((Arc::new(config), tickets))
}

type Wrap = fn(Arc<dyn ServerCertVerifier>) -> Arc<dyn ServerCertVerifier>;

type Versioned = rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>;

fn build(
    options: &TlsOptions,
    versions: impl FnOnce(
        rustls::ConfigBuilder<ClientConfig, rustls::WantsVersions>,
    ) -> Result<Versioned, rustls::Error>,
    wrap: Option<Wrap>,
) -> Result<ClientConfig, HttpError> {
    // Explicit rather than the process default, which depends on which crates enabled which
    // rustls features.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = versions(ClientConfig::builder_with_provider(provider.clone()))?;
    let files = options.files.as_deref();
    let roots = || match files.and_then(|f| f.roots.clone()) {
        Some(roots) => roots,
        None => RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        },
    };
    let verified = match (options.insecure, wrap) {
        (true, wrap) => {
            let any: Arc<dyn ServerCertVerifier> = Arc::new(AcceptAnyCertificate { provider });
            builder
                .dangerous()
                .with_custom_certificate_verifier(wrap.map_or(any.clone(), |w| w(any)))
        }
        (false, None) => builder.with_root_certificates(roots()),
        (false, Some(wrap)) => {
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots()), provider)
                .build()
                .map_err(|e| HttpError::Quic(e.to_string()))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(wrap(webpki))
        }
    };
    Ok(match files.and_then(|f| f.identity.as_ref()) {
        Some(identity) => verified.with_client_cert_resolver(Arc::new(
            rustls::sign::SingleCertAndKey::from(identity.clone()),
        )),
        None => verified.with_no_client_auth(),
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

/// What `conn`'s handshake settled on, once it is done.
pub(crate) fn negotiated(conn: &rustls::ClientConnection) -> Option<herd_engine::Negotiated> {
    let version = match conn.protocol_version()? {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3",
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2",
        other => other.as_str().unwrap_or("unknown"),
    };
    let cipher = conn
        .negotiated_cipher_suite()?
        .suite()
        .as_str()
        .unwrap_or("unknown");
    // The names herd offers; a server can only choose among them.
    let alpn = conn.alpn_protocol().map(|p| match p {
        b"h2" => "h2",
        b"http/1.1" => "http/1.1",
        _ => "other",
    });
    Some(herd_engine::Negotiated {
        version,
        cipher,
        alpn,
    })
}
