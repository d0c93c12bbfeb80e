//! Routes answering with Server-Sent Events (`sse`), or an OpenAI-compatible chat completion
//! streamed token by token (`sse=llm`): the head at once, the first event after `ttft`, each
//! next one after `itl`, `tokens` of them; an LLM stream then sends its `usage` and
//! `data: [DONE]`. A target for herd's time to first token and inter-token latency.
//! `slots=N` makes it a model server with a batch of N: at most N streams generate at once
//! across the whole server, the others wait (their head sent) for a slot before their wait for
//! the first token begins, so the time to first token grows with the streams asked for at once.

use crate::latency::{Delay, Latency};
use std::fmt;

/// What an event-stream route sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Events {
    /// OpenAI chat-completion chunks, `usage` and `[DONE]`; otherwise `data: N` events.
    pub llm: bool,
    /// Before the first event (time to first token).
    pub first: Latency,
    /// Between consecutive events (inter-token latency).
    pub gap: Latency,
    /// Events (tokens) per stream.
    pub count: u32,
    /// Streams generating at once, server-wide (`slots=N`); `None`: any number.
    pub slots: Option<u32>,
}

impl Events {
    pub fn new(llm: bool) -> Events {
        Events {
            llm,
            first: Latency::None,
            gap: Latency::None,
            count: 10,
            slots: None,
        }
    }

    pub(crate) fn compile(&self) -> Result<Compiled, String> {
        Ok(Compiled {
            llm: self.llm,
            first: self.first.compile().map_err(|e| format!("ttft: {e}"))?,
            gap: self.gap.compile().map_err(|e| format!("itl: {e}"))?,
            count: self.count,
            slots: self
                .slots
                .map(|n| std::sync::Arc::new(tokio::sync::Semaphore::new(n as usize))),
        })
    }
}

impl fmt::Display for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.llm { " sse=llm" } else { " sse" })?;
        if self.first != Latency::None {
            write!(f, " ttft={}", self.first)?;
        }
        if self.gap != Latency::None {
            write!(f, " itl={}", self.gap)?;
        }
        write!(f, " tokens={}", self.count)?;
        if let Some(n) = self.slots {
            write!(f, " slots={n}")?;
        }
        Ok(())
    }
}

/// An event-stream route ready to serve.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub llm: bool,
    pub first: Delay,
    pub gap: Delay,
    pub count: u32,
    /// The server's batch: a permit per stream generating (`slots=N`).
    pub slots: Option<std::sync::Arc<tokio::sync::Semaphore>>,
}

impl Compiled {
    /// The head of the response (HTTP/1.1, chunked), without its final blank line.
    pub fn head(&self, out: &mut Vec<u8>, status: u16, headers: &[(String, String)]) {
        out.extend_from_slice(
            format!(
                "HTTP/1.1 {status} OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
            )
            .as_bytes(),
        );
        for (name, value) in headers {
            if !name.eq_ignore_ascii_case("content-type") {
                out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
            }
        }
    }

    /// Event `i` (from 0) as one chunk.
    pub fn event(&self, i: u32, out: &mut Vec<u8>) {
        let event = if self.llm {
            let role = if i == 0 {
                "\"role\":\"assistant\","
            } else {
                ""
            };
            format!(
                "data: {{\"id\":\"herd\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{{role}\"content\":\"tok{i} \"}},\"finish_reason\":null}}]}}\n\n"
            )
        } else {
            format!("id: {i}\ndata: {i}\n\n")
        };
        chunk(out, event.as_bytes());
    }

    /// What ends the stream: an LLM's usage and `[DONE]`, then the last chunk.
    pub fn end(&self, out: &mut Vec<u8>) {
        if self.llm {
            let usage = format!(
                "data: {{\"id\":\"herd\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":8,\"completion_tokens\":{},\"total_tokens\":{}}}}}\n\ndata: [DONE]\n\n",
                self.count,
                self.count + 8
            );
            chunk(out, usage.as_bytes());
        }
        out.extend_from_slice(b"0\r\n\r\n");
    }
}

fn chunk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}
