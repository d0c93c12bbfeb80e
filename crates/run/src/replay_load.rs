//! Access logs read into a [`Replay`] (`herd replay LOG... --target URL`): each line an arrival
//! at its own offset, identical requests built once, each request type named as `herd logs`
//! names it; herd-run then plays it as any other run.

use hdrhistogram::Histogram;
use herd_engine::Request;
use herd_http::{prepare, RequestSpec, Target};
use herd_logs::replay::{arrivals, ReplayOptions, Skipped};
use herd_logs::source::{FormatSpec, ReadStats};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// A log read into what the engine plays. Identical requests are built once; a line costs its
/// offset and a request number.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// Per arrival, its offset from the log's first line (already scaled by `--speed`).
    pub offsets: Vec<Duration>,
    /// Per arrival, its request.
    pub ids: Vec<u32>,
    pub requests: Vec<Request>,
    /// Request types, as `Request::name` numbers them.
    pub names: Vec<String>,
    /// Per request type, the time the production server took (when the log says), in us.
    pub production: Vec<Option<Histogram<u64>>>,
    /// `--loop`: play the log again and again until the duration ends.
    pub repeat: bool,
    /// The logs, as the result names them.
    pub logs: String,
}

/// Request types beyond this many are reported together as `other`.
const MAX_NAMES: usize = 50;

/// A log read into what the engine plays, and what reading it found.
pub(crate) struct Loaded {
    pub replay: Replay,
    pub read: ReplayRead,
}

/// What reading a replay's logs found besides the arrivals: what the CLI tells before the run
/// (lines it could not read) and after it (what was skipped).
#[derive(Clone, Debug, Default)]
pub struct ReplayRead {
    pub stats: ReadStats,
    pub skipped: Skipped,
    /// Lines whose request cannot be sent to the target (a path it refuses).
    pub invalid: u64,
}

/// Which logs a replay reads, in which format, and how it plays them (`herd replay`'s flags):
/// [`crate::Source::Replay`]'s, read when the run is prepared.
#[derive(Clone, Debug)]
pub struct ReplayLogs {
    pub paths: Vec<PathBuf>,
    pub format: FormatSpec,
    /// The fields of a custom format (`--fields`).
    pub fields: Option<String>,
    /// `--loop`: play the log again and again until the duration ends.
    pub repeat: bool,
    /// The window, the filters and the speed (`--from`, `--include`, `--speed`...).
    pub options: ReplayOptions,
}

/// Reads the logs' arrivals and builds their requests for `target`: each line an arrival at
/// its own offset, identical requests built once, named as `herd logs` names them.
pub(crate) fn load(logs: &ReplayLogs, target: &Target) -> Result<Loaded, String> {
    let opts = &logs.options;
    let mut by_key: HashMap<(String, String, Option<String>, Option<String>), u32> = HashMap::new();
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut r = Replay {
        repeat: logs.repeat,
        logs: logs
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        ..Replay::default()
    };
    let mut invalid = 0;
    let mut key_buf = Vec::new();
    let fields = logs.fields.as_deref();
    let (stats, skipped) = arrivals(&logs.paths, &logs.format, fields, opts, |arr| {
        let key = (
            arr.method.clone(),
            arr.path_and_query.clone(),
            arr.user_agent.clone(),
            arr.referer.clone(),
        );
        let id = match by_key.get(&key) {
            Some(id) => *id,
            None => {
                let mut headers = Vec::new();
                if let Some(ua) = &arr.user_agent {
                    headers.push(("User-Agent".to_owned(), ua.clone()));
                }
                if let Some(re) = &arr.referer {
                    headers.push(("Referer".to_owned(), re.clone()));
                }
                let spec = RequestSpec {
                    method: arr.method.clone(),
                    path: arr.path_and_query.clone(),
                    headers,
                    body: Vec::new(),
                };
                let Ok(mut req) = prepare(target, &spec) else {
                    invalid += 1;
                    return;
                };
                // Named as `herd logs` and `herd model` name it, query parameters included.
                let (path, query) = arr
                    .path_and_query
                    .split_once('?')
                    .unwrap_or((&arr.path_and_query, ""));
                herd_logs::pattern::template(
                    arr.method.as_bytes(),
                    path.as_bytes(),
                    query.as_bytes(),
                    &mut key_buf,
                );
                let mut name = String::from_utf8_lossy(&key_buf).into_owned();
                if !by_name.contains_key(&name) && by_name.len() + 1 >= MAX_NAMES {
                    name = "other".to_owned();
                }
                let next = by_name.len() as u32;
                let n = *by_name.entry(name.clone()).or_insert(next);
                if n as usize == r.names.len() {
                    r.names.push(name);
                }
                req.name = n;
                let id = r.requests.len() as u32;
                r.requests.push(req);
                by_key.insert(key, id);
                id
            }
        };
        r.offsets.push(arr.offset);
        r.ids.push(id);
        if let Some(taken) = arr.taken {
            let name = r.requests[id as usize].name as usize;
            if r.production.len() <= name {
                r.production.resize(name + 1, None);
            }
            r.production[name]
                .get_or_insert_with(herd_engine::metrics::new_histogram)
                .saturating_record(taken.as_micros() as u64);
        }
    })
    .map_err(|e| e.to_string())?;
    Ok(Loaded {
        replay: r,
        read: ReplayRead {
            stats,
            skipped,
            invalid,
        },
    })
}
