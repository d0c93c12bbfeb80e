//! A workload file's `script:`: Lua functions its templates (`{{ lua.luhn(card) }}`) and checks
//! (`check: { lua: valid_cart }`) call, for what YAML cannot say. No hooks, no `wrk` table: the
//! file defines global functions and the workload calls them by name, on the worker thread's
//! own state (one per thread, as `-s` has it), with strings in and a string or a verdict out.

use crate::source::LuaError;
use crate::state::message;
use mlua::{Function, Lua, MultiValue, Value};
use std::collections::HashSet;
use std::path::Path;

/// A loaded `script:` file and the functions a workload binds by index.
pub struct Functions {
    lua: Lua,
    file: String,
    bound: Vec<(String, Function)>,
}

/// What a check function said about a response.
#[derive(Debug, PartialEq, Eq)]
pub enum Judged {
    Pass,
    /// `false`, `nil` or a message: the message, or one saying which function returned what.
    Fail(String),
}

impl Functions {
    /// Reads and runs `path` (named `file` in messages) in a fresh state: a syntax error or an
    /// error at its top level names the file and line.
    pub fn read(path: &Path, file: &str) -> Result<Functions, LuaError> {
        let code = std::fs::read_to_string(path).map_err(|source| LuaError::Read {
            file: file.to_owned(),
            source,
        })?;
        Functions::load(&code, file)
    }

    pub fn load(code: &str, file: &str) -> Result<Functions, LuaError> {
        let lua = Lua::new();
        lua.create_function(|_, args: MultiValue| {
            // stdout may carry herd's JSON (`--json -`): a script's prints go to stderr.
            let line: Vec<String> = args.iter().map(show).collect();
            eprintln!("{}", line.join("\t"));
            Ok(())
        })
        .and_then(|p| lua.globals().set("print", p))
        .map_err(|e| LuaError::Setup(e.to_string()))?;
        lua.load(code)
            .set_name(format!("@{file}"))
            .exec()
            .map_err(|e| LuaError::Script(message(&e)))?;
        Ok(Functions {
            lua,
            file: file.to_owned(),
            bound: Vec::new(),
        })
    }

    /// The global functions the file defines (not the standard library's), sorted.
    pub fn defined(&self) -> Vec<String> {
        let standard: HashSet<String> = Lua::new()
            .globals()
            .pairs::<String, Value>()
            .filter_map(|kv| kv.ok().map(|(k, _)| k))
            .collect();
        let mut names: Vec<String> = self
            .lua
            .globals()
            .pairs::<String, Value>()
            .filter_map(|kv| kv.ok())
            .filter(|(k, v)| matches!(v, Value::Function(_)) && !standard.contains(k))
            .map(|(k, _)| k)
            .collect();
        names.sort();
        names
    }

    /// Binds `names` in order, so [`Functions::call`] and [`Functions::judge`] take an index
    /// and look nothing up per call; a name the file does not define is an error.
    pub fn bind(&mut self, names: &[String]) -> Result<(), LuaError> {
        self.bound.clear();
        for name in names {
            match self.lua.globals().get::<Value>(name.as_str()) {
                Ok(Value::Function(f)) => self.bound.push((name.clone(), f)),
                _ => {
                    return Err(LuaError::Script(format!(
                        "{} defines no function `{name}`",
                        self.file
                    )))
                }
            }
        }
        Ok(())
    }

    /// The value of bound function `i` for `args`: a string or a number, as text.
    pub fn call(&self, i: usize, args: &[String]) -> Result<String, String> {
        let (name, f) = &self.bound[i];
        let args = self.strings(args)?;
        match f.call::<Value>(args).map_err(|e| message(&e))? {
            Value::String(s) => Ok(s.to_string_lossy()),
            Value::Integer(n) => Ok(n.to_string()),
            Value::Number(n) => Ok(n.to_string()),
            other => Err(format!(
                "{name}() returned {}, not a string or a number",
                other.type_name()
            )),
        }
    }

    /// Bound check function `i` on a response: `name(status, headers, body)`, with headers as a
    /// table of name -> value (names as the server sent them, the last of a repeated one).
    pub fn judge(
        &self,
        i: usize,
        status: u16,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<Judged, String> {
        let (name, f) = &self.bound[i];
        let lua_error = |e: mlua::Error| message(&e);
        let table = self.lua.create_table().map_err(lua_error)?;
        for (n, v) in headers {
            table.set(n.as_str(), v.as_str()).map_err(lua_error)?;
        }
        let body = self.lua.create_string(body).map_err(lua_error)?;
        match f.call::<Value>((status, table, body)).map_err(lua_error)? {
            Value::Boolean(true) => Ok(Judged::Pass),
            Value::Boolean(false) => Ok(Judged::Fail(format!("{name}() returned false"))),
            Value::Nil => Ok(Judged::Fail(format!("{name}() returned nil"))),
            Value::String(s) => Ok(Judged::Fail(s.to_string_lossy())),
            other => Err(format!(
                "{name}() returned {}, not true, false or a message",
                other.type_name()
            )),
        }
    }

    fn strings(&self, args: &[String]) -> Result<MultiValue, String> {
        args.iter()
            .map(|a| self.lua.create_string(a).map(Value::String))
            .collect::<mlua::Result<MultiValue>>()
            .map_err(|e| message(&e))
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(n) => n.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Nil => "nil".to_owned(),
        other => format!("{}: {:?}", other.type_name(), other.to_pointer()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = r#"
local secret = "k"
function shout(s, n) return string.upper(s) .. (n or "") end
function length(s) return #s end
function broken(s) return s + {} end
function nothing() end
function ok_if_200(status, headers, body)
  if status == 200 and headers["X-A"] == "1" and body == "hi" then return true end
  return "got " .. status
end
function refuses() return false end
"#;

    fn functions() -> Functions {
        let mut f = Functions::load(CODE, "f.lua").unwrap();
        let names = [
            "shout",
            "length",
            "broken",
            "nothing",
            "ok_if_200",
            "refuses",
        ];
        f.bind(&names.map(String::from)).unwrap();
        f
    }

    #[test]
    fn defined_lists_the_files_functions_not_the_standard_librarys() {
        let f = Functions::load(CODE, "f.lua").unwrap();
        assert_eq!(
            f.defined(),
            [
                "broken",
                "length",
                "nothing",
                "ok_if_200",
                "refuses",
                "shout"
            ]
        );
    }

    #[test]
    fn calls_take_strings_and_give_text() {
        let f = functions();
        assert_eq!(f.call(0, &["ab".into(), "7".into()]), Ok("AB7".into()));
        assert_eq!(
            f.call(1, &["héllo".into()]),
            Ok("6".into()),
            "bytes, as Lua counts"
        );
        let e = f.call(2, &["x".into()]).unwrap_err();
        assert!(e.starts_with("f.lua:5:"), "{e}");
        assert_eq!(
            f.call(3, &[]),
            Err("nothing() returned nil, not a string or a number".into())
        );
    }

    #[test]
    fn checks_pass_fail_with_a_message_or_fail_plainly() {
        let f = functions();
        let h = vec![("X-A".to_owned(), "1".to_owned())];
        assert_eq!(f.judge(4, 200, &h, b"hi"), Ok(Judged::Pass));
        assert_eq!(
            f.judge(4, 500, &h, b"hi"),
            Ok(Judged::Fail("got 500".into()))
        );
        assert_eq!(
            f.judge(5, 200, &h, b""),
            Ok(Judged::Fail("refuses() returned false".into()))
        );
    }

    #[test]
    fn load_errors_name_the_file_and_line_and_binding_names_the_function() {
        let e = Functions::load("x = 1\nfunction f(\n", "bad.lua")
            .err()
            .unwrap();
        assert!(e.to_string().starts_with("bad.lua:3:"), "{e}");
        let e = Functions::load("error('no config')", "top.lua")
            .err()
            .unwrap();
        assert!(e.to_string().starts_with("top.lua:1: no config"), "{e}");
        let mut f = Functions::load(CODE, "f.lua").unwrap();
        let e = f.bind(&["shoot".into()]).unwrap_err();
        assert_eq!(e.to_string(), "f.lua defines no function `shoot`");
    }
}
