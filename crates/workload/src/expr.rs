//! Function calls inside a template hole: `{{ hmac_sha256('key', users.name) }}`.
//!
//! ```text
//! call  = NAME "(" [ arg *( "," arg ) ] ")" | "lua." NAME "(" [ arg *( "," arg ) ] ")"
//! arg   = call | STRING | INTEGER | source | source.column | variable | env.NAME
//! STRING = '...' or "..." with \' \" \\ escapes
//! ```
//!
//! Calls are checked when the file is compiled (the function exists, its number of arguments,
//! literal arguments where a number is needed, a literal JWT's claims are JSON) and reported at
//! their own column; a call whose arguments are all literal and whose result cannot change is
//! computed then, so its request can stay static. `lua.NAME(...)` calls a function of the
//! workload's `script:` (crate::lua); its name is checked once the script is read, and it is
//! never computed early (a Lua function may keep state or read the clock).

use crate::diag::Pos;
use crate::diag::{did_you_mean, Diag};
use crate::func::Func;
use crate::hole::{Escape, Hole, Lookup, NotSent, Slot};
use crate::yaml::Node;

mod literals;

#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub func: Callee,
    pub args: Vec<Arg>,
    /// How the result is escaped where it lands (arguments are used as they are).
    pub escape: Escape,
    /// The call as written, for messages and default request names.
    pub written: String,
}

/// What a call calls.
#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    Builtin(Func),
    /// `lua.NAME(...)`: a function of the `script:` file, bound by index once names resolve.
    Lua(LuaCall),
}

#[derive(Clone, Debug, PartialEq)]
pub struct LuaCall {
    pub name: String,
    pub at: Pos,
    /// Its index among the script's bound functions (`usize::MAX` until resolved).
    pub index: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Text(String),
    Hole(Hole),
    Call(Call),
}

impl Call {
    /// The result, or why there is none: an unset variable or the script's error.
    pub fn eval(&self, vars: &impl Lookup) -> Result<String, NotSent> {
        let mut args = Vec::with_capacity(self.args.len());
        for a in &self.args {
            args.push(match a {
                Arg::Text(t) => t.clone(),
                Arg::Hole(h) => vars
                    .value(h.slot)
                    .ok_or_else(|| NotSent::Unset(h.written()))?
                    .to_owned(),
                Arg::Call(c) => c.eval(vars)?,
            });
        }
        match &self.func {
            Callee::Builtin(f) => Ok(f.call(&args, &|| vars.random())),
            Callee::Lua(l) => vars
                .lua(l.index, &args)
                .map_err(|e| NotSent::Script(format!("lua.{}: {e}", l.name))),
        }
    }

    /// Every `lua.NAME(...)` in this call, itself and its arguments.
    pub fn lua_mut<'a>(&'a mut self, out: &mut Vec<&'a mut LuaCall>) {
        let Call { func, args, .. } = self;
        if let Callee::Lua(l) = func {
            out.push(l);
        }
        for a in args {
            if let Arg::Call(c) = a {
                c.lua_mut(out);
            }
        }
    }

    /// Every variable reference in the arguments, nested calls included.
    pub fn holes_mut<'a>(&'a mut self, out: &mut Vec<&'a mut Hole>) {
        for a in &mut self.args {
            match a {
                Arg::Hole(h) => out.push(h),
                Arg::Call(c) => c.holes_mut(out),
                Arg::Text(_) => {}
            }
        }
    }
}

/// What a hole holding a call turned into: a call, or its value when computed now.
pub enum Parsed {
    Call(Call),
    Value(String),
}

/// Parses the call in `text[start..end]` (a hole's inside); problems go to `diags`.
pub fn parse(
    node: &Node,
    text: &str,
    start: usize,
    end: usize,
    escape: Escape,
    diags: &mut Vec<Diag>,
) -> Option<Parsed> {
    let mut p = Parser {
        node,
        text,
        i: start,
        end,
        diags,
    };
    p.space();
    let at = p.i;
    let arg = p.arg(escape)?;
    p.space();
    if p.i < p.end {
        let c = p.peek_char();
        p.error(
            p.i,
            format!("unexpected `{c}` after the call"),
            "one call per {{...}}, e.g. {{ sha256(users.name) }}",
        );
        return None;
    }
    match arg {
        Arg::Call(c) => Some(Parsed::Call(c)),
        Arg::Text(t) => Some(Parsed::Value(t)),
        Arg::Hole(_) => {
            p.error(at, "expected a function call", "e.g. {{ uuid() }}");
            None
        }
    }
}

struct Parser<'a, 'd> {
    node: &'a Node,
    text: &'a str,
    i: usize,
    end: usize,
    diags: &'d mut Vec<Diag>,
}

impl Parser<'_, '_> {
    fn error(&mut self, at: usize, message: impl Into<String>, hint: &str) {
        let pos = self.node.pos_in_scalar(at, self.text);
        self.diags.push(Diag::new(pos, message).hint(hint));
    }

    fn peek_char(&self) -> char {
        self.text[self.i..self.end].chars().next().unwrap_or(' ')
    }

    fn space(&mut self) {
        while self.i < self.end && self.text.as_bytes()[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn word(&mut self) -> &str {
        let start = self.i;
        let b = self.text.as_bytes();
        while self.i < self.end && (b[self.i].is_ascii_alphanumeric() || b"_-".contains(&b[self.i]))
        {
            self.i += 1;
        }
        &self.text[start..self.i]
    }

    /// One argument, or the whole expression; `escape` applies to a call's result.
    fn arg(&mut self, escape: Escape) -> Option<Arg> {
        self.space();
        let at = self.i;
        let Some(&b) = self.text.as_bytes()[..self.end].get(self.i) else {
            self.error(
                at,
                "expected an argument",
                "a 'string', a number, a name or a call",
            );
            return None;
        };
        if b == b'\'' || b == b'"' {
            return self.string(b).map(Arg::Text);
        }
        if b == b'-' || b.is_ascii_digit() {
            self.i += 1;
            while self.i < self.end && self.text.as_bytes()[self.i].is_ascii_digit() {
                self.i += 1;
            }
            let n = &self.text[at..self.i];
            return match n.parse::<i64>() {
                Ok(v) => Some(Arg::Text(v.to_string())),
                Err(_) => {
                    self.error(
                        at,
                        format!("`{n}` is not a number"),
                        "write an integer such as 3600",
                    );
                    None
                }
            };
        }
        let name = self.word().to_owned();
        if name.is_empty() {
            let c = self.peek_char();
            self.error(
                at,
                format!("unexpected `{c}`"),
                "a 'string', a number, a name or a call",
            );
            return None;
        }
        self.space();
        match self.text.as_bytes()[..self.end].get(self.i) {
            Some(b'(') => self.call(&name, at, escape),
            Some(b'.') => {
                self.i += 1;
                let field = self.word().to_owned();
                if field.is_empty() {
                    self.error(
                        self.i,
                        format!("`{name}.` needs a column name"),
                        "e.g. users.name",
                    );
                    return None;
                }
                if name == "lua" && self.text.as_bytes()[..self.end].get(self.i) == Some(&b'(') {
                    return self.lua_call(&field, at, escape);
                }
                if name == "env" {
                    return self.env(&field, at).map(Arg::Text);
                }
                Some(Arg::Hole(hole(self, name, Some(field), at)))
            }
            _ => Some(Arg::Hole(hole(self, name, None, at))),
        }
    }

    fn string(&mut self, quote: u8) -> Option<String> {
        let at = self.i;
        self.i += 1;
        let mut out = String::new();
        let mut chars = self.text[self.i..self.end].char_indices();
        while let Some((k, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, e @ ('\\' | '\'' | '"'))) => out.push(e),
                    Some((_, 'n')) => out.push('\n'),
                    _ => {
                        self.error(
                            self.i + k,
                            "unknown escape",
                            "inside a string write \\\\, \\', \\\" or \\n",
                        );
                        return None;
                    }
                },
                c if c as u32 == quote as u32 => {
                    self.i += k + 1;
                    return Some(out);
                }
                c => out.push(c),
            }
        }
        self.error(
            at,
            "the string is not closed",
            "close it with the quote it opened with",
        );
        None
    }

    /// `lua.NAME(args)`: the name is checked against the script when names resolve.
    fn lua_call(&mut self, name: &str, at: usize, escape: Escape) -> Option<Arg> {
        let args = self.args(&format!("lua.{name}"))?;
        Some(Arg::Call(Call {
            func: Callee::Lua(LuaCall {
                name: name.to_owned(),
                at: self.node.pos_in_scalar(at, self.text),
                index: usize::MAX,
            }),
            args: args.into_iter().map(|(a, _)| a).collect(),
            escape,
            written: self.text[at..self.i].to_owned(),
        }))
    }

    /// `env.NAME` as an argument: the environment's value when the file is compiled, as
    /// `{{env.NAME}}` is.
    fn env(&mut self, var: &str, at: usize) -> Option<String> {
        match std::env::var(var) {
            Ok(v) => Some(v),
            Err(_) => {
                self.error(
                    at,
                    format!("`env.{var}`: {var} is not set"),
                    &format!("export {var}=... or give it with -e {var}=VALUE"),
                );
                None
            }
        }
    }

    /// The arguments after `name(`, each with where it ends.
    fn args(&mut self, name: &str) -> Option<Vec<(Arg, usize)>> {
        self.i += 1; // (
        let mut args = Vec::new();
        self.space();
        if self.text.as_bytes()[..self.end].get(self.i) == Some(&b')') {
            self.i += 1;
        } else {
            loop {
                let a = self.arg(Escape::None)?;
                args.push((a, self.i));
                self.space();
                match self.text.as_bytes()[..self.end].get(self.i) {
                    Some(b',') => self.i += 1,
                    Some(b')') => {
                        self.i += 1;
                        break;
                    }
                    _ => {
                        self.error(
                            self.i,
                            format!("`{name}(` is not closed"),
                            "separate arguments with `,` and end with `)`",
                        );
                        return None;
                    }
                }
            }
        }
        Some(args)
    }

    fn call(&mut self, name: &str, at: usize, escape: Escape) -> Option<Arg> {
        let args = self.args(name)?;
        let written = self.text[at..self.i].to_owned();
        let Some(func) = Func::by_name(name) else {
            let hint = did_you_mean(name, Func::names()).unwrap_or_else(|| {
                format!(
                    "the functions are: {}",
                    Func::names().collect::<Vec<_>>().join(", ")
                )
            });
            self.error(at, format!("`{name}` is not a template function"), &hint);
            return None;
        };
        let (least, most) = func.arity();
        if args.len() < least || args.len() > most {
            let want = match (least, most) {
                (a, b) if a == b => format!("{a} argument{}", if a == 1 { "" } else { "s" }),
                (a, usize::MAX) => {
                    format!("at least {a} argument{}", if a == 1 { "" } else { "s" })
                }
                (a, b) => format!("{a} to {b} arguments"),
            };
            self.error(
                at,
                format!("`{name}` takes {want}, not {}", args.len()),
                &format!("write {}", func.signature()),
            );
            return None;
        }
        self.check_literals(func, &args, at)?;
        let args: Vec<Arg> = args.into_iter().map(|(a, _)| a).collect();
        if func.is_pure() && args.iter().all(|a| matches!(a, Arg::Text(_))) {
            let texts: Vec<String> = args
                .iter()
                .map(|a| match a {
                    Arg::Text(t) => t.clone(),
                    _ => unreachable!(),
                })
                .collect();
            return Some(Arg::Text(func.call(&texts, &|| 0)));
        }
        Some(Arg::Call(Call {
            func: Callee::Builtin(func),
            args,
            escape,
            written,
        }))
    }
}

fn hole(p: &Parser, name: String, field: Option<String>, at: usize) -> Hole {
    Hole {
        name,
        field,
        at: p.node.pos_in_scalar(at, p.text),
        escape: Escape::None,
        slot: Slot::Unresolved,
    }
}
