//! `script: file.lua`: Lua functions for what YAML cannot say, called from templates
//! (`{{ lua.luhn(cards.number) }}`) and checks (`check: { lua: valid_cart }`). The file is read
//! and run once when the workload compiles, so a syntax error, an error at its top level or a
//! call to a function it does not define refuses the file before any load; each worker thread
//! then loads its own state (herd-lua's `Functions`) and binds the functions used, by index.
//! A workload without `script:` has no Lua state at all.

use crate::diag::{did_you_mean, Diag, Pos};
use crate::read::Reader;
use crate::yaml::Node;
use herd_lua::Functions;
use std::path::Path;

/// The script of a workload as compiled: its code, what it defines, and the functions the
/// workload calls (index = the order they were first named).
#[derive(Debug)]
pub struct LuaScript {
    /// The path as written in the workload, for messages.
    pub file: String,
    code: String,
    defined: Vec<String>,
    pub used: Vec<String>,
    /// It did not load (already reported): calls to it are not reported again.
    broken: bool,
}

impl LuaScript {
    /// Reads `script:` (relative to the workload's folder) and runs it once to learn its
    /// functions; what goes wrong is reported at the `script:` line.
    pub fn read(r: &mut Reader, node: &Node, base: &Path) -> LuaScript {
        let mut script = LuaScript {
            file: r.string(node, "script").unwrap_or_default(),
            code: String::new(),
            defined: Vec::new(),
            used: Vec::new(),
            broken: true,
        };
        let file = &script.file;
        if file.is_empty() {
            return script;
        }
        let path = base.join(file);
        match std::fs::read_to_string(&path) {
            Ok(code) => script.code = code,
            Err(e) => {
                r.report(
                    Diag::new(node.at, format!("cannot read the script `{file}`: {e}")).hint(
                        format!(
                            "paths are relative to the workload file: looked for {}",
                            path.display()
                        ),
                    ),
                );
                return script;
            }
        }
        match Functions::load(&script.code, file) {
            Ok(f) => {
                script.defined = f.defined();
                script.broken = false;
            }
            Err(e) => r.report(
                Diag::new(node.at, format!("the script does not load: {e}"))
                    .hint("fix the Lua at that line; herd validate checks it again"),
            ),
        }
        script
    }

    /// A worker thread's own state with the used functions bound.
    pub fn functions(&self) -> Result<Functions, String> {
        let mut f = Functions::load(&self.code, &self.file).map_err(|e| e.to_string())?;
        f.bind(&self.used).map_err(|e| e.to_string())?;
        Ok(f)
    }
}

/// The index of function `name`, named at `at` by `what` (`lua.sign(...)`, `check lua:
/// valid`); without a script or such a function, a diagnostic.
pub fn bind(
    script: Option<&mut LuaScript>,
    name: &str,
    at: Pos,
    what: &str,
    diags: &mut Vec<Diag>,
) -> Option<usize> {
    let Some(s) = script else {
        diags.push(
            Diag::new(
                at,
                format!("{what} calls Lua, but the workload has no `script:`"),
            )
            .hint("add `script: functions.lua` at the top of the workload, beside `target:`"),
        );
        return None;
    };
    if s.broken {
        return None;
    }
    if !s.defined.iter().any(|d| d == name) {
        let hint = did_you_mean(name, s.defined.iter().map(String::as_str)).unwrap_or_else(|| {
            match s.defined.as_slice() {
                [] => format!("{} defines no global function", s.file),
                all => format!("its functions are: {}", all.join(", ")),
            }
        });
        diags.push(
            Diag::new(
                at,
                format!("{what}: the script {} defines no function `{name}`", s.file),
            )
            .hint(hint),
        );
        return None;
    }
    Some(match s.used.iter().position(|u| u == name) {
        Some(i) => i,
        None => {
            s.used.push(name.to_owned());
            s.used.len() - 1
        }
    })
}
