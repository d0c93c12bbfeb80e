//! Whether a QUIC connection's TLS handshake resumed an earlier session. quinn-proto does not
//! pass rustls' handshake kind on, but a resumed TLS 1.3 handshake never checks the server's
//! certificate (the session vouches for it), so the QUIC config's verifier counts its checks
//! on the thread that makes them: a connection whose handshake moved the count was a full one.
//! The handshake runs inside the connection's `handle_datagram`, on the worker's thread, so
//! the count read around that call belongs to that connection alone.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::cell::Cell;
use std::sync::Arc;

thread_local! {
    static CHECKS: Cell<u64> = const { Cell::new(0) };
}

/// Server certificates checked on this thread so far.
pub(crate) fn checks() -> u64 {
    CHECKS.with(Cell::get)
}

/// `inner`, counting its certificate checks on the calling thread.
pub(crate) fn counting_checks(inner: Arc<dyn ServerCertVerifier>) -> Arc<dyn ServerCertVerifier> {
    Arc::new(Counting(inner))
}

#[derive(Debug)]
struct Counting(Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for Counting {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        CHECKS.with(|c| c.set(c.get() + 1));
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.0.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.0.root_hint_subjects()
    }
}
