//! What a script is given: its file, the URL as wrk's table holds it, and the errors of
//! loading it.

use std::net::SocketAddr;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LuaError {
    #[error("cannot read the script {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// The script failed to load or its `setup`, `init` or first `request()` failed; the
    /// message names the file and line.
    #[error("{0}")]
    Script(String),
    #[error("cannot set up Lua: {0}")]
    Setup(String),
}

/// The script and what wrk puts in its `wrk` table.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file as the user named it, for messages (`post.lua:3: ...`).
    pub file: String,
    pub code: String,
    pub scheme: String,
    pub host: String,
    /// The port when the URL gives one (wrk leaves it nil otherwise).
    pub port: Option<String>,
    pub path: String,
    /// Set by the command line (`-m`, `-d`/`--body`), else the script's or GET.
    pub method: Option<String>,
    pub body: Option<Vec<u8>>,
    /// `-H` headers, in `wrk.headers` before the script runs.
    pub headers: Vec<(String, String)>,
    /// What `init(args)` is handed: the URL, then the arguments after `--` (wrk's `args[0]` is
    /// the URL).
    pub args: Vec<String>,
    /// Where connections go unless `setup` sets `thread.addr`.
    pub addr: Option<SocketAddr>,
}

impl Source {
    /// Reads `file` for a run against `url`, with `args` for `init`.
    pub fn read(
        file: impl AsRef<Path>,
        url: WrkUrl,
        args: Vec<String>,
    ) -> Result<Source, LuaError> {
        let file = file.as_ref();
        let code = std::fs::read_to_string(file).map_err(|source| LuaError::Read {
            file: file.display().to_string(),
            source,
        })?;
        Ok(Source {
            file: file.display().to_string(),
            code,
            scheme: url.scheme,
            host: url.host,
            port: url.port,
            path: url.path,
            method: None,
            body: None,
            headers: Vec::new(),
            args,
            addr: None,
        })
    }
}

/// The URL as wrk's table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrkUrl {
    pub scheme: String,
    pub host: String,
    /// As written in the URL; nil in Lua when it gives none.
    pub port: Option<String>,
    /// Path and query.
    pub path: String,
}
