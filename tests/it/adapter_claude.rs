//! `ka-hooks claude`: Claude Code's payloads in, Claude Code's contract out.

use crate::support;
use crate::support::agents::copy_example_guard;

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use support::{hook, Project};

/// A PreToolUse payload as Claude Code sends it (recorded shape), for `tool` and `input`.
fn recorded_pre_tool_use(p: &Project, tool: &str, input: Value) -> Value {
    json!({
        "session_id": "5f1c2a9e-1d3b-4c8e-9a57-0b6f2e4d7c11",
        "transcript_path": "/home/me/.claude/projects/demo/5f1c2a9e.jsonl",
        "cwd": p.root,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_01ABCDEF"
    })
}

fn post_tool_use(p: &Project, tool: &str, input: Value, response: Value) -> Value {
    json!({
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": p.root,
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_response": response
    })
}

struct Reply {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Reply {
    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout))
    }
}

fn claude_reply(p: &Project, payload: &Value, extra: &[&str]) -> Reply {
    let output = p
        .cli()
        .args(extra)
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks claude");
    Reply {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
    }
}

/// A project whose user layer holds `toml`, with the example guard copied in.
fn example_guarded(toml: &str) -> Project {
    let p = Project::with_user_toml(toml);
    copy_example_guard(&p);
    p
}

const GUARD: &str = r#"
[[hooks]]
name = "guard-writes"
event = "pre_tool_use"
tool = ["write", "edit"]
command = "sh examples/hooks/guard-writes.sh"
on_error = "block"
"#;

#[test]
fn recorded_write_outside_src_exits_2_with_the_guards_reason() {
    let p = example_guarded(GUARD);
    let payload = recorded_pre_tool_use(
        &p,
        "Write",
        json!({"file_path": p.root.join("README.md"), "content": "hello\n"}),
    );
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(2), "{}", reply.stderr);
    assert_eq!(
        reply.stderr,
        "guard-writes: README.md is outside the allowed roots (src,.ka) of the project; write inside them"
    );
    assert_eq!(reply.stdout, "");
}

#[test]
fn write_inside_src_exits_0_silently() {
    let p = example_guarded(GUARD);
    let payload = recorded_pre_tool_use(
        &p,
        "Write",
        json!({"file_path": p.root.join("src/a.rs"), "content": "x\n"}),
    );
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0));
    assert_eq!(reply.stdout, "");
}

#[test]
fn hooks_see_ka_names_and_claudes_own_fields() {
    let p = example_guarded(&hook(
        "dump",
        "pre_tool_use",
        "cat > payload.json",
        &[r#"tool = "write""#],
    ));
    let payload =
        recorded_pre_tool_use(&p, "Write", json!({"file_path": "/x/a.rs", "content": "c"}));
    assert_eq!(claude_reply(&p, &payload, &[]).code, Some(0));
    let seen: Value = serde_json::from_str(&p.read("payload.json").expect("dumped")).expect("json");
    assert_eq!(seen["event"], "pre_tool_use");
    assert_eq!(seen["tool"], "write");
    assert_eq!(
        seen["arguments"],
        json!({"path": "/x/a.rs", "content": "c"})
    );
    assert_eq!(seen["tool_name"], "Write");
    assert_eq!(seen["tool_input"]["file_path"], "/x/a.rs");
    assert_eq!(seen["session_id"], "5f1c2a9e-1d3b-4c8e-9a57-0b6f2e4d7c11");
}

#[test]
fn rewrite_without_decision_is_sent_whole_in_claudes_names_without_a_decision() {
    let p = example_guarded(&hook(
        "move",
        "pre_tool_use",
        r#"echo '{"updated_input": {"path": "/safe/a.rs"}}'"#,
        &[r#"tool = "write""#],
    ));
    let payload =
        recorded_pre_tool_use(&p, "Write", json!({"file_path": "/x/a.rs", "content": "c"}));
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0));
    let hso = &reply.json()["hookSpecificOutput"];
    assert_eq!(hso["hookEventName"], "PreToolUse");
    // Claude Code applies a bare `updatedInput` and runs its own permission flow: no forced ask.
    assert!(hso.get("permissionDecision").is_none(), "{hso}");
    // Claude Code replaces its input: the whole input, in its own names.
    assert_eq!(
        hso["updatedInput"],
        json!({"file_path": "/safe/a.rs", "content": "c"})
    );
}

#[test]
fn allow_with_rewrite_is_allow_with_the_whole_input() {
    let p = example_guarded(&hook(
        "fix",
        "pre_tool_use",
        r#"echo '{"updated_input": {"command": "ls -la"}, "decision": "allow", "reason": "safe listing"}'"#,
        &[r#"tool = "bash""#],
    ));
    let payload =
        recorded_pre_tool_use(&p, "Bash", json!({"command": "ls", "description": "list"}));
    let hso = claude_reply(&p, &payload, &[]).json()["hookSpecificOutput"].clone();
    assert_eq!(hso["permissionDecision"], "allow");
    assert_eq!(hso["permissionDecisionReason"], "safe listing");
    assert_eq!(
        hso["updatedInput"],
        json!({"command": "ls -la", "description": "list"})
    );
}

#[test]
fn ask_is_claudes_ask_with_the_reason() {
    let p = example_guarded(&hook(
        "ask",
        "pre_tool_use",
        r#"echo '{"decision": "ask", "reason": "deploys need a human"}'"#,
        &[],
    ));
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "make deploy"})),
        &[],
    );
    let hso = &reply.json()["hookSpecificOutput"];
    assert_eq!(hso["permissionDecision"], "ask");
    assert_eq!(hso["permissionDecisionReason"], "deploys need a human");
    assert!(hso.get("updatedInput").is_none());
}

#[test]
fn block_with_a_note_is_a_json_deny_with_a_system_message() {
    let p = example_guarded(&format!(
        "{}{}",
        hook(
            "noter",
            "pre_tool_use",
            r#"echo '{"note": "checked by noter"}'"#,
            &[]
        ),
        hook(
            "veto",
            "pre_tool_use",
            "echo 'no deploys on Friday' >&2; exit 2",
            &[]
        )
    ));
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "make deploy"})),
        &[],
    );
    assert_eq!(reply.code, Some(0));
    let answer = reply.json();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "no deploys on Friday"
    );
    assert_eq!(answer["systemMessage"], "checked by noter");
}

#[test]
fn post_tool_use_exit_2_becomes_decision_block_with_the_reason() {
    let p = example_guarded(&hook(
        "lint",
        "post_tool_use",
        "echo 'lint: 3 errors in src/a.rs' >&2; exit 2",
        &[],
    ));
    let payload = post_tool_use(
        &p,
        "Edit",
        json!({"file_path": "/x/src/a.rs", "old_string": "a", "new_string": "b"}),
        json!({"filePath": "/x/src/a.rs", "success": true}),
    );
    let answer = claude_reply(&p, &payload, &[]).json();
    assert_eq!(answer["decision"], "block");
    assert_eq!(answer["reason"], "lint: 3 errors in src/a.rs");
}

#[test]
fn post_tool_use_feedback_becomes_additional_context() {
    let p = example_guarded(&hook(
        "fmt",
        "post_tool_use",
        r#"echo '{"feedback": "run cargo fmt"}'"#,
        &[],
    ));
    let payload = post_tool_use(&p, "Write", json!({"file_path": "/x/a.rs"}), json!({}));
    let answer = claude_reply(&p, &payload, &[]).json();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert_eq!(
        answer["hookSpecificOutput"]["additionalContext"],
        "run cargo fmt"
    );
    assert!(answer.get("decision").is_none());
}

#[test]
fn post_tool_use_failure_runs_post_tool_use_hooks_with_is_error_then_its_own() {
    let p = example_guarded(&format!(
        "{}{}",
        hook("dump", "post_tool_use", "cat > payload.json", &[]),
        hook(
            "failed",
            "PostToolUseFailure",
            "echo 'retry with --verbose' >&2; exit 2",
            &[]
        )
    ));
    let payload = json!({
        "session_id": "s", "cwd": p.root, "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash", "tool_input": {"command": "false"}, "error": "exit status 1"
    });
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0));
    let seen: Value = serde_json::from_str(&p.read("payload.json").expect("dumped")).expect("json");
    assert_eq!(seen["event"], "post_tool_use_failure");
    assert_eq!(seen["is_error"], true);
    assert_eq!(seen["result"], "exit status 1");
    // PostToolUseFailure takes no decision: the failure hook's stderr reaches the model as
    // additional context.
    let answer = reply.json();
    assert_eq!(
        answer["hookSpecificOutput"]["additionalContext"],
        "retry with --verbose"
    );
    assert!(answer.get("decision").is_none());
}

#[test]
fn mode_switch_is_said_in_the_system_message() {
    let p = example_guarded(&hook(
        "plan",
        "post_tool_use",
        r#"echo '{"mode": "plan"}'"#,
        &[],
    ));
    let payload = post_tool_use(&p, "Bash", json!({"command": "cargo test"}), json!({}));
    let answer = claude_reply(&p, &payload, &[]).json();
    let message = answer["systemMessage"].as_str().expect("a system message");
    assert!(message.contains("switch to `plan` mode"), "{message}");
    assert!(
        message.contains("Claude Code hooks cannot switch"),
        "{message}"
    );
}

#[test]
fn prompt_block_exits_2_with_the_reason() {
    let p = example_guarded(&hook(
        "guard",
        "user_prompt_submit",
        "echo 'no secrets in prompts' >&2; exit 2",
        &[],
    ));
    let payload = json!({
        "session_id": "s", "cwd": p.root, "hook_event_name": "UserPromptSubmit",
        "prompt": "my password is hunter2"
    });
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(2));
    assert_eq!(reply.stderr, "no secrets in prompts");
}

#[test]
fn stop_exit_2_keeps_claude_going_with_the_reason() {
    let p = example_guarded(&hook("veto", "stop", "echo 'keep going' >&2; exit 2", &[]));
    let payload = json!({
        "session_id": "s", "cwd": p.root, "hook_event_name": "Stop", "stop_hook_active": false
    });
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0));
    assert_eq!(
        reply.json(),
        json!({"decision": "block", "reason": "keep going"})
    );
}

#[test]
fn broken_guard_with_on_error_block_still_blocks() {
    let p = example_guarded(&hook(
        "broken",
        "pre_tool_use",
        "exit 7",
        &[r#"on_error = "block""#],
    ));
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "ls"})),
        &[],
    );
    assert_eq!(reply.code, Some(2));
    assert!(
        reply.stderr.contains("hook `broken` failed (exit 7)"),
        "{}",
        reply.stderr
    );
}

#[test]
fn broken_hook_with_on_error_ignore_fails_open_and_says_so() {
    let p = example_guarded(&hook(
        "broken",
        "pre_tool_use",
        "exit 7",
        &[r#"on_error = "ignore""#],
    ));
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "ls"})),
        &[],
    );
    assert_eq!(reply.code, Some(0));
    let message = reply.json()["systemMessage"].clone();
    assert_eq!(
        message,
        "hook `broken` failed (exit 7); on_error = \"ignore\""
    );
}

/// A user file that never loaded (so no last good version of it is kept) is skipped: the other
/// layers run, and the answer says the file's guards do not hold (this used to
/// fail the whole load open).
#[test]
fn config_error_in_a_user_file_that_never_loaded_is_said_in_a_system_message() {
    let p = example_guarded("[[hooks]]\nevent = \"pre_tool_usee\"\ncommand = \"exit 2\"\n");
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "ls"})),
        &[],
    );
    assert_eq!(reply.code, Some(0));
    let message = reply.json()["systemMessage"]
        .as_str()
        .expect("a system message")
        .to_owned();
    assert!(message.contains("does not load"), "{message}");
    assert!(message.contains("line 2"), "{message}");
    assert!(message.contains("none of its guards hold"), "{message}");
}

#[test]
fn fail_closed_blocks_on_a_config_error() {
    let p = example_guarded("[[hooks]]\nevent = \"pre_tool_usee\"\ncommand = \"exit 2\"\n");
    let payload = recorded_pre_tool_use(&p, "Bash", json!({"command": "ls"}));
    let output = p
        .cli()
        .args(["claude", "--fail-closed"])
        .write_stdin(payload.to_string())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--fail-closed"));
}

/// This used to fail open: a model that could make the payload unreadable
/// would switch every guard off (see tests/payloads.rs).
#[test]
fn unreadable_payload_fails_closed() {
    let p = example_guarded(GUARD);
    let output = p
        .cli()
        .arg("claude")
        .write_stdin("not json")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not valid JSON"));
}

#[test]
fn events_without_a_ka_event_are_observed_and_exit_0() {
    let p = example_guarded(
        r#"
[[hooks]]
name = "config-watch"
event = "observe"
matcher = "^ConfigChange$"
command = '''grep -q '"agent_event":"ConfigChange"' && echo '{"systemMessage":"config changed"}' '''
"#,
    );
    let payload = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "ConfigChange",
                         "source": "user_settings"});
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0), "{}", reply.stderr);
    assert_eq!(reply.json()["systemMessage"], "config changed");
    let payload = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "SomeNewEvent"});
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0), "{}", reply.stderr);
    assert_eq!(reply.stdout, "", "the matcher selects ConfigChange only");
}

#[test]
fn worktree_create_fails_with_a_reason_instead_of_printing_no_path() {
    let p = example_guarded("");
    let payload = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "WorktreeCreate",
                         "name": "feature"});
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(2));
    assert!(reply.stderr.contains("cannot do"), "{}", reply.stderr);
}

#[test]
fn untrusted_project_layer_is_reported_to_the_user() {
    let p = Project::new();
    p.write(".ka/ka.toml", GUARD);
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "ls"})),
        &[],
    );
    assert_eq!(reply.code, Some(0));
    let message = reply.json()["systemMessage"]
        .as_str()
        .expect("a system message")
        .to_owned();
    assert!(message.contains("skipped the project layer"), "{message}");
    assert!(message.contains("trust"), "{message}");
}

#[test]
fn payload_cwd_finds_the_project_from_anywhere() {
    let p = Project::new();
    p.write(".ka/ka.toml", GUARD);
    p.write(
        "examples/hooks/guard-writes.sh",
        &fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hooks/guard-writes.sh"),
        )
        .expect("guard"),
    );
    let payload = recorded_pre_tool_use(
        &p,
        "Write",
        json!({"file_path": "/etc/passwd", "content": ""}),
    );
    let output = p
        .cli()
        .current_dir(&p.base)
        .args(["--trust", "claude"])
        .write_stdin(payload.to_string())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/etc/passwd is outside"));
}

#[test]
fn a_claude_style_guard_after_a_rewrite_judges_the_rewritten_tool_input() {
    // The scrubber patches ka's `arguments`; the guard, written for Claude Code, reads
    // `tool_input`. It must see the scrubbed command, not the original.
    let p = example_guarded(&format!(
        "{}{}",
        hook(
            "scrub",
            "pre_tool_use",
            r#"echo '{"updated_input":{"command":"echo [scrubbed]"}}'"#,
            &[],
        ),
        hook(
            "claude-guard",
            "pre_tool_use",
            r#"python3 -c 'import json,sys; c=json.load(sys.stdin)["tool_input"]["command"]; sys.exit(2 if "AKIA" in c else 0)' || { echo "secret in tool_input" >&2; exit 2; }"#,
            &[],
        )
    ));
    let reply = claude_reply(
        &p,
        &recorded_pre_tool_use(&p, "Bash", json!({"command": "echo AKIAABCDEFGHIJKLMNOP"})),
        &[],
    );
    assert_eq!(reply.code, Some(0), "stderr: {}", reply.stderr);
    let input = &reply.json()["hookSpecificOutput"]["updatedInput"];
    assert_eq!(input["command"], "echo [scrubbed]");
}

#[test]
fn claude_post_tool_use_block_comes_back_as_a_block_not_context() {
    let p = example_guarded(&hook(
        "clippy",
        "PostToolUse",
        r#"echo '{"decision":"block","reason":"clippy: 2 warnings"}'"#,
        &[],
    ));
    let payload = post_tool_use(&p, "Bash", json!({"command": "cargo clippy"}), json!({}));
    let answer = claude_reply(&p, &payload, &[]).json();
    assert_eq!(
        answer,
        json!({"decision": "block", "reason": "clippy: 2 warnings"})
    );
}

#[test]
fn halt_context_and_a_long_message_come_back_in_claudes_fields() {
    let long = "m".repeat(5000);
    let p = example_guarded(&format!(
        "{}{}",
        hook(
            "ctx",
            "session_start",
            r#"echo '{"context":"on branch main"}'"#,
            &[]
        ),
        hook(
            "halt",
            "session_start",
            &format!(
                r#"echo '{{"continue":false,"stopReason":"quota reached","systemMessage":"{long}"}}'"#
            ),
            &[]
        )
    ));
    let payload = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "SessionStart",
                         "source": "startup"});
    let answer = claude_reply(&p, &payload, &[]).json();
    assert_eq!(answer["continue"], false);
    assert_eq!(answer["stopReason"], "quota reached");
    assert_eq!(
        answer["hookSpecificOutput"]["additionalContext"],
        "on branch main"
    );
    // Claude Code shows no stopReason in `-p` output, a systemMessage it does: the halt's
    // reason comes first there.
    assert_eq!(answer["systemMessage"], format!("quota reached\n{long}"));
}

#[test]
fn permission_request_allow_with_a_rewrite_and_deny() {
    let p = example_guarded(&hook(
        "perm",
        "PermissionRequest",
        r#"if grep -q 'rm -rf'; then echo 'never' >&2; exit 2; fi; echo '{"decision":"allow","updated_input":{"command":"ls -la"}}'"#,
        &[],
    ));
    let request = |command: &str| {
        json!({"session_id": "s", "cwd": p.root, "hook_event_name": "PermissionRequest",
               "tool_name": "Bash", "tool_input": {"command": command}})
    };
    let answer = claude_reply(&p, &request("ls"), &[]).json();
    assert_eq!(
        answer["hookSpecificOutput"]["decision"],
        json!({"behavior": "allow", "updatedInput": {"command": "ls -la"}})
    );
    let reply = claude_reply(&p, &request("rm -rf /"), &[]);
    assert_eq!(reply.code, Some(0));
    assert_eq!(
        reply.json()["hookSpecificOutput"]["decision"],
        json!({"behavior": "deny", "message": "never"})
    );
}

#[test]
fn stop_failure_cannot_keep_going_and_says_so() {
    let p = example_guarded(&hook("veto", "stop", "echo 'keep going' >&2; exit 2", &[]));
    let payload = json!({
        "session_id": "s", "cwd": p.root, "hook_event_name": "StopFailure",
        "error": "rate_limit"
    });
    let answer = claude_reply(&p, &payload, &[]).json();
    assert!(answer.get("decision").is_none(), "{answer}");
    assert!(answer["systemMessage"]
        .as_str()
        .is_some_and(|m| m.contains("ended on an error")));
}

#[test]
fn permission_request_deny_with_interrupt_stops_claude() {
    let p = example_guarded(
        r#"
[[hooks]]
name = "stop-on-rm"
event = "permission_request"
tool = "bash"
command = '''echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no rm here","interrupt":true}}}' '''
"#,
    );
    let payload = json!({"session_id": "s", "cwd": p.root, "hook_event_name": "PermissionRequest",
                         "tool_name": "Bash", "tool_input": {"command": "rm -rf build"}});
    let reply = claude_reply(&p, &payload, &[]);
    assert_eq!(reply.code, Some(0), "{}", reply.stderr);
    let answer = reply.json();
    let decision = &answer["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], "deny", "{answer}");
    assert_eq!(decision["interrupt"], true, "{answer}");
    assert!(
        decision["message"]
            .as_str()
            .is_some_and(|m| m.contains("no rm here")),
        "{answer}"
    );
    assert_eq!(answer["continue"], false, "{answer}");
}
