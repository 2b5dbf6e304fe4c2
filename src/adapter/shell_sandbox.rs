//! The agents' own sandboxes for their shell tool: the boundary that keeps ka's state (its config
//! and data dirs, the agents' hook settings) out of reach of the commands the model runs.
//! `install` turns the sandbox on where an agent has one; `doctor` and the session start say
//! whether the model's shell can reach ka's state. docs/adapters.md lists the settings.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::agent::Agent;
use crate::paths::Paths;

/// How far the model's shell can reach ka's state under one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protection {
    /// The agent's sandbox keeps ka's state read-only to the model's shell.
    Protected,
    /// The model's shell can write ka's state: why, and what turns the sandbox on.
    Exposed {
        /// What is missing.
        why: String,
        /// The command or setting that fixes it.
        fix: String,
    },
}

/// ka's own state: the folders a model's shell must not write.
pub fn ka_state(paths: &Paths) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = [&paths.config_dir, &paths.data_dir]
        .into_iter()
        .flatten()
        .map(|d| crate::paths::absolute(d))
        .collect();
    if let Some(store) = paths
        .trust_file()
        .and_then(|f| f.parent().map(Path::to_path_buf))
    {
        let store = crate::paths::absolute(&store);
        if !dirs.iter().any(|d| store.starts_with(d)) {
            dirs.push(store);
        }
    }
    dirs
}

/// A path as a Claude Code sandbox path: `~/…` under the home directory, else `//…`.
fn claude_path(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => format!("/{}", path.display()),
    }
}

/// A Claude Code sandbox path resolved: `//abs`, `~/rel`, `/rel` (to `settings_dir`).
fn resolve_claude_path(entry: &str, home: Option<&Path>, settings_dir: &Path) -> Option<PathBuf> {
    if let Some(abs) = entry.strip_prefix("//") {
        Some(PathBuf::from("/").join(abs))
    } else if let Some(rel) = entry.strip_prefix("~/") {
        home.map(|h| h.join(rel))
    } else {
        entry.strip_prefix('/').map(|rel| settings_dir.join(rel))
    }
}

/// The paths `install claude` denies to the model's shell: ka's state, Claude Code's settings
/// beside the file written (`/settings.json`, `/settings.local.json`) and the user's.
pub fn claude_deny_write(paths: &Paths, home: Option<&Path>) -> Vec<String> {
    let mut deny: Vec<String> = ka_state(paths)
        .iter()
        .map(|d| claude_path(d, home))
        .collect();
    deny.push("/settings.json".into());
    deny.push("/settings.local.json".into());
    if let Some(user) = crate::paths::claude_config_dir() {
        for name in ["settings.json", "settings.local.json"] {
            let entry = claude_path(&user.join(name), home);
            if !deny.contains(&entry) {
                deny.push(entry);
            }
        }
    }
    deny
}

/// Turns Claude Code's sandbox on in `settings` (the JSON of one settings file): enabled, no
/// fallback to unsandboxed commands, a hard failure when it cannot start, and `deny` added to
/// `filesystem.denyWrite`. Returns what changed, one line each; an error when `sandbox` is not
/// an object.
pub fn merge_claude(settings: &mut Value, deny: &[String]) -> Result<Vec<String>, String> {
    let root = settings
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    let sandbox = root
        .entry("sandbox")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("`sandbox` is not an object")?;
    let mut changes = Vec::new();
    for (key, want) in [
        ("enabled", true),
        ("failIfUnavailable", true),
        ("allowUnsandboxedCommands", false),
    ] {
        if sandbox.get(key) != Some(&Value::Bool(want)) {
            sandbox.insert(key.into(), Value::Bool(want));
            changes.push(format!("sandbox.{key} = {want}"));
        }
    }
    let filesystem = sandbox
        .entry("filesystem")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("`sandbox.filesystem` is not an object")?;
    let list = filesystem
        .entry("denyWrite")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or("`sandbox.filesystem.denyWrite` is not an array")?;
    for path in deny {
        if !list.iter().any(|v| v.as_str() == Some(path)) {
            list.push(Value::String(path.clone()));
            changes.push(format!("sandbox.filesystem.denyWrite += {path}"));
        }
    }
    Ok(changes)
}

/// Takes out of `settings` the `deny` paths [`merge_claude`] added, and the `sandbox` object
/// when nothing but what it set is left.
pub fn unmerge_claude(settings: &mut Value, deny: &[String]) {
    let Some(sandbox) = settings.get_mut("sandbox").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(filesystem) = sandbox.get_mut("filesystem").and_then(Value::as_object_mut) {
        if let Some(list) = filesystem
            .get_mut("denyWrite")
            .and_then(Value::as_array_mut)
        {
            list.retain(|v| !v.as_str().is_some_and(|p| deny.iter().any(|d| d == p)));
            if list.is_empty() {
                filesystem.remove("denyWrite");
            }
        }
        if filesystem.is_empty() {
            sandbox.remove("filesystem");
        }
    }
    let ours =
        json!({"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false});
    if Value::Object(sandbox.clone()) == ours {
        if let Some(root) = settings.as_object_mut() {
            root.remove("sandbox");
        }
    }
}

/// Claude Code's settings as it reads them, lowest precedence first: the user's, the project's,
/// the project's local file (the managed file, when present, last).
pub fn claude_files(project_root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(user) = crate::paths::claude_config_dir() {
        files.push(user.join("settings.json"));
    }
    files.push(project_root.join(".claude/settings.json"));
    files.push(project_root.join(".claude/settings.local.json"));
    files.push(PathBuf::from("/etc/claude-code/managed-settings.json"));
    files
}

/// The settings files that exist and parse, with their JSON.
pub fn read_json_files(files: &[PathBuf]) -> Vec<(PathBuf, Value)> {
    files
        .iter()
        .filter_map(|f| {
            let bytes = crate::trust::read_regular(f, 1 << 20).ok().flatten()?;
            Some((f.clone(), serde_json::from_slice(&bytes).ok()?))
        })
        .collect()
}

/// Whether Claude Code's sandbox, as these settings set it, keeps `state` from the shell.
pub fn claude_protection(
    settings: &[(PathBuf, Value)],
    state: &[PathBuf],
    home: Option<&Path>,
) -> Protection {
    let last = |key: &str| {
        settings
            .iter()
            .rev()
            .find_map(|(_, v)| v.get("sandbox")?.get(key)?.as_bool())
    };
    let exposed = |why: String| Protection::Exposed {
        why,
        fix: "ka-hooks install claude --write (turns on Claude Code's sandbox)".into(),
    };
    if last("enabled") != Some(true) {
        return exposed("Claude Code's sandbox is off (`sandbox.enabled`)".into());
    }
    if last("allowUnsandboxedCommands") != Some(false) {
        return exposed(
            "a command may leave Claude Code's sandbox (`sandbox.allowUnsandboxedCommands` is \
             not false)"
                .into(),
        );
    }
    let denied: Vec<PathBuf> = settings
        .iter()
        .flat_map(|(file, v)| {
            let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
            v.pointer("/sandbox/filesystem/denyWrite")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(|e| resolve_claude_path(e, home, &dir))
                .collect::<Vec<_>>()
        })
        .collect();
    let open: Vec<String> = state
        .iter()
        .filter(|d| !denied.iter().any(|deny| d.starts_with(deny)))
        .map(|d| d.display().to_string())
        .collect();
    if !open.is_empty() {
        return exposed(format!(
            "Claude Code's sandbox does not deny writes to {}",
            open.join(", ")
        ));
    }
    if cfg!(target_os = "linux") && !on_path("bwrap") {
        return Protection::Exposed {
            why: "Claude Code's sandbox needs bubblewrap (`bwrap`), which is not on PATH".into(),
            fix: "install bubblewrap and socat (e.g. `apt-get install bubblewrap socat`)".into(),
        };
    }
    Protection::Protected
}

/// Whether Codex's `config.toml` (`text`) keeps its shell in a sandbox that cannot write `state`.
pub fn codex_protection(text: Option<&str>, state: &[PathBuf]) -> Protection {
    let exposed = |why: String| Protection::Exposed {
        why,
        fix: "set `sandbox_mode = \"workspace-write\"` in ~/.codex/config.toml, with no \
              writable_roots holding ka's config or data dir"
            .into(),
    };
    let config: toml::Table = match text.map(str::parse::<toml::Table>) {
        Some(Ok(config)) => config,
        Some(Err(e)) => return exposed(format!("~/.codex/config.toml does not parse ({e})")),
        None => return exposed("no ~/.codex/config.toml sets `sandbox_mode`".into()),
    };
    match config.get("sandbox_mode").and_then(toml::Value::as_str) {
        Some("workspace-write") | Some("read-only") => {}
        Some(other) => return exposed(format!("Codex's `sandbox_mode` is `{other}`")),
        None => return exposed("Codex's `sandbox_mode` is not set".into()),
    }
    let roots: Vec<PathBuf> = config
        .get("sandbox_workspace_write")
        .and_then(|t| t.get("writable_roots"))
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_str)
        .map(PathBuf::from)
        .collect();
    let open: Vec<String> = state
        .iter()
        .filter(|d| roots.iter().any(|r| d.starts_with(r) || r.starts_with(d)))
        .map(|d| d.display().to_string())
        .collect();
    if open.is_empty() {
        Protection::Protected
    } else {
        exposed(format!("Codex's writable_roots reach {}", open.join(", ")))
    }
}

/// Whether Gemini CLI's settings turn its sandbox on (`tools.sandbox`).
pub fn gemini_protection(settings: &[(PathBuf, Value)]) -> Protection {
    let on = settings.iter().rev().find_map(|(_, v)| {
        let sandbox = v.pointer("/tools/sandbox")?;
        Some(match sandbox {
            Value::Bool(b) => *b,
            Value::String(s) => !s.is_empty() && s != "false",
            _ => false,
        })
    });
    if on == Some(true) {
        Protection::Protected
    } else {
        Protection::Exposed {
            why: "Gemini CLI's sandbox is off (`tools.sandbox`)".into(),
            fix: "set `\"tools\": {\"sandbox\": true}` in ~/.gemini/settings.json".into(),
        }
    }
}

/// What `install` says of an agent without a sandbox ka can turn on.
pub fn no_sandbox(agent: Agent) -> Option<String> {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Gemini => None,
        Agent::Copilot | Agent::Cursor | Agent::Antigravity => Some(format!(
            "{} has no sandbox for its shell tool that ka-hooks can turn on: the model's shell \
             commands can write ka's config and data dirs and the agent's hook file, so ka's \
             refusals inside a tool call are defence in depth only",
            agent.display()
        )),
    }
}

/// Whether a Claude Code settings object registers `ka-hooks claude` for some event.
pub fn runs_claude_adapter(settings: &Value) -> bool {
    settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|events| events.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(|hook| hook.get("command")?.as_str())
        .any(|command| crate::adapter::install::is_adapter_command(command, Agent::Claude))
}

/// Whether any of `files` runs `ka-hooks <agent>`.
pub fn names_adapter(files: &[PathBuf], agent: Agent) -> bool {
    files.iter().any(|f| {
        crate::trust::read_regular(f, 1 << 20)
            .ok()
            .flatten()
            .is_some_and(|bytes| {
                String::from_utf8_lossy(&bytes)
                    .split(['"', '\n'])
                    .any(|command| crate::adapter::install::is_adapter_command(command, agent))
            })
    })
}

/// What the session start tells the user when the model's shell can reach ka's state under
/// `agent`, in the project at `root`; `None` when the agent's sandbox keeps it out.
pub fn session_note(agent: Agent, paths: &Paths, root: &Path) -> Option<String> {
    let state = ka_state(paths);
    let home = crate::paths::home_dir();
    // Only where a settings or hook file registers the adapter: what an installed agent runs.
    let protection = match agent {
        Agent::Claude => {
            let settings = read_json_files(&claude_files(root));
            if !settings.iter().any(|(_, v)| runs_claude_adapter(v)) {
                return None;
            }
            claude_protection(&settings, &state, home.as_deref())
        }
        Agent::Codex => {
            let codex = std::env::var_os("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".codex")));
            let hooks: Vec<PathBuf> = codex
                .iter()
                .map(|h| h.join("hooks.json"))
                .chain([root.join(".codex/hooks.json")])
                .collect();
            if !names_adapter(&hooks, agent) {
                return None;
            }
            let config = codex.and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok());
            codex_protection(config.as_deref(), &state)
        }
        Agent::Gemini => {
            let files: Vec<PathBuf> = home
                .iter()
                .map(|h| h.join(".gemini/settings.json"))
                .chain([root.join(".gemini/settings.json")])
                .collect();
            if !names_adapter(&files, agent) {
                return None;
            }
            gemini_protection(&read_json_files(&files))
        }
        Agent::Copilot | Agent::Cursor | Agent::Antigravity => return None,
    };
    match protection {
        Protection::Protected => None,
        Protection::Exposed { why, fix } => Some(format!(
            "ka-hooks: the model's shell can reach ka's state ({why}), so it could switch guards \
             off; fix: {fix}"
        )),
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_paths_round_trip() {
        let home = Path::new("/home/u");
        assert_eq!(
            claude_path(Path::new("/home/u/.local/share/ka"), Some(home)),
            "~/.local/share/ka"
        );
        assert_eq!(claude_path(Path::new("/srv/ka"), Some(home)), "//srv/ka");
        let dir = Path::new("/p/.claude");
        assert_eq!(
            resolve_claude_path("~/.config/ka", Some(home), dir),
            Some(PathBuf::from("/home/u/.config/ka"))
        );
        assert_eq!(
            resolve_claude_path("//srv/ka", Some(home), dir),
            Some(PathBuf::from("/srv/ka"))
        );
        assert_eq!(
            resolve_claude_path("/settings.json", Some(home), dir),
            Some(PathBuf::from("/p/.claude/settings.json"))
        );
    }

    #[test]
    fn codex_workspace_write_without_ka_roots_is_protected() {
        let state = [PathBuf::from("/home/u/.local/share/ka")];
        assert_eq!(
            codex_protection(Some("sandbox_mode = \"workspace-write\"\n"), &state),
            Protection::Protected
        );
        assert!(matches!(
            codex_protection(
                Some("sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nwritable_roots = [\"/home/u\"]\n"),
                &state
            ),
            Protection::Exposed { .. }
        ));
        assert!(matches!(
            codex_protection(Some("sandbox_mode = \"danger-full-access\"\n"), &state),
            Protection::Exposed { .. }
        ));
        assert!(matches!(
            codex_protection(None, &state),
            Protection::Exposed { .. }
        ));
    }
}
