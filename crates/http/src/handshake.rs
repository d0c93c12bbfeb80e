//! Why a TLS handshake failed, worded for a person: what went wrong and the flag that changes it
//! (`--cacert`, `-k`, `--cert`, `http://`), never rustls's debug names. TCP's handshakes hand
//! over the rustls error itself; QUIC's only its text, inside quinn's transport error, so both
//! are read here.

use herd_engine::Failure;
use herd_metrics::ErrorKind;
use rustls::{AlertDescription, CertificateError, Error, InvalidMessage};
use std::net::SocketAddr;

/// What herd trusts and how to change it, for every certificate it refused.
const TRUST: &str = "give the CA that signed it with --cacert FILE, or accept any certificate \
                     with -k (--insecure, for servers you control)";

/// The failure of a TCP connection's TLS handshake with `addr`.
pub(crate) fn failure(addr: SocketAddr, e: &Error) -> Failure {
    if matches!(e, Error::InvalidMessage(InvalidMessage::InvalidContentType)) {
        // What came back is no TLS record: an HTTP/1.1 answer to a ClientHello it could not
        // read. Every connection of the run would meet the same.
        return Failure::mismatched(
            ErrorKind::Tls,
            format!(
                "https://: the server at {addr} answered in plain HTTP, not TLS: use http:// \
                 instead of https://, or the port that serves TLS"
            ),
        );
    }
    Failure::new(
        ErrorKind::Tls,
        format!("TLS handshake with {addr}: {}", words(e)),
    )
}

/// `e` for a person.
pub(crate) fn words(e: &Error) -> String {
    match e {
        Error::InvalidCertificate(c) => certificate(c),
        Error::AlertReceived(a) => alert(*a),
        Error::NoCertificatesPresented => {
            "the server presented no certificate; accept it anyway with -k (testing only)".into()
        }
        Error::PeerIncompatible(_) => format!(
            "the server and herd share no TLS version, cipher or key exchange ({}); herd speaks \
             TLS 1.2 and 1.3 with modern ciphers",
            e.to_string().trim_start_matches("peer is incompatible: ")
        ),
        Error::InvalidMessage(_) | Error::InappropriateMessage { .. } => {
            format!("the server's TLS messages were not valid ({e}): is this port serving TLS?")
        }
        other => other.to_string(),
    }
}

fn certificate(c: &CertificateError) -> String {
    use CertificateError as C;
    match c {
        C::UnknownIssuer => format!(
            "the server's certificate is not signed by a CA herd trusts (Mozilla's roots, or \
             those of --cacert): {TRUST}"
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => format!(
            "the server's certificate is not for the host name in the URL{}: put a name it is \
             for in the URL (with --resolve NAME:PORT:ADDRESS to reach this address), or accept \
             it with -k (testing only)",
            match c {
                C::NotValidForNameContext { presented, .. } if !presented.is_empty() => {
                    format!(" (it is for {})", presented.join(", "))
                }
                _ => String::new(),
            }
        ),
        C::Expired | C::ExpiredContext { .. } => {
            "the server's certificate has expired: renew it, or accept it with -k (testing only)"
                .into()
        }
        C::NotValidYet | C::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet: is this machine's clock right? Or accept \
             it with -k (testing only)"
                .into()
        }
        C::BadSignature
        | C::BadEncoding
        | C::UnsupportedSignatureAlgorithmContext { .. }
        | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => format!(
            "the server's certificate could not be checked (bad encoding or signature, or an \
             algorithm herd does not verify): {TRUST}"
        ),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => format!(
            "the server's certificate is not for TLS servers (its extended key usage): {TRUST}"
        ),
        C::Revoked => "the server's certificate was revoked".into(),
        _ => format!("the server's certificate was refused: {TRUST}"),
    }
}

fn alert(a: AlertDescription) -> String {
    use AlertDescription as A;
    match a {
        A::CertificateRequired => {
            "the server asks for a client certificate: give one with --cert FILE (and --key FILE)"
                .into()
        }
        A::BadCertificate
        | A::UnsupportedCertificate
        | A::CertificateUnknown
        | A::UnknownCA
        | A::CertificateExpired
        | A::CertificateRevoked
        | A::AccessDenied => format!(
            "the server refused herd's client certificate ({}): is --cert signed by a CA the \
             server trusts (nginx: ssl_client_certificate), and valid now?",
            alert_name(a)
        ),
        A::DecryptError => "the server could not verify herd's handshake (decrypt_error): does \
                            --key belong to --cert?"
            .into(),
        A::HandshakeFailure | A::ProtocolVersion | A::InsufficientSecurity => format!(
            "the server refused the handshake ({}): it shares no TLS version or cipher with \
             herd, or wants a client certificate (--cert)",
            alert_name(a)
        ),
        A::NoApplicationProtocol => {
            "the server speaks none of the protocols herd offered by ALPN".into()
        }
        A::UnrecognisedName => {
            "the server does not serve the host name in the URL (unrecognized_name)".into()
        }
        other => format!(
            "the server ended the handshake with the alert {}",
            alert_name(other)
        ),
    }
}

/// The alert's name as RFC 8446 writes it (`bad_certificate`).
fn alert_name(a: AlertDescription) -> String {
    let debug = format!("{a:?}");
    let mut name = String::with_capacity(debug.len() + 4);
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
}

/// QUIC's handshake failed with the text `reason` (quinn carries rustls's error as text): the
/// words of the rustls error it names, when it names one.
pub(crate) fn quic_words(reason: &str) -> Option<String> {
    use CertificateError as C;
    let known = [
        Error::InvalidCertificate(C::UnknownIssuer),
        Error::InvalidCertificate(C::NotValidForName),
        Error::InvalidCertificate(C::Expired),
        Error::InvalidCertificate(C::NotValidYet),
        Error::InvalidCertificate(C::BadSignature),
        Error::InvalidCertificate(C::BadEncoding),
        Error::InvalidCertificate(C::InvalidPurpose),
        Error::InvalidCertificate(C::Revoked),
        Error::AlertReceived(AlertDescription::CertificateRequired),
        Error::AlertReceived(AlertDescription::BadCertificate),
        Error::AlertReceived(AlertDescription::UnknownCA),
        Error::AlertReceived(AlertDescription::HandshakeFailure),
    ];
    // Context variants ("NotValidForNameContext { .. }") start with their plain name too.
    known
        .iter()
        .find(|e| reason.contains(&e.to_string()))
        .map(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_errors_name_the_flags_that_fix_them() {
        let w = words(&Error::InvalidCertificate(CertificateError::UnknownIssuer));
        assert!(w.contains("--cacert") && w.contains("-k"), "{w}");
        assert!(!w.contains("UnknownIssuer"), "{w}");
        let w = words(&Error::AlertReceived(AlertDescription::CertificateRequired));
        assert!(w.contains("--cert"), "{w}");
        let w = words(&Error::AlertReceived(AlertDescription::BadCertificate));
        assert!(w.contains("(bad_certificate)"), "{w}");
        let q = quic_words("invalid peer certificate: UnknownIssuer").unwrap();
        assert!(q.contains("--cacert") && q.contains("-k"), "{q}");
        assert_eq!(quic_words("something else"), None);
    }

    #[test]
    fn plain_http_on_a_tls_url_is_a_mismatch() {
        let addr: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let f = failure(
            addr,
            &Error::InvalidMessage(InvalidMessage::InvalidContentType),
        );
        assert!(f.mismatch);
        assert!(f.message.contains("use http://"), "{}", f.message);
    }
}
