//! A real Caddy (Debian's package) serving HTTP/3 on a free loopback port with its internal CA
//! and a JSON access log; stopped on drop.

use super::TempDir;
use herd_http::h3::{H3Client, H3Config, IDLE_TIMEOUT};
use herd_http::{Target, TlsOptions};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Caddy {
    child: Child,
    pub addr: SocketAddr,
    pub dir: TempDir,
}

impl Caddy {
    /// `/hello` answers "hello" (200), anything else a 404 "nope".
    pub fn start() -> Caddy {
        let caddy = Path::new("/usr/bin/caddy");
        assert!(
            caddy.exists(),
            "caddy is not installed: run `scripts/check` (it installs it) or `apt-get install -y caddy`"
        );
        let dir = TempDir::new("caddy");
        // Free for both TCP and UDP: Caddy serves HTTP/1.1 and 2 on one, HTTP/3 on the other.
        let port = loop {
            let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = tcp.local_addr().unwrap().port();
            if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
                break port;
            }
        };
        let d = dir.0.display();
        let conf = format!(
            "{{\n\tadmin off\n\tstorage file_system {d}/data\n\tskip_install_trust\n\
             \tdefault_sni 127.0.0.1\n\tauto_https disable_redirects\n\
             \tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n\
             https://127.0.0.1:{port} {{\n\tbind 127.0.0.1\n\ttls internal\n\
             \tlog {{\n\t\toutput file {d}/access.log\n\t\tformat json\n\t}}\n\
             \trespond /hello \"hello\" 200\n\trespond \"nope\" 404\n}}\n"
        );
        std::fs::write(dir.path("Caddyfile"), conf).unwrap();
        let child = Command::new(caddy)
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(dir.path("Caddyfile"))
            .env("HOME", &dir.0)
            .env("XDG_DATA_HOME", dir.path("data"))
            .env("XDG_CONFIG_HOME", dir.path("config"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path("caddy.log")).unwrap())
            .spawn()
            .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut caddy = Caddy { child, addr, dir };
        caddy.wait_serving();
        caddy
    }

    /// Waits until an HTTP/3 handshake succeeds (Caddy's CA issues the certificate a moment
    /// after its listeners open); the probe sends no request, so the log holds only the test's.
    fn wait_serving(&mut self) {
        let target = Target::parse(&self.url("/")).unwrap();
        let insecure = TlsOptions {
            insecure: true,
            ..TlsOptions::default()
        };
        let config = H3Config::new(&target, insecure, IDLE_TIMEOUT).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok((client, _)) = H3Client::connect(&config, Duration::from_millis(500)) {
                client.close();
                return;
            }
            let log = std::fs::read_to_string(self.dir.path("caddy.log")).unwrap_or_default();
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("caddy exited ({status}):\n{log}");
            }
            assert!(Instant::now() < deadline, "caddy did not start:\n{log}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The access log's entries, once it holds at least `n` (Caddy writes each after its
    /// response is out, so it may trail the client a little; bounded).
    pub fn access_log(&self, n: usize) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(self.dir.path("access.log")).unwrap_or_default();
            let entries: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            if entries.len() >= n || Instant::now() >= deadline {
                return entries;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Caddy {
    /// Stops Caddy at once (SIGKILL): nothing more is sent, and its UDP port closes.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Caddy {
    fn drop(&mut self) {
        self.kill();
    }
}
