//! Resolving the names in templates: `{{source}}`, `{{source.column}}` and variables extracted
//! by earlier steps, with suggestions for near misses.

use crate::data::Source;
use crate::diag::{did_you_mean, Diag};
use crate::hole::{Hole, Slot};
use crate::lua::LuaScript;
use crate::template::Template;

pub struct Resolve<'a> {
    pub sources: &'a [Source],
    pub variables: &'a mut Vec<String>,
    pub all_extracted: &'a [String],
    /// Data sources that could not be read (already reported).
    pub broken: &'a [String],
    /// Variables extracted by earlier steps of this scenario.
    pub known: Vec<String>,
    pub used: Vec<usize>,
    pub diags: &'a mut Vec<Diag>,
    /// The workload's `script:`, whose functions `lua.NAME(...)` calls bind to.
    pub lua: Option<&'a mut LuaScript>,
}

impl Resolve<'_> {
    /// Resolves every hole and Lua call; returns whether one can make the request unsendable:
    /// an extracted variable (maybe unset), text from a file or list (maybe not valid in a path
    /// or header) or a Lua call (maybe failing). Zipf ids always fit.
    pub fn template(&mut self, t: &mut Template) -> bool {
        self.template_in(t, false)
    }

    /// A header's template: `{{request.body}}` is the step's rendered body there.
    pub fn header(&mut self, t: &mut Template) -> bool {
        self.template_in(t, true)
    }

    fn template_in(&mut self, t: &mut Template, header: bool) -> bool {
        let mut extracted = false;
        for c in t.lua_mut() {
            extracted = true;
            let what = format!("`lua.{}(...)`", c.name);
            let script = self.lua.as_deref_mut();
            if let Some(i) = crate::lua::bind(script, &c.name, c.at, &what, self.diags) {
                c.index = i;
            }
        }
        for h in t.holes_mut() {
            if self.broken.contains(&h.name) {
                continue;
            }
            let is_request_body = h.name == "request"
                && h.field.as_deref() == Some("body")
                && !self.sources.iter().any(|s| s.name == "request");
            if is_request_body {
                if header {
                    h.slot = Slot::RequestBody;
                } else {
                    self.diags.push(
                        Diag::new(h.at, "`{{request.body}}` is known only in a step's headers")
                            .hint("e.g. headers: { X-Signature: \"{{ hmac_sha256(env.KEY, request.body) }}\" }"),
                    );
                }
                continue;
            }
            if let Some((i, s)) = self
                .sources
                .iter()
                .enumerate()
                .find(|(_, s)| s.name == h.name)
            {
                self.used.push(i);
                extracted |= !matches!(s.kind, crate::data::Kind::Zipf { .. });
                self.source_hole(h, i, s);
                continue;
            }
            if h.field.is_none() && self.known.contains(&h.name) {
                let slot = slot_of(self.variables, &h.name);
                h.slot = Slot::Extracted(slot);
                extracted = true;
                continue;
            }
            if h.field.is_none() && self.all_extracted.contains(&h.name) {
                self.diags.push(
                    Diag::new(
                        h.at,
                        format!(
                            "`{{{{{}}}}}` is used before the step that extracts it",
                            h.name
                        ),
                    )
                    .hint("extract it in an earlier step of this scenario"),
                );
                continue;
            }
            let hint = self.hint_for(h);
            self.diags.push(
                Diag::new(
                    h.at,
                    format!(
                        "`{{{{{}}}}}` names no data source or extracted variable",
                        h.written()
                    ),
                )
                .hint(hint),
            );
        }
        extracted
    }

    /// A hole naming data source `i` (`s`): a CSV column, or a single value.
    fn source_hole(&mut self, h: &mut Hole, i: usize, s: &Source) {
        match (&h.field, s.is_table()) {
            (Some(col), true) => match s.column(col) {
                Some(c) => {
                    h.slot = Slot::Column {
                        source: i,
                        column: c,
                    }
                }
                None => {
                    let crate::data::Kind::Table { columns, .. } = &s.kind else {
                        unreachable!()
                    };
                    let hint = did_you_mean(col, columns.iter().map(|c| c.as_str()))
                        .unwrap_or_else(|| format!("its columns are: {}", columns.join(", ")));
                    self.diags.push(
                        Diag::new(
                            h.at,
                            format!(
                                "`{{{{{}}}}}`: the CSV file of `{}` has no column `{col}`",
                                h.written(),
                                h.name
                            ),
                        )
                        .hint(hint),
                    );
                }
            },
            (None, true) => self.diags.push(
                Diag::new(
                    h.at,
                    format!(
                        "`{{{{{}}}}}` is a CSV source: name one of its columns",
                        h.name
                    ),
                )
                .hint(format!(
                    "e.g. {{{{{}.{}}}}}",
                    h.name,
                    s.column_names().first().cloned().unwrap_or_default()
                )),
            ),
            (Some(_), false) => self.diags.push(
                Diag::new(
                    h.at,
                    format!(
                        "`{{{{{}}}}}`: `{}` is a single value, it has no columns",
                        h.written(),
                        h.name
                    ),
                )
                .hint(format!("write {{{{{}}}}}", h.name)),
            ),
            (None, false) => h.slot = Slot::Value { source: i },
        }
    }

    /// What a hole that names nothing known may have meant.
    fn hint_for(&self, h: &Hole) -> String {
        let mut candidates: Vec<String> = self.known.clone();
        for s in self.sources {
            candidates.push(s.name.clone());
            for c in s.column_names() {
                candidates.push(format!("{}.{c}", s.name));
            }
        }
        did_you_mean(&h.written(), candidates.iter().map(|s| s.as_str()))
            .or_else(|| {
                let s = self
                    .sources
                    .iter()
                    .find(|s| did_you_mean(&h.name, [s.name.as_str()]).is_some())?;
                Some(match s.column_names() {
                    [] => format!("did you mean `{}`?", s.name),
                    cols => format!(
                        "did you mean `{}`? its columns are: {}",
                        s.name,
                        cols.join(", ")
                    ),
                })
            })
            .unwrap_or_else(|| "define it under `data:` or extract it in an earlier step".into())
    }
}

pub fn slot_of(variables: &mut Vec<String>, name: &str) -> usize {
    match variables.iter().position(|v| v == name) {
        Some(i) => i,
        None => {
            variables.push(name.to_owned());
            variables.len() - 1
        }
    }
}
