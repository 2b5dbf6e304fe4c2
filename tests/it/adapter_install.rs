//! `ka-hooks install claude`: a dry-run diff, an idempotent merge that keeps the user's settings
//! as written, and timeouts that cover the hooks. Never touches the real `~/.claude`:
//! `CLAUDE_CONFIG_DIR` points at a temp dir.

use crate::support;
use crate::support::agents::{claude_settings, claude_settings_file};

use std::fs;
use std::path::PathBuf;

use serde_json::{json, Value};
use support::{hook, Project};

fn claude_dir(p: &Project) -> PathBuf {
    p.base.join("claude-home")
}

fn install(p: &Project, args: &[&str]) -> (Option<i32>, String, String) {
    let output = p
        .cli()
        .env("CLAUDE_CONFIG_DIR", claude_dir(p))
        .args(["install", "claude"])
        .args(args)
        .output()
        .expect("ka-hooks install");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn two_event_project() -> Project {
    Project::with_user_toml(&format!(
        "{}{}{}",
        hook("guard", "pre_tool_use", "true guard", &["timeout = 10"]),
        hook("scrub", "pre_tool_use", "true scrub", &["timeout = 4"]),
        hook("fmt", "post_tool_use", "true fmt", &["timeout = 30"]),
    ))
}

/// A settings file as a user wrote it: inline arrays, four-space indent, a hook of their own.
const USER_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": { "allow": ["Bash(cargo test:*)"], "deny": ["Read(.env)"] },
    "hooks": {
        "PreToolUse": [
            { "matcher": "Bash", "hooks": [ { "type": "command", "command": "./audit.sh" } ] }
        ]
    },
    "env": { "RUST_LOG": "info" }
}
"#;

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let p = two_event_project();
    let (code, stdout, _) = install(&p, &[]);
    assert_eq!(code, Some(0));
    assert!(
        !claude_settings_file(&p).exists(),
        "a dry run wrote the file"
    );
    assert!(stdout.contains("+++ "), "{stdout}");
    assert!(stdout.contains("--- /dev/null\n"), "{stdout}");
    assert!(stdout.contains("+    \"PreToolUse\": ["), "{stdout}");
    let command = json!(support::adapter_command("claude")).to_string();
    assert!(
        stdout.contains(&format!("\"command\": {command}")),
        "{stdout}"
    );
    assert!(stdout.contains("dry run: nothing written"), "{stdout}");
}

#[test]
fn write_then_rerun_is_a_no_op() {
    let p = two_event_project();
    let (code, stdout, _) = install(&p, &["--write"]);
    assert_eq!(code, Some(0), "{stdout}");
    let first = fs::read(claude_settings_file(&p)).expect("written");
    let (code, stdout, _) = install(&p, &["--write"]);
    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("already installed:"), "{stdout}");
    assert_eq!(
        fs::read(claude_settings_file(&p)).expect("still there"),
        first
    );
    let (_, stdout, _) = install(&p, &[]);
    assert!(stdout.starts_with("already installed:"), "{stdout}");
}

#[test]
fn entries_run_the_adapter_for_events_with_hooks_only() {
    let p = two_event_project();
    install(&p, &["--write"]);
    let s = claude_settings(&p);
    let hooks = s["hooks"].as_object().expect("hooks");
    // A failed call runs the post_tool_use hooks too, so PostToolUseFailure is registered with
    // them.
    assert_eq!(
        hooks.keys().collect::<Vec<_>>(),
        ["PreToolUse", "PostToolUse", "PostToolUseFailure"]
    );
    assert_eq!(
        s["hooks"]["PreToolUse"][0],
        json!({"matcher": "*", "hooks": [{"type": "command", "command": support::adapter_command("claude"), "timeout": 21,
                                          "onFailure": "block"}]})
    );
}

#[test]
fn timeout_covers_a_pipeline_sum_and_a_concurrent_max() {
    let p = two_event_project();
    install(&p, &["--write"]);
    let s = claude_settings(&p);
    // pre_tool_use runs its hooks one after another: 10 + 1 + 4 + 1, plus a 5 s margin.
    assert_eq!(s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 21);
    // post_tool_use runs them concurrently: 30 + 1, plus the margin.
    assert_eq!(s["hooks"]["PostToolUse"][0]["hooks"][0]["timeout"], 36);
}

#[test]
fn keeps_the_users_settings_byte_for_byte_around_the_new_entries() {
    let p = two_event_project();
    p.write(".claude/settings.json", USER_SETTINGS);
    let (code, stdout, _) = install(&p, &["--write"]);
    assert_eq!(code, Some(0), "{stdout}");
    let text = fs::read_to_string(claude_settings_file(&p)).expect("settings");
    // Every line of the user's file is still there, in order.
    let mut rest = text.as_str();
    for line in USER_SETTINGS.lines() {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("lost or moved {line:?} in\n{text}"));
        rest = &rest[at + line.len()..];
    }
    let s: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        s.as_object().expect("object").keys().collect::<Vec<_>>(),
        ["model", "permissions", "hooks", "env", "sandbox"]
    );
    assert_eq!(
        s["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "./audit.sh"
    );
    assert_eq!(
        s["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
        support::adapter_command("claude")
    );
    // New lines use the file's own four-space indent.
    assert!(
        text.contains("\n                \"matcher\": \"*\",\n"),
        "{text}"
    );
}

#[test]
fn a_changed_timeout_is_updated_in_place() {
    let p = two_event_project();
    install(&p, &["--write"]);
    p.write_user_toml(&hook("guard", "pre_tool_use", "true", &["timeout = 100"]));
    let (_, stdout, _) = install(&p, &[]);
    assert!(stdout.contains("-            \"timeout\": 21"), "{stdout}");
    assert!(stdout.contains("+            \"timeout\": 106"), "{stdout}");
    install(&p, &["--write"]);
    let s = claude_settings(&p);
    assert_eq!(s["hooks"]["PreToolUse"].as_array().map(Vec::len), Some(1));
    assert_eq!(s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 106);
}

#[test]
fn user_flag_writes_to_claude_config_dir() {
    let p = two_event_project();
    let (code, _, _) = install(&p, &["--user", "--write"]);
    assert_eq!(code, Some(0));
    assert!(!claude_settings_file(&p).exists());
    let text = fs::read_to_string(claude_dir(&p).join("settings.json")).expect("user settings");
    let s: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        s["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        support::adapter_command("claude")
    );
}

/// `install claude` from a `ka-hooks` on `PATH` that is a link or a launcher, as package
/// managers make them: the command written is the one without the launcher.
fn install_through(p: &Project, launcher: &std::path::Path) -> Value {
    let mut cmd = std::process::Command::new(launcher);
    for var in support::AMBIENT_VARS {
        cmd.env_remove(var);
    }
    let path = format!(
        "{}:/usr/bin:/bin",
        launcher.parent().expect("dir").display()
    );
    let output = cmd
        .args(["install", "claude", "--write"])
        .env("PATH", path)
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .env("CLAUDE_CONFIG_DIR", claude_dir(p))
        .current_dir(&p.root)
        .output()
        .expect("the launcher runs");
    assert!(output.status.success(), "{output:?}");
    claude_settings(p)["hooks"]["PreToolUse"][0]["hooks"][0]["command"].clone()
}

#[test]
fn the_entry_names_the_native_binary_not_a_launcher_in_front_of_it() {
    // npm's `ka-hooks` is a script that starts the native binary: the agent must not start it
    // (and Node with it) on every event.
    let p = two_event_project();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_ka-hooks")).expect("binary");
    let launcher = p.base.join("npm-bin").join("ka-hooks");
    fs::create_dir_all(launcher.parent().expect("dir")).expect("mkdir");
    let script = format!("#!/bin/sh\nexec '{}' \"$@\"\n", exe.display());
    fs::write(&launcher, script).expect("write the launcher");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    fs::set_permissions(&launcher, mode).expect("chmod");
    assert_eq!(
        install_through(&p, &launcher),
        support::adapter_command("claude")
    );
}

#[test]
fn the_entry_keeps_a_link_on_path_that_leads_to_this_binary() {
    // Homebrew's /opt/homebrew/bin/ka-hooks links into a versioned directory that an upgrade
    // deletes: the link is what stays valid.
    let p = two_event_project();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_ka-hooks")).expect("binary");
    let bin = p.base.join("brew-bin");
    fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(&exe, bin.join("ka-hooks")).expect("symlink");
    let link = std::fs::canonicalize(&bin).expect("dir").join("ka-hooks");
    assert_eq!(
        install_through(&p, &link),
        json!(format!("{} claude", link.display()))
    );
}

#[test]
fn no_hooks_registers_pre_tool_use_only_unless_all_events() {
    let p = Project::new();
    let (code, stdout, _) = install(&p, &["--write"]);
    assert_eq!(code, Some(0));
    // ka's built-in protection of its own files runs on PreToolUse without any ka hook.
    let s = claude_settings(&p);
    let events: Vec<&String> = s["hooks"].as_object().expect("hooks").keys().collect();
    assert_eq!(events, ["PreToolUse"], "{stdout}");
    install(&p, &["--write", "--all-events"]);
    let s = claude_settings(&p);
    let events: Vec<&String> = s["hooks"].as_object().expect("hooks").keys().collect();
    assert_eq!(
        events,
        [
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "UserPromptSubmit",
            "Stop",
            "SessionStart",
            "SessionEnd",
            "PreCompact",
            "PostCompact",
            "PermissionRequest",
            "PermissionDenied",
            "Notification",
            "SubagentStart",
            "SubagentStop",
            "Setup",
            "TeammateIdle",
            "TaskCompleted",
            "InstructionsLoaded"
        ]
    );
    assert!(s["hooks"]["Stop"][0].get("matcher").is_none());
}

#[test]
fn untrusted_project_hooks_are_registered_and_flagged() {
    let p = Project::new();
    p.write(".ka/ka.toml", &hook("guard", "pre_tool_use", "true", &[]));
    let (_, stdout, _) = install(&p, &["--write"]);
    assert!(stdout.contains("not trusted yet"), "{stdout}");
    assert!(claude_settings(&p)["hooks"]["PreToolUse"].is_array());
}

#[test]
fn invalid_settings_are_left_alone() {
    let p = two_event_project();
    p.write(".claude/settings.json", "{ \"hooks\": [ }");
    let (code, _, stderr) = install(&p, &["--write"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("not valid JSON"), "{stderr}");
    assert_eq!(
        fs::read_to_string(claude_settings_file(&p)).expect("kept"),
        "{ \"hooks\": [ }"
    );
}

#[test]
fn codex_and_gemini_print_the_entries_and_exit_1() {
    let p = two_event_project();
    for (agent, pre, timeout) in [
        ("codex", "PreToolUse", 21),
        ("gemini", "BeforeTool", 21_000),
    ] {
        let output = p
            .cli()
            .args(["install", agent, "--write"])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&output.stderr).contains("not supported"));
        let snippet: Value = serde_json::from_slice(&output.stdout).expect("json snippet");
        assert_eq!(
            snippet["hooks"][pre][0]["hooks"][0]["command"],
            support::adapter_command(agent)
        );
        assert_eq!(snippet["hooks"][pre][0]["hooks"][0]["timeout"], timeout);
    }
    assert!(!p.root.join(".codex").exists() && !p.root.join(".gemini").exists());
}

#[test]
fn a_custom_command_is_recognised_on_rerun() {
    let p = two_event_project();
    let custom = ["--write", "--command", "/opt/kah claude --fail-closed"];
    install(&p, &custom);
    let s = claude_settings(&p);
    assert_eq!(
        s["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "/opt/kah claude --fail-closed"
    );
    let (_, stdout, _) = install(&p, &custom);
    assert!(stdout.starts_with("already installed:"), "{stdout}");
}

#[test]
fn one_5_s_hook_gets_each_hooks_timeout_plus_1_s_plus_5_s() {
    let p = Project::with_user_toml(&hook("fmt", "stop", "true", &["timeout = 5"]));
    install(&p, &["--write"]);
    assert_eq!(
        claude_settings(&p)["hooks"]["Stop"][0]["hooks"][0]["timeout"],
        11
    );
}

#[test]
fn remove_write_deletes_a_file_that_install_created_and_keeps_the_users() {
    let p = Project::with_user_toml(&hook("fmt", "stop", "true", &[]));
    let (code, _, stderr) = install(&p, &["--write"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(claude_settings_file(&p).exists());
    let (code, stdout, stderr) = install(&p, &["--remove", "--write"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !claude_settings_file(&p).exists(),
        "it created the file, and only {{}} was left: {stdout}"
    );
    // The user's own file, even one holding only the adapter's entries, stays.
    fs::create_dir_all(claude_dir(&p)).expect("mkdir");
    fs::create_dir_all(claude_settings_file(&p).parent().expect("parent")).expect("mkdir");
    fs::write(claude_settings_file(&p), "{}\n").expect("write");
    install(&p, &["--write"]);
    install(&p, &["--remove", "--write"]);
    assert_eq!(
        fs::read_to_string(claude_settings_file(&p))
            .expect("kept")
            .trim(),
        "{}"
    );
}
