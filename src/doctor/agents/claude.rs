//! Claude Code: where `ka-hooks claude` is registered, and whether this version reads it there.
//! Claude Code 2.1.332 (conformance suite), started in a subdirectory of the project, reads
//! neither the root's `.claude/settings.json` nor its hooks, but reads the root's
//! `settings.local.json` and the user's settings; `disableAllHooks` switches every hook off.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{agent_entry, read_json, registered, show, Registered};
use crate::adapter::install::{plan, user_settings};
use crate::adapter::Agent;
use crate::config::Config;
use crate::doctor::{Check, Entry};

/// Where a settings file sits, for what Claude Code reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    User,
    Project,
    Local,
    StartDir,
    Managed,
}

const MANAGED: &str = "/etc/claude-code/managed-settings.json";

pub(super) fn entry(config: &Config, root: &Path, start: &Path) -> Option<Entry> {
    let mut files: Vec<(Place, PathBuf)> = vec![
        (Place::Project, root.join(".claude/settings.json")),
        (Place::Local, root.join(".claude/settings.local.json")),
        (Place::Managed, PathBuf::from(MANAGED)),
    ];
    if let Some(user) = user_settings() {
        files.insert(0, (Place::User, user));
    }
    if start != root {
        files.push((Place::StartDir, start.join(".claude/settings.json")));
    }
    let mut checks = Vec::new();
    let mut regs: Vec<(Place, PathBuf, Vec<Registered>)> = Vec::new();
    for (place, file) in files {
        match read_json(&file) {
            None => {}
            Some(Err(check)) => checks.push(check),
            Some(Ok(settings)) => {
                if settings.get("disableAllHooks") == Some(&Value::Bool(true)) {
                    checks.push(switched_off(&file));
                }
                let found = registered(&settings, Agent::Claude);
                if !found.is_empty() {
                    regs.push((place, file, found));
                }
            }
        }
    }
    if regs.is_empty() && checks.is_empty() {
        return None;
    }
    checks.extend(where_read(&regs, root, start));
    if !regs.is_empty() {
        checks.extend(events(config, &regs));
        checks.push(fail_closed(&regs));
    }
    let file = regs.first().map(|(_, f, _)| f.clone());
    Some(agent_entry("Claude Code", file, checks))
}

fn switched_off(file: &Path) -> Check {
    Check::failing(
        "off",
        format!(
            "{} sets `disableAllHooks`: Claude Code runs no hook, ka-hooks included, and no \
             guard runs",
            show(file)
        ),
        Some(format!(
            "remove `\"disableAllHooks\": true` from {} (if you did not put it there, the agent \
             may have: see `ka-hooks install claude`'s sandbox advice)",
            show(file)
        )),
    )
}

/// Registered where this start of Claude Code reads it?
fn where_read(regs: &[(Place, PathBuf, Vec<Registered>)], root: &Path, start: &Path) -> Vec<Check> {
    let places: Vec<Place> = regs.iter().map(|(p, _, _)| *p).collect();
    let everywhere = places
        .iter()
        .any(|p| matches!(p, Place::User | Place::Local | Place::Managed));
    if places.is_empty() || everywhere {
        let files: Vec<String> = regs.iter().map(|(_, f, _)| show(f)).collect();
        return if files.is_empty() {
            vec![Check::warning(
                "registered",
                "no Claude Code settings file runs `ka-hooks claude`: the ka hooks do not run in \
                 Claude Code",
                Some("ka-hooks install claude --write".into()),
            )]
        } else {
            vec![Check::ok(
                "registered",
                format!("`ka-hooks claude` runs from {}", files.join(", ")),
            )]
        };
    }
    let project = show(&root.join(".claude/settings.json"));
    let fix = Some(
        "ka-hooks install claude --user --write (the user's settings are read wherever Claude \
         Code starts), or move the entries to .claude/settings.local.json"
            .to_owned(),
    );
    if start != root && start.starts_with(root) && !places.contains(&Place::StartDir) {
        return vec![Check::failing(
            "registered",
            format!(
                "Claude Code started here, in a subdirectory of {}, does not read {project}: \
                 ka-hooks is never called, and no guard runs",
                show(root)
            ),
            fix,
        )];
    }
    vec![Check::warning(
        "registered",
        format!(
            "`ka-hooks claude` runs from {project} only: Claude Code started in a subdirectory \
             of the project does not read that file, and no guard runs there"
        ),
        fix,
    )]
}

/// Every event with ka hooks (and PreToolUse, which ka's built-in protection needs) has its
/// entry.
fn events(config: &Config, regs: &[(Place, PathBuf, Vec<Registered>)]) -> Vec<Check> {
    let has = |event: &str| {
        regs.iter()
            .any(|(_, _, r)| r.iter().any(|r| r.event == event))
    };
    let mut wanted: Vec<&str> = plan(config, Agent::Claude, false)
        .iter()
        .map(|p| p.row.name)
        .collect();
    if !wanted.contains(&"PreToolUse") {
        wanted.insert(0, "PreToolUse");
    }
    let missing: Vec<&str> = wanted.into_iter().filter(|e| !has(e)).collect();
    if missing.is_empty() {
        return vec![Check::ok(
            "events",
            "every event with ka hooks has its entry",
        )];
    }
    let why = if missing.contains(&"PreToolUse") {
        " (PreToolUse also carries ka's built-in protection of its own files)"
    } else {
        ""
    };
    vec![Check::failing(
        "events",
        format!(
            "no `ka-hooks claude` entry for {}: the ka hooks of {} never run in Claude Code{why}",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        ),
        Some("ka-hooks install claude --write".into()),
    )]
}

/// Does a missing or crashing ka-hooks block the call? Only with `onFailure: "block"`.
fn fail_closed(regs: &[(Place, PathBuf, Vec<Registered>)]) -> Check {
    let pre: Vec<&Registered> = regs
        .iter()
        .flat_map(|(_, _, r)| r)
        .filter(|r| r.event == "PreToolUse")
        .collect();
    let blocks = !pre.is_empty()
        && pre
            .iter()
            .all(|r| r.hook.get("onFailure").and_then(Value::as_str) == Some("block"));
    if blocks {
        Check::ok(
            "fails",
            "a missing or crashing ka-hooks blocks the call (`onFailure: \"block\"`)",
        )
    } else {
        Check::warning(
            "fails",
            "a missing, crashing or timed-out ka-hooks lets the tool call through: the \
             PreToolUse entry has no `onFailure: \"block\"` (Claude Code 2.1.295 and later)",
            Some("ka-hooks install claude --write (it writes `onFailure: \"block\"`)".into()),
        )
    }
}
