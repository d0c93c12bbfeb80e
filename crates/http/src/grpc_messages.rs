//! A gRPC reply's messages as they arrive: each is an event of its stream (the time to first
//! message, the gaps between messages, messages per stream), found by gRPC's 5-byte prefix
//! alone; what they hold is herd-grpc's to decode once the call is over.

use herd_engine::EventStream;
use std::time::Instant;

const PREFIX: usize = 5;

/// Reads `bytes`, which arrived at `now`, into `ev`: a message whose last byte is here counts.
pub(crate) fn scan(ev: &mut EventStream, mut bytes: &[u8], now: Instant) {
    while !bytes.is_empty() {
        if ev.left > 0 {
            let take = (ev.left as usize).min(bytes.len());
            ev.left -= take as u64;
            bytes = &bytes[take..];
            if ev.left == 0 {
                ev.event(now);
            }
            continue;
        }
        let take = (PREFIX - ev.carry.len()).min(bytes.len());
        ev.carry.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if ev.carry.len() == PREFIX {
            let p = &ev.carry;
            ev.left = u64::from(u32::from_be_bytes([p[1], p[2], p[3], p[4]]));
            ev.carry.clear();
            if ev.left == 0 {
                ev.event(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn each_message_counts_when_its_last_byte_arrives() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut ev = EventStream::new(false);
        ev.grpc = true;
        let one = [0, 0, 0, 0, 2, b'h', b'i'];
        let empty = [0, 0, 0, 0, 0];
        scan(&mut ev, &one[..3], ms(0));
        assert_eq!(ev.events, 0);
        scan(&mut ev, &one[3..6], ms(10));
        assert_eq!(ev.events, 0, "a byte is still missing");
        scan(&mut ev, &[&one[6..], &empty[..], &one[..]].concat(), ms(20));
        assert_eq!(ev.events, 3);
        assert_eq!(ev.first, Some(ms(20)));
        scan(&mut ev, &one, ms(30));
        assert_eq!(ev.events, 4);
        assert_eq!(ev.gaps, [0, 0, 10_000]);
        assert!(ev.carry.is_empty() && ev.left == 0);
    }
}
