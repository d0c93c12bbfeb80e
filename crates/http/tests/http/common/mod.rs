//! Tiny scripted servers on 127.0.0.1 port 0, exact about what they send and when, and a client
//! wrapper that bounds every test in time; `loop_server` for the engine loop's runs.

pub mod loop_server;

use herd_engine::{Failure, Request, Response};
use herd_http::{prepare, Conn, HttpTransport, RequestSpec, Target, TlsOptions, Wire};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

/// Generous: nothing here waits on purpose, this only turns a hang into a failure.
pub const LIMIT: Duration = Duration::from_secs(10);

pub enum Step {
    /// Read one request: head, then a Content-Length body if any.
    Read,
    Write(Vec<u8>),
    /// Write one byte per segment, so the client sees the response in pieces.
    WriteBytewise(Vec<u8>),
    /// Close with an RST instead of a FIN (SO_LINGER 0).
    Reset,
}

/// A server for one connection that plays a script, then closes cleanly (FIN after reading
/// whatever the client still sends, so no RST muddles the test).
pub struct Server {
    pub addr: SocketAddr,
    handle: JoinHandle<Vec<Vec<u8>>>,
}

impl Server {
    pub fn start(script: Vec<Step>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_read_timeout(Some(LIMIT)).unwrap();
            stream.set_nodelay(true).unwrap();
            let mut pending = Vec::new();
            let mut requests = Vec::new();
            for step in script {
                match step {
                    Step::Read => requests.push(read_request(&mut stream, &mut pending)),
                    Step::Write(bytes) => stream.write_all(&bytes).unwrap(),
                    Step::WriteBytewise(bytes) => {
                        for b in bytes {
                            stream.write_all(&[b]).unwrap();
                        }
                    }
                    Step::Reset => {
                        socket2::SockRef::from(&stream)
                            .set_linger(Some(Duration::ZERO))
                            .unwrap();
                        return requests;
                    }
                }
            }
            let _ = stream.shutdown(Shutdown::Write);
            let _ = std::io::copy(&mut stream, &mut std::io::sink());
            requests
        });
        Server { addr, handle }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests the server read, once the client has let go of the connection.
    pub fn requests(self) -> Vec<Vec<u8>> {
        self.handle.join().unwrap()
    }
}

fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Vec<u8> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
            let body = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
            if pending.len() >= end + 4 + body {
                return pending.drain(..end + 4 + body).collect();
            }
        }
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "client closed before sending a full request");
        pending.extend_from_slice(&chunk[..n]);
    }
}

/// A connected client for `url`.
pub struct Client {
    pub wire: Wire,
    pub target: Target,
    pub conn: Option<Conn>,
    /// Bytes received after the last response (the start of the next one).
    pub pending: Vec<u8>,
}

impl Client {
    pub fn connect(url: &str, tls: TlsOptions) -> Result<Client, Failure> {
        let target = Target::parse(url).unwrap();
        let mut wire = HttpTransport::new(&target, tls).unwrap().wire().unwrap();
        let conn = wire.open(LIMIT)?;
        Ok(Client {
            wire,
            target,
            conn: Some(conn),
            pending: Vec::new(),
        })
    }

    pub fn request(&self, method: &str, path: &str) -> Request {
        let spec = RequestSpec {
            method: method.to_owned(),
            path: path.to_owned(),
            ..Default::default()
        };
        prepare(&self.target, &spec).unwrap()
    }

    pub fn exchange(&mut self, req: &Request) -> Result<Response, Failure> {
        let mut resp = Response::default();
        self.exchange_into(req, &mut resp).map(|()| resp)
    }

    pub fn exchange_into(&mut self, req: &Request, resp: &mut Response) -> Result<(), Failure> {
        let conn = self.conn.as_mut().expect("connection already dropped");
        self.wire
            .exchange(conn, req, resp, &mut self.pending, LIMIT)
    }

    pub fn get(&mut self, path: &str) -> Result<Response, Failure> {
        let req = self.request("GET", path);
        self.exchange(&req)
    }

    /// Closes the connection so the server thread can finish.
    pub fn close(&mut self) {
        self.conn = None;
    }
}

/// `HTTP/1.1 200 OK` with a Content-Length body.
pub fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Bytes a scripted server sends, written as text.
pub fn s(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}
