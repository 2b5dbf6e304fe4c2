//! ka's state out of the model's reach: `install` turns on the agent's own sandbox for its shell
//! tool, and `doctor` and the session start say per agent whether the model's shell can reach
//! ka's config dir, data dir and trust store, and whether a setting switched ka-hooks off.

use crate::support::agents::claude_settings;
use serde_json::{json, Value};

use crate::support::Project;

const GUARD: &str = "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"write\"\ncommand = \"exit 0\"\n";

/// A project with a guard, a home of its own (HOME, CLAUDE_CONFIG_DIR) and, with `bwrap`, a
/// stand-in `bwrap` on PATH (Claude Code's sandbox needs it on Linux).
fn claude_guarded() -> Project {
    let p = Project::with_user_toml(GUARD);
    std::fs::create_dir_all(p.base.join("claude")).expect("claude dir");
    p
}

fn sandbox_cli(p: &Project, bwrap: bool) -> assert_cmd::Command {
    let mut cmd = p.cli();
    let bin = p.base.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if bwrap {
        let fake = bin.join("bwrap");
        std::fs::write(&fake, "#!/bin/sh\nexit 0\n").expect("bwrap");
        let mut perms = std::fs::metadata(&fake).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&fake, perms).expect("chmod");
        let mut joined = std::ffi::OsString::from(bin.as_os_str());
        joined.push(":");
        joined.push(path);
        path = joined;
    }
    cmd.env("HOME", &p.base)
        .env("CLAUDE_CONFIG_DIR", p.base.join("claude"))
        .env("CODEX_HOME", p.base.join("codex"))
        .env("PATH", path);
    cmd
}

fn claude_doctor(p: &Project, bwrap: bool) -> (Option<i32>, Value) {
    let out = sandbox_cli(p, bwrap)
        .args(["doctor", "--json"])
        .output()
        .expect("doctor");
    let entries: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    // doctor gives Claude Code two entries: its registration and its shell's reach.
    let mut checks = Vec::new();
    for e in entries.as_array().into_iter().flatten() {
        if e["kind"] == "agent" && e["name"] == "Claude Code" {
            checks.extend(e["checks"].as_array().into_iter().flatten().cloned());
        }
    }
    if checks.is_empty() {
        return (out.status.code(), Value::Null);
    }
    (out.status.code(), serde_json::json!({ "checks": checks }))
}

fn checks_named<'v>(entry: &'v Value, name: &str) -> Vec<&'v Value> {
    entry["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["check"] == name)
        .collect()
}

#[test]
fn install_claude_turns_on_its_sandbox_with_ka_state_denied() {
    let p = claude_guarded();
    let out = sandbox_cli(&p, false)
        .args(["install", "claude", "--write"])
        .output()
        .expect("install");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = claude_settings(&p);
    assert_eq!(s["sandbox"]["enabled"], true, "{s}");
    assert_eq!(s["sandbox"]["allowUnsandboxedCommands"], false, "{s}");
    assert_eq!(s["sandbox"]["failIfUnavailable"], true, "{s}");
    let deny: Vec<&str> = s["sandbox"]["filesystem"]["denyWrite"]
        .as_array()
        .expect("denyWrite")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in [
        "~/config",
        "~/data",
        "/settings.json",
        "/settings.local.json",
        "~/claude/settings.json",
    ] {
        assert!(deny.contains(&want), "{want} not in {deny:?}");
    }
    // A second run changes nothing.
    let again = sandbox_cli(&p, false)
        .args(["install", "claude", "--write"])
        .output()
        .expect("install");
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("already installed"));
}

#[test]
fn doctor_reports_claude_protected_once_installed_and_exposed_before() {
    let p = claude_guarded();
    p.write(
        ".claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "", "hooks": [
            {"type": "command", "command": "ka-hooks claude"}]}]}})
        .to_string(),
    );
    let (_, claude) = claude_doctor(&p, true);
    let shell = checks_named(&claude, "shell");
    assert_eq!(shell.len(), 1, "{claude}");
    assert_eq!(shell[0]["state"], "warning", "{claude}");
    assert!(
        shell[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("exposed"),
        "{claude}"
    );
    sandbox_cli(&p, true)
        .args(["install", "claude", "--write"])
        .assert()
        .success();
    let (_, claude) = claude_doctor(&p, true);
    assert_eq!(checks_named(&claude, "shell")[0]["state"], "ok", "{claude}");
    // Without bubblewrap the sandbox cannot start on Linux.
    if cfg!(target_os = "linux") {
        let (_, claude) = claude_doctor(&p, false);
        let shell = checks_named(&claude, "shell");
        let message = shell[0]["message"].as_str().unwrap_or("");
        let bwrap_installed = message.is_empty() || shell[0]["state"] == "ok";
        assert!(
            bwrap_installed || message.contains("bubblewrap"),
            "{claude}"
        );
    }
}

#[test]
fn doctor_reports_disable_all_hooks_and_a_removed_entry() {
    let p = claude_guarded();
    sandbox_cli(&p, true)
        .args(["install", "claude", "--write"])
        .assert()
        .success();
    p.write(
        ".claude/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    let (code, claude) = claude_doctor(&p, true);
    assert_eq!(code, Some(1), "{claude}");
    let hooks = checks_named(&claude, "hooks");
    assert!(
        hooks.iter().any(|c| c["state"] == "failing"
            && c["message"]
                .as_str()
                .unwrap_or("")
                .contains("disableAllHooks")),
        "{claude}"
    );
    // The entry taken out of the settings instead.
    std::fs::remove_file(p.root.join(".claude/settings.local.json")).expect("rm");
    p.write(".claude/settings.json", r#"{"permissions": {}}"#);
    let (_, claude) = claude_doctor(&p, true);
    assert!(
        checks_named(&claude, "hooks")
            .iter()
            .any(|c| c["state"] == "warning"
                && c["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("no Claude Code settings file runs")),
        "{claude}"
    );
}

#[test]
fn the_session_start_says_when_the_models_shell_can_reach_ka() {
    let p = claude_guarded();
    let start = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "SessionStart",
                       "source": "startup"});
    let said = |p: &Project| {
        let out = sandbox_cli(p, true)
            .arg("claude")
            .write_stdin(start.to_string())
            .output()
            .expect("claude");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // Registered by hand, without the sandbox.
    p.write(
        ".claude/settings.json",
        &json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "ka-hooks claude"}]}]}})
        .to_string(),
    );
    let text = said(&p);
    assert!(
        text.contains("the model's shell can reach ka's state"),
        "{text}"
    );
    sandbox_cli(&p, true)
        .args(["install", "claude", "--write"])
        .assert()
        .success();
    let text = said(&p);
    assert!(!text.contains("can reach ka's state"), "{text}");
}

#[test]
fn install_says_how_to_sandbox_codex_and_gemini_and_that_copilot_has_none() {
    let p = claude_guarded();
    let out = sandbox_cli(&p, false)
        .args(["install", "codex"])
        .output()
        .expect("codex");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sandbox_mode = \"workspace-write\""),
        "{stderr}"
    );
    let out = sandbox_cli(&p, false)
        .args(["install", "gemini"])
        .output()
        .expect("gemini");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"sandbox\": true"), "{stderr}");
    let out = sandbox_cli(&p, false)
        .args(["install", "copilot"])
        .output()
        .expect("copilot");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has no sandbox for its shell tool"),
        "{stderr}"
    );
}
