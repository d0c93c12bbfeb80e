//! `herd proxy`'s flags as plain data: the proxies to start with (toxiproxy's populate file,
//! and one given by `--listen`/`--upstream`), and what it says once they run.

use crate::{Config, Server};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;

/// What `herd proxy` was given.
#[derive(Clone, Debug)]
pub struct ProxyFlags {
    /// toxiproxy's populate JSON: an array of proxies.
    pub config: Option<PathBuf>,
    /// One proxy: where it listens, where it forwards, its name.
    pub one: Option<(SocketAddr, String, String)>,
    pub api: SocketAddr,
    pub seed: u64,
}

impl ProxyFlags {
    /// The server's config: the file's proxies, then the one given by flags.
    pub fn config(&self) -> Result<Config, String> {
        let mut populate = Vec::new();
        if let Some(path) = &self.config {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read --config {}: {e}", path.display()))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "--config {} is not JSON (toxiproxy's populate file: an array of proxies): {e}",
                    path.display()
                )
            })?;
            match v {
                Value::Array(list) => populate.extend(list),
                _ => return Err(format!(
                    "--config {}: toxiproxy's populate file is a JSON array of proxies, \
                     e.g. [{{\"name\": \"db\", \"listen\": \"127.0.0.1:5433\", \"upstream\": \"127.0.0.1:5432\"}}]",
                    path.display()
                )),
            }
        }
        if let Some((listen, upstream, name)) = &self.one {
            populate
                .push(json!({"name": name, "listen": listen.to_string(), "upstream": upstream}));
        }
        Ok(Config {
            api: self.api,
            seed: self.seed,
            populate: (!populate.is_empty()).then_some(Value::Array(populate)),
        })
    }
}

impl Server {
    /// Where the API listens and each proxy with where it forwards.
    pub fn banner(&self, seed: u64) -> String {
        let api = self.api_addr();
        let mut out = format!(
            "herd proxy: API on http://{api} (toxiproxy's; TOXIPROXY_URL=http://{api}), seed {seed}\n"
        );
        for e in self.shared().lock().proxies.values() {
            let state = if e.enabled { "" } else { " (disabled)" };
            out.push_str(&format!(
                "  {}  {} -> {}{state}\n",
                e.name, e.listen, e.upstream
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_proxies_come_first_and_a_file_not_an_array_says_how_to_write_one() {
        let dir = std::env::temp_dir().join(format!("herd-proxy-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("populate.json");
        std::fs::write(
            &file,
            r#"[{"name": "db", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:9"}]"#,
        )
        .unwrap();
        let mut f = ProxyFlags {
            config: Some(file.clone()),
            one: Some((
                "127.0.0.1:0".parse().unwrap(),
                "127.0.0.1:9".into(),
                "web".into(),
            )),
            api: "127.0.0.1:0".parse().unwrap(),
            seed: 7,
        };
        let populate = f.config().unwrap().populate.unwrap();
        let names: Vec<&str> = populate
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["db", "web"]);
        std::fs::write(&file, "{}").unwrap();
        let e = f.config().unwrap_err();
        assert!(e.contains("a JSON array of proxies"), "{e}");
        f.config = None;
        f.one = None;
        assert!(f.config().unwrap().populate.is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
