//! A deliberately plain blocking HTTP/1.1 client for testing the mock server: std sockets and
//! httparse, nothing shared with the code under test; and `alone`, for a test that needs the
//! process to itself.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

use herd_mock::{Config, Route, Server};

/// Every client read gives up after this long, so a broken server fails a test instead of
/// hanging it.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Starts a one-thread server on port 0 with the given route specs (none: the defaults).
pub fn serve(specs: &[&str]) -> Server {
    serve_seeded(specs, 0)
}

pub fn serve_seeded(specs: &[&str], seed: u64) -> Server {
    let routes = specs.iter().map(|s| Route::parse(s).unwrap()).collect();
    Server::start(Config {
        routes,
        seed,
        ..Config::default()
    })
    .unwrap()
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(TIMEOUT)).unwrap();
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, raw: &[u8]) {
        self.stream.write_all(raw).unwrap();
    }

    pub fn get(&mut self, path: &str) -> Response {
        self.send_get(path, "");
        self.response()
    }

    /// Sends a GET for `path` with `headers` (each line ending in CRLF), not waiting for an answer.
    pub fn send_get(&mut self, path: &str, headers: &str) {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: mock\r\n{headers}\r\n").as_bytes());
    }

    pub fn response(&mut self) -> Response {
        self.try_response(false)
            .unwrap()
            .expect("connection closed before a response")
    }

    /// Reads one response; `Ok(None)` when the server closed before sending a byte. A HEAD
    /// response has no body whatever its Content-Length says.
    pub fn try_response(&mut self, head: bool) -> io::Result<Option<Response>> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut parsed = httparse::Response::new(&mut headers);
            let status = parsed
                .parse(&self.buf)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            if let httparse::Status::Complete(len) = status {
                let headers: Vec<(String, String)> = parsed
                    .headers
                    .iter()
                    .map(|h| {
                        (
                            h.name.to_string(),
                            String::from_utf8_lossy(h.value).into_owned(),
                        )
                    })
                    .collect();
                let code = parsed.code.unwrap();
                let length = headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                    .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
                if code == 100 {
                    self.buf.drain(..len);
                    continue;
                }
                let length = if head { 0 } else { length };
                while self.buf.len() < len + length {
                    if self.read_more()? == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "body cut short",
                        ));
                    }
                }
                let body = self.buf[len..len + length].to_vec();
                self.buf.drain(..len + length);
                return Ok(Some(Response {
                    status: code,
                    headers,
                    body,
                }));
            }
            if self.read_more()? == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "head cut short",
                    ))
                };
            }
        }
    }

    /// Everything up to end-of-file, including what is already buffered.
    pub fn read_to_end(&mut self) -> io::Result<Vec<u8>> {
        let mut all = std::mem::take(&mut self.buf);
        self.stream.read_to_end(&mut all)?;
        Ok(all)
    }

    fn read_more(&mut self) -> io::Result<usize> {
        let mut chunk = [0; 16 << 10];
        let n = self.stream.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }
}

/// Set in the child process `alone` starts.
const ALONE: &str = "HERD_MOCK_TEST_ALONE";

/// Whether the calling test, `name` (its path in this binary, `module::test`), should run its
/// body here: true in a child process of this test binary that runs only that test; elsewhere it
/// starts that child, fails if the test fails there, and returns false. For a test that looks at
/// the whole process (its threads, its panic hook), which the other tests of the binary share.
pub fn alone(name: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1"])
        .env(ALONE, name)
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, alone in a process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}
