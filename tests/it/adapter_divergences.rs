//! Where the real agents disagreed with what ka answered (the conformance suite, `conformance/`),
//! the answer each agent really acts on.

use crate::support;
use crate::support::agents::{agent_answer, Stdout};

use serde_json::{json, Value};
use support::{hook, Project};

/// `ka-hooks --trust <agent>` with `payload`: exit code, stdout as JSON (or null), stderr.
fn trusted_answer(p: &Project, agent: &str, payload: &Value) -> (Option<i32>, Value, String) {
    let mut cmd = p.cli();
    cmd.arg("--trust");
    agent_answer(cmd, agent, None, payload, Stdout::JsonOrNull)
}

fn project_guarded(command: &str) -> Project {
    let p = Project::new();
    p.project(&hook("g", "pre_tool_use", command, &[]));
    p
}

fn bash_call(p: &Project, event: &str, tool: &str, extra: Value) -> Value {
    let mut payload = json!({"session_id": "s", "turn_id": "1", "cwd": p.root,
        "hook_event_name": event, "tool_name": tool, "tool_input": {"command": "ls"}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        payload[k] = v.clone();
    }
    payload
}

#[test]
fn gemini_blocks_with_decision_deny_on_exit_0() {
    let p = project_guarded("echo 'no shell today' >&2; exit 2");
    let payload = bash_call(&p, "BeforeTool", "run_shell_command", json!({}));
    let (code, answer, _) = trusted_answer(&p, "gemini", &payload);
    assert_eq!(code, Some(0), "exit 2 shows Gemini's user a failed hook");
    assert_eq!(answer["decision"], "deny");
    assert!(answer["reason"]
        .as_str()
        .unwrap_or("")
        .contains("no shell today"));
}

#[test]
fn codex_halting_pre_tool_use_is_a_plain_deny() {
    let p = project_guarded(r#"echo '{"halt": "deploys are frozen"}'"#);
    let payload = bash_call(&p, "PreToolUse", "Bash", json!({"model": "m"}));
    let (code, answer, _) = trusted_answer(&p, "codex", &payload);
    assert_eq!(code, Some(0));
    assert!(
        answer.get("continue").is_none(),
        "Codex rejects it: {answer}"
    );
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(answer["systemMessage"]
        .as_str()
        .unwrap_or("")
        .contains("deploys are frozen"));
}

#[test]
fn claude_halt_reason_is_in_system_message() {
    let p = project_guarded(r#"echo '{"halt": "deploys are frozen"}'"#);
    let payload = bash_call(&p, "PreToolUse", "Bash", json!({}));
    let (_, answer, _) = trusted_answer(&p, "claude", &payload);
    assert_eq!(answer["continue"], false);
    assert!(answer["systemMessage"]
        .as_str()
        .unwrap_or("")
        .contains("deploys are frozen"));
}

#[test]
fn claude_ask_on_ka_files_is_a_deny_in_bypass_permissions_mode() {
    let p = project_guarded("exit 0");
    let write = |mode: &str| {
        json!({"session_id": "s", "cwd": p.root, "permission_mode": mode,
            "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": p.root.join(".ka/ka.toml"), "content": ""}})
    };
    let (code, answer, _) = trusted_answer(&p, "claude", &write("default"));
    assert_eq!(code, Some(0));
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    let (code, _, stderr) = trusted_answer(&p, "claude", &write("bypassPermissions"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("bypassPermissions"), "{stderr}");
}

#[test]
fn install_claude_registers_pre_tool_use_fail_closed_with_only_a_formatter() {
    let p = Project::new();
    p.project(&hook("fmt", "post_tool_use", "true", &[]));
    let out = p
        .cli()
        .args(["--trust", "install", "claude", "--write"])
        .output()
        .expect("install");
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(p.root.join(".claude/settings.json")).expect("settings");
    let settings: Value = serde_json::from_str(&text).expect("json");
    let pre = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(pre["command"], support::adapter_command("claude"));
    assert_eq!(pre["onFailure"], "block");
    assert!(settings["hooks"]["PostToolUse"][0]["hooks"][0]
        .get("onFailure")
        .is_none());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("subdirectory"), "{stdout}");
}
