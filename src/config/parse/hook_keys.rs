//! The value of each key of a `[[hooks]]` entry, read into what the hook holds, or the reason it
//! cannot be and how to fix it.

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::filter::{compile_matcher, compile_tools, ToolFilter};
use super::super::hook::OnError;
use super::super::paths_filter::PathFilter;
use super::super::rule::Rule;
use super::super::template::Template;
use super::{seconds, type_name, Compiled, SANDBOX_HELP};
use crate::event::Event;

/// What is wrong with a value, and how to fix it.
pub(super) type Fail = (String, Option<String>);

fn expected(what: &str, value: &toml::Value) -> Fail {
    (format!("expected {what}, got {}", type_name(value)), None)
}

fn fix(message: impl Into<String>, help: &str) -> Fail {
    (message.into(), Some(help.to_owned()))
}

pub(super) fn name(value: &toml::Value) -> Result<String, Fail> {
    match value.as_str() {
        Some(s) if !s.trim().is_empty() => Ok(s.to_owned()),
        Some(_) => Err(fix("the name is empty", "remove `name` or give it a value")),
        None => Err(expected("a string", value)),
    }
}

pub(super) fn event(value: &toml::Value) -> Result<Event, Fail> {
    let s = value
        .as_str()
        .ok_or_else(|| expected("a string (the event name)", value))?;
    s.parse::<Event>().map_err(|unknown| {
        let help = match unknown.suggestion {
            Some(s) => format!("did you mean `{s}`? valid events: {}", Event::valid_names()),
            None => format!("valid events: {}", Event::valid_names()),
        };
        (format!("unknown event `{}`", unknown.given), Some(help))
    })
}

/// A string or an array of strings, as a list.
fn strings(value: &toml::Value) -> Option<Vec<String>> {
    match value {
        toml::Value::String(s) => Some(vec![s.clone()]),
        toml::Value::Array(a) => a.iter().map(|v| v.as_str().map(str::to_owned)).collect(),
        _ => None,
    }
}

pub(super) fn tool(value: &toml::Value, compiled: &mut Compiled) -> Result<ToolFilter, Fail> {
    let names = strings(value).ok_or_else(|| {
        let (message, _) = expected("a tool name or an array of tool names", value);
        fix(
            message,
            "write `tool = \"write\"` or `tool = [\"write\", \"edit\"]`",
        )
    })?;
    if names.is_empty() || names.iter().any(|n| n.is_empty()) {
        return Err(fix(
            "a tool name is empty",
            "list tool names or globs, such as `tool = [\"write\", \"mcp__*\"]`; remove `tool` \
             to match every tool",
        ));
    }
    if let Some(filter) = compiled.tools.get(&names) {
        return Ok(filter.clone());
    }
    let filter = compile_tools(names.clone()).map_err(|e| (format!("invalid glob: {e}"), None))?;
    compiled.tools.insert(names, filter.clone());
    Ok(filter)
}

pub(super) fn matcher(value: &toml::Value, compiled: &mut Compiled) -> Result<ToolFilter, Fail> {
    let s = value
        .as_str()
        .ok_or_else(|| expected("a string (Claude Code matcher)", value))?;
    if let Some(filter) = compiled.matchers.get(s) {
        return Ok(filter.clone());
    }
    let filter = compile_matcher(s).map_err(|e| {
        fix(
            format!("invalid matcher regex: {e}"),
            "write an exact list such as `Edit|Write`, or a valid regex",
        )
    })?;
    compiled.matchers.insert(s.to_owned(), filter.clone());
    Ok(filter)
}

pub(super) fn command(value: &toml::Value) -> Result<String, Fail> {
    match value.as_str() {
        Some(s) if s.contains('\0') => Err(fix(
            "the command contains a NUL character, which no shell command can hold",
            "remove the `\\u0000` from the command",
        )),
        Some(s) if !s.trim().is_empty() => match Template::parse(s) {
            Ok(_) => Ok(s.to_owned()),
            Err(e) => Err((e, None)),
        },
        Some(_) => Err(fix("the command is empty", "give the shell command to run")),
        None => Err(expected("a string (a shell command)", value)),
    }
}

pub(super) fn timeout(value: &toml::Value) -> Result<Duration, Fail> {
    seconds(value).map_err(|msg| {
        fix(
            msg,
            "write a number of seconds greater than 0, such as `timeout = 10`",
        )
    })
}

pub(super) fn on_error(value: &toml::Value) -> Result<OnError, Fail> {
    match value.as_str() {
        Some("ignore") => Ok(OnError::Ignore),
        Some("block") => Ok(OnError::Block),
        Some("ask") => Ok(OnError::Ask),
        Some(other) => Err(fix(
            format!("unknown on_error `{other}`"),
            "use `ignore` (fail open), `block` (fail closed) or `ask`",
        )),
        None => Err(expected("a string: `ignore`, `block` or `ask`", value)),
    }
}

pub(super) fn boolean(value: &toml::Value) -> Result<bool, Fail> {
    value
        .as_bool()
        .ok_or_else(|| expected("a boolean (`true` or `false`)", value))
}

pub(super) fn paths(value: &toml::Value) -> Result<Box<PathFilter>, Fail> {
    let globs = strings(value).ok_or_else(|| {
        let (message, _) = expected("an array of globs", value);
        fix(message, "write `paths = [\"src/**/*.rs\"]`")
    })?;
    PathFilter::compile(globs).map(Box::new).map_err(|e| {
        fix(
            e,
            "write globs relative to the project root, such as \
             `paths = [\"src/**/*.rs\", \"!src/gen/**\"]`",
        )
    })
}

pub(super) fn rule(value: &toml::Value) -> Result<Box<Rule>, Fail> {
    let s = value.as_str().ok_or_else(|| {
        let (message, _) = expected("a string: one Claude Code permission rule", value);
        fix(message, "write `if = \"Bash(git commit *)\"`")
    })?;
    Rule::parse(s)
        .map(Box::new)
        .map_err(|e| (format!("invalid rule: {e}"), None))
}

pub(super) fn status_message(value: &toml::Value) -> Result<String, Fail> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| expected("a string (shown while the hook runs)", value))
}

pub(super) fn sandbox(value: &toml::Value) -> Result<crate::sandbox::Declared, Fail> {
    crate::sandbox::Declared::from_toml(value).map_err(|msg| fix(msg, SANDBOX_HELP))
}

/// `env = { NAME = "value" }`: every variable, or what is wrong with each one that is not.
pub(super) fn env(value: &toml::Value) -> Result<BTreeMap<String, String>, Vec<Fail>> {
    let toml::Value::Table(table) = value else {
        let (message, _) = expected("a table of strings", value);
        return Err(vec![fix(message, "write `env = { NAME = \"value\" }`")]);
    };
    let mut env = BTreeMap::new();
    let mut fails = Vec::new();
    for (k, v) in table {
        match v.as_str() {
            Some(s) if valid_env_name(k) => {
                env.insert(k.clone(), s.to_owned());
            }
            Some(_) => fails.push(fix(
                format!("`{k}` is not a valid environment variable name"),
                "use letters, digits and `_`, not starting with a digit",
            )),
            None => fails.push((
                format!("`env.{k}` must be a string, got {}", type_name(v)),
                Some(format!("quote it: `{k} = \"{v}\"`")),
            )),
        }
    }
    if fails.is_empty() {
        Ok(env)
    } else {
        Err(fails)
    }
}

fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
