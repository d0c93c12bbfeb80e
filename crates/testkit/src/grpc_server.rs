//! Real gRPC servers on a free loopback port, counting the calls they answer; stopped on drop:
//! grpc-go's helloworld greeter and echo services with server reflection (tests/grpc-go, built
//! by scripts/check into ~/.cache/herd/go-bin/herd-grpc-go), and Python grpcio's greeter with
//! reflection (tests/grpc-py). And ghz, built beside the Go one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

/// A Go binary scripts/check builds into `~/.cache/herd/go-bin` (`herd-grpc-go`, `ghz`); the
/// panic says how to get it.
pub fn go_bin(name: &str) -> PathBuf {
    let home = std::env::var("HOME").unwrap_or_default();
    let path = PathBuf::from(home).join(".cache/herd/go-bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run `scripts/check` (it builds {name} with the Go toolchain)",
        path.display()
    );
    path
}

/// How the Go server answers `ServerStreamingEcho`: `count` messages, `interval` apart.
#[derive(Debug, Clone, Copy)]
pub struct Streams {
    pub count: u32,
    pub interval: Duration,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams {
            count: 10,
            interval: Duration::ZERO,
        }
    }
}

pub struct GrpcServer {
    child: Child,
    stdout: BufReader<ChildStdout>,
    /// Where it serves gRPC (h2c).
    pub addr: SocketAddr,
    /// The Go server's GET /count.
    admin: Option<SocketAddr>,
}

impl GrpcServer {
    /// grpc-go's greeter and echo services (`grpc.examples.echo.Echo`), with reflection.
    pub fn go(streams: Streams) -> GrpcServer {
        let mut cmd = Command::new(go_bin("herd-grpc-go"));
        cmd.arg("-stream-count")
            .arg(streams.count.to_string())
            .arg("-stream-interval")
            .arg(format!("{}us", streams.interval.as_micros()));
        GrpcServer::spawn(&mut cmd, true)
    }

    /// The Go server whose `SayHello` takes `delay` before it answers (`-delay`): a load at
    /// which the server, not the client, sets the latency.
    pub fn go_delayed(delay: Duration) -> GrpcServer {
        let mut cmd = Command::new(go_bin("herd-grpc-go"));
        cmd.arg("-delay").arg(format!("{}us", delay.as_micros()));
        GrpcServer::spawn(&mut cmd, true)
    }

    /// Python grpcio's greeter with reflection (v1alpha only: ghz, which asks for the method's
    /// symbol, needs `--proto crates/mock/proto/helloworld.proto` there); `delay` before each
    /// answer.
    pub fn python(delay: Duration) -> GrpcServer {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/grpc-py/server.py");
        let mut cmd = Command::new("python3");
        cmd.arg(script)
            .arg("--delay-ms")
            .arg(format!("{}", delay.as_secs_f64() * 1000.0));
        GrpcServer::spawn(&mut cmd, false)
    }

    fn spawn(cmd: &mut Command, admin: bool) -> GrpcServer {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the gRPC server");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut port = |word: &str| {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            let port: u16 = line
                .strip_prefix(word)
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or_else(|| {
                    panic!(
                        "the gRPC server said {line:?}, not '{word}PORT': run `scripts/check` \
                         (it builds tests/grpc-go and installs PyPI's grpcio, grpcio-reflection \
                         and grpcio-tools)"
                    )
                });
            SocketAddr::from(([127, 0, 0, 1], port))
        };
        let addr = port("listening ");
        let admin = admin.then(|| port("admin "));
        GrpcServer {
            child,
            stdout,
            addr,
            admin,
        }
    }

    /// Its process id: SIGSTOP and SIGCONT make a server stall (the stop-the-server test).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Calls answered so far, by full method name (`/helloworld.Greeter/SayHello`).
    pub fn calls(&self, method: &str) -> u64 {
        let counts = self.counts();
        counts["methods"][method].as_u64().unwrap_or(0)
    }

    /// `{"calls": N, "methods": {"/pkg.Service/Method": N, ...}}` while it runs (the Go
    /// server; the Python one says them on [`GrpcServer::stop`]).
    pub fn counts(&self) -> serde_json::Value {
        let admin = self
            .admin
            .expect("only the Go server counts while running: stop() the Python one");
        let mut s = TcpStream::connect(admin).expect("herd-grpc-go's admin port");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /count HTTP/1.0\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    /// Stops it with SIGTERM; the counts it printed on the way out.
    pub fn stop(mut self) -> serde_json::Value {
        // SAFETY: a signal to the process this value started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let mut last = String::new();
        let mut line = String::new();
        while self.stdout.read_line(&mut line).unwrap_or(0) > 0 {
            last = std::mem::take(&mut line);
        }
        let _ = self.child.wait();
        serde_json::from_str(last.trim()).unwrap_or_else(|e| panic!("{e}: {last:?}"))
    }
}

impl Drop for GrpcServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
