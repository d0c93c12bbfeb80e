//! A template's holes: what a `{{name}}` refers to once names are resolved, how its value is
//! escaped where it lands, where the value comes from while rendering, and why a step could not
//! be rendered. Shared by templates, expressions and programs, and depending on none of them.

use crate::diag::Pos;

/// How a value is escaped where it lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escape {
    /// As is (paths, headers, raw bodies).
    None,
    /// A form field or query parameter: percent-encoded.
    Url,
    /// Inside a JSON string: quotes, backslashes and control characters escaped.
    Json,
}

/// What a hole refers to, once names are resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Unresolved,
    /// A column of a CSV source's current row.
    Column {
        source: usize,
        column: usize,
    },
    /// A single-valued source (zipf, values): its value for this iteration.
    Value {
        source: usize,
    },
    /// A variable extracted earlier in the iteration.
    Extracted(usize),
    /// `{{request.body}}` in a header: the step's body as rendered (to sign it).
    RequestBody,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Hole {
    pub name: String,
    pub field: Option<String>,
    pub at: Pos,
    pub escape: Escape,
    pub slot: Slot,
}

impl Hole {
    /// As written: `users.user`.
    pub fn written(&self) -> String {
        match &self.field {
            Some(f) => format!("{}.{f}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Where a value for a hole comes from while rendering.
pub trait Lookup {
    /// The value, or `None` when an extracted variable is unset.
    fn value(&self, slot: Slot) -> Option<&str>;
    /// The next number of the user's seeded stream, for `uuid()` and `random_int()`.
    fn random(&self) -> u64;
    /// Function `index` of the workload's `script:` on `args`, or the script's error.
    fn lua(&self, index: usize, args: &[String]) -> Result<String, String> {
        let _ = (index, args);
        Err("the workload has no script".to_owned())
    }
}

/// Why a step was not sent.
#[derive(Debug, PartialEq, Eq)]
pub enum NotSent {
    /// `{{name}}` was unset (its extraction found nothing).
    Unset(String),
    /// The rendered request is invalid (e.g. an extracted URL on another host).
    Invalid(String),
    /// A `lua.NAME(...)` call failed: the script's message, with its file and line.
    Script(String),
}
