//! The proxies and their toxics as the API sees them, shared between the API's threads and
//! the relay loop.
//!
//! The API changes the registry under its lock (no I/O under it but binding a listener),
//! bumps `generation` and wakes the loop; the loop takes the lock only to read what changed,
//! once per generation, and says which generation it has applied. A call returns once the
//! loop applied its change (a pass of the loop, which never blocks), so a toxic the API
//! answered for is on every open connection: none escapes it (toxiproxy#148). The wait is
//! bounded: a loop that does not answer within `APPLY_WAIT` leaves the change recorded and the
//! answer given (toxiproxy#412, #558: the API must not hang under load).

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::stats::Stats;
use crate::toxic::Toxic;

const APPLY_WAIT: Duration = Duration::from_secs(2);

/// One proxy: where it listens, where it forwards, whether it is up, and its toxics in the
/// order they were added (each stream's chain keeps that order).
pub struct Entry {
    pub name: String,
    pub listen: String,
    pub upstream: String,
    pub(crate) upstream_addr: SocketAddr,
    pub enabled: bool,
    pub toxics: Vec<Toxic>,
    /// Bound by the API, not yet taken by the loop.
    pub(crate) listener: Option<TcpListener>,
    /// Changes when the proxy is (re)started: the loop then drops the old listener and links.
    pub(crate) epoch: u64,
    pub(crate) toxics_version: u64,
    pub stats: Arc<Stats>,
}

impl Entry {
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "listen": self.listen,
            "upstream": self.upstream,
            "enabled": self.enabled,
            "toxics": self.toxics.iter().map(Toxic::to_json).collect::<Vec<_>>(),
        })
    }
}

#[derive(Default)]
pub struct Registry {
    pub proxies: BTreeMap<String, Entry>,
    next_epoch: u64,
}

/// The registry with the loop's side of the handshake.
pub struct Shared {
    registry: Mutex<Registry>,
    generation: AtomicU64,
    applied: Mutex<u64>,
    applied_cv: Condvar,
    waker: mio::Waker,
}

/// A proxy as a request describes it.
struct Spec {
    name: String,
    listen: String,
    upstream: String,
    enabled: bool,
    toxics: Vec<Toxic>,
}

impl Shared {
    pub(crate) fn new(waker: mio::Waker) -> Shared {
        Shared {
            registry: Mutex::new(Registry::default()),
            generation: AtomicU64::new(0),
            applied: Mutex::new(0),
            applied_cv: Condvar::new(),
            waker,
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Called by the loop once it applied every change up to `generation`.
    pub(crate) fn mark_applied(&self, generation: u64) {
        let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        *applied = (*applied).max(generation);
        self.applied_cv.notify_all();
    }

    /// Tells the loop the registry changed and waits (bounded) until it applied the change.
    fn changed(&self) {
        let want = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        let _ = self.waker.wake();
        let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .applied_cv
            .wait_timeout_while(applied, APPLY_WAIT, |a| *a < want);
    }

    pub fn proxies_json(&self) -> Value {
        let reg = self.lock();
        let map: Map<String, Value> = reg
            .proxies
            .iter()
            .map(|(k, e)| (k.clone(), e.to_json()))
            .collect();
        Value::Object(map)
    }

    pub fn proxy_json(&self, name: &str) -> Result<Value, ApiError> {
        let reg = self.lock();
        Ok(find(&reg, name)?.to_json())
    }

    /// `POST /proxies`. herd also takes a `toxics` array here, put in place before the first
    /// connection is accepted.
    pub fn create(&self, body: &Value) -> Result<Value, ApiError> {
        let spec = spec(body, None)?;
        let out = {
            let mut reg = self.lock();
            if reg.proxies.contains_key(&spec.name) {
                return Err(ApiError::proxy_exists());
            }
            let entry = start(&mut reg, spec)?;
            let out = entry.to_json();
            reg.proxies.insert(entry.name.clone(), entry);
            out
        };
        self.changed();
        Ok(out)
    }

    /// `POST /populate`: every proxy of the list, checked first; one already there with the
    /// same listen and upstream is kept as it is, another is replaced.
    pub fn populate(&self, body: &Value) -> Result<Value, ApiError> {
        let list = body
            .as_array()
            .ok_or_else(|| ApiError::bad_body("populate takes a JSON array of proxies".into()))?;
        let specs = list
            .iter()
            .enumerate()
            .map(|(i, p)| spec(p, Some(i + 1)))
            .collect::<Result<Vec<_>, _>>()?;
        let replaced: Vec<String> = {
            let reg = self.lock();
            specs
                .iter()
                .filter(|s| {
                    reg.proxies.get(&s.name).is_some_and(|e| {
                        !(same_addr(&e.listen, &s.listen) && e.upstream == s.upstream)
                    })
                })
                .map(|s| s.name.clone())
                .collect()
        };
        if !replaced.is_empty() {
            let mut reg = self.lock();
            for name in &replaced {
                reg.proxies.remove(name);
            }
            drop(reg);
            self.changed();
        }
        let mut out = Vec::new();
        let mut result = Ok(());
        {
            let mut reg = self.lock();
            for s in specs {
                if let Some(e) = reg.proxies.get(&s.name) {
                    out.push(e.to_json());
                    continue;
                }
                match start(&mut reg, s) {
                    Ok(entry) => {
                        out.push(entry.to_json());
                        reg.proxies.insert(entry.name.clone(), entry);
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
        }
        self.changed();
        result.map(|()| json!({ "proxies": out }))
    }

    /// `POST/PATCH /proxies/{name}`: a new listen or upstream restarts the proxy (its
    /// connections close); `enabled: false` stops it, `true` starts it again.
    pub fn update(&self, name: &str, body: &Value) -> Result<Value, ApiError> {
        let obj = body
            .as_object()
            .ok_or_else(|| ApiError::bad_body("a proxy is a JSON object".into()))?;
        let (listen, upstream, enabled, was_enabled) = {
            let reg = self.lock();
            let e = find(&reg, name)?;
            let listen = opt_str(obj, "listen")?.unwrap_or(&e.listen).to_string();
            let upstream = opt_str(obj, "upstream")?.unwrap_or(&e.upstream);
            let enabled = opt_bool(obj, "enabled")?.unwrap_or(e.enabled);
            if same_addr(&listen, &e.listen) && upstream == e.upstream && enabled == e.enabled {
                return Ok(e.to_json());
            }
            (listen, upstream.to_string(), enabled, e.enabled)
        };
        let upstream_addr = resolve(&upstream)?;
        if was_enabled {
            // Stopped first, so that its address is free to listen on again.
            self.stop(name);
        }
        let out = {
            let mut reg = self.lock();
            let epoch = bump(&mut reg);
            let e = reg
                .proxies
                .get_mut(name)
                .ok_or_else(ApiError::proxy_not_found)?;
            e.upstream = upstream;
            e.upstream_addr = upstream_addr;
            e.listen = listen;
            e.epoch = epoch;
            if enabled {
                let l = bind(&e.listen)?;
                e.listen = local(&l, &e.listen);
                e.listener = Some(l);
                e.enabled = true;
            }
            e.to_json()
        };
        self.changed();
        Ok(out)
    }

    /// Stops a proxy: the loop closes its listener and connections before this returns.
    fn stop(&self, name: &str) {
        {
            let mut reg = self.lock();
            let epoch = bump(&mut reg);
            if let Some(e) = reg.proxies.get_mut(name) {
                e.epoch = epoch;
                e.enabled = false;
                e.listener = None;
            }
        }
        self.changed();
    }

    pub fn delete(&self, name: &str) -> Result<(), ApiError> {
        self.lock()
            .proxies
            .remove(name)
            .ok_or_else(ApiError::proxy_not_found)?;
        self.changed();
        Ok(())
    }

    pub fn toxics_json(&self, proxy: &str) -> Result<Value, ApiError> {
        let reg = self.lock();
        let e = find(&reg, proxy)?;
        Ok(Value::Array(e.toxics.iter().map(Toxic::to_json).collect()))
    }

    pub fn toxic_json(&self, proxy: &str, toxic: &str) -> Result<Value, ApiError> {
        let reg = self.lock();
        let e = find(&reg, proxy)?;
        e.toxics
            .iter()
            .find(|t| t.name == toxic)
            .map(Toxic::to_json)
            .ok_or_else(ApiError::toxic_not_found)
    }

    pub fn add_toxic(&self, proxy: &str, body: &Value) -> Result<Value, ApiError> {
        let toxic = Toxic::from_json(body)?;
        let out = toxic.to_json();
        self.edit_toxics(proxy, |toxics| {
            if toxics.iter().any(|t| t.name == toxic.name) {
                return Err(ApiError::toxic_exists());
            }
            toxics.push(toxic);
            Ok(())
        })?;
        Ok(out)
    }

    pub fn update_toxic(&self, proxy: &str, name: &str, body: &Value) -> Result<Value, ApiError> {
        let mut out = Value::Null;
        self.edit_toxics(proxy, |toxics| {
            let t = toxics
                .iter_mut()
                .find(|t| t.name == name)
                .ok_or_else(ApiError::toxic_not_found)?;
            t.update(body)?;
            out = t.to_json();
            Ok(())
        })?;
        Ok(out)
    }

    pub fn remove_toxic(&self, proxy: &str, name: &str) -> Result<(), ApiError> {
        self.edit_toxics(proxy, |toxics| {
            let at = toxics
                .iter()
                .position(|t| t.name == name)
                .ok_or_else(ApiError::toxic_not_found)?;
            toxics.remove(at);
            Ok(())
        })
    }

    fn edit_toxics(
        &self,
        proxy: &str,
        edit: impl FnOnce(&mut Vec<Toxic>) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        {
            let mut reg = self.lock();
            let e = reg
                .proxies
                .get_mut(proxy)
                .ok_or_else(ApiError::proxy_not_found)?;
            edit(&mut e.toxics)?;
            e.toxics_version += 1;
        }
        self.changed();
        Ok(())
    }

    /// `POST /reset`: every proxy enabled, every toxic removed.
    pub fn reset(&self) -> Result<(), ApiError> {
        let mut result = Ok(());
        {
            let mut reg = self.lock();
            let names: Vec<String> = reg.proxies.keys().cloned().collect();
            for name in names {
                let epoch = bump(&mut reg);
                let e = reg.proxies.get_mut(&name).expect("listed above");
                if !e.toxics.is_empty() {
                    e.toxics.clear();
                    e.toxics_version += 1;
                }
                if !e.enabled {
                    match bind(&e.listen) {
                        Ok(l) => {
                            e.listen = local(&l, &e.listen);
                            e.listener = Some(l);
                            e.enabled = true;
                            e.epoch = epoch;
                        }
                        Err(err) => result = Err(err),
                    }
                }
            }
        }
        self.changed();
        result
    }
}

fn find<'a>(reg: &'a Registry, name: &str) -> Result<&'a Entry, ApiError> {
    reg.proxies.get(name).ok_or_else(ApiError::proxy_not_found)
}

fn bump(reg: &mut Registry) -> u64 {
    reg.next_epoch += 1;
    reg.next_epoch
}

/// A new entry, its listener bound when enabled, its toxics in place.
fn start(reg: &mut Registry, s: Spec) -> Result<Entry, ApiError> {
    let upstream_addr = resolve(&s.upstream)?;
    let (listener, listen) = if s.enabled {
        let l = bind(&s.listen)?;
        let a = local(&l, &s.listen);
        (Some(l), a)
    } else {
        (None, s.listen)
    };
    Ok(Entry {
        name: s.name,
        listen,
        upstream: s.upstream,
        upstream_addr,
        enabled: s.enabled,
        toxics: s.toxics,
        listener,
        epoch: bump(reg),
        toxics_version: 0,
        stats: Arc::new(Stats::default()),
    })
}

fn spec(body: &Value, at: Option<usize>) -> Result<Spec, ApiError> {
    let which = |field: &str| match at {
        Some(i) => format!("{field} at proxy {i}"),
        None => field.to_string(),
    };
    let obj = body
        .as_object()
        .ok_or_else(|| ApiError::bad_body("a proxy is a JSON object".into()))?;
    let name = opt_str(obj, "name")?.unwrap_or("");
    if name.is_empty() {
        return Err(ApiError::missing(&which("name")));
    }
    let upstream = opt_str(obj, "upstream")?.unwrap_or("");
    if upstream.is_empty() {
        return Err(ApiError::missing(&which("upstream")));
    }
    let listen = match opt_str(obj, "listen")?.unwrap_or("") {
        "" => "127.0.0.1:0",
        l => l,
    };
    let toxics = match obj.get("toxics") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => {
            let mut toxics: Vec<Toxic> = Vec::new();
            for t in list {
                let t = Toxic::from_json(t)?;
                if toxics.iter().any(|o| o.name == t.name) {
                    return Err(ApiError::toxic_exists());
                }
                toxics.push(t);
            }
            toxics
        }
        Some(v) => {
            return Err(ApiError::bad_body(format!(
                "toxics must be an array, got {v}"
            )))
        }
    };
    Ok(Spec {
        name: name.to_string(),
        listen: listen.to_string(),
        upstream: upstream.to_string(),
        enabled: opt_bool(obj, "enabled")?.unwrap_or(true),
        toxics,
    })
}

fn opt_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ApiError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(ApiError::bad_body(format!(
            "{key} must be a string, got {v}"
        ))),
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, ApiError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(ApiError::bad_body(format!(
            "{key} must be true or false, got {v}"
        ))),
    }
}

/// Go's `:PORT` means every interface.
fn listen_addr(listen: &str) -> String {
    match listen.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => listen.to_string(),
    }
}

fn local(l: &TcpListener, given: &str) -> String {
    l.local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| given.to_string())
}

fn same_addr(a: &str, b: &str) -> bool {
    a == b || listen_addr(a) == listen_addr(b)
}

fn bind(listen: &str) -> Result<TcpListener, ApiError> {
    let l = TcpListener::bind(listen_addr(listen)).map_err(|e| {
        ApiError::new(
            format!(
                "cannot listen on {listen}: {e} (give another address, or port 0 for any free one)"
            ),
            500,
        )
    })?;
    l.set_nonblocking(true)
        .map_err(|e| ApiError::new(format!("listener on {listen}: {e}"), 500))?;
    Ok(l)
}

/// The upstream is resolved once, when the proxy starts: the relay loop never waits on DNS.
fn resolve(upstream: &str) -> Result<SocketAddr, ApiError> {
    let mut addrs = upstream.to_socket_addrs().map_err(|e| {
        ApiError::new(
            format!("upstream {upstream}: {e} (give HOST:PORT, e.g. 127.0.0.1:8080)"),
            400,
        )
    })?;
    addrs
        .next()
        .ok_or_else(|| ApiError::new(format!("upstream {upstream}: no address found"), 400))
}
