//! The server's side of an HTTP/2 connection: the mock server's, and the tests' peer.

use crate::ffi::Raw;
use crate::{Events, H2Error, Settings};

/// A server session. Requests arrive as [`Event::Request`](crate::Event::Request) once
/// whole; each is answered by [`ServerSession::respond`] or [`ServerSession::reset`].
pub struct ServerSession {
    raw: Raw,
}

impl ServerSession {
    pub fn new(settings: &Settings) -> Result<ServerSession, H2Error> {
        Ok(ServerSession {
            raw: Raw::new(true, settings)?,
        })
    }

    /// Feeds bytes read from the client, beginning with its connection preface.
    pub fn recv(&mut self, input: &[u8]) -> Result<(), H2Error> {
        self.raw.state().start();
        self.raw.recv(input)
    }

    pub fn send(&mut self, out: &mut Vec<u8>) -> Result<usize, H2Error> {
        self.raw.state().start();
        self.raw.send(out)
    }

    pub fn events(&mut self) -> Events<'_> {
        self.raw.state().events()
    }

    /// Answers a request: the status, header fields (lower-case names) and the body.
    pub fn respond(
        &mut self,
        stream_id: i32,
        status: u16,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
    ) -> Result<(), H2Error> {
        let digits = [
            b'0' + (status / 100 % 10) as u8,
            b'0' + (status / 10 % 10) as u8,
            b'0' + (status % 10) as u8,
        ];
        let length = body.len().to_string();
        let fields = [
            (&b":status"[..], &digits[..]),
            (b"content-length", length.as_bytes()),
        ]
        .into_iter()
        .chain(headers.iter().copied());
        let with_body = !body.is_empty();
        self.raw.submit_response(stream_id, fields, with_body)?;
        if let Some(stream) = self.raw.state().streams.get(stream_id) {
            stream.body.clear();
            stream.body.extend_from_slice(body);
            stream.sent = 0;
        }
        Ok(())
    }

    /// Refuses or aborts a stream with RST_STREAM and an HTTP/2 error code.
    pub fn reset(&mut self, stream_id: i32, code: u32) -> Result<(), H2Error> {
        self.raw.submit_rst(stream_id, code)
    }

    /// Sends GOAWAY naming `last_stream_id` as the last stream this server will process:
    /// later ones are closed unanswered and the client may send them again elsewhere; earlier
    /// ones still get their answers.
    pub fn goaway(&mut self, last_stream_id: i32, code: u32) -> Result<(), H2Error> {
        self.raw.submit_goaway(last_stream_id, code)
    }

    /// Requests open (received, not yet answered and sent).
    pub fn open_streams(&self) -> usize {
        self.raw.state_ref().streams.live()
    }

    /// False once the session has nothing left to read or write: the connection can close.
    pub fn alive(&self) -> bool {
        self.raw.alive()
    }
}
