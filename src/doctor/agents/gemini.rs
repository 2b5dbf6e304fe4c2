//! Gemini CLI: `ka-hooks gemini` in `settings.json`, Gemini's folder trust, and its switches
//! (`hooksConfig.enabled = false` switches every hook off; `hooksConfig.disabled` lists commands
//! that do not run). Read from Gemini CLI 0.61's settings schema and `checkPathTrust`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{agent_entry, read_json, registered, show};
use crate::adapter::Agent;
use crate::doctor::{Check, Entry};

pub(super) fn entry(root: &Path) -> Option<Entry> {
    let home = crate::paths::home_dir()?.join(".gemini");
    let project = root.join(".gemini/settings.json");
    let mut checks = Vec::new();
    let mut files = Vec::new();
    let mut in_project = false;
    for file in [home.join("settings.json"), project.clone()] {
        match read_json(&file) {
            None => {}
            Some(Err(check)) => checks.push(check),
            Some(Ok(settings)) => {
                checks.extend(switches(&settings, &file));
                if !registered(&settings, Agent::Gemini).is_empty() {
                    in_project |= file == project;
                    files.push(file);
                }
            }
        }
    }
    if files.is_empty() {
        return None;
    }
    let names: Vec<String> = files.iter().map(|f| show(f)).collect();
    checks.insert(
        0,
        Check::ok(
            "registered",
            format!("`ka-hooks gemini` runs from {}", names.join(", ")),
        ),
    );
    if in_project {
        checks.push(folder_trust(root, &home));
    }
    Some(agent_entry("Gemini CLI", files.first().cloned(), checks))
}

fn switches(settings: &Value, file: &Path) -> Vec<Check> {
    let config = settings.get("hooksConfig");
    let mut out = Vec::new();
    if config.and_then(|c| c.get("enabled")) == Some(&Value::Bool(false)) {
        out.push(Check::failing(
            "off",
            format!(
                "{} sets `hooksConfig.enabled = false`: Gemini CLI runs no hook",
                show(file)
            ),
            Some(format!("remove `hooksConfig.enabled` from {}", show(file))),
        ));
    }
    let disabled = config
        .and_then(|c| c.get("disabled"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|c| crate::adapter::install::is_adapter_command(c, Agent::Gemini));
    if disabled {
        out.push(Check::failing(
            "off",
            format!(
                "{} lists `ka-hooks gemini` in `hooksConfig.disabled`: it never runs",
                show(file)
            ),
            Some(format!(
                "remove it from `hooksConfig.disabled` in {}",
                show(file)
            )),
        ));
    }
    out
}

/// Is the project a trusted folder, so that Gemini reads its `.gemini/settings.json`? With folder
/// trust on (the default, `security.folderTrust.enabled`), a project's settings, hooks included,
/// are ignored until `~/.gemini/trustedFolders.json` (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`) trusts
/// it: the longest rule whose path holds the project decides, `TRUST_FOLDER` and `TRUST_PARENT`
/// (the rule's parent) trust it, `DO_NOT_TRUST` does not.
fn folder_trust(root: &Path, home: &Path) -> Check {
    let user = read_json(&home.join("settings.json")).and_then(Result::ok);
    let enabled = user
        .as_ref()
        .and_then(|s| s.pointer("/security/folderTrust/enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if !enabled {
        return Check::ok(
            "approved",
            "folder trust is off: Gemini CLI reads every project",
        );
    }
    let file = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join("trustedFolders.json"));
    let rules = read_json(&file).and_then(Result::ok).unwrap_or(Value::Null);
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut best: Option<(usize, &str)> = None;
    for (rule, level) in rules.as_object().into_iter().flatten() {
        let Some(level) = level.as_str() else {
            continue;
        };
        let path = Path::new(rule);
        let scope = if level == "TRUST_PARENT" {
            path.parent().unwrap_or(path)
        } else {
            path
        };
        let scope = std::fs::canonicalize(scope).unwrap_or_else(|_| scope.to_path_buf());
        if root.starts_with(&scope) && best.is_none_or(|(len, _)| rule.len() > len) {
            best = Some((rule.len(), level));
        }
    }
    match best {
        Some((_, "TRUST_FOLDER" | "TRUST_PARENT")) => Check::ok(
            "approved",
            format!("the project is a trusted folder ({})", show(&file)),
        ),
        _ => Check::failing(
            "approved",
            format!(
                "the project is not a trusted folder in {}: Gemini CLI ignores its \
                 .gemini/settings.json, ka-hooks included, and no guard runs",
                show(&file)
            ),
            Some(
                "start `gemini` in the project and trust the folder when it asks (or \
                 `/permissions`), or run `ka-hooks install gemini --user`"
                    .into(),
            ),
        ),
    }
}
