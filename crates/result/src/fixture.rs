//! A result for unit tests to fill: an open-model run of 100 requests a second against
//! `http://h/`, `seconds` long, with nothing measured yet.

use crate::RunResult;

pub(crate) fn empty_run(seconds: u64) -> RunResult {
    let config = crate::RunConfig {
        url: "http://h/".into(),
        method: "GET".into(),
        model: crate::Model::Open,
        connections: 1,
        rate: Some(100.0),
        duration_s: Some(seconds as f64),
        requests: None,
        warmup_s: 0.0,
        threads: 1,
        timeout_s: 1.0,
        calls_per_conn: None,
        pipeline: None,
        streams: None,
        proxy: None,
        headers: vec![],
        body_bytes: 0,
        secrets_shown: false,
        labels: Default::default(),
        arrivals: None,
    };
    crate::build_run(crate::RunInput {
        target: config.url.clone(),
        config,
        started_at: std::time::SystemTime::now(),
        duration: std::time::Duration::from_secs(seconds),
        offered: None,
        interrupted: false,
        stats: &herd_metrics::Stats::default(),
        timeline: &[],
        dropped: 0,
        warmup_requests: 0,
        warmup_duration: std::time::Duration::ZERO,
        generator: crate::Generator::default(),
    })
}
