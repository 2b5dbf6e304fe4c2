//! Proof of firing: for each agent that runs `ka-hooks <agent>`, the agent's own state, read
//! from its files. Is the entry where this version of the agent reads it, has the agent itself
//! approved it (Codex's hook review, Gemini CLI's and Copilot's folder trust), has something switched it off
//! (`disableAllHooks`, an event's entry removed), and does a missing or crashing ka-hooks fail
//! closed there. Each finding says what to do about it. Nothing is run.

mod claude;
mod codex;
mod copilot;
mod gemini;
mod shell;

pub(crate) use shell::agent_entries;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Check, Entry, Kind, State};
use crate::adapter::install::is_adapter_command;
use crate::adapter::Agent;
use crate::config::Config;

/// One entry per agent whose files run its adapter.
pub(crate) fn entries(config: &Config, start_dir: &Path) -> Vec<Entry> {
    let root = config
        .project_root
        .clone()
        .unwrap_or_else(|| start_dir.to_path_buf());
    [
        claude::entry(config, &root, start_dir),
        codex::entry(config, &root),
        gemini::entry(&root),
        copilot::entry(config, &root, start_dir),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// One command hook of an agent's hooks object (`{"hooks": {Event: [{matcher, hooks: [..]}]}}`,
/// the shape Claude Code, Codex and Gemini CLI share).
pub(crate) struct Registered {
    pub event: String,
    pub group: usize,
    pub index: usize,
    pub matcher: Option<Value>,
    pub hook: Map<String, Value>,
}

/// The entries of `settings` that run `agent`'s adapter.
pub(crate) fn registered(settings: &Value, agent: Agent) -> Vec<Registered> {
    let mut out = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else {
            continue;
        };
        for (group, g) in groups.iter().enumerate() {
            let hooks = g.get("hooks").and_then(Value::as_array);
            for (index, hook) in hooks.into_iter().flatten().enumerate() {
                let Some(hook) = hook.as_object() else {
                    continue;
                };
                let command = hook.get("command").and_then(Value::as_str).unwrap_or("");
                if is_adapter_command(command, agent) {
                    out.push(Registered {
                        event: event.clone(),
                        group,
                        index,
                        matcher: g.get("matcher").cloned(),
                        hook: hook.clone(),
                    });
                }
            }
        }
    }
    out
}

/// A JSON file: `None` when it does not exist, `Err` (the check to report) when it cannot be
/// read or parsed.
pub(crate) fn read_json(path: &Path) -> Option<Result<Value, Check>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(unreadable(path, &e.to_string()))),
    };
    Some(serde_json::from_str(&text).map_err(|e| unreadable(path, &e.to_string())))
}

fn unreadable(path: &Path, why: &str) -> Check {
    Check::warning(
        "agent",
        format!(
            "cannot read {}: {}; what the agent runs from it is unknown",
            show(path),
            crate::terminal::escape(why)
        ),
        Some(format!("fix or remove {}", show(path))),
    )
}

pub(crate) fn show(path: &Path) -> String {
    crate::terminal::escape_path(path)
}

/// The agent's entry in the report.
pub(crate) fn agent_entry(name: &str, file: Option<PathBuf>, checks: Vec<Check>) -> Entry {
    Entry {
        kind: Kind::Agent,
        name: name.to_owned(),
        state: State::Ok,
        event: None,
        filter: None,
        command: None,
        layer: None,
        file,
        line: None,
        runs: None,
        checks,
    }
    .finish()
}
