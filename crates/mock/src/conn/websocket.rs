//! A `ws` route's connection after the Upgrade: RFC 6455 frames from the client (masked) are
//! read, each message (its fragments joined) echoed back after the route's latency, one after
//! another as they came; pings answered, a close answered with its code. A message is counted
//! as a request (as the Upgrade was); the route's faults fire on their share of messages.

use super::{Conn, End};
use crate::counters::bump;
use crate::response::{Compiled, Failure};
use crate::route::Fault;
use crate::worker::{Socket, Worker};
use crate::ws_frame::{frame, write_frame, FAULT_CODE};
use base64::Engine as _;
use rand::Rng;

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

fn accept(key: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}{GUID}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
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
