//! The names a run's per-second records refer to by index: request names, scenarios, checks.
//! Sinks that label series (a metrics endpoint, OTLP, the JSON stream) read them once at the
//! start; a record then carries only indices.

/// What the indices of a run's records name. Empty for a run of one URL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    /// Request names, by `Outcome::name`.
    pub names: Vec<String>,
    pub scenarios: Vec<String>,
    pub checks: Vec<String>,
}

impl Labels {
    /// The name of request name `i` (the index `herd_metrics::OTHER_NAME` names the rest).
    pub fn name(&self, i: u32) -> &str {
        self.names.get(i as usize).map_or("other", String::as_str)
    }

    pub fn scenario(&self, i: u32) -> &str {
        self.scenarios
            .get(i as usize)
            .map_or("other", String::as_str)
    }

    pub fn check(&self, i: u32) -> &str {
        self.checks.get(i as usize).map_or("other", String::as_str)
    }
}
