//! A real Caddy (Debian's package) serving HTTP/1.1, 2 and 3 on a free loopback port with its
//! internal CA and a JSON access log; stopped on drop.

use herd_http::h3::{H3Client, H3Config, IDLE_TIMEOUT};
use herd_http::{Target, TlsOptions};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Caddy {
    child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

/// A port free on 127.0.0.1 for both TCP and UDP: Caddy serves HTTP/1.1 and 2 on one, HTTP/3
/// on the other.
fn free_port() -> u16 {
    loop {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl Caddy {
    /// `/hello` answers "hello" (200), `/missing` a 404 "nope", anything else a file under
    /// `www/` (`files` are written there first; a 404 when there is none).
    pub fn start(files: &[(&str, &[u8])]) -> Caddy {
        Caddy::start_with(files, "")
    }

    /// As [`Caddy::start`], with `directives` (Caddyfile text, e.g. a `reverse_proxy`) in the
    /// site block.
    pub fn start_with(files: &[(&str, &[u8])], directives: &str) -> Caddy {
        let caddy = Path::new("/usr/bin/caddy");
        assert!(
            caddy.exists(),
            "caddy is not installed: run `scripts/check` (it installs it) or `apt-get install -y caddy`"
        );
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!("herd-caddy-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(dir.join("www")).unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.join("www").join(name), bytes).unwrap();
        }
        let port = free_port();
        let d = dir.display();
        let conf = format!(
            r#"{{
	admin off
	default_sni 127.0.0.1
	storage file_system {d}/data
	skip_install_trust
	auto_https disable_redirects
	servers {{
		protocols h1 h2 h3
	}}
}}
https://127.0.0.1:{port} {{
	bind 127.0.0.1
	tls internal
	log {{
		output file {d}/access.log
		format json
	}}
	root * {d}/www
	respond /hello "hello" 200
	respond /missing "nope" 404
	{directives}
	file_server
}}
"#
        );
        std::fs::write(dir.join("Caddyfile"), conf).unwrap();
        let child = Command::new(caddy)
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(dir.join("Caddyfile"))
            .env("HOME", &dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("caddy.log")).unwrap())
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
            let log = self.log();
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

    /// Caddy's own log (its stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("caddy.log")).unwrap_or_default()
    }

    /// The access log's entries (one JSON object a line), once it holds at least `n`: Caddy
    /// writes an entry after the response is out, so it may trail the client a little; bounded.
    pub fn access_log(&self, n: usize) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
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

    /// Stops Caddy at once (SIGKILL): nothing more is sent, and its UDP port closes.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Caddy {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("caddy's log:\n{}", self.log());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
