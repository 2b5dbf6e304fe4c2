//! `ka-hooks antigravity` (experimental): agy's payloads, named by `--event`, run the ka hooks;
//! `PreToolUse` always answers with a decision (a missing one is a denial in agy).

use crate::support;
use crate::support::agents::{rm_rf_rewriter, DONE_FIRST, SRC_ONLY, WELCOME};

use predicates::prelude::*;
use serde_json::{json, Value};
use support::{hook, Project};

/// A project whose user layer blocks writes outside `src/`, rewrites `rm -rf` to `rm -ri` (keeping
/// the other arguments), keeps the turn going until `done.txt` exists, and gives prompt context.
fn antigravity_project() -> Project {
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
        rm_rf_rewriter(true),
        &["tool = [\"bash\"]"],
    ));
    toml.push_str(&hook("tests-first", "stop", DONE_FIRST, &[]));
    toml.push_str(&hook("welcome", "user_prompt_submit", WELCOME, &[]));
    Project::with_user_toml(&toml)
}

fn agy(p: &Project, event: &str, payload: &Value) -> (Option<i32>, Value) {
    let output = p
        .cli()
        .args(["antigravity", "--event", event])
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks antigravity");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
    };
    (output.status.code(), answer)
}

fn tool_call(p: &Project, name: &str, args: Value) -> Value {
    json!({"conversationId": "c1", "workspacePaths": [p.root], "transcriptPath": "/tmp/t",
           "stepIdx": 3, "toolCall": {"name": name, "args": args}})
}

#[test]
fn an_unguarded_call_is_allowed_explicitly() {
    let p = antigravity_project();
    let (code, answer) = agy(
        &p,
        "PreToolUse",
        &tool_call(&p, "view_file", json!({"AbsolutePath": "/etc/hosts"})),
    );
    assert_eq!(code, Some(0));
    assert_eq!(answer, json!({"decision": "allow"}));
}

#[test]
fn a_write_outside_src_is_denied() {
    let p = antigravity_project();
    let (code, answer) = agy(
        &p,
        "PreToolUse",
        &tool_call(
            &p,
            "write_to_file",
            json!({"TargetFile": p.root.join("README.md"), "CodeContent": "x"}),
        ),
    );
    assert_eq!(code, Some(0));
    assert_eq!(answer["decision"], "deny");
    assert!(answer["reason"]
        .as_str()
        .is_some_and(|r| r.contains("outside src/")));
}

#[test]
fn a_rewrite_is_an_overwrite() {
    let p = antigravity_project();
    let (_, answer) = agy(
        &p,
        "PreToolUse",
        &tool_call(
            &p,
            "run_command",
            json!({"CommandLine": "rm -rf build", "Cwd": p.root}),
        ),
    );
    assert_eq!(answer["decision"], "allow");
    assert_eq!(answer["overwrite"]["CommandLine"], "rm -ri build");
}

#[test]
fn post_invocation_keeps_going_with_force_continue() {
    let p = antigravity_project();
    let payload = json!({"conversationId": "c2", "workspacePaths": [p.root], "invocationNum": 1});
    let (_, answer) = agy(&p, "PostInvocation", &payload);
    assert_eq!(answer["terminationBehavior"], "force_continue");
    assert_eq!(
        answer["injectSteps"][0]["ephemeralMessage"],
        "write done.txt first"
    );
}

#[test]
fn pre_invocation_context_is_an_injected_step() {
    let p = antigravity_project();
    let payload = json!({"conversationId": "c3", "workspacePaths": [p.root], "invocationNum": 0});
    let (_, answer) = agy(&p, "PreInvocation", &payload);
    assert_eq!(
        answer["injectSteps"][0]["ephemeralMessage"],
        "the tests live in tests/"
    );
}

/// An unreadable payload denies the call in agy's own terms (a decision on stdout).
#[test]
fn an_unreadable_payload_is_denied() {
    let p = antigravity_project();
    let output = p
        .cli()
        .args(["antigravity", "--event", "PreToolUse"])
        .write_stdin("{\"toolCall\": ")
        .output()
        .expect("agy");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("a decision");
    assert_eq!(answer["decision"], "deny");
}

#[test]
fn help_says_experimental() {
    Project::new()
        .cli()
        .args(["antigravity", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("EXPERIMENTAL"));
}
