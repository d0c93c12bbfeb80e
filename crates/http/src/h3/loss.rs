//! How a QUIC connection or an HTTP/3 stream was lost, as a [`Failure`] in its class: the
//! handshake, a silent server (idle timeout), a server that closed or reset, a protocol error.

use herd_engine::Failure;
use herd_metrics::ErrorKind;
use quinn_proto::ConnectionError;

/// HTTP/3 error codes (RFC 9114 §8.1), named in failure messages.
fn h3_code_name(code: u64) -> Option<&'static str> {
    Some(match code {
        0x100 => "H3_NO_ERROR",
        0x101 => "H3_GENERAL_PROTOCOL_ERROR",
        0x102 => "H3_INTERNAL_ERROR",
        0x103 => "H3_STREAM_CREATION_ERROR",
        0x104 => "H3_CLOSED_CRITICAL_STREAM",
        0x105 => "H3_FRAME_UNEXPECTED",
        0x106 => "H3_FRAME_ERROR",
        0x107 => "H3_EXCESSIVE_LOAD",
        0x108 => "H3_ID_ERROR",
        0x109 => "H3_SETTINGS_ERROR",
        0x10a => "H3_MISSING_SETTINGS",
        0x10b => "H3_REQUEST_REJECTED",
        0x10c => "H3_REQUEST_CANCELLED",
        0x10d => "H3_REQUEST_INCOMPLETE",
        0x10e => "H3_MESSAGE_ERROR",
        0x10f => "H3_CONNECT_ERROR",
        0x110 => "H3_VERSION_FALLBACK",
        0x200 => "QPACK_DECOMPRESSION_FAILED",
        0x201 => "QPACK_ENCODER_STREAM_ERROR",
        0x202 => "QPACK_DECODER_STREAM_ERROR",
        _ => return None,
    })
}

fn code(code: u64) -> String {
    match h3_code_name(code) {
        Some(name) => format!("{name} (0x{code:x})"),
        None => format!("0x{code:x}"),
    }
}

/// The server reset a request stream with `error_code`.
pub(crate) fn stream_reset(error_code: u64) -> Failure {
    Failure::new(
        ErrorKind::H3StreamReset,
        format!("the server reset the request stream: {}", code(error_code)),
    )
}

/// A request the server will not process: its stream is past the GOAWAY's last id.
pub(crate) fn refused_by_goaway() -> Failure {
    Failure::new(
        ErrorKind::H3StreamReset,
        "the server sent GOAWAY and will not process this request",
    )
}

/// The connection ended, `handshaking` or not: the class and message of every request it took
/// down. `None` when herd closed it itself.
pub(crate) fn connection_lost(reason: &ConnectionError, handshaking: bool) -> Option<Failure> {
    let (kind, message) = match reason {
        ConnectionError::LocallyClosed => return None,
        ConnectionError::VersionMismatch => (
            ErrorKind::QuicHandshake,
            "the server speaks no QUIC version herd does".to_owned(),
        ),
        ConnectionError::TransportError(e) => {
            let code = u64::from(e.code);
            // 0x100-0x1ff carry a TLS alert (RFC 9001 §4.8).
            let kind = if (0x100..0x200).contains(&code) || handshaking {
                ErrorKind::QuicHandshake
            } else {
                ErrorKind::QuicProtocol
            };
            // A certificate herd refused, named for a person: the flags that change it.
            match crate::handshake::quic_words(&e.reason) {
                Some(words) => (kind, format!("QUIC handshake: {words}")),
                None => (kind, format!("QUIC error: {e}")),
            }
        }
        ConnectionError::ConnectionClosed(close) => {
            let code = u64::from(close.error_code);
            let kind = match code {
                0 if !handshaking => ErrorKind::QuicClosed,
                0x100..=0x1ff => ErrorKind::QuicHandshake,
                _ if handshaking => ErrorKind::QuicHandshake,
                _ => ErrorKind::QuicProtocol,
            };
            // 0x100 + a TLS alert (RFC 9001 §4.8): the server refused the handshake.
            let alert = (0x100..0x200)
                .contains(&code)
                .then(|| rustls::AlertDescription::from((code - 0x100) as u8));
            match alert {
                Some(a) => (
                    kind,
                    format!(
                        "QUIC handshake: {}",
                        crate::handshake::words(&rustls::Error::AlertReceived(a))
                    ),
                ),
                None => (
                    kind,
                    format!("the server closed the QUIC connection: {close}"),
                ),
            }
        }
        ConnectionError::ApplicationClosed(close) => (
            ErrorKind::QuicClosed,
            format!(
                "the server closed the connection: {}{}",
                code(close.error_code.into_inner()),
                reason_text(&close.reason)
            ),
        ),
        ConnectionError::Reset => (
            ErrorKind::QuicClosed,
            "the server reset the connection (stateless reset: it lost the connection's state, \
             as after a restart)"
                .to_owned(),
        ),
        ConnectionError::TimedOut if handshaking => (
            ErrorKind::QuicTimeout,
            "no answer to the QUIC handshake within the idle timeout: is a QUIC server on this \
             UDP port?"
                .to_owned(),
        ),
        ConnectionError::TimedOut => (
            ErrorKind::QuicTimeout,
            "no packet from the server within the QUIC idle timeout: it went away".to_owned(),
        ),
        ConnectionError::CidsExhausted => (ErrorKind::Other, reason.to_string()),
    };
    Some(Failure::new(kind, message))
}

fn reason_text(reason: &[u8]) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(" ({})", String::from_utf8_lossy(reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quinn_proto::{ApplicationClose, TransportError, TransportErrorCode, VarInt};

    #[test]
    fn each_way_of_losing_a_connection_has_its_class() {
        let app_close = ConnectionError::ApplicationClosed(ApplicationClose {
            error_code: VarInt::from_u32(0x100),
            reason: "shutting down".into(),
        });
        let tls_alert = ConnectionError::TransportError(TransportError {
            code: TransportErrorCode::crypto(42),
            frame: None,
            reason: "bad certificate".into(),
        });
        let table = [
            (&app_close, false, Some(ErrorKind::QuicClosed)),
            (&tls_alert, false, Some(ErrorKind::QuicHandshake)),
            (
                &ConnectionError::TimedOut,
                true,
                Some(ErrorKind::QuicTimeout),
            ),
            (
                &ConnectionError::TimedOut,
                false,
                Some(ErrorKind::QuicTimeout),
            ),
            (&ConnectionError::Reset, false, Some(ErrorKind::QuicClosed)),
            (
                &ConnectionError::VersionMismatch,
                true,
                Some(ErrorKind::QuicHandshake),
            ),
            (&ConnectionError::LocallyClosed, false, None),
        ];
        for (reason, handshaking, want) in table {
            let got = connection_lost(reason, handshaking).map(|f| f.kind);
            assert_eq!(got, want, "{reason}");
        }
        let msg = connection_lost(&app_close, false).unwrap().message;
        assert!(msg.contains("H3_NO_ERROR (0x100) (shutting down)"), "{msg}");
    }

    #[test]
    fn stream_resets_name_their_code() {
        let f = stream_reset(0x10b);
        assert_eq!(f.kind, ErrorKind::H3StreamReset);
        assert!(
            f.message.ends_with("H3_REQUEST_REJECTED (0x10b)"),
            "{}",
            f.message
        );
        assert!(stream_reset(0x1f).message.ends_with("0x1f"));
    }
}
