//! `ka-hooks copilot`: GitHub Copilot's payloads (camelCase and the VS Code compatible
//! PascalCase format) run the ka hooks, and the answer is in Copilot's fields.

use crate::support;
use crate::support::agents::{agent_answer, Stdout};
use crate::support::agents::{rm_rf_rewriter, DONE_FIRST, NO_SECRET_PROMPTS, SRC_ONLY, WELCOME};

use serde_json::{json, Value};
use support::{hook, Project};

/// A project whose user layer blocks writes outside `src/`, rewrites `rm -rf` to `rm -ri`, keeps
/// the turn going once, blocks prompts that mention a secret, and gives session context.
fn copilot_project() -> Project {
    let mut toml = String::new();
    toml.push_str(&hook(
        "src-only",
        "pre_tool_use",
        SRC_ONLY,
        &["tool = [\"write\", \"edit\"]"],
    ));
    toml.push_str(&hook(
        "no-rm-rf",
        "pre_tool_use",
        rm_rf_rewriter(false),
        &["tool = [\"bash\"]"],
    ));
    toml.push_str(&hook("tests-first", "stop", DONE_FIRST, &[]));
    toml.push_str(&hook(
        "no-secret-prompts",
        "user_prompt_submit",
        NO_SECRET_PROMPTS,
        &[],
    ));
    toml.push_str(&hook("welcome", "session_start", WELCOME, &[]));
    Project::with_user_toml(&toml)
}

/// `ka-hooks copilot [--event NAME]` on `payload`: (exit code, stdout JSON or Null, stderr).
fn copilot_answer(
    p: &Project,
    event: Option<&str>,
    payload: &Value,
) -> (Option<i32>, Value, String) {
    agent_answer(p.cli(), "copilot", event, payload, Stdout::Json)
}

fn camel(p: &Project, tool: &str, args: Value) -> Value {
    json!({"sessionId": "s1", "timestamp": 1_767_225_600_000_u64, "cwd": p.root,
           "toolName": tool, "toolArgs": args})
}

#[test]
fn a_create_outside_src_is_denied_with_the_reason() {
    let p = copilot_project();
    // The CLI sends `toolArgs` as a JSON string; `file_text` is the content.
    let args = json!({"path": p.root.join("README.md"), "file_text": "x"}).to_string();
    let (code, answer, _) =
        copilot_answer(&p, Some("preToolUse"), &camel(&p, "create", json!(args)));
    assert_eq!(code, Some(0));
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    assert!(answer["permissionDecisionReason"]
        .as_str()
        .is_some_and(|r| r.contains("is outside src/")));
    // Inside src/ the same call is not denied.
    let args = json!({"path": p.root.join("src/a.rs"), "file_text": "x"});
    let (code, answer, _) = copilot_answer(&p, Some("preToolUse"), &camel(&p, "create", args));
    assert_eq!(code, Some(0));
    assert_ne!(answer["permissionDecision"], "deny", "{answer}");
}

#[test]
fn an_edit_and_a_view_are_read_as_ka_tools() {
    let p = copilot_project();
    let (_, answer, _) = copilot_answer(
        &p,
        Some("preToolUse"),
        &camel(
            &p,
            "str_replace_editor",
            json!({"path": "docs/x.md", "old_str": "a", "new_str": "b"}),
        ),
    );
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    // `view` is a read: the write guard does not run.
    let (_, answer, _) = copilot_answer(
        &p,
        Some("preToolUse"),
        &camel(&p, "view", json!({"path": "x"})),
    );
    assert_eq!(answer, Value::Null);
}

#[test]
fn a_rewrite_is_sent_as_modified_args() {
    let p = copilot_project();
    let (code, answer, _) = copilot_answer(
        &p,
        Some("preToolUse"),
        &camel(
            &p,
            "bash",
            json!({"command": "rm -rf build", "description": "clean"}),
        ),
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        answer["modifiedArgs"],
        json!({"command": "rm -ri build", "description": "clean"})
    );
}

#[test]
fn the_vscode_format_gets_claude_fields_too() {
    let p = copilot_project();
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s1",
        "timestamp": "2026-12-01T10:00:00.000Z", "cwd": p.root, "tool_name": "Write",
        "tool_input": {"file_path": "README.md", "content": "x"}});
    let (code, answer, _) = copilot_answer(&p, None, &payload);
    assert_eq!(code, Some(0));
    assert_eq!(answer["permissionDecision"], "deny");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
}

#[test]
fn agent_stop_keeps_going_with_decision_block() {
    let p = copilot_project();
    let payload = json!({"sessionId": "s2", "timestamp": 1, "cwd": p.root,
        "transcriptPath": "/tmp/t", "stopReason": "end_turn", "stop_hook_active": false});
    let (code, answer, _) = copilot_answer(&p, Some("agentStop"), &payload);
    assert_eq!(code, Some(0));
    assert_eq!(answer["decision"], "block");
    assert_eq!(answer["reason"], "write done.txt first");
    p.write("done.txt", "");
    let (_, answer, _) = copilot_answer(&p, Some("agentStop"), &payload);
    assert_eq!(answer, Value::Null);
}

#[test]
fn session_start_context_is_additional_context() {
    let p = copilot_project();
    let payload = json!({"sessionId": "s3", "timestamp": 1, "cwd": p.root, "source": "startup"});
    let (_, answer, _) = copilot_answer(&p, Some("sessionStart"), &payload);
    assert_eq!(answer["additionalContext"], "the tests live in tests/");
}

/// Copilot CLI 1.0.102 honours `decision: "block"` + `reason` on userPromptSubmitted: the
/// prompt is blocked in Copilot's own form (exit 0), not an exit 2 that only warns.
#[test]
fn a_prompt_block_is_copilots_decision_block() {
    let p = copilot_project();
    let payload = json!({"sessionId": "s4", "timestamp": 1, "cwd": p.root,
        "prompt": "the key is SECRET"});
    let (code, answer, _) = copilot_answer(&p, Some("userPromptSubmitted"), &payload);
    assert_eq!(code, Some(0));
    assert_eq!(answer["decision"], "block");
    let reason = answer["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("prompts must not carry secrets"),
        "{answer}"
    );
}

/// A camelCase payload names no event: without `--event` the call cannot be judged, so it is
/// denied (exit 2), never let through.
#[test]
fn a_payload_without_an_event_fails_closed() {
    let p = copilot_project();
    let (code, _, stderr) = copilot_answer(&p, None, &camel(&p, "bash", json!({"command": "ls"})));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--event"), "{stderr}");
    // A command line and payload that disagree are refused too.
    let payload = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": p.root});
    let (code, _, _) = copilot_answer(&p, Some("PreToolUse"), &payload);
    assert_eq!(code, Some(2));
}

/// `toolArgs` that cannot be read as an object never let a tool call through.
#[test]
fn unreadable_tool_args_fail_closed() {
    let p = copilot_project();
    let (code, _, _) = copilot_answer(
        &p,
        Some("preToolUse"),
        &camel(&p, "create", json!("{not json")),
    );
    assert_eq!(code, Some(2));
}

/// VS Code's Local harness reads the same `.github/hooks` entries and sends `hookEventName`,
/// `sessionId` and its own tool names: a `create_file` outside src/ is a write, and is denied in
/// the field VS Code reads.
#[test]
fn the_vscode_local_harness_payload_is_guarded() {
    let p = copilot_project();
    let payload = json!({"hookEventName": "PreToolUse", "sessionId": "v1",
        "timestamp": "2026-12-01T10:00:00.000Z", "cwd": p.root, "transcript_path": "/tmp/t",
        "tool_name": "create_file", "tool_input": {"filePath": "README.md", "content": "x"},
        "tool_use_id": "t1"});
    let (code, answer, _) = copilot_answer(&p, None, &payload);
    assert_eq!(code, Some(0));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    // Its terminal tool is a shell: a rewrite goes back under the tool's own argument names.
    let payload = json!({"hookEventName": "PreToolUse", "sessionId": "v1", "cwd": p.root,
        "tool_name": "runTerminalCommand", "tool_input": {"command": "rm -rf build"}});
    let (_, answer, _) = copilot_answer(&p, None, &payload);
    assert_eq!(
        answer["hookSpecificOutput"]["updatedInput"],
        json!({"command": "rm -ri build"})
    );
}
