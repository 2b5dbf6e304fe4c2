//! The case files of `ka-hooks test`: `.ka/tests/*.toml`, each holding `[[case]]` entries (an
//! event, a tool and its arguments or a payload, `expect`), read into cases with every mistake
//! named. docs/tools.md shows the format.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::event::Event;

/// One `[[case]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    event: String,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(default)]
    payload: Option<Map<String, Value>>,
    #[serde(default)]
    hook: Option<String>,
    /// Stop-like events: how many times the turn already continued, as the adapters count it.
    #[serde(default)]
    continuations: Option<u32>,
    expect: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    #[serde(default)]
    case: Vec<toml::Spanned<RawCase>>,
}

/// A case ready to run.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case file.
    pub file: PathBuf,
    /// The line of its `[[case]]` header (from 1).
    pub line: usize,
    pub name: String,
    pub event: Event,
    /// The payload sent (without `event` and `cwd`, which the run fills in).
    pub payload: Map<String, Value>,
    /// `hook = "NAME"`: run this hook only.
    pub hook: Option<String>,
    /// `continuations = N`: the turn already continued N times (a stop-like event's count,
    /// passed as the adapters pass it, so `max_continuations` caps as it does for them).
    pub continuations: Option<u32>,
    /// The expectations, in file order.
    pub expect: Vec<(String, Value)>,
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.matches('\n').count() + 1)
}

/// Read one case file; errors name the file, the line and how to fix it.
pub fn read_file(path: &Path) -> Result<Vec<Case>, Vec<String>> {
    let shown = crate::terminal::escape_path(path);
    let text =
        std::fs::read_to_string(path).map_err(|e| vec![format!("{shown}: cannot read: {e}")])?;
    let file: CaseFile = toml::from_str(&text).map_err(|e| {
        if let Some(span) = crate::config::single_bracket_table(&text, "case") {
            return vec![format!(
                "{shown}:{}: `[case]` is one table, not a list of cases\n  help: write \
                 `[[case]]` (two brackets): each case is one `[[case]]` entry",
                line_of(&text, span.start)
            )];
        }
        let line = e.span().map_or(1, |s| line_of(&text, s.start));
        vec![format!(
            "{shown}:{line}: {}\n  help: a case is `[[case]]` with name, event, tool, arguments \
             or payload, hook, and expect = {{ ... }}",
            crate::terminal::escape(e.message().trim())
        )]
    })?;
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for spanned in file.case {
        let line = line_of(&text, spanned.span().start);
        match build(path, line, spanned.into_inner()) {
            Ok(case) => cases.push(case),
            Err(e) => errors.push(format!("{shown}:{line}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

fn build(file: &Path, line: usize, raw: RawCase) -> Result<Case, String> {
    let name = crate::terminal::escape(&raw.name).into_owned();
    let event: Event = raw
        .event
        .parse()
        .map_err(|e| format!("case `{name}`: {e}"))?;
    let mut payload = raw.payload.unwrap_or_default();
    fill_tool_call(&name, event, raw.tool, raw.arguments, &mut payload)?;
    if let Some(n) = raw.continuations {
        if !event.can_keep_going() {
            return Err(format!(
                "case `{name}`: `continuations` only applies to events that can keep going \
                 (stop, subagent_stop, teammate_idle, task_completed), not {event}"
            ));
        }
        if payload.contains_key("continuations") {
            return Err(format!(
                "case `{name}`: both `continuations` and `payload.continuations`; keep one"
            ));
        }
        payload.insert("continuations".into(), Value::from(n));
        payload
            .entry("stop_hook_active")
            .or_insert(Value::Bool(n > 0));
    }
    let expect: Vec<(String, Value)> = raw.expect.into_iter().collect();
    if expect.is_empty() {
        return Err(format!(
            "case `{name}`: `expect` is empty, so the case could never fail; say what must \
             happen, such as expect = {{ verdict = \"blocked\" }}"
        ));
    }
    super::expect::validate(&expect).map_err(|e| format!("case `{name}`: {e}"))?;
    Ok(Case {
        file: file.to_path_buf(),
        line,
        name,
        event,
        payload,
        hook: raw.hook,
        continuations: raw.continuations,
        expect,
    })
}

/// A tool event's `tool` and `arguments` filled into the payload (each given once), in ka's
/// names; an error when the event has no tool or the case lacks one.
fn fill_tool_call(
    name: &str,
    event: Event,
    tool: Option<String>,
    arguments: Option<Map<String, Value>>,
    payload: &mut Map<String, Value>,
) -> Result<(), String> {
    if let Some(tool) = tool {
        if !event.is_tool_event() {
            return Err(format!(
                "case `{name}`: `tool` only applies to pre_tool_use and post_tool_use, not {event}"
            ));
        }
        match payload.get("tool") {
            Some(Value::String(given)) if *given != tool => {
                return Err(format!(
                    "case `{name}`: tool = {tool:?} disagrees with payload.tool = {given:?}; \
                     keep one"
                ))
            }
            _ => {
                payload.insert("tool".into(), Value::String(tool));
            }
        }
    }
    if let Some(arguments) = arguments {
        if payload.contains_key("arguments") {
            return Err(format!(
                "case `{name}`: both `arguments` and `payload.arguments`; keep one"
            ));
        }
        payload.insert("arguments".into(), Value::Object(arguments));
    }
    if event.is_tool_event() {
        if !payload.get("tool").is_some_and(Value::is_string) {
            return Err(format!(
                "case `{name}`: a {event} case needs `tool = \"NAME\"` (or payload.tool)"
            ));
        }
        if !payload.get("arguments").is_some_and(Value::is_object) {
            return Err(format!(
                "case `{name}`: a {event} case needs `arguments = {{ ... }}`, the tool's \
                 arguments (`arguments = {{}}` for none)"
            ));
        }
        // `tool = "Bash"` reads as it does in a `[[hooks]]` entry: ka's `bash`.
        crate::adapter::tools::payload_to_ka(payload).map_err(|e| format!("case `{name}`: {e}"))?;
    }
    Ok(())
}
