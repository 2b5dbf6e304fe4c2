//! A failed guard never pre-approves. When any hook of a `pre_tool_use`
//! dispatch failed (error, timeout, cannot start, voided output), an `allow` from the others is
//! not a pre-approval: the call goes to the agent's normal permission flow, and the outcome names
//! the failed guard.

use crate::support;
use crate::support::hooks_project;

use ka_hooks::action::Decision;
use ka_hooks::outcome::Status;
use ka_hooks::Event;
use serde_json::{json, Value};
use support::{hook, report};

/// A guard that fails open, written out: without it a guard's failure blocks the call, and
/// these tests are about what an allow is worth next to a failed guard that did not block.
const IGNORE: &str = r#"on_error = "ignore""#;

fn allow() -> String {
    hook(
        "approver",
        "pre_tool_use",
        r#"echo '{"decision":"allow","reason":"looks safe"}'"#,
        &[],
    )
}

/// The hooks named in the outcome's words for the user.
fn said_to_user(outcome: &ka_hooks::Outcome) -> String {
    outcome.messages.join("\n")
}

/// Attack: with `on_error = "ignore"`, an allow followed by a guard that crashes
/// (exit 3) read as "allow": the permission prompt was skipped although a guard failed.
#[test]
fn an_allow_then_a_crashed_guard_is_not_a_pre_approval() {
    let p = hooks_project(&[allow(), hook("guard", "pre_tool_use", "exit 3", &[IGNORE])]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "rm -rf ~"}));
    assert_eq!(report(&outcome, "guard").status, Status::Error);
    assert!(
        !outcome.blocked(),
        "on_error = ignore fails open, to the normal flow"
    );
    assert_ne!(outcome.decision(), Some(Decision::Allow), "{outcome:#?}");
    let said = said_to_user(&outcome);
    assert!(
        said.contains("`guard`") && said.contains("pre-approv"),
        "{said}"
    );
}

/// The same, the guard first: the order of the hooks does not matter.
#[test]
fn a_crashed_guard_then_an_allow_is_not_a_pre_approval() {
    let p = hooks_project(&[hook("guard", "pre_tool_use", "exit 3", &[IGNORE]), allow()]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_ne!(outcome.decision(), Some(Decision::Allow), "{outcome:#?}");
    assert!(said_to_user(&outcome).contains("`guard`"));
}

/// Attack: an allow, then a guard whose deny is voided by a stray key (`feedback` does not
/// belong to pre_tool_use): the deny was dropped and the allow pre-approved the call.
#[test]
fn an_allow_then_a_voided_deny_is_not_a_pre_approval() {
    let p = hooks_project(&[
        allow(),
        hook(
            "guard",
            "pre_tool_use",
            r#"echo '{"decision":"deny","reason":"no rm","feedback":"x"}'"#,
            &[IGNORE],
        ),
    ]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "rm -rf ~"}));
    assert_eq!(report(&outcome, "guard").status, Status::Error);
    assert_ne!(outcome.decision(), Some(Decision::Allow), "{outcome:#?}");
    assert!(said_to_user(&outcome).contains("`guard`"));
}

/// A guard that cannot start (its script is missing) is a failed guard too.
#[test]
fn an_allow_then_a_guard_that_cannot_start_is_not_a_pre_approval() {
    let p = hooks_project(&[
        allow(),
        hook("guard", "pre_tool_use", "./no-such-guard.sh", &[]),
    ]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(report(&outcome, "guard").status, Status::Error);
    assert_ne!(outcome.decision(), Some(Decision::Allow), "{outcome:#?}");
}

/// Control: with every guard healthy, the allow stays a pre-approval.
#[test]
fn an_allow_with_healthy_guards_stays_a_pre_approval() {
    let p = hooks_project(&[allow(), hook("guard", "pre_tool_use", "exit 0", &[])]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(outcome.decision(), Some(Decision::Allow), "{outcome:#?}");
}

/// The adapters then do not answer `allow`: Claude Code's own permission rules decide.
#[test]
fn the_claude_adapter_does_not_answer_allow_after_a_failed_guard() {
    let p = hooks_project(&[allow(), hook("guard", "pre_tool_use", "exit 3", &[IGNORE])]);
    let payload = json!({
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": p.root,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf ~"},
    });
    let output = p
        .cli()
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks claude");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    assert_ne!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{stdout}"
    );
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("`guard`"), "{stdout}");
}
