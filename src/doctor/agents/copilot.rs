//! GitHub Copilot CLI: `ka-hooks copilot` in a hook file, Copilot's folder trust, and its switch
//! (`disableAllHooks`). Measured with Copilot CLI 1.0.102 in the conformance suite; docs/agents.md
//! says when Copilot reads the repository's and the user's hook files.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{agent_entry, read_json, show};
use crate::adapter::install::{is_adapter_command, plan};
use crate::adapter::Agent;
use crate::config::Config;
use crate::doctor::{Check, Entry};
use crate::event::Event;

/// The events of one hook file whose entries run `ka-hooks copilot`.
fn registered_events(file: &Value) -> Vec<String> {
    let Some(events) = file.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    // A flat entry, or Claude Code's nested `{matcher, hooks: [..]}` group Copilot accepts too.
    let runs = |entry: &Value| {
        runs_flat(entry)
            || entry
                .get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|nested| nested.iter().any(runs_flat))
    };
    events
        .iter()
        .filter(|(_, entries)| entries.as_array().is_some_and(|e| e.iter().any(runs)))
        .map(|(event, _)| event.clone())
        .collect()
}

fn runs_flat(entry: &Value) -> bool {
    ["bash", "command"].iter().any(|key| {
        entry
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|c| is_adapter_command(c, Agent::Copilot))
    })
}

pub(super) fn entry(config: &Config, root: &Path, start: &Path) -> Option<Entry> {
    let home = crate::paths::copilot_home()?;
    let project_dir = root.join(".github/hooks");
    let mut checks = Vec::new();
    let mut regs: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for file in super::shell::hook_files(&home.join("hooks"))
        .into_iter()
        .chain(super::shell::hook_files(&project_dir))
    {
        match read_json(&file) {
            None => {}
            Some(Err(check)) => checks.push(check),
            Some(Ok(hooks)) => {
                let events = registered_events(&hooks);
                if events.is_empty() {
                    continue;
                }
                if hooks.get("disableAllHooks") == Some(&Value::Bool(true)) {
                    checks.push(switched_off(&file, "the hooks of this file"));
                }
                regs.push((file, events));
            }
        }
    }
    if regs.is_empty() {
        return None;
    }
    for file in [
        root.join(".github/copilot/settings.json"),
        root.join(".github/copilot/settings.local.json"),
        home.join("settings.json"),
    ] {
        if let Some(Ok(settings)) = read_json(&file) {
            if settings.get("disableAllHooks") == Some(&Value::Bool(true)) {
                checks.push(switched_off(&file, "every hook"));
            }
        }
    }
    let names: Vec<String> = regs.iter().map(|(f, _)| show(f)).collect();
    checks.insert(
        0,
        Check::ok(
            "registered",
            format!("`ka-hooks copilot` runs from {}", names.join(", ")),
        ),
    );
    let user_too = regs.iter().any(|(f, _)| !f.starts_with(&project_dir));
    if !user_too {
        checks.push(folder_trust(root, start, &home));
    }
    checks.push(events(config, &regs));
    checks.push(Check::ok(
        "fails",
        "a missing or crashing ka-hooks denies the call (Copilot's preToolUse command hooks fail \
         closed); one that times out lets it through, and `install` sets `timeoutSec` above the \
         slowest hook",
    ));
    Some(agent_entry(
        "GitHub Copilot CLI",
        Some(regs[0].0.clone()),
        checks,
    ))
}

fn switched_off(file: &Path, what: &str) -> Check {
    Check::failing(
        "off",
        format!(
            "{} sets `disableAllHooks`: Copilot runs none of {what}, ka-hooks included, and no \
             guard runs",
            show(file)
        ),
        Some(format!(
            "remove `\"disableAllHooks\": true` from {} (if you did not put it there, the agent \
             may have: Copilot's shell has no sandbox that keeps it out)",
            show(file)
        )),
    )
}

/// Is the project root, or a folder holding it, in Copilot's `trusted_folders`?
fn folder_trust(root: &Path, start: &Path, home: &Path) -> Check {
    let file = home.join("config.json");
    let trusted = read_json(&file)
        .and_then(Result::ok)
        .and_then(|c| c.get("trusted_folders").cloned())
        .and_then(|t| t.as_array().cloned())
        .unwrap_or_default();
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root_c = canon(root);
    let hit = trusted
        .iter()
        .filter_map(Value::as_str)
        .any(|t| root_c.starts_with(canon(Path::new(t))));
    if hit {
        return Check::ok(
            "approved",
            format!("the project is a trusted folder ({})", show(&file)),
        );
    }
    let fix = Some(
        "start `copilot` in the project root and trust the folder when it asks, or run \
         `ka-hooks install copilot --user --write` (the user's hook files are read wherever \
         Copilot starts)"
            .to_owned(),
    );
    let here = if start != root && start.starts_with(root) {
        " Started here, in a subdirectory, even `-p --trust-folder` (which trusts the working \
         directory only) loads none of them."
    } else {
        ""
    };
    Check::failing(
        "approved",
        format!(
            "the project is not in `trusted_folders` of {}: Copilot loads its .github/hooks, \
             ka-hooks included, only in a trusted folder, and a `-p` start without \
             `--trust-folder` runs no guard.{here}",
            show(&file)
        ),
        fix,
    )
}

/// Every event with ka hooks (and preToolUse, which ka's built-in protection needs) has its
/// entry.
fn events(config: &Config, regs: &[(PathBuf, Vec<String>)]) -> Check {
    // Either spelling of an event runs it (`preToolUse`, or the VS Code form `PreToolUse`).
    let ka_event = |name: &str| {
        Agent::Copilot
            .events()
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.event)
    };
    let has = |event: Event| {
        regs.iter()
            .any(|(_, names)| names.iter().any(|n| ka_event(n) == Some(event)))
    };
    let mut wanted: Vec<(&str, Event)> = plan(config, Agent::Copilot, false)
        .iter()
        .filter(|p| crate::adapter::copilot::INSTALLED.contains(&p.row.name))
        .map(|p| (p.row.name, p.row.event))
        .collect();
    if !wanted.iter().any(|(_, e)| *e == Event::PreToolUse) {
        wanted.insert(0, ("preToolUse", Event::PreToolUse));
    }
    let missing: Vec<&str> = wanted
        .into_iter()
        .filter(|(_, e)| !has(*e))
        .map(|(name, _)| name)
        .collect();
    if missing.is_empty() {
        return Check::ok("events", "every event with ka hooks has its entry");
    }
    Check::failing(
        "events",
        format!(
            "no `ka-hooks copilot` entry for {}: the ka hooks of {} never run in Copilot{}",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" },
            if missing.contains(&"preToolUse") {
                " (preToolUse also carries ka's built-in protection of its own files)"
            } else {
                ""
            }
        ),
        Some("ka-hooks install copilot --write".into()),
    )
}
