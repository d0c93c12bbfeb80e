//! A `ws` route's connection after the Upgrade: RFC 6455 frames from the client (masked) are
//! read, each message (its fragments joined) echoed back after the route's latency, one after
//! another as they came; pings answered, a close answered with its code. A message is counted
//! as a request (as the Upgrade was); the route's faults fire on their share of messages.

use super::{Conn, End};
use crate::counters::bump;
use crate::response::{Compiled, Failure};
use crate::route::Fault;
use crate::worker::{Socket, Worker};
use base64::Engine as _;
use rand::Rng;

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The close code a `fault=close` (or an injected error) ends the socket with: internal error.
const FAULT_CODE: u16 = 1011;

fn accept(key: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}{GUID}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
}

/// A whole client frame at the start of `b`: fin, opcode, payload (unmasked), bytes taken.
fn frame(b: &[u8]) -> Option<(bool, u8, Vec<u8>, usize)> {
    let [b0, b1, ..] = *b else { return None };
    let (len, mut at) = match b1 & 0x7F {
        126 => (u16::from_be_bytes([*b.get(2)?, *b.get(3)?]) as usize, 4),
        127 => (
            u64::from_be_bytes(b.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let mask = if b1 & 0x80 != 0 {
        let m: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        at += 4;
        Some(m)
    } else {
        None
    };
    let mut payload = b.get(at..at + len)?.to_vec();
    if let Some(m) = mask {
        for (i, x) in payload.iter_mut().enumerate() {
            *x ^= m[i % 4];
        }
    }
    Some((b0 & 0x80 != 0, b0 & 0x0F, payload, at + len))
}

/// Appends a server frame (unmasked).
fn write_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    out.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 65_535 => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

impl<S: Socket> Conn<S> {
    /// Switches protocols and echoes messages until the client or a fault ends the socket.
    pub(super) async fn websocket(&mut self, w: &Worker, route: &Compiled, key: &str) -> End {
        self.out.extend_from_slice(
            format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: \
                 Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
                accept(key)
            )
            .as_bytes(),
        );
        let mut message: Option<(u8, Vec<u8>)> = None;
        loop {
            let Some((fin, opcode, payload, used)) = frame(&self.buf[self.start..self.end]) else {
                if let Err(end) = self.fill().await {
                    return end;
                }
                continue;
            };
            self.start += used;
            let whole = match opcode {
                0x1 | 0x2 if fin => (opcode, payload),
                0x1 | 0x2 => {
                    message = Some((opcode, payload));
                    continue;
                }
                0x0 => {
                    let Some((op, mut so_far)) = message.take() else {
                        return End::Close;
                    };
                    so_far.extend_from_slice(&payload);
                    if !fin {
                        message = Some((op, so_far));
                        continue;
                    }
                    (op, so_far)
                }
                0x9 => {
                    write_frame(&mut self.out, 0xA, &payload);
                    continue;
                }
                0x8 => {
                    write_frame(&mut self.out, 0x8, &payload[..payload.len().min(2)]);
                    return End::Close;
                }
                _ => continue,
            };
            if let Err(end) = self.echo_message(w, route, whole).await {
                return end;
            }
        }
    }

    /// Counts one message and echoes it after the route's latency, or fails it.
    async fn echo_message(
        &mut self,
        w: &Worker,
        route: &Compiled,
        (opcode, payload): (u8, Vec<u8>),
    ) -> Result<(), End> {
        bump(&w.counters.requests);
        let (failed, delay) = {
            let mut rng = w.rng.borrow_mut();
            let failed = route.error_rate > 0.0 && rng.gen_bool(route.error_rate);
            (failed, route.delay.sample(&mut *rng))
        };
        if !delay.is_zero() {
            self.flush().await?;
            w.delays.sleep(delay).await;
        }
        if failed {
            bump(&w.counters.injected);
            return Err(match route.failure {
                Failure::Fault(Fault::Stall) => End::Stall,
                Failure::Fault(Fault::Reset | Fault::Refuse) => End::Reset,
                _ => {
                    let mut close = FAULT_CODE.to_be_bytes().to_vec();
                    close.extend_from_slice(b"herd serve fault");
                    write_frame(&mut self.out, 0x8, &close);
                    End::Close
                }
            });
        }
        write_frame(&mut self.out, opcode, &payload);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_masked_client_frame_reads_back() {
        // RFC 6455 5.7: a masked "Hello".
        let hello = [
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        assert_eq!(
            frame(&hello),
            Some((true, 1, b"Hello".to_vec(), hello.len()))
        );
        assert_eq!(frame(&hello[..10]), None);
        assert_eq!(
            accept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }
}
