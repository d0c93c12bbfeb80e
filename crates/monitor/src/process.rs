//! Sampling a watched process, or every process of a name, from `/proc`: the readings of each
//! interval turned into CPU %, memory, threads, descriptors and context switches.

use crate::procfs::{self, Reading};
use crate::tree;
use crate::MonitorError;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Instant;

/// Notes kept per watched target; a server that forks a process per request would otherwise fill
/// the result with "appeared" and "exited".
const MAX_NOTES: usize = 50;

/// What to watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcessTarget {
    /// One process; its series ends when it exits.
    Pid(u32),
    /// Every process of this name (nginx's master and workers), summed per sample. Processes
    /// that start during the run are counted from their second sample on.
    Name(String),
}

impl fmt::Display for ProcessTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessTarget::Pid(pid) => write!(f, "pid {pid}"),
            ProcessTarget::Name(name) => write!(f, "processes named {name:?}"),
        }
    }
}

/// Memory, threads and descriptors at one instant: the state at the start of the watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gauges {
    pub at: Instant,
    /// Processes counted (more than one for a name).
    pub processes: u32,
    pub rss_bytes: u64,
    pub threads: u64,
    /// `None` when no counted process's `/proc/PID/fd` could be read.
    pub fds: Option<u64>,
}

/// One interval, from the previous reading to `gauges.at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessSample {
    /// The state at the end of the interval.
    pub gauges: Gauges,
    /// CPU time (user + system) over the interval's wall time, in percent of one core: a
    /// process busy on two cores shows 200, as `top` shows it.
    pub cpu_percent: f64,
    /// CPU time the counted processes have used since they started, in seconds.
    pub cpu_seconds: f64,
    /// Context switches during the interval: the process waited (voluntary, e.g. for I/O) or
    /// was preempted (involuntary: more runnable threads than cores).
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

/// Something that happened to the watched processes, e.g. "pid 123 exited".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub at: Instant,
    pub text: String,
}

/// A process being counted: its identity (pid + start time) and its last reading.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    start_ticks: u64,
    last: Reading,
}

/// Samples one [`ProcessTarget`]. Not a thread: [`crate::Watcher`] calls it once a second.
#[derive(Debug)]
pub struct ProcessSampler {
    target: ProcessTarget,
    /// The pid the series is known by: the one asked for, or the oldest process of the name.
    pid: u32,
    except: u32,
    tracked: BTreeMap<u32, Tracked>,
    /// Every pid counted at some point, in order of appearance.
    seen: Vec<u32>,
    last_at: Option<Instant>,
    /// Only processes in this pid's tree are counted (`--watch-parent`).
    under: Option<u32>,
    /// The roots of the trees the name matched when the watch was prepared.
    trees: Vec<u32>,
    /// A single pid's series has ended (it exited, or its pid now names another process).
    ended: bool,
    notes: Vec<Note>,
    notes_dropped: usize,
    clock_ticks: f64,
    page_size: u64,
}

impl ProcessSampler {
    /// Checks that the target exists now. `except` is left out of name matches (herd itself).
    pub fn new(target: ProcessTarget, except: u32) -> Result<Self, MonitorError> {
        Self::within(target, except, None)
    }

    /// As [`ProcessSampler::new`], counting only processes in the tree of `under` (itself or
    /// its descendants) when it is given: one server among several of the same name.
    pub fn within(
        target: ProcessTarget,
        except: u32,
        under: Option<u32>,
    ) -> Result<Self, MonitorError> {
        if let Some(parent) = under {
            if procfs::start_ticks(parent).is_none() {
                return Err(MonitorError::NoSuchPid(parent));
            }
        }
        let pids = match &target {
            ProcessTarget::Pid(pid) => match procfs::start_ticks(*pid) {
                Some(_) => vec![*pid],
                None => return Err(MonitorError::NoSuchPid(*pid)),
            },
            ProcessTarget::Name(name) => {
                let all = procfs::find_by_name(name, except);
                if all.is_empty() {
                    return Err(MonitorError::NoSuchName(name.clone()));
                }
                let pids = narrow(all, under);
                if pids.is_empty() {
                    return Err(MonitorError::NotInTree {
                        name: name.clone(),
                        parent: under.unwrap_or_default(),
                    });
                }
                pids
            }
        };
        let trees = match &target {
            ProcessTarget::Pid(_) => Vec::new(),
            ProcessTarget::Name(_) => tree::roots(&pids, tree::parent_of),
        };
        Ok(ProcessSampler {
            target,
            pid: pids[0],
            except,
            under,
            trees,
            tracked: BTreeMap::new(),
            seen: Vec::new(),
            last_at: None,
            ended: false,
            notes: Vec::new(),
            notes_dropped: 0,
            clock_ticks: procfs::clock_ticks(),
            page_size: procfs::page_size(),
        })
    }

    pub fn target(&self) -> &ProcessTarget {
        &self.target
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The roots of the separate process trees the name matched (one for a server and its
    /// workers); empty for a pid.
    pub fn trees(&self) -> &[u32] {
        &self.trees
    }

    /// The pid whose tree the name was narrowed to.
    pub fn under(&self) -> Option<u32> {
        self.under
    }

    /// Every pid counted so far, in order of appearance.
    pub fn pids(&self) -> &[u32] {
        &self.seen
    }

    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// Notes left out beyond the first 50.
    pub fn notes_dropped(&self) -> usize {
        self.notes_dropped
    }

    /// The first reading: the state the samples are compared with. `None` when the target is
    /// already gone.
    pub fn start(&mut self, now: Instant) -> Option<Gauges> {
        let readings = self.read_all(now);
        self.last_at = Some(now);
        (!readings.is_empty()).then(|| self.gauges(now, &readings))
    }

    /// The interval since the previous reading. `None` when nothing could be measured: the
    /// process has exited (a note says when), or no process of the name runs now.
    pub fn sample(&mut self, now: Instant) -> Option<ProcessSample> {
        let Some(since) = self.last_at else {
            self.start(now);
            return None;
        };
        let previous = self.tracked.clone();
        let readings = self.read_all(now);
        self.last_at = Some(now);
        if readings.is_empty() {
            return None;
        }
        let wall = now.saturating_duration_since(since).as_secs_f64();
        let (mut cpu_ticks, mut vol, mut invol) = (0u64, 0u64, 0u64);
        for (pid, r) in &readings {
            // A process that appeared in this interval has no earlier reading to compare with.
            if let Some(before) = previous.get(pid) {
                cpu_ticks += r.cpu_ticks().saturating_sub(before.last.cpu_ticks());
                // Threads that ended take their switches with them: never count backwards.
                vol += r.ctx_voluntary.saturating_sub(before.last.ctx_voluntary);
                invol += r
                    .ctx_involuntary
                    .saturating_sub(before.last.ctx_involuntary);
            }
        }
        let total_ticks: u64 = readings.values().map(Reading::cpu_ticks).sum();
        Some(ProcessSample {
            gauges: self.gauges(now, &readings),
            cpu_percent: if wall > 0.0 {
                100.0 * cpu_ticks as f64 / self.clock_ticks / wall
            } else {
                0.0
            },
            cpu_seconds: total_ticks as f64 / self.clock_ticks,
            ctx_voluntary: vol,
            ctx_involuntary: invol,
        })
    }

    /// Reads every process to count now, updates `tracked`, and notes who came and went.
    fn read_all(&mut self, now: Instant) -> BTreeMap<u32, Reading> {
        let mut readings = BTreeMap::new();
        if self.ended {
            return readings;
        }
        let candidates = match &self.target {
            ProcessTarget::Pid(pid) => vec![*pid],
            ProcessTarget::Name(name) => {
                narrow(procfs::find_by_name(name, self.except), self.under)
            }
        };
        let first = self.last_at.is_none();
        for pid in candidates {
            let Ok(r) = procfs::read(pid) else { continue };
            match self.tracked.get(&pid) {
                // The same pid with another start time is another process: the old one exited.
                Some(t) if t.start_ticks != r.stat.start_ticks => continue,
                Some(_) => {}
                None if matches!(self.target, ProcessTarget::Pid(_)) && !first => continue,
                None => {
                    if !first {
                        self.note(now, format!("pid {pid} appeared"));
                    }
                    if !self.seen.contains(&pid) {
                        self.seen.push(pid);
                    }
                }
            }
            readings.insert(pid, r);
        }
        let gone: Vec<u32> = self
            .tracked
            .keys()
            .filter(|pid| !readings.contains_key(pid))
            .copied()
            .collect();
        for pid in gone {
            self.note(now, format!("pid {pid} exited"));
        }
        if readings.is_empty() && !first {
            match &self.target {
                ProcessTarget::Pid(_) => {
                    self.ended = true;
                    self.note(now, "the series ends: the process is gone".to_owned());
                }
                ProcessTarget::Name(name) if !self.tracked.is_empty() => {
                    self.note(now, format!("no process named {name:?} is left"));
                }
                ProcessTarget::Name(_) => {}
            }
        }
        self.tracked = readings
            .iter()
            .map(|(&pid, &last)| {
                let start_ticks = last.stat.start_ticks;
                (pid, Tracked { start_ticks, last })
            })
            .collect();
        readings
    }

    fn gauges(&self, at: Instant, readings: &BTreeMap<u32, Reading>) -> Gauges {
        let fds: Vec<u64> = readings.values().filter_map(|r| r.fds).collect();
        Gauges {
            at,
            processes: readings.len() as u32,
            rss_bytes: readings.values().map(|r| r.stat.rss_pages).sum::<u64>() * self.page_size,
            threads: readings.values().map(|r| r.stat.threads).sum(),
            fds: (!fds.is_empty()).then(|| fds.iter().sum()),
        }
    }

    fn note(&mut self, at: Instant, text: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(Note { at, text });
        } else {
            self.notes_dropped += 1;
        }
    }
}

/// The pids in the tree of `under`, all of them without it.
fn narrow(pids: Vec<u32>, under: Option<u32>) -> Vec<u32> {
    match under {
        None => pids,
        Some(root) => pids
            .into_iter()
            .filter(|&p| tree::in_tree(p, root, tree::parent_of))
            .collect(),
    }
}
