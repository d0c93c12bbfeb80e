//! A Lua state as wrk makes one: the standard libraries, the `wrk` table filled from the URL and
//! the flags, `print` and `io.write` kept as the run's output, and the script file run once.

use crate::addr::{connect, lookup};
use crate::output::Output;
use crate::source::{LuaError, Source};
use mlua::{Lua, MultiValue, Table, Value};

const WRK: &str = include_str!("wrk.lua");

/// A fresh state with the script loaded (its top level has run).
pub(crate) fn open(source: &Source, output: &Output) -> Result<Lua, LuaError> {
    let lua = Lua::new();
    let setup = || -> mlua::Result<()> {
        lua.load(WRK).set_name("=herd's wrk table").exec()?;
        let wrk: Table = lua.globals().get("wrk")?;
        wrk.set("scheme", source.scheme.as_str())?;
        wrk.set("host", source.host.as_str())?;
        wrk.set("port", source.port.as_deref())?;
        wrk.set("path", source.path.as_str())?;
        if let Some(m) = &source.method {
            wrk.set("method", m.as_str())?;
        }
        if let Some(b) = &source.body {
            wrk.set("body", lua.create_string(b)?)?;
        }
        let headers: Table = wrk.get("headers")?;
        for (name, value) in &source.headers {
            headers.set(name.as_str(), value.as_str())?;
        }
        wrk.set("lookup", lua.create_function(lookup)?)?;
        wrk.set("connect", lua.create_function(connect)?)?;
        capture(&lua, output)
    };
    setup().map_err(|e| LuaError::Setup(e.to_string()))?;
    lua.load(source.code.as_str())
        .set_name(format!("@{}", source.file))
        .exec()
        .map_err(|e| LuaError::Script(message(&e)))?;
    Ok(lua)
}

/// `print` and `io.write` add to the run's output, which the report shows: what a script
/// prints belongs to the run, and herd's own output (a JSON result) stays well-formed.
fn capture(lua: &Lua, output: &Output) -> mlua::Result<()> {
    let out = output.clone();
    let print = lua.create_function(move |lua, args: MultiValue| {
        let mut line = String::new();
        for (i, v) in args.iter().enumerate() {
            if i > 0 {
                line.push('\t');
            }
            line.push_str(&text(lua, v)?);
        }
        line.push('\n');
        out.push(&line);
        Ok(())
    })?;
    lua.globals().set("print", print)?;
    let out = output.clone();
    let write = lua.create_function(move |lua, args: MultiValue| {
        for v in args.iter() {
            match v {
                Value::String(_) | Value::Integer(_) | Value::Number(_) => out.push(&text(lua, v)?),
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "bad argument to 'write' (string expected, got {})",
                        other.type_name()
                    )))
                }
            }
        }
        Ok(())
    })?;
    let io: Table = lua.globals().get("io")?;
    io.set("write", write)
}

/// A value as `tostring` shows it.
fn text(lua: &Lua, v: &Value) -> mlua::Result<String> {
    let tostring: mlua::Function = lua.globals().get("tostring")?;
    let s: mlua::LuaString = tostring.call(v.clone())?;
    Ok(s.to_string_lossy())
}

/// A Lua error as a user reads it: `file:line: what`, without mlua's wrapping or the traceback.
pub(crate) fn message(e: &mlua::Error) -> String {
    let mut e = e;
    while let mlua::Error::CallbackError { cause, .. } = e {
        e = cause;
    }
    let text = match e {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        other => other.to_string(),
    };
    text.lines()
        .take_while(|l| !l.starts_with("stack traceback"))
        .collect::<Vec<_>>()
        .join("\n")
}
