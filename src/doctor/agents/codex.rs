//! Codex CLI: `ka-hooks codex` in `hooks.json`, and Codex's own review of it. Codex (0.171,
//! conformance suite) runs a hook that is not managed only after a person trusted it in its
//! `/hooks` screen, and `codex exec` runs no unreviewed hook without a word, so the doctor reads
//! that review.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{agent_entry, read_json, registered, show, Registered};
use crate::adapter::Agent;
use crate::config::Config;
use crate::doctor::{Check, Entry};

/// `$CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::paths::home_dir().map(|h| h.join(".codex")))
}

pub(super) fn entry(_config: &Config, root: &Path) -> Option<Entry> {
    let home = codex_home()?;
    let mut checks = Vec::new();
    let mut regs: Vec<(PathBuf, Registered)> = Vec::new();
    for file in [home.join("hooks.json"), root.join(".codex/hooks.json")] {
        match read_json(&file) {
            None => {}
            Some(Err(check)) => checks.push(check),
            Some(Ok(hooks)) => {
                let found = registered(&hooks, Agent::Codex);
                regs.extend(found.into_iter().map(|r| (file.clone(), r)));
            }
        }
    }
    if regs.is_empty() {
        return None;
    }
    let config = read_config(&home.join("config.toml"), &mut checks);
    if config
        .get("features")
        .and_then(|f| f.get("hooks"))
        .and_then(toml::Value::as_bool)
        == Some(false)
    {
        checks.push(Check::failing(
            "off",
            format!(
                "{} sets `[features] hooks = false`: Codex runs no hook",
                show(&home.join("config.toml"))
            ),
            Some("remove `hooks = false` from its `[features]` table".into()),
        ));
    }
    checks.extend(reviews(&config, &regs));
    checks.push(Check::warning(
        "fails",
        "a missing or crashing ka-hooks lets the call through: Codex (0.171) runs a call whose \
         hook cannot start, and has no setting to block instead",
        Some("keep ka-hooks installed on the PATH Codex runs hooks with".into()),
    ));
    let file = regs.first().map(|(f, _)| f.clone());
    Some(agent_entry("Codex CLI", file, checks))
}

fn read_config(path: &Path, checks: &mut Vec<Check>) -> toml::Table {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) => return toml::Table::new(),
    };
    text.parse::<toml::Table>().unwrap_or_else(|e| {
        checks.push(Check::warning(
            "agent",
            format!(
                "cannot read {}: {}",
                show(path),
                crate::terminal::escape(e.message())
            ),
            None,
        ));
        toml::Table::new()
    })
}

/// Codex's review state of each entry: trusted as it is, changed since, off, or never reviewed.
/// The review is `[hooks.state."<key>"] trusted_hash = "sha256:…"` in `$CODEX_HOME/config.toml`,
/// the key `<hooks.json path>:<event>:<group>:<index>` ([`trust_hash`] is the hash); `enabled =
/// false` there switches the entry off, and an edit of the entry needs a new review.
fn reviews(config: &toml::Table, regs: &[(PathBuf, Registered)]) -> Vec<Check> {
    let state = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    let fix = "run `codex` in this project, open `/hooks`, and trust the `ka-hooks codex` \
               entries (Codex shows each command; a person approves it, not the model)";
    let mut unreviewed = Vec::new();
    let mut changed = Vec::new();
    let mut off = Vec::new();
    for (file, reg) in regs {
        let key = format!(
            "{}:{}:{}:{}",
            file.display(),
            snake(&reg.event),
            reg.group,
            reg.index
        );
        let entry = state
            .and_then(|s| s.get(&key))
            .and_then(toml::Value::as_table);
        let trusted = entry
            .and_then(|e| e.get("trusted_hash"))
            .and_then(toml::Value::as_str);
        if entry
            .and_then(|e| e.get("enabled"))
            .and_then(toml::Value::as_bool)
            == Some(false)
        {
            off.push(reg.event.clone());
        } else if trusted.is_none() {
            unreviewed.push(reg.event.clone());
        } else if trusted != Some(trust_hash(reg).as_str()) {
            changed.push(reg.event.clone());
        }
    }
    let mut checks = Vec::new();
    if !unreviewed.is_empty() {
        checks.push(Check::failing(
            "approved",
            format!(
                "not reviewed in Codex's /hooks: Codex does not run `ka-hooks codex` on {} \
                 (`codex exec` runs no unreviewed hook and says nothing), so no guard runs",
                unreviewed.join(", ")
            ),
            Some(fix.into()),
        ));
    }
    if !changed.is_empty() {
        checks.push(Check::failing(
            "approved",
            format!(
                "changed since its review in /hooks ({}): Codex does not run it until it is \
                 reviewed again",
                changed.join(", ")
            ),
            Some(fix.into()),
        ));
    }
    if !off.is_empty() {
        checks.push(Check::failing(
            "off",
            format!("switched off in Codex's /hooks ({})", off.join(", ")),
            Some("turn the `ka-hooks codex` entries back on in /hooks".into()),
        ));
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            "approved",
            "every `ka-hooks codex` entry is reviewed in /hooks, as it is now",
        ));
    }
    checks
}

/// `PreToolUse` → `pre_tool_use`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Codex's hash of an entry: SHA-256 of `{"event_name", "hooks": [handler], "matcher"}` as
/// compact JSON with sorted keys, the handler with Codex's defaults (`async` false, `timeout`
/// 600).
pub(crate) fn trust_hash(reg: &Registered) -> String {
    let mut handler: Vec<(String, Value)> = reg
        .hook
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, default) in [("async", Value::Bool(false)), ("timeout", Value::from(600))] {
        if !reg.hook.contains_key(key) {
            handler.push((key.into(), default));
        }
    }
    handler.sort_by(|a, b| a.0.cmp(&b.0));
    let handler: Map<String, Value> = handler.into_iter().collect();
    let mut identity = Map::new();
    identity.insert("event_name".into(), snake(&reg.event).into());
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
    if let Some(matcher) = &reg.matcher {
        identity.insert("matcher".into(), matcher.clone());
    }
    let json = Value::Object(identity).to_string();
    format!("sha256:{}", crate::trust::content_hash(json.as_bytes()))
}
