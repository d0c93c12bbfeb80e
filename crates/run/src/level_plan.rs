//! A prepared run at a level and length: the plan it plays (a level replaces a workload file's
//! own load, keeping the flags' threads, warm-up and timeout), the checks on that plan before
//! anything is sent, and the config its result describes it with.

use crate::prepare::{threads_default, url_plan};
use crate::prepared::Prepared;
use crate::result::{url_config, workload_config};
use crate::shard::ShardRun;
use crate::what::What;
use crate::{Length, Level, RunError, DEFAULT_OPEN_CAP};
use herd_engine::{Load, Plan};
use herd_result::RunConfig;

impl Prepared {
    /// Every problem with the plan at this level and length.
    pub(crate) fn check_at(
        &self,
        level: Option<Level>,
        length: Option<Length>,
    ) -> Result<(), RunError> {
        let plan = self.plan_at(level, length);
        plan.validate().map_err(|e| match &self.what {
            What::Workload { file, .. } => {
                RunError::Invalid(vec![format!("{}: {e}", file.display())])
            }
            _ => RunError::Invalid(e.0),
        })?;
        if let What::Workload { workload, file } = &self.what {
            let alone = level.is_none() && self.shard.is_none();
            let problems = crate::faults::check(workload, file, &plan, alone);
            if !problems.is_empty() {
                return Err(RunError::Invalid(problems));
            }
        }
        self.check_rows(&plan)
    }

    /// docs/distributed.md promises that two shards never log in as the same user: user `u`
    /// keeps row `u mod rows`, so that holds only while every user has a row of its own.
    pub(crate) fn check_rows(&self, plan: &Plan) -> Result<(), RunError> {
        let (
            Some(ShardRun { shard, .. }),
            What::Workload { workload, file } | What::UrlFile { workload, file, .. },
        ) = (&self.shard, &self.what)
        else {
            return Ok(());
        };
        let users = plan.max_connections();
        let problems: Vec<String> = workload
            .per_user_rows()
            .into_iter()
            .filter(|&(_, rows)| shard.count > 1 && rows < users)
            .map(|(name, rows)| {
                format!(
                    "{}: data `{name}` has {rows} rows for {users} users over {} shards: users would share rows, and two shards would log in as the same user; add rows (one per user) or run fewer users",
                    file.display(),
                    shard.count
                )
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(RunError::Invalid(problems))
        }
    }

    /// The plan at a level and length, without shard or late start.
    pub(crate) fn plan_at(&self, level: Option<Level>, length: Option<Length>) -> Plan {
        let mut plan = self.plan_of(level, length);
        self.http().apply(&mut plan);
        plan
    }

    /// The protocol flags, with a workload file's `protocol: h2` as if `--http2` were given.
    pub(crate) fn http(&self) -> crate::HttpFlags {
        let file = matches!(&self.what, What::Workload { workload, .. } if workload.http2);
        crate::HttpFlags {
            http2: self.http.http2 || file,
            ..self.http
        }
    }

    pub(crate) fn plan_of(&self, level: Option<Level>, length: Option<Length>) -> Plan {
        let w = match &self.what {
            What::Url(r) => {
                let load = self.load.at(level, length);
                let mut plan = url_plan(&load, 1);
                if let Some((_, ws)) = &r.ws {
                    let http = self.http();
                    let streams = if http.http2 {
                        http.streams.unwrap_or(1)
                    } else {
                        1
                    };
                    ws.apply(&mut plan, load.connections, streams);
                }
                return plan;
            }
            What::Script { .. } => return url_plan(&self.load.at(level, length), 1),
            What::UrlFile { workload, .. } => {
                return url_plan(&self.load.at(level, length), workload.names().len())
            }
            What::Workload { workload, .. } => workload,
            // A log sets its own arrivals: a level does not apply.
            What::Replay { replay, .. } => return replay.plan(&self.load.at(None, length)),
        };
        let f = &self.load;
        let Some(level) = level else {
            // The file's own load; its thread count wins over the default, the flag over both;
            // the load flags over the file's `load:`.
            let mut plan = w.plan(threads_default());
            crate::overrides::apply(&mut plan, f);
            if let Some(t) = f.threads {
                plan.threads = t;
            }
            if let Some(warmup) = f.warmup {
                plan.warmup = warmup;
            }
            if let Some(timeout) = f.timeout {
                plan.timeout = timeout;
            }
            plan.event_timeout = f.event_timeout.or(plan.event_timeout);
            set_length(&mut plan, length);
            return plan;
        };
        // A level replaces the file's load: no stages, the flags' threads and warm-up.
        let mut plan = w.plan(threads_default());
        if let Some(t) = f.threads {
            plan.threads = t;
        }
        plan.load = match level {
            Level::Rate(rate) => Load::Open {
                rate,
                max_connections: f.connections.unwrap_or(DEFAULT_OPEN_CAP),
            },
            Level::Users(users) => Load::Closed { users },
        };
        plan.process = f.arrivals.unwrap_or_default();
        plan.seed = f.seed.unwrap_or(herd_engine::process::DEFAULT_SEED);
        set_length(&mut plan, length);
        plan.stages = Vec::new();
        plan.warmup = f.warmup.unwrap_or_default();
        if let Some(timeout) = f.timeout {
            plan.timeout = timeout;
        }
        plan.event_timeout = f.event_timeout.or(plan.event_timeout);
        plan
    }

    pub(crate) fn config_of(
        &self,
        plan: &Plan,
        level: Option<Level>,
        length: Option<Length>,
    ) -> RunConfig {
        let mut c = self.config_as_planned(plan, level, length);
        c.labels.extend(self.labels.clone());
        c.proxy = self.proxy.as_ref().map(|p| p.shown.clone());
        // Over HTTP/2 and HTTP/3 the plan's window is streams per connection, not HTTP/1.1's
        // pipeline.
        if self.http().http2 || self.http().http3 {
            c.pipeline = None;
            c.streams = Some(plan.pipeline.max(1) as u64);
        }
        c
    }

    pub(crate) fn config_as_planned(
        &self,
        plan: &Plan,
        level: Option<Level>,
        length: Option<Length>,
    ) -> RunConfig {
        match &self.what {
            What::Url(r) | What::Script { request: r, .. } => {
                url_config(r, &self.load.at(level, length), plan)
            }
            What::UrlFile { request, .. } => {
                let mut c = url_config(request, &self.load.at(level, length), plan);
                c.method = "url file".to_owned();
                c
            }
            What::Workload { workload, .. } => workload_config(workload, plan),
            What::Replay { url, .. } => crate::result::replay_config(url, plan),
        }
    }
}
fn set_length(plan: &mut Plan, length: Option<Length>) {
    match length {
        Some(Length::Time(d)) => (plan.duration, plan.requests) = (Some(d), None),
        Some(Length::Requests(n)) => (plan.duration, plan.requests) = (None, Some(n)),
        None => {}
    }
}
