//! Server-Sent Events read as they arrive (the WHATWG `text/event-stream` format): a body's
//! bytes are scanned for the blank line that ends each event (memchr for `\n`), and each event
//! is looked at once, in place. Nothing is allocated per event: only an event split across
//! reads is held (in the stream's `carry`) until its end arrives.
//!
//! With `--sse llm` an event counts when it carries content, as an OpenAI-compatible chat
//! completion chunk does (`"content": "..."` not empty); `data: [DONE]` ends the stream and
//! `"completion_tokens": N` (the `usage` of the last chunk) says how many tokens there were.
//! The JSON is not parsed: those three are found by their bytes, which is all the measure needs.
//! Lines ending in a lone CR (allowed by the format, sent by no server we know) are not read.

use herd_engine::EventStream;
use memchr::memmem;
use std::time::Instant;

/// An event held past this many bytes without its end is dropped: a stream that is not one.
const MAX_EVENT: usize = 1 << 20;

/// Takes `bytes` of the body, read at `now`.
pub(crate) fn scan(ev: &mut EventStream, bytes: &[u8], now: Instant) {
    if ev.carry.is_empty() {
        let used = events(ev, bytes, now);
        ev.carry.extend_from_slice(&bytes[used..]);
    } else {
        let mut held = std::mem::take(&mut ev.carry);
        held.extend_from_slice(bytes);
        let used = events(ev, &held, now);
        held.drain(..used);
        ev.carry = held;
    }
    if ev.carry.len() > MAX_EVENT {
        ev.carry.clear();
    }
}

/// Dispatches each complete event in `buf`; how many bytes they took.
fn events(ev: &mut EventStream, buf: &[u8], now: Instant) -> usize {
    let (mut start, mut from) = (0, 0);
    while let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
        let nl = from + i;
        let end = match (buf.get(nl + 1), buf.get(nl + 2)) {
            (Some(b'\n'), _) => nl + 2,
            (Some(b'\r'), Some(b'\n')) => nl + 3,
            (None, _) | (Some(b'\r'), None) => break,
            _ => {
                from = nl + 1;
                continue;
            }
        };
        dispatch(ev, &buf[start..end], now);
        (start, from) = (end, end);
    }
    start
}

/// One event's lines: it counts when it has data (comments, `:`, and blocks of other fields
/// alone are not events); with `llm`, when its data carries content.
fn dispatch(ev: &mut EventStream, block: &[u8], now: Instant) {
    let mut counts = false;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(rest) = line.strip_prefix(b"data") else {
            continue;
        };
        let data = match rest {
            [] => rest,
            [b':', b' ', data @ ..] | [b':', data @ ..] => data,
            _ => continue,
        };
        if !ev.llm {
            counts = true;
            break;
        }
        if data == b"[DONE]" {
            ev.done = true;
            continue;
        }
        counts |= has_content(data);
        if let Some(n) = number_after(data, b"\"completion_tokens\"") {
            ev.usage = Some(n);
        }
    }
    if counts {
        ev.event(now);
    }
}

/// The value after `key` and its colon, past any whitespace.
fn after<'a>(data: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = memmem::find(data, key)? + key.len();
    let rest = data[at..].trim_ascii_start().strip_prefix(b":")?;
    Some(rest.trim_ascii_start())
}

/// `"content": "x..."`: a string, not empty.
fn has_content(data: &[u8]) -> bool {
    after(data, b"\"content\"").is_some_and(|v| v.len() >= 2 && v[0] == b'"' && v[1] != b'"')
}

fn number_after(data: &[u8], key: &[u8]) -> Option<u64> {
    let v = after(data, key)?;
    let digits = v.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&v[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Feeds `reads`, one millisecond apart; the events' arrival offsets in milliseconds.
    fn read(llm: bool, reads: &[&str]) -> (EventStream, Vec<u64>) {
        let t0 = Instant::now();
        let mut ev = EventStream::new(llm);
        let mut seen = Vec::new();
        for (i, r) in reads.iter().enumerate() {
            let before = ev.events;
            scan(&mut ev, r.as_bytes(), t0 + Duration::from_millis(i as u64));
            seen.extend((before..ev.events).map(|_| i as u64));
        }
        (ev, seen)
    }

    #[test]
    fn events_end_at_a_blank_line_whatever_the_reads() {
        let (ev, at) = read(false, &["data: a\n\nda", "ta: b\n", "\ndata: c\n\n"]);
        assert_eq!(at, [0, 2, 2]);
        assert_eq!(ev.gaps, [2_000, 0]);
        assert!(ev.carry.is_empty());
        // The terminator itself split across reads.
        let (_, at) = read(false, &["data: a\n", "\n", "data: b\r\n\r", "\n"]);
        assert_eq!(at, [1, 3]);
    }

    #[test]
    fn crlf_lines_comments_and_other_fields() {
        let (ev, at) = read(
            false,
            &[
                ": ping\r\n\r\n",
                "event: tick\r\nid: 1\r\ndata: {}\r\n\r\n",
                "retry: 10\n\n",
                ":only a comment\n\n",
                "data\n\n",
            ],
        );
        assert_eq!(at, [1, 4]);
        assert_eq!(ev.events, 2);
        // Not `data`: a field named otherwise.
        let (ev, _) = read(false, &["dataset: x\n\n"]);
        assert_eq!(ev.events, 0);
    }

    #[test]
    fn llm_counts_content_events_done_and_usage() {
        let chunk =
            |c: &str| format!("data: {{\"choices\":[{{\"delta\":{{\"content\":{c}}}}}]}}\n\n");
        let role =
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
        let (ev, at) = read(
            true,
            &[
                role,
                &chunk("\"Hel\""),
                ": keep-alive\n\n",
                &chunk("\"lo\""),
                &chunk("null"),
                "data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 7}}\n\n",
                "data: [DONE]\n\n",
            ],
        );
        assert_eq!(at, [1, 3]);
        assert_eq!((ev.events, ev.usage, ev.done), (2, Some(7), true));
        // Python's json.dumps puts spaces after colons.
        let (ev, _) = read(true, &["data: {\"delta\": {\"content\": \"x\"}}\n\n"]);
        assert_eq!((ev.events, ev.done), (1, false));
    }

    #[test]
    fn an_endless_event_is_dropped_not_held() {
        let big = "x".repeat(MAX_EVENT + 1);
        let (ev, _) = read(false, &["data: ", &big]);
        assert!(ev.carry.is_empty());
    }
}
