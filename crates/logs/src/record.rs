//! One request as a log line told it, borrowed from the line (no allocation per line).

use crate::time::Timestamp;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record<'a> {
    pub time: Timestamp,
    /// The client address (`%h`, `$remote_addr`).
    pub client: &'a [u8],
    pub method: &'a [u8],
    /// The path, without the query.
    pub path: &'a [u8],
    /// The query without its `?`; empty when there is none.
    pub query: &'a [u8],
    pub status: u16,
    /// Response bytes (0 for `-`).
    pub bytes: u64,
    pub referer: &'a [u8],
    pub user_agent: &'a [u8],
    /// The time the server took, when the format logs it.
    pub taken_us: Option<u64>,
}

impl<'a> Record<'a> {
    /// Sets method, path and query from a request line, `GET /a?b=1 HTTP/1.1`.
    pub fn set_request(&mut self, line: &'a [u8]) -> Result<(), &'static str> {
        let Some(sp) = memchr::memchr(b' ', line) else {
            return Err("the request line has no method and path (e.g. `-` for a bad request)");
        };
        self.method = &line[..sp];
        let mut target = &line[sp + 1..];
        if let Some(last) = memchr::memrchr(b' ', target) {
            if target[last + 1..].starts_with(b"HTTP/") {
                target = &target[..last];
            }
        }
        if self.method.is_empty() || target.is_empty() {
            return Err("the request line has no method and path");
        }
        self.set_target(target);
        Ok(())
    }

    /// Sets path and query from `/a?b=1`.
    pub fn set_target(&mut self, target: &'a [u8]) {
        match memchr::memchr(b'?', target) {
            Some(q) => {
                self.path = &target[..q];
                self.query = &target[q + 1..];
            }
            None => {
                self.path = target;
                self.query = b"";
            }
        }
    }

    /// The response's status class, `2` for 2xx; 0 for anything outside 100..600.
    pub fn status_class(&self) -> usize {
        match self.status {
            100..=599 => usize::from(self.status / 100),
            _ => 0,
        }
    }
}
