//! The faults' own thread: adds each toxic at its instant of the timeline and removes it at
//! the end of its window, through the proxy's API; on stop (the run's end, Ctrl-C, an error,
//! a panic unwinding) it removes every toxic still in force, so the proxy is left clean.

use super::api::Api;
use herd_workload::Fault;
use serde_json::json;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// What the thread is told.
enum Message {
    /// The engine's own instant the measurement starts (its first report).
    Origin(SystemTime),
    Stop,
}

/// One fault as it was played: when the API confirmed its toxic added and removed.
#[derive(Clone, Debug)]
pub(crate) struct Played {
    pub index: usize,
    pub name: String,
    pub added: SystemTime,
    pub removed: SystemTime,
}

/// What the thread did: the faults played, and what went wrong (a toxic not added or removed).
#[derive(Debug, Default)]
pub(crate) struct Log {
    pub played: Vec<Played>,
    pub problems: Vec<String>,
}

/// The name of fault `i`'s toxic on its proxy.
pub(crate) fn toxic_name(i: usize) -> String {
    format!("herd_fault_{}", i + 1)
}

/// A toxic added (`removed: None`) or removed, as the API confirmed it.
#[derive(Clone, Debug)]
pub(crate) struct Notice {
    pub index: usize,
    pub added: SystemTime,
    pub removed: Option<SystemTime>,
}

/// The thread playing the faults; stopping it (or dropping it) removes what is in force.
pub(crate) struct Driver {
    tell: Sender<Message>,
    heard: Receiver<Notice>,
    thread: Option<JoinHandle<Log>>,
}

impl Driver {
    /// Starts playing `faults` on a timeline whose second 0 is about `origin` (corrected by
    /// [`Driver::origin`] when the engine says).
    pub fn start(api: Api, faults: Vec<Fault>, origin: SystemTime) -> Result<Driver, String> {
        let (tell, told) = channel();
        let (say, heard) = channel();
        let thread = std::thread::Builder::new()
            .name("herd-faults".into())
            .spawn(move || play(&api, &faults, origin, &told, &say))
            .map_err(|e| format!("faults: cannot start their thread: {e}"))?;
        Ok(Driver {
            tell,
            heard,
            thread: Some(thread),
        })
    }

    /// What was added or removed since the last call.
    pub fn notices(&self) -> Vec<Notice> {
        self.heard.try_iter().collect()
    }

    /// The engine's instant of second 0.
    pub fn origin(&self, at: SystemTime) {
        let _ = self.tell.send(Message::Origin(at));
    }

    /// Removes every toxic still in force and says what was played.
    pub fn stop(mut self) -> Log {
        self.finish()
    }

    fn finish(&mut self) -> Log {
        let _ = self.tell.send(Message::Stop);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(log)) => log,
            _ => Log::default(),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.finish();
        }
    }
}

/// A step of the schedule: at `offset` from second 0, add (or remove) fault `index`.
struct Step {
    offset: Duration,
    index: usize,
    add: bool,
}

fn play(
    api: &Api,
    faults: &[Fault],
    mut origin: SystemTime,
    told: &Receiver<Message>,
    say: &Sender<Notice>,
) -> Log {
    let mut log = Log::default();
    // A toxic left by a run that was killed (SIGKILL) would make the add fail: gone first.
    for (i, f) in faults.iter().enumerate() {
        let _ = api.remove(&f.proxy, &toxic_name(i));
    }
    let mut steps: Vec<Step> = faults
        .iter()
        .enumerate()
        .flat_map(|(index, f)| {
            [
                Step {
                    offset: f.at,
                    index,
                    add: true,
                },
                Step {
                    offset: f.end(),
                    index,
                    add: false,
                },
            ]
        })
        .collect();
    // Removals first at equal instants: a window ending when the next begins leaves room.
    steps.sort_by_key(|s| (s.offset, s.add));
    let mut in_force: Vec<(usize, SystemTime)> = Vec::new();
    let mut next = 0;
    while next < steps.len() {
        let due = origin + steps[next].offset;
        let wait = due.duration_since(SystemTime::now()).unwrap_or_default();
        match told.recv_timeout(wait) {
            Ok(Message::Origin(at)) => {
                origin = at;
                continue;
            }
            Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let step = &steps[next];
        next += 1;
        let f = &faults[step.index];
        let name = toxic_name(step.index);
        if step.add {
            let toxic = json!({
                "name": name, "type": f.toxic, "stream": f.stream,
                "toxicity": f.toxicity, "attributes": f.attributes,
            });
            match api.add(&f.proxy, &toxic) {
                Ok(()) => {
                    let added = SystemTime::now();
                    in_force.push((step.index, added));
                    let _ = say.send(Notice {
                        index: step.index,
                        added,
                        removed: None,
                    });
                }
                Err(e) => log.problems.push(format!(
                    "fault at line {} ({}): not added: {e}",
                    f.line,
                    f.describe()
                )),
            }
        } else if let Some(k) = in_force.iter().position(|(i, _)| *i == step.index) {
            let (index, added) = in_force.remove(k);
            remove(api, faults, index, added, &mut log);
            say_removed(say, &log);
        }
    }
    for (index, added) in std::mem::take(&mut in_force) {
        remove(api, faults, index, added, &mut log);
        say_removed(say, &log);
    }
    log.played.sort_by_key(|p| p.index);
    log
}

fn remove(api: &Api, faults: &[Fault], index: usize, added: SystemTime, log: &mut Log) {
    let f = &faults[index];
    let name = toxic_name(index);
    // Once more after a failure: a toxic left in force would fault whatever runs next.
    let result = api
        .remove(&f.proxy, &name)
        .or_else(|_| api.remove(&f.proxy, &name));
    let removed = SystemTime::now();
    if let Err(e) = result {
        log.problems.push(format!(
            "fault at line {} ({}): toxic {name} NOT removed, remove it by hand (toxiproxy-cli toxic remove -n {name} {}): {e}",
            f.line,
            f.describe(),
            f.proxy
        ));
    }
    log.played.push(Played {
        index,
        name,
        added,
        removed,
    });
}

fn say_removed(say: &Sender<Notice>, log: &Log) {
    if let Some(p) = log.played.last() {
        let _ = say.send(Notice {
            index: p.index,
            added: p.added,
            removed: Some(p.removed),
        });
    }
}
