//! `ka-hooks doctor` reads each agent's own state: is `ka-hooks <agent>` registered where the
//! agent reads it, approved by the agent, switched off, and does a failure of ka-hooks block.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::{hook, Project};

/// A project with one guard, and a scratch HOME for the agents' files.
fn guard_and_home() -> Project {
    let p = Project::new();
    p.project(&hook("guard", "pre_tool_use", "exit 0", &[]));
    std::fs::create_dir_all(p.base.join("home")).expect("home");
    p
}

/// `doctor --json` from `dir`, HOME in the scratch dir: the exit code and the entry of `agent`.
fn doctor_from(p: &Project, dir: &Path, agent: &str) -> (i32, Value) {
    let mut cmd = p.cli();
    cmd.env("HOME", p.base.join("home"))
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .env_remove("COPILOT_HOME")
        .current_dir(dir)
        .args(["--trust", "doctor", "--json"]);
    let out = cmd.output().expect("run doctor");
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let entry = entries
        .into_iter()
        .find(|e| e["kind"] == "agent" && e["name"] == agent)
        .unwrap_or(Value::Null);
    (out.status.code().expect("exit code"), entry)
}

fn doctor(p: &Project, agent: &str) -> (i32, Value) {
    doctor_from(p, &p.root, agent)
}

/// The state and message of check `name` of an agent entry.
fn check_state(entry: &Value, name: &str) -> (String, String) {
    let c = entry["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no `{name}` check in {entry:#}"));
    (
        c["state"].as_str().unwrap_or("").to_owned(),
        c["message"].as_str().unwrap_or("").to_owned(),
    )
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, serde_json::to_string_pretty(value).expect("json")).expect("write");
}

fn claude_entry(on_failure: bool) -> Value {
    let mut hook = json!({"type": "command", "command": "ka-hooks claude", "timeout": 66});
    if on_failure {
        hook["onFailure"] = json!("block");
    }
    json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}})
}

#[test]
fn no_agent_file_means_no_agent_entry() {
    let p = guard_and_home();
    let (_, entry) = doctor(&p, "Claude Code");
    assert!(entry.is_null(), "{entry:#}");
}

#[test]
fn claude_project_settings_are_not_read_from_a_subdirectory() {
    let p = guard_and_home();
    write_json(&p.root.join(".claude/settings.json"), &claude_entry(true));
    let (_, entry) = doctor(&p, "Claude Code");
    let (state, message) = check_state(&entry, "registered");
    assert_eq!(state, "warning", "{message}");
    assert!(message.contains("subdirectory"), "{message}");
    let sub = p.root.join("src");
    std::fs::create_dir_all(&sub).expect("sub");
    let (code, entry) = doctor_from(&p, &sub, "Claude Code");
    let (state, message) = check_state(&entry, "registered");
    assert_eq!((state.as_str(), code), ("failing", 1), "{message}");
    assert!(message.contains("never called"), "{message}");
    // The user's settings are read wherever Claude Code starts.
    write_json(
        &p.base.join("home/.claude/settings.json"),
        &claude_entry(true),
    );
    let (_, entry) = doctor_from(&p, &sub, "Claude Code");
    assert_eq!(check_state(&entry, "registered").0, "ok");
}

#[test]
fn claude_disable_all_hooks_is_failing_and_names_the_file() {
    let p = guard_and_home();
    write_json(
        &p.root.join(".claude/settings.local.json"),
        &claude_entry(true),
    );
    write_json(
        &p.root.join(".claude/settings.json"),
        &json!({"disableAllHooks": true}),
    );
    let (code, entry) = doctor(&p, "Claude Code");
    let (state, message) = check_state(&entry, "off");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("disableAllHooks") && message.contains("settings.json"));
}

#[test]
fn claude_a_removed_entry_is_failing() {
    let p = guard_and_home();
    p.project(&format!(
        "{}{}",
        hook("guard", "pre_tool_use", "exit 0", &[]),
        hook("fmt", "post_tool_use", "exit 0", &[])
    ));
    write_json(
        &p.root.join(".claude/settings.local.json"),
        &claude_entry(true),
    );
    let (code, entry) = doctor(&p, "Claude Code");
    let (state, message) = check_state(&entry, "events");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("PostToolUse"), "{message}");
}

#[test]
fn claude_fails_closed_only_with_on_failure_block() {
    let p = guard_and_home();
    write_json(
        &p.root.join(".claude/settings.local.json"),
        &claude_entry(false),
    );
    let (_, entry) = doctor(&p, "Claude Code");
    let (state, message) = check_state(&entry, "fails");
    assert_eq!(state, "warning");
    assert!(message.contains("onFailure"), "{message}");
    write_json(
        &p.root.join(".claude/settings.local.json"),
        &claude_entry(true),
    );
    let (_, entry) = doctor(&p, "Claude Code");
    assert_eq!(check_state(&entry, "fails").0, "ok");
}

/// hooks.json as `ka-hooks install codex` writes it for one 60 s guard, and Codex 0.171's own
/// hash of that entry (from `codex app-server`'s `hooks/list`, `currentHash`).
const CODEX_HASH: &str = "sha256:3d6914e4610018682466e44efa05f77d2748c271e63f2a24aeafb592aa17ed84";

fn codex_setup(p: &Project, state: &str) -> (i32, Value) {
    let home = p.base.join("home/.codex");
    let file = home.join("hooks.json");
    write_json(
        &file,
        &json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "ka-hooks codex", "timeout": 66}]}]}}),
    );
    let key = format!("{}:pre_tool_use:0:0", file.display());
    let config = state.replace("KEY", &key);
    std::fs::write(home.join("config.toml"), config).expect("config");
    doctor(p, "Codex CLI")
}

#[test]
fn codex_hooks_not_reviewed_in_hooks_are_failing() {
    let p = guard_and_home();
    let (code, entry) = codex_setup(&p, "model = \"x\"\n");
    let (state, message) = check_state(&entry, "approved");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("/hooks"), "{message}");
}

#[test]
fn codex_hooks_reviewed_as_they_are_are_ok() {
    let p = guard_and_home();
    let reviewed = format!("[hooks.state.\"KEY\"]\ntrusted_hash = \"{CODEX_HASH}\"\n");
    let (_, entry) = codex_setup(&p, &reviewed);
    assert_eq!(check_state(&entry, "approved").0, "ok", "{entry:#}");
}

#[test]
fn codex_hooks_changed_since_their_review_or_switched_off_are_failing() {
    let p = guard_and_home();
    let changed = "[hooks.state.\"KEY\"]\ntrusted_hash = \"sha256:00\"\n";
    let (_, entry) = codex_setup(&p, changed);
    let (state, message) = check_state(&entry, "approved");
    assert_eq!(state, "failing");
    assert!(message.contains("changed since"), "{message}");
    let off = format!("[hooks.state.\"KEY\"]\ntrusted_hash = \"{CODEX_HASH}\"\nenabled = false\n");
    let (_, entry) = codex_setup(&p, &off);
    assert_eq!(check_state(&entry, "off").0, "failing");
}

fn gemini_setup(p: &Project, settings: Value, trusted: Option<Value>) -> (i32, Value) {
    let mut settings = settings;
    settings["hooks"] = json!({"BeforeTool": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "ka-hooks gemini", "timeout": 66000}]}]});
    write_json(&p.root.join(".gemini/settings.json"), &settings);
    if let Some(trusted) = trusted {
        write_json(&p.base.join("home/.gemini/trustedFolders.json"), &trusted);
    }
    doctor(p, "Gemini CLI")
}

#[test]
fn gemini_project_hooks_need_a_trusted_folder() {
    let p = guard_and_home();
    let (code, entry) = gemini_setup(&p, json!({}), None);
    let (state, message) = check_state(&entry, "approved");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("not a trusted folder"), "{message}");
    let root = p.root.display().to_string();
    let (_, entry) = gemini_setup(&p, json!({}), Some(json!({ root.clone(): "TRUST_FOLDER" })));
    assert_eq!(check_state(&entry, "approved").0, "ok");
    // TRUST_PARENT on a sibling trusts its parent, which holds the project.
    let sibling = p.base.join("other").display().to_string();
    let (_, entry) = gemini_setup(&p, json!({}), Some(json!({ sibling: "TRUST_PARENT" })));
    assert_eq!(check_state(&entry, "approved").0, "ok");
    let (_, entry) = gemini_setup(&p, json!({}), Some(json!({ root: "DO_NOT_TRUST" })));
    assert_eq!(check_state(&entry, "approved").0, "failing");
}

#[test]
fn gemini_hooks_switched_off_are_failing() {
    let p = guard_and_home();
    let root = p.root.display().to_string();
    let trusted = Some(json!({ root: "TRUST_FOLDER" }));
    let (code, entry) = gemini_setup(&p, json!({"hooksConfig": {"enabled": false}}), trusted);
    let (state, message) = check_state(&entry, "off");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("hooksConfig.enabled"), "{message}");
}

/// `.github/hooks/ka-hooks.json` with `events` running `ka-hooks copilot`, and Copilot's
/// `config.json` trusting `trusted` (none: no config).
fn copilot_setup(p: &Project, events: &[&str], trusted: Option<&Path>) {
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| {
            let entry = json!({"type": "command", "bash": format!("ka-hooks copilot --event {e}"),
                               "timeoutSec": 66});
            ((*e).to_owned(), json!([entry]))
        })
        .collect();
    write_json(
        &p.root.join(".github/hooks/ka-hooks.json"),
        &json!({"version": 1, "hooks": hooks}),
    );
    let config = p.base.join("home/.copilot/config.json");
    match trusted {
        Some(dir) => write_json(&config, &json!({"trusted_folders": [dir]})),
        None => {
            let _ = std::fs::remove_file(config);
        }
    }
}

const COPILOT: &str = "GitHub Copilot CLI";

#[test]
fn copilot_project_hooks_need_a_trusted_folder() {
    let p = guard_and_home();
    copilot_setup(&p, &["preToolUse"], None);
    let (code, entry) = doctor(&p, COPILOT);
    let (state, message) = check_state(&entry, "approved");
    assert_eq!((state.as_str(), code), ("failing", 1), "{message}");
    assert!(message.contains("trusted_folders"), "{message}");
    // From a subdirectory, `--trust-folder` does not help either.
    let sub = p.root.join("src");
    std::fs::create_dir_all(&sub).expect("sub");
    let (_, entry) = doctor_from(&p, &sub, COPILOT);
    assert!(check_state(&entry, "approved").1.contains("subdirectory"));
    // The root, or a folder holding it, trusted.
    copilot_setup(&p, &["preToolUse"], Some(&p.root));
    let (_, entry) = doctor(&p, COPILOT);
    assert_eq!(check_state(&entry, "approved").0, "ok", "{entry:#}");
    copilot_setup(&p, &["preToolUse"], Some(&p.base));
    let (_, entry) = doctor_from(&p, &sub, COPILOT);
    assert_eq!(check_state(&entry, "approved").0, "ok", "{entry:#}");
}

#[test]
fn copilot_user_hook_files_need_no_folder_trust() {
    let p = guard_and_home();
    write_json(
        &p.base.join("home/.copilot/hooks/ka-hooks.json"),
        &json!({"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": "ka-hooks copilot --event preToolUse"}]}}),
    );
    let (code, entry) = doctor(&p, COPILOT);
    assert_eq!(check_state(&entry, "registered").0, "ok", "{entry:#}");
    assert!(entry["checks"]
        .as_array()
        .is_some_and(|c| c.iter().all(|c| c["check"] != "approved")));
    assert_eq!(code, 0, "{entry:#}");
}

#[test]
fn copilot_disable_all_hooks_is_failing_and_names_the_file() {
    let p = guard_and_home();
    copilot_setup(&p, &["preToolUse"], Some(&p.root));
    write_json(
        &p.root.join(".github/copilot/settings.local.json"),
        &json!({"disableAllHooks": true}),
    );
    let (code, entry) = doctor(&p, COPILOT);
    let (state, message) = check_state(&entry, "off");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("settings.local.json"), "{message}");
}

#[test]
fn copilot_a_removed_entry_is_failing_and_either_spelling_counts() {
    let p = guard_and_home();
    p.project(&format!(
        "{}{}",
        hook("guard", "pre_tool_use", "exit 0", &[]),
        hook("fmt", "post_tool_use", "exit 0", &[])
    ));
    copilot_setup(&p, &["preToolUse"], Some(&p.root));
    let (code, entry) = doctor(&p, COPILOT);
    let (state, message) = check_state(&entry, "events");
    assert_eq!((state.as_str(), code), ("failing", 1));
    assert!(message.contains("postToolUse"), "{message}");
    copilot_setup(
        &p,
        &["PreToolUse", "PostToolUse", "PostToolUseFailure"],
        Some(&p.root),
    );
    let (_, entry) = doctor(&p, COPILOT);
    assert_eq!(check_state(&entry, "events").0, "ok", "{entry:#}");
}

#[test]
fn copilot_a_failing_ka_hooks_fails_closed() {
    let p = guard_and_home();
    copilot_setup(&p, &["preToolUse"], Some(&p.root));
    let (_, entry) = doctor(&p, COPILOT);
    let (state, message) = check_state(&entry, "fails");
    assert_eq!(state, "ok");
    assert!(message.contains("denies the call"), "{message}");
}
