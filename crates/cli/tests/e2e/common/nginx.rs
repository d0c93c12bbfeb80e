//! A real nginx, one worker, on a free loopback port, and the signals the tests send it and herd.

use super::{free_port, wait_listening, TempDir};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn nginx_binary() -> PathBuf {
    for p in [
        "/usr/sbin/nginx",
        "/usr/local/sbin/nginx",
        "/usr/local/nginx/sbin/nginx",
    ] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("nginx is not installed: run `scripts/check` (it installs it) or `apt-get install -y nginx-light`");
}

/// nginx's `ssl_*` lines for a self-signed ECDSA certificate (localhost, 127.0.0.1) written into `dir`,
/// then `extra`.
pub fn nginx_tls(dir: &TempDir, extra: &str) -> String {
    let (cert, key) = (dir.path("cert.pem"), dir.path("key.pem"));
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.key_pair.serialize_pem()).unwrap();
    format!(
        "ssl_certificate {}; ssl_certificate_key {}; {extra}",
        cert.display(),
        key.display()
    )
}

/// A real nginx, one worker, on a free loopback port; stopped on drop.
pub struct Nginx {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: TempDir,
}

impl Nginx {
    /// `extra` goes inside the `server { }` block, before the default location.
    pub fn start(extra: &str) -> Nginx {
        Self::start_with(extra, "")
    }

    pub fn start_with(server_extra: &str, listen_extra: &str) -> Nginx {
        Self::start_configured("", server_extra, listen_extra)
    }

    /// `http_extra` goes inside the `http { }` block (log formats), `server_extra` inside the
    /// `server { }` block, `listen_extra` on its `listen` line. Relative paths in them are in
    /// the server's directory (its prefix, `dir`).
    pub fn start_configured(http_extra: &str, server_extra: &str, listen_extra: &str) -> Nginx {
        let dir = TempDir::new("nginx");
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let d = dir.0.display();
        let conf = format!(
            r#"
worker_processes 1;
daemon off;
master_process on;
user root;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
worker_rlimit_nofile 20000;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    {http_extra}
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port} backlog=4096 {listen_extra};
        {server_extra}
        location = /404 {{ return 404 "no such page\n"; }}
        location / {{ default_type text/plain; return 200 "hello from nginx\n"; }}
    }}
}}
"#
        );
        let conf_path = dir.path("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(nginx_binary())
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(&dir.0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn nginx");
        wait_listening(addr, "nginx");
        Nginx { child, addr, dir }
    }

    /// nginx as a gRPC proxy: h2c on its port, every gRPC call (`/package.Service/Method`)
    /// passed to `upstream` with `grpc_pass`; other paths as in [`Nginx::start`].
    pub fn grpc_pass(upstream: SocketAddr) -> Nginx {
        let location =
            format!(r#"location ~ "^/[^/]+\.[^/]+/[^/]+$" {{ grpc_pass grpc://{upstream}; }}"#);
        Self::start_with(&location, "http2")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The master and its workers, for SIGSTOP / SIGCONT.
    pub fn pids(&self) -> Vec<i32> {
        let master = self.child.id() as i32;
        let mut pids = vec![master];
        if let Ok(children) =
            std::fs::read_to_string(format!("/proc/{master}/task/{master}/children"))
        {
            pids.extend(
                children
                    .split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
        pids
    }

    pub fn signal(&self, sig: i32) {
        for pid in self.pids() {
            // SAFETY: sending a signal to a process we started.
            unsafe {
                libc_kill(pid, sig);
            }
        }
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

pub const SIGINT: i32 = 2;
pub const SIGKILL: i32 = 9;
pub const SIGCONT: i32 = 18;
pub const SIGSTOP: i32 = 19;

pub fn kill(pid: u32, sig: i32) {
    // SAFETY: sending a signal to a process we started.
    unsafe {
        libc_kill(pid as i32, sig);
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let pids = self.pids();
        self.signal(SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
        // workers exit when the master goes; make sure no orphan keeps the port
        for pid in pids.into_iter().skip(1) {
            // SAFETY: our own nginx worker.
            unsafe {
                libc_kill(pid, SIGKILL);
            }
        }
    }
}
