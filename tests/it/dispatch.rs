//! The runner and the dispatcher end to end, with real `sh` hooks.
//!
//! Every test has its own scratch project (config and data dirs included), so they run in
//! parallel. Hooks live in the user layer, which needs no trust.

use crate::support;
use crate::support::hooks_project;

use std::path::Path;
use std::time::{Duration, Instant};

use ka_hooks::action::Decision;
use ka_hooks::config::Config;
use ka_hooks::dispatch::Request;
use ka_hooks::outcome::{Outcome, Status};
use ka_hooks::Event;
use serde_json::{json, Value};
use support::{
    eventually, group_gone, has_diagnostic, hook, object, pid_in, process_gone, report, Project,
};

/// A project with one hook.
fn one_hook(name: &str, event: &str, command: &str, extra: &[&str]) -> Project {
    hooks_project(&[hook(name, event, command, extra)])
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

/// The patched arguments as one JSON value.
fn updated(outcome: &Outcome) -> Option<Value> {
    outcome.updated_input.clone().map(Value::Object)
}

fn stop_payload() -> Value {
    json!({ "stop": "done" })
}

// ---------------------------------------------------------------------------------------------
// Statuses (§4)
// ---------------------------------------------------------------------------------------------

#[test]
fn exit_zero_is_ok_and_its_action_applies() {
    let p = one_hook("greeter", "stop", r#"echo '{"note":"hello"}'"#, &[]);
    let outcome = p.event(Event::Stop, stop_payload());
    let r = report(&outcome, "greeter");
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.signal, None);
    assert!(!r.timed_out);
    assert_eq!(r.error, None);
    assert!(r.action.applied);
    assert_eq!(outcome.notes, ["hello"]);
    assert!(!outcome.blocked());
}

#[test]
fn exit_two_blocks_with_stderr_as_the_reason() {
    let p = one_hook(
        "veto",
        "pre_tool_use",
        "echo 'no writes to README.md' >&2; exit 2",
        &[],
    );
    let outcome = p.tool_call(Event::PreToolUse, "write", json!({"path": "README.md"}));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("no writes to README.md"));
    let r = report(&outcome, "veto");
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.exit_code, Some(2));
    assert_eq!(r.stderr, "no writes to README.md\n");
    assert_eq!(r.error, None);
}

#[test]
fn exit_two_with_empty_stderr_blocks_with_a_default_reason() {
    let p = one_hook("quiet", "pre_tool_use", "exit 2", &[]);
    let outcome = p.tool_call(Event::PreToolUse, "write", json!({"path": "a"}));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("blocked by hook quiet"));
    assert_eq!(report(&outcome, "quiet").status, Status::Blocked);
}

#[test]
fn exit_three_with_on_error_ignore_is_an_error_and_the_call_proceeds() {
    let p = one_hook(
        "broken",
        "pre_tool_use",
        "echo oops >&2; exit 3",
        &[r#"on_error = "ignore""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    let r = report(&outcome, "broken");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.exit_code, Some(3));
    assert_eq!(r.error.as_deref(), Some("exit 3"));
    assert_eq!(r.stderr, "oops\n");
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), None);
    assert!(outcome.any_hook_failed());
    // The failure line carries the hook's own word on why.
    assert!(has_diagnostic(
        &outcome,
        &["`broken`", "exit 3", "stderr: oops"]
    ));
}

#[test]
fn death_by_signal_is_an_error_naming_the_signal() {
    let p = one_hook(
        "suicidal",
        "pre_tool_use",
        "kill -9 $$",
        &[r#"on_error = "ignore""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    let r = report(&outcome, "suicidal");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.exit_code, None);
    assert_eq!(r.signal.as_deref(), Some("SIGKILL"));
    assert!(!r.timed_out);
    assert_eq!(r.error.as_deref(), Some("killed by SIGKILL"));
    assert!(!outcome.blocked());
}

#[test]
fn timeout_is_an_error_reported_as_timed_out() {
    let p = one_hook(
        "slow",
        "pre_tool_use",
        "sleep 1000",
        &["timeout = 1", r#"on_error = "ignore""#],
    );
    let config = p.load();
    let started = Instant::now();
    let outcome = config.dispatch(Request::tool_call(
        Event::PreToolUse,
        "bash",
        object(bash("ls")),
    ));
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    let r = report(&outcome, "slow");
    assert_eq!(r.status, Status::Error);
    assert!(r.timed_out);
    assert_eq!(r.signal, None, "our own kill is not the hook's signal");
    assert_eq!(r.error.as_deref(), Some("timed out after 1s"));
    assert!(!outcome.blocked());
    assert!(has_diagnostic(&outcome, &["`slow`", "timed out after 1s"]));
}

#[test]
fn missing_command_is_an_error_with_exit_127() {
    let p = one_hook("typo", "pre_tool_use", "definitely-not-a-command-xyz", &[]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    let r = report(&outcome, "typo");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.exit_code, Some(127));
    assert!(!r.stderr.is_empty(), "sh says what is missing");
    // A guard without `on_error` fails closed, and the reason says what to fix.
    assert!(outcome.blocked(), "{outcome:#?}");
    let reason = outcome.reason().unwrap_or_default().to_owned();
    for part in [
        "`typo`",
        "command not found",
        "check the path",
        "definitely-not-a-command-xyz",
    ] {
        assert!(reason.contains(part), "lacks {part:?}: {reason}");
    }
}

#[test]
fn non_executable_script_is_an_error_with_exit_126() {
    let p = one_hook("noexec", "pre_tool_use", "./hooks/guard.sh", &[]);
    // Written without any execute bit: not even root may exec it.
    p.write("hooks/guard.sh", "#!/bin/sh\necho ran\n");
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    let r = report(&outcome, "noexec");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.exit_code, Some(126));
    assert!(outcome.blocked(), "{outcome:#?}");
    let reason = outcome.reason().unwrap_or_default().to_owned();
    for part in [
        "`noexec`",
        "not executable",
        "chmod +x",
        "Permission denied",
    ] {
        assert!(reason.contains(part), "lacks {part:?}: {reason}");
    }
}

/// A guard that writes where it ran and blocks (`extra` lines added), loaded with no project,
/// dispatched a `bash` call whose payload `cwd` (made from the scratch dir) cannot be entered:
/// the guard must run in a fallback folder, say so, and block.
fn guard_blocks_from_a_fallback_folder(cwd: fn(&Path) -> Value, extra: &[&str]) {
    let out = tempfile::tempdir().expect("tempdir");
    let ran_in = out.path().join("ran-in");
    let env = format!("env = {{ GUARD_OUT = {:?} }}", ran_in.to_string_lossy());
    let p = one_hook(
        "guard",
        "pre_tool_use",
        "pwd > \"$GUARD_OUT\"; echo 'no' >&2; exit 2",
        &[extra, &[env.as_str()]].concat(),
    );
    let outside = p.base.join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let config = Config::load(&p.options(&outside, false)).expect("load");
    assert_eq!(
        config.project_root, None,
        "an ancestor of the temp dir holds .ka/"
    );
    let payload = json!({"tool": "bash", "arguments": bash("rm -rf ~"), "cwd": cwd(&p.base)});
    let outcome = config.dispatch(Request::new(Event::PreToolUse, object(payload)));
    assert!(outcome.blocked(), "{outcome:#?}");
    assert_eq!(report(&outcome, "guard").status, Status::Blocked);
    assert!(
        has_diagnostic(&outcome, &["cannot be entered", "the session's root"]),
        "{:?}",
        outcome.diagnostics
    );
    let dir = std::fs::read_to_string(&ran_in).expect("the guard ran");
    assert!(Path::new(dir.trim()).is_dir(), "{dir}");
}

/// Attack: with no project and a payload `cwd` that no longer exists, every hook failed to start,
/// and guards with the default `on_error` let the call through.
#[test]
fn a_missing_working_directory_runs_the_guard_in_a_fallback_and_it_still_blocks() {
    guard_blocks_from_a_fallback_folder(|base| json!(base.join("missing").join("dir")), &[]);
}

/// Attack: a payload `cwd` of `""` read as `.` passed the check that the folder can be entered,
/// then the spawn's `chdir("")` failed: the guard never ran, and with `on_error = "ignore"` the
/// call went through.
#[test]
fn an_empty_working_directory_runs_the_guard_in_a_fallback_and_it_still_blocks() {
    guard_blocks_from_a_fallback_folder(|_| json!(""), &[r#"on_error = "ignore""#]);
}

#[test]
fn a_hook_that_cannot_start_at_all_follows_on_error() {
    // A NUL byte in the environment makes the spawn itself fail.
    let p = one_hook(
        "guard",
        "pre_tool_use",
        "exit 0",
        &[r#"on_error = "block""#, r#"env = { BAD = "a\u0000b" }"#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    let r = report(&outcome, "guard");
    assert_eq!(r.status, Status::Error);
    assert!(
        r.error
            .as_deref()
            .unwrap_or_default()
            .starts_with("failed to start"),
        "{:?}",
        r.error
    );
    assert!(outcome.blocked());
}

// ---------------------------------------------------------------------------------------------
// on_error (§4)
// ---------------------------------------------------------------------------------------------

#[test]
fn on_error_ignore_fails_open_with_a_diagnostic() {
    let p = one_hook(
        "flaky",
        "pre_tool_use",
        "exit 1",
        &[r#"on_error = "ignore""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), None);
    assert_eq!(outcome.reason(), None);
    assert_eq!(report(&outcome, "flaky").status, Status::Error);
    assert!(has_diagnostic(&outcome, &["`flaky`", "exit 1", "ignore"]));
}

#[test]
fn on_error_block_fails_closed_naming_the_hook_and_the_failure() {
    let p = one_hook(
        "strict",
        "pre_tool_use",
        "exit 3",
        &[r#"on_error = "block""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(outcome.blocked());
    let reason = outcome.reason().unwrap_or_default();
    assert!(reason.contains("strict"), "{reason}");
    assert!(reason.contains("exit 3"), "{reason}");
    // A broken hook stays `error`: never confused with a hook that said no.
    assert_eq!(report(&outcome, "strict").status, Status::Error);

    let said_no = one_hook(
        "strict",
        "pre_tool_use",
        "exit 2",
        &[r#"on_error = "block""#],
    );
    let outcome = said_no.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(outcome.blocked());
    assert_eq!(report(&outcome, "strict").status, Status::Blocked);
}

#[test]
fn on_error_block_covers_a_timeout() {
    let p = one_hook(
        "stuck",
        "pre_tool_use",
        "sleep 1000",
        &[r#"on_error = "block""#, "timeout = 1"],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(outcome.blocked());
    let reason = outcome.reason().unwrap_or_default();
    assert!(
        reason.contains("stuck") && reason.contains("timed out"),
        "{reason}"
    );
}

#[test]
fn on_error_ask_turns_a_failing_pre_tool_use_hook_into_a_human_ask() {
    let p = one_hook("unsure", "pre_tool_use", "exit 5", &[r#"on_error = "ask""#]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), Some(Decision::Ask));
    let reason = outcome.reason().unwrap_or_default();
    assert!(
        reason.contains("unsure") && reason.contains("exit 5"),
        "{reason}"
    );
    assert_eq!(report(&outcome, "unsure").status, Status::Error);
}

#[test]
fn on_error_block_on_post_tool_use_marks_the_result_as_error() {
    let p = one_hook(
        "checker",
        "post_tool_use",
        "exit 4",
        &[r#"on_error = "block""#],
    );
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert!(outcome.mark_error);
    let feedback = outcome.feedback.as_deref().unwrap_or_default();
    assert!(
        feedback.contains("checker") && feedback.contains("exit 4"),
        "{feedback}"
    );
}

#[test]
fn on_error_block_on_an_advisory_event_records_the_real_failure() {
    let p = one_hook("notifier", "stop", "exit 3", &[r#"on_error = "block""#]);
    let outcome = p.event(Event::Stop, stop_payload());
    assert!(!outcome.blocked());
    assert_eq!(report(&outcome, "notifier").exit_code, Some(3));
    assert!(
        has_diagnostic(&outcome, &["`notifier`", "exit 3"]),
        "the failure is not in the diagnostics: {:?}",
        outcome.diagnostics
    );
    assert!(
        !has_diagnostic(&outcome, &["exited 2"]),
        "a hook that exited 3 is reported as exiting 2: {:?}",
        outcome.diagnostics
    );
}

// ---------------------------------------------------------------------------------------------
// The action language (§5)
// ---------------------------------------------------------------------------------------------

#[test]
fn mode_and_note_apply_on_every_event() {
    let hooks: Vec<String> = Event::ALL
        .iter()
        .map(|e| {
            let command = format!(r#"echo '{{"mode":"plan","note":"from {e}"}}'"#);
            hook(&format!("say-{e}"), e.as_str(), &command, &[])
        })
        .collect();
    let p = hooks_project(&hooks);
    for event in Event::ALL {
        let outcome = if event.is_tool_event() {
            p.tool_call(event, "bash", bash("ls"))
        } else {
            p.event(event, json!({}))
        };
        assert_eq!(outcome.mode.as_deref(), Some("plan"), "{event}");
        // A failed call runs the post_tool_use hooks first, then the post_tool_use_failure ones.
        let mut expected = vec![format!("from {event}")];
        if event == Event::PostToolUseFailure {
            expected.insert(0, "from post_tool_use".to_owned());
        }
        assert_eq!(outcome.notes, expected, "{event}");
        assert!(
            outcome.diagnostics.is_empty(),
            "{event}: {:?}",
            outcome.diagnostics
        );
    }
}

#[test]
fn updated_input_on_pre_tool_use_is_merged_into_the_arguments() {
    let p = one_hook(
        "rewrite",
        "pre_tool_use",
        r#"echo '{"updated_input":{"command":"ls -la"}}'"#,
        &[],
    );
    let outcome = p.tool_call(
        Event::PreToolUse,
        "bash",
        json!({"command": "ls", "timeout": 30}),
    );
    assert_eq!(
        updated(&outcome),
        Some(json!({"command": "ls -la", "timeout": 30}))
    );
}

#[test]
fn updated_input_on_post_tool_use_voids_the_whole_object() {
    let p = one_hook(
        "late",
        "post_tool_use",
        r#"echo '{"updated_input":{"command":"ls"},"note":"lost"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("ls"));
    assert_eq!(outcome.updated_input, None);
    assert!(
        outcome.notes.is_empty(),
        "the note went down with the object"
    );
    assert!(has_diagnostic(
        &outcome,
        &["`late`", "`updated_input`", "only valid on pre_tool_use"]
    ));
    let r = report(&outcome, "late");
    assert_eq!(
        r.status,
        Status::Error,
        "an object that cannot be applied is a failure"
    );
    assert!(!r.action.applied);
    assert!(r.action.ignored.is_some());
}

#[test]
fn decision_deny_on_pre_tool_use_blocks_with_the_reason() {
    let p = one_hook(
        "policy",
        "pre_tool_use",
        r#"echo '{"decision":"deny","reason":"no network in tests"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("curl example.com"));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("no network in tests"));
    assert_eq!(outcome.decision(), None, "a deny is reported as blocked");
    assert_eq!(report(&outcome, "policy").status, Status::Ok);
}

#[test]
fn decision_on_a_wrong_event_voids_the_whole_object() {
    let p = one_hook(
        "policy",
        "post_tool_use",
        r#"echo '{"decision":"deny","mode":"plan"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), None);
    assert_eq!(outcome.mode, None, "the mode went down with the object");
    assert!(has_diagnostic(
        &outcome,
        &["`policy`", "only valid on pre_tool_use"]
    ));
}

#[test]
fn reason_on_a_wrong_event_voids_the_whole_object() {
    let p = one_hook(
        "explainer",
        "stop",
        r#"echo '{"reason":"because","note":"lost"}'"#,
        &[],
    );
    let outcome = p.event(Event::Stop, stop_payload());
    assert!(outcome.notes.is_empty());
    assert!(has_diagnostic(
        &outcome,
        &["`reason`", "only valid on pre_tool_use"]
    ));
}

#[test]
fn feedback_on_post_tool_use_is_appended_for_the_model() {
    let p = one_hook(
        "lint",
        "post_tool_use",
        r#"echo '{"feedback":"2 warnings in src/a.rs"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PostToolUse, "write", json!({"path": "src/a.rs"}));
    assert_eq!(outcome.feedback.as_deref(), Some("2 warnings in src/a.rs"));
    assert!(!outcome.mark_error);
}

#[test]
fn feedback_on_a_wrong_event_voids_the_whole_object() {
    let p = one_hook(
        "early",
        "pre_tool_use",
        r#"echo '{"feedback":"too early","mode":"plan"}'"#,
        &[r#"on_error = "ignore""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "write", json!({"path": "a"}));
    assert_eq!(outcome.feedback, None);
    assert_eq!(outcome.mode, None);
    assert!(has_diagnostic(
        &outcome,
        &["`feedback`", "only valid on post_tool_use"]
    ));
}

#[test]
fn an_object_with_one_bad_key_is_applied_not_at_all() {
    let p = one_hook(
        "half",
        "pre_tool_use",
        r#"echo '{"mode":"plan","note":"x","updated_input":{"command":"ls"},"decision":"maybe"}'"#,
        &[r#"on_error = "ignore""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("rm -rf /"));
    assert_eq!(outcome.mode, None);
    assert!(outcome.notes.is_empty());
    assert_eq!(outcome.updated_input, None);
    assert_eq!(outcome.decision(), None);
    assert!(has_diagnostic(
        &outcome,
        &["`half`", "`decision`", "whole object"]
    ));
    assert!(!report(&outcome, "half").action.applied);
}

#[test]
fn note_over_200_chars_is_cut_at_a_char_boundary() {
    let note = "é".repeat(250);
    let command = format!("echo '{}'", json!({ "note": note }));
    let p = one_hook("chatty", "stop", &command, &[]);
    let outcome = p.event(Event::Stop, stop_payload());
    assert_eq!(outcome.notes, ["é".repeat(200)]);
    assert!(has_diagnostic(
        &outcome,
        &["`chatty`", "250 chars", "cut to 200"]
    ));
}

#[test]
fn feedback_over_2048_bytes_is_cut_at_a_char_boundary() {
    // 3-byte chars: 2048 is not a boundary, so the cut lands at 2046.
    let feedback = "€".repeat(1000);
    let command = format!("echo '{}'", json!({ "feedback": feedback }));
    let p = one_hook("verbose", "post_tool_use", &command, &[]);
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("ls"));
    let got = outcome.feedback.clone().expect("feedback");
    assert_eq!(got, "€".repeat(682));
    assert!(got.len() <= 2048);
    assert!(has_diagnostic(
        &outcome,
        &["`verbose`", "3000 bytes", "2048"]
    ));
}

#[test]
fn unknown_key_is_ignored_and_the_rest_applies() {
    let p = one_hook(
        "typo",
        "stop",
        r#"echo '{"note":"kept","mdoe":"plan"}'"#,
        &[],
    );
    let outcome = p.event(Event::Stop, stop_payload());
    assert_eq!(outcome.notes, ["kept"]);
    assert_eq!(outcome.mode, None);
    assert!(has_diagnostic(&outcome, &["`typo`", "unknown key `mdoe`"]));
    assert!(report(&outcome, "typo").action.applied);
}

#[test]
fn stdout_that_is_not_one_json_object_is_ignored_with_a_diagnostic() {
    let p = one_hook("noisy", "pre_tool_use", "echo 'Welcome!'; echo '{}'", &[]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(report(&outcome, "noisy").status, Status::Ok);
    assert!(has_diagnostic(
        &outcome,
        &["`noisy`", "not a single JSON object"]
    ));
}

// ---------------------------------------------------------------------------------------------
// Claude Code output forms (§9)
// ---------------------------------------------------------------------------------------------

#[test]
fn claude_decision_block_blocks_pre_tool_use_with_its_reason() {
    let p = one_hook(
        "claude",
        "PreToolUse",
        r#"echo '{"decision":"block","reason":"use rg, not grep"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("grep -r x"));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("use rg, not grep"));
}

#[test]
fn claude_decision_block_blocks_user_prompt_submit_with_its_reason() {
    let p = one_hook(
        "prompt-guard",
        "UserPromptSubmit",
        r#"echo '{"decision":"block","reason":"the prompt holds a secret"}'"#,
        &[],
    );
    let outcome = p.event(
        Event::UserPromptSubmit,
        json!({"prompt": "my key is hunter2"}),
    );
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("the prompt holds a secret"));
}

#[test]
fn claude_permission_decision_deny_ask_allow_reach_the_outcome() {
    let answer = |decision: &str| {
        format!(
            "echo '{}'",
            json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": format!("{decision} by policy"),
            }})
        )
    };
    let deny = one_hook("perm", "pre_tool_use", &answer("deny"), &[]);
    let outcome = deny.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("deny by policy"));

    let ask = one_hook("perm", "pre_tool_use", &answer("ask"), &[]);
    let outcome = ask.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), Some(Decision::Ask));
    assert_eq!(outcome.reason(), Some("ask by policy"));

    let allow = one_hook("perm", "pre_tool_use", &answer("allow"), &[]);
    let outcome = allow.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), Some(Decision::Allow));
    // An allow is a request; the outcome says so plainly.
    assert!(has_diagnostic(&outcome, &["allow", "request"]));
}

#[test]
fn claude_updated_input_replaces_the_whole_input() {
    let p = one_hook(
        "replacer",
        "pre_tool_use",
        r#"echo '{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}'"#,
        &[],
    );
    let outcome = p.tool_call(
        Event::PreToolUse,
        "bash",
        json!({"command": "rm -rf /", "timeout": 30}),
    );
    assert_eq!(updated(&outcome), Some(json!({"command": "ls"})));
    assert!(has_diagnostic(
        &outcome,
        &["`replacer`", "replaced the whole input"]
    ));
}

#[test]
fn claude_continue_false_halts_the_turn_and_blocks_the_call_without_telling_the_model_why() {
    let p = one_hook(
        "halt",
        "pre_tool_use",
        r#"echo '{"continue":false,"stopReason":"maintenance window"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert_eq!(outcome.halt.as_deref(), Some("maintenance window"));
    // The call does not run, and the stop reason is for the user only.
    assert!(outcome.blocked());
    let reason = outcome.reason().unwrap_or_default();
    assert!(!reason.contains("maintenance"), "{reason}");
}

#[test]
fn claude_continue_false_halts_on_events_that_cannot_be_blocked() {
    for event in [Event::PostToolUse, Event::Stop, Event::SessionStart] {
        let p = one_hook(
            "halt",
            event.as_str(),
            r#"echo '{"continue":false,"stopReason":"quota reached"}'"#,
            &[],
        );
        let outcome = if event.is_tool_event() {
            p.tool_call(event, "bash", bash("ls"))
        } else {
            p.event(event, json!({}))
        };
        assert_eq!(outcome.halt.as_deref(), Some("quota reached"), "{event}");
        assert!(!outcome.blocked(), "{event}");
    }
}

#[test]
fn claude_system_message_is_a_user_message_shown_whole() {
    let long = "m".repeat(3000);
    let p = one_hook(
        "banner",
        "SessionStart",
        &format!(r#"echo '{{"systemMessage":"{long}","note":"short"}}'"#),
        &[],
    );
    let outcome = p.event(Event::SessionStart, json!({}));
    assert_eq!(outcome.messages, [long]);
    assert_eq!(outcome.notes, ["short"]);
}

#[test]
fn claude_additional_context_is_context_for_the_model_on_post_tool_use() {
    let p = one_hook(
        "context",
        "PostToolUse",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"3 tests now fail"}}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("cargo test"));
    assert_eq!(outcome.context.as_deref(), Some("3 tests now fail"));
    assert_eq!(outcome.feedback, None);
    assert!(outcome.notes.is_empty());
}

#[test]
fn context_on_session_start_and_prompt_reaches_the_outcome_in_hook_order() {
    for event in [Event::SessionStart, Event::UserPromptSubmit] {
        let p = hooks_project(&[
            hook("a", event.as_str(), r#"echo '{"context":"first"}'"#, &[]),
            hook(
                "b",
                event.as_str(),
                r#"echo '{"hookSpecificOutput":{"additionalContext":"second"}}'"#,
                &[],
            ),
            // Natively, plain stdout is not context: only a JSON object acts.
            hook("c", event.as_str(), "echo plain text", &[]),
        ]);
        let outcome = p.event(event, json!({"prompt": "hi", "source": "startup"}));
        assert_eq!(outcome.context.as_deref(), Some("first\nsecond"), "{event}");
        assert!(!outcome.blocked(), "{event}");
    }
}

#[test]
fn claude_block_on_post_tool_use_marks_the_result_as_an_error() {
    let p = one_hook(
        "lint",
        "PostToolUse",
        r#"echo '{"decision":"block","reason":"clippy: 2 warnings"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("cargo build"));
    assert!(outcome.mark_error);
    assert_eq!(outcome.feedback.as_deref(), Some("clippy: 2 warnings"));
}

// ---------------------------------------------------------------------------------------------
// The pre_tool_use pipeline (§6)
// ---------------------------------------------------------------------------------------------

#[test]
fn each_pre_tool_use_hook_sees_the_arguments_patched_before_it() {
    let p = hooks_project(&[
        hook(
            "patch-command",
            "pre_tool_use",
            r#"echo '{"updated_input":{"command":"ls -la"}}'"#,
            &[],
        ),
        hook(
            "record",
            "pre_tool_use",
            "cat >> seen-by-record.jsonl; echo >> seen-by-record.jsonl",
            &[],
        ),
        hook(
            "patch-timeout",
            "pre_tool_use",
            r#"echo '{"updated_input":{"timeout":5}}'"#,
            &[],
        ),
    ]);
    let outcome = p.tool_call(
        Event::PreToolUse,
        "bash",
        json!({"command": "rm -rf /", "description": "list files", "timeout": 60}),
    );
    let recorded = p.read("seen-by-record.jsonl").expect("recorded");
    let seen: Vec<Value> = (recorded.lines())
        .map(|line| serde_json::from_str(line).expect("the payload is JSON"))
        .collect();
    assert_eq!(seen.len(), 2, "{recorded}");
    assert_eq!(seen[0]["event"], "pre_tool_use");
    assert_eq!(seen[0]["tool"], "bash");
    assert_eq!(
        seen[0]["arguments"],
        json!({"command": "ls -la", "description": "list files", "timeout": 60}),
        "the second hook judged the patched command"
    );
    // The third hook rewrote it again: the second judged the final call too.
    assert_eq!(
        seen[1]["arguments"],
        json!({"command": "ls -la", "description": "list files", "timeout": 5}),
    );
    assert_eq!(
        updated(&outcome),
        Some(json!({"command": "ls -la", "description": "list files", "timeout": 5}))
    );
    assert!(!outcome.blocked());
}

#[test]
fn decisions_combine_deny_over_ask_over_allow() {
    // The hook's name is in its command: identical hooks would be de-duplicated into one.
    let say = |name: &str, decision: &str, reason: &str| {
        let command = format!(
            "echo '{}'",
            json!({"decision": decision, "reason": format!("{name}: {reason}")})
        );
        hook(name, "pre_tool_use", &command, &[])
    };
    let allow = |n: &str| say(n, "allow", "fine");
    let ask = |n: &str| say(n, "ask", "a human should look");
    let deny = |n: &str| say(n, "deny", "never");

    let p = hooks_project(&[allow("a1"), ask("a2"), allow("a3")]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), Some(Decision::Ask));
    assert_eq!(outcome.reason(), Some("a2: a human should look"));
    assert_eq!(outcome.hooks.len(), 3);

    let p = hooks_project(&[ask("a1"), deny("a2"), allow("a3")]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(outcome.blocked());
    assert_eq!(outcome.decision(), None);
    assert_eq!(outcome.reason(), Some("a2: never"));
    assert_eq!(report(&outcome, "a3").status, Status::Skipped);

    let p = hooks_project(&[allow("a1"), allow("a2")]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), Some(Decision::Allow));
    assert_eq!(
        outcome.reason(),
        Some("a1: fine"),
        "the first allow's reason"
    );
}

#[test]
fn first_block_stops_the_pipeline_and_skips_the_rest() {
    let p = hooks_project(&[
        hook("first", "pre_tool_use", "touch ran-first", &[]),
        hook("veto", "pre_tool_use", "echo 'not today' >&2; exit 2", &[]),
        hook("third", "pre_tool_use", "touch ran-third", &[]),
        hook("fourth", "pre_tool_use", "touch ran-fourth", &[]),
    ]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("not today"));
    let statuses: Vec<(&str, Status)> = outcome
        .hooks
        .iter()
        .map(|h| (h.name.as_str(), h.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("first", Status::Ok),
            ("veto", Status::Blocked),
            ("third", Status::Skipped),
            ("fourth", Status::Skipped),
        ]
    );
    assert!(p.exists("ran-first"));
    assert!(!p.exists("ran-third"), "a skipped hook ran");
    assert!(!p.exists("ran-fourth"), "a skipped hook ran");
}

#[test]
fn user_prompt_submit_runs_as_a_pipeline_and_stops_at_the_first_block() {
    let p = hooks_project(&[
        hook(
            "veto",
            "user_prompt_submit",
            "echo 'no secrets' >&2; exit 2",
            &[],
        ),
        hook("after", "user_prompt_submit", "touch ran-after", &[]),
    ]);
    let outcome = p.event(Event::UserPromptSubmit, json!({"prompt": "hunter2"}));
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("no secrets"));
    assert_eq!(report(&outcome, "after").status, Status::Skipped);
    assert!(!p.exists("ran-after"));
}

// ---------------------------------------------------------------------------------------------
// Observational events: concurrent, combined in declared order (§6)
// ---------------------------------------------------------------------------------------------

#[test]
fn observational_hooks_run_concurrently() {
    // Distinct commands: identical hooks would be de-duplicated into one.
    let hooks: Vec<String> = (1..=5)
        .map(|i| {
            hook(
                &format!("sleeper-{i}"),
                "post_tool_use",
                &format!(r#"sleep 1; echo '{{"note":"slept {i}"}}'"#),
                &[],
            )
        })
        .collect();
    let p = hooks_project(&hooks);
    let config = p.load();
    let started = Instant::now();
    let outcome = config.dispatch(Request::tool_call(
        Event::PostToolUse,
        "bash",
        object(bash("ls")),
    ));
    let elapsed = started.elapsed();
    // In sequence they would take 5 s.
    assert!(
        elapsed < Duration::from_secs(3),
        "5 hooks of 1 s took {elapsed:?}"
    );
    assert_eq!(
        outcome.notes,
        ["slept 1", "slept 2", "slept 3", "slept 4", "slept 5"]
    );
}

#[test]
fn observational_results_combine_in_declared_order_not_finish_order() {
    // `third` finishes first, `first` last: each waits for the marker of the hook declared after
    // it. Run one after another, `first` would wait forever (and time out).
    let p = hooks_project(&[
        hook(
            "first",
            "post_tool_use",
            r#"while [ ! -f second.done ]; do sleep 0.02; done; touch first.done
               echo '{"note":"n1","feedback":"f1","mode":"plan"}'"#,
            &["timeout = 5"],
        ),
        hook(
            "second",
            "post_tool_use",
            r#"while [ ! -f third.done ]; do sleep 0.02; done; touch second.done
               echo '{"note":"n2","feedback":"f2"}'"#,
            &["timeout = 5"],
        ),
        hook(
            "third",
            "post_tool_use",
            r#"touch third.done; echo '{"note":"n3","feedback":"f3","mode":"acceptEdits"}'"#,
            &["timeout = 5"],
        ),
    ]);
    let outcome = p.tool_call(Event::PostToolUse, "bash", bash("ls"));
    for h in &outcome.hooks {
        assert_eq!(h.status, Status::Ok, "{}: {:?}", h.name, h.error);
    }
    assert!(p.exists("first.done"));
    assert_eq!(outcome.notes, ["n1", "n2", "n3"]);
    assert_eq!(outcome.feedback.as_deref(), Some("f1\nf2\nf3"));
    // The last *declared* mode wins, though `first` finished last.
    assert_eq!(outcome.mode.as_deref(), Some("acceptEdits"));
    let names: Vec<&str> = outcome.hooks.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["first", "second", "third"]);
}

#[test]
fn exit_two_on_post_tool_use_marks_error_and_appends_stderr_to_feedback() {
    let p = hooks_project(&[
        hook(
            "fmt",
            "post_tool_use",
            r#"echo '{"feedback":"formatted"}'"#,
            &[],
        ),
        hook(
            "lint",
            "post_tool_use",
            "echo 'lint: 3 errors' >&2; exit 2",
            &[],
        ),
    ]);
    let outcome = p.tool_call(Event::PostToolUse, "write", json!({"path": "src/a.rs"}));
    assert!(outcome.mark_error);
    assert!(!outcome.blocked());
    assert_eq!(
        outcome.feedback.as_deref(),
        Some("formatted\nlint: 3 errors")
    );
    assert_eq!(report(&outcome, "lint").status, Status::Blocked);
}

#[test]
fn exit_two_on_advisory_events_is_recorded_without_effect() {
    for event in [
        Event::SessionStart,
        Event::SessionEnd,
        Event::PreCompact,
        Event::Notification,
        Event::PostCompact,
        Event::SubagentStart,
    ] {
        let p = one_hook("nope", event.as_str(), "echo 'I object' >&2; exit 2", &[]);
        let outcome = p.event(event, json!({}));
        assert!(!outcome.blocked(), "{event}");
        assert!(!outcome.mark_error, "{event}");
        assert_eq!(outcome.reason(), None, "{event}");
        assert_eq!(outcome.feedback, None, "{event}");
        let r = report(&outcome, "nope");
        assert_eq!(r.status, Status::Blocked, "{event}");
        assert_eq!(r.stderr, "I object\n", "{event}");
        assert!(
            has_diagnostic(&outcome, &["`nope`", "exited 2", "no effect"]),
            "{event}: {:?}",
            outcome.diagnostics
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Tool filters (§3)
// ---------------------------------------------------------------------------------------------

#[test]
fn hook_for_write_is_never_spawned_for_read() {
    let p = one_hook(
        "write-only",
        "pre_tool_use",
        "touch spawned",
        &[r#"tool = "write""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "read", json!({"path": "a"}));
    assert!(outcome.hooks.is_empty());
    assert!(!p.exists("spawned"), "a non-matching hook was spawned");

    let outcome = p.tool_call(Event::PreToolUse, "write", json!({"path": "a"}));
    assert_eq!(report(&outcome, "write-only").status, Status::Ok);
    assert!(p.exists("spawned"));
}

#[test]
fn tool_glob_matches_every_mcp_tool() {
    let p = one_hook(
        "mcp",
        "pre_tool_use",
        r#"echo "$KA_TOOL" >> matched"#,
        &[r#"tool = ["mcp__*"]"#],
    );
    for tool in [
        "mcp__github__create_issue",
        "mcp__fs__read",
        "bash",
        "mcp_x",
    ] {
        p.tool_call(Event::PreToolUse, tool, json!({}));
    }
    assert_eq!(
        p.read("matched").as_deref(),
        Some("mcp__github__create_issue\nmcp__fs__read\n")
    );
}

#[test]
fn exact_name_matcher_matches_only_the_listed_tools() {
    let p = one_hook(
        "claude-edit",
        "pre_tool_use",
        r#"echo "$KA_TOOL" >> matched"#,
        &[r#"matcher = "Edit|Write""#],
    );
    for tool in ["Edit", "Write", "edit", "MultiEdit", "WriteFile", "Bash"] {
        p.tool_call(Event::PreToolUse, tool, json!({}));
    }
    // `edit` is ka's name of Claude's `Edit`: a filter copied from Claude Code still guards it.
    assert_eq!(p.read("matched").as_deref(), Some("Edit\nWrite\nedit\n"));
}

#[test]
fn regex_matcher_is_unanchored_unless_anchored() {
    let p = hooks_project(&[
        hook(
            "anchored",
            "pre_tool_use",
            r#"echo "$KA_TOOL" >> anchored"#,
            &[r#"matcher = "^Bash""#],
        ),
        hook(
            "unanchored",
            "pre_tool_use",
            r#"echo "$KA_TOOL" >> unanchored"#,
            &[r#"matcher = "Bash.*""#],
        ),
    ]);
    for tool in ["Bash", "BashOutput", "xBash", "bash"] {
        p.tool_call(Event::PreToolUse, tool, json!({}));
    }
    // ka's `bash` is Claude's `Bash`: a regex is tried on every agent's spelling of the tool.
    assert_eq!(
        p.read("anchored").as_deref(),
        Some("Bash\nBashOutput\nbash\n")
    );
    assert_eq!(
        p.read("unanchored").as_deref(),
        Some("Bash\nBashOutput\nxBash\nbash\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Environment and working directory (§3, §4)
// ---------------------------------------------------------------------------------------------

/// Writes, one per line: event, tool (or `unset`), hook name, project dirs, entry env, cwd.
const PRINT_ENV: &str = r#"printf '%s\n' "$KA_EVENT" "${KA_TOOL-unset}" "$KA_HOOK_NAME" "$KA_PROJECT_DIR" "$CLAUDE_PROJECT_DIR" "$GREETING" "$(pwd -P)" > "env-$KA_EVENT.txt""#;

#[test]
fn hooks_get_the_event_tool_name_project_dir_and_entry_env() {
    let p = hooks_project(&[
        hook(
            "env-pre",
            "pre_tool_use",
            PRINT_ENV,
            &[r#"env = { GREETING = "hello  world" }"#],
        ),
        hook(
            "env-stop",
            "stop",
            PRINT_ENV,
            &[r#"env = { GREETING = "bye" }"#],
        ),
    ]);
    p.tool_call(Event::PreToolUse, "write", json!({"path": "a"}));
    p.event(Event::Stop, stop_payload());
    let root = p.root.to_string_lossy().into_owned();

    let pre = p
        .read("env-pre_tool_use.txt")
        .expect("the hook ran in the root");
    let pre: Vec<&str> = pre.lines().collect();
    assert_eq!(
        pre,
        [
            "pre_tool_use",
            "write",
            "env-pre",
            &root,
            &root,
            "hello  world",
            &root
        ]
    );

    let stop = p.read("env-stop.txt").expect("the hook ran in the root");
    let stop: Vec<&str> = stop.lines().collect();
    assert_eq!(
        stop,
        ["stop", "unset", "env-stop", &root, &root, "bye", &root]
    );
}

#[test]
fn hooks_run_in_the_project_root_even_from_a_nested_directory() {
    let p = one_hook(
        "where",
        "stop",
        r#"pwd -P > "$KA_PROJECT_DIR/cwd.txt""#,
        &[],
    );
    let nested = p.root.join("crates").join("deep").join("er");
    std::fs::create_dir_all(&nested).expect("mkdir");
    let config = Config::load(&p.options(&nested, false)).expect("load");
    assert_eq!(config.project_root.as_deref(), Some(p.root.as_path()));
    config.dispatch(Request::new(Event::Stop, object(stop_payload())));
    assert_eq!(
        p.read("cwd.txt").as_deref().map(str::trim_end),
        Some(p.root.to_string_lossy().as_ref())
    );
}

#[test]
fn the_payload_on_stdin_carries_event_cwd_and_event_fields() {
    let p = hooks_project(&[
        hook("post", "post_tool_use", "cat > post.json", &[]),
        hook("prompt", "user_prompt_submit", "cat > prompt.json", &[]),
        hook("stop", "stop", "cat > stop.json", &[]),
    ]);
    let mut payload = object(json!({
        "tool": "bash",
        "arguments": {"command": "cargo test"},
        "result": "ok",
        "is_error": false,
        "session_id": "s-1",
    }));
    payload.insert("cwd".into(), json!(p.root));
    p.dispatch(Request::new(Event::PostToolUse, payload));
    p.event(Event::UserPromptSubmit, json!({"prompt": "fix it"}));
    p.event(Event::Stop, json!({"stop": "aborted"}));

    let read = |f: &str| -> Value {
        serde_json::from_str(&p.read(f).unwrap_or_else(|| panic!("{f} missing"))).expect("JSON")
    };
    let post = read("post.json");
    assert_eq!(post["event"], "post_tool_use");
    assert_eq!(post["cwd"], json!(p.root));
    assert_eq!(post["tool"], "bash");
    assert_eq!(post["arguments"]["command"], "cargo test");
    assert_eq!(post["result"], "ok");
    assert_eq!(post["is_error"], false);
    assert_eq!(post["session_id"], "s-1", "host fields pass through");
    let prompt = read("prompt.json");
    assert_eq!(prompt["event"], "user_prompt_submit");
    assert_eq!(prompt["prompt"], "fix it");
    assert!(prompt["cwd"].is_string());
    let stop = read("stop.json");
    assert_eq!(stop["event"], "stop");
    assert_eq!(stop["stop"], "aborted");
}

// ---------------------------------------------------------------------------------------------
// Hostile hooks: no panic, bounded time, no process left (§4)
// ---------------------------------------------------------------------------------------------

const HOSTILE_TIMEOUT: Duration = Duration::from_secs(2);

/// Run `command` as the only pre_tool_use hook (timeout 2 s), after it wrote its shell's pid (its
/// process group id) to `hook.pid`. Asserts the dispatch returned within timeout + 1 s and that no
/// process of the hook's group, nor any pid it wrote to `bg.pid`, is left.
#[track_caller]
fn hostile(command: &str, arguments: Value) -> (Project, Outcome) {
    hostile_within(command, arguments, HOSTILE_TIMEOUT)
}

/// [`hostile`] with the hook's own `timeout`: a hook that must finish (not one the runner must
/// kill) gets a long one, so a loaded machine cannot turn its result into a timeout.
fn hostile_within(command: &str, arguments: Value, timeout: Duration) -> (Project, Outcome) {
    let p = one_hook(
        "hostile",
        "pre_tool_use",
        &format!("echo $$ > hook.pid; {command}"),
        // What the runner does with a hostile hook, not what its failure means: fail open.
        &[
            &format!("timeout = {}", timeout.as_secs()),
            r#"on_error = "ignore""#,
        ],
    );
    let config = p.load();
    let request = Request::tool_call(Event::PreToolUse, "bash", object(arguments));
    let started = Instant::now();
    let outcome = config.dispatch(request);
    let elapsed = started.elapsed();
    assert!(
        elapsed < timeout + Duration::from_secs(1),
        "`{command}`: the dispatch took {elapsed:?}"
    );
    assert_no_process_left(&p);
    (p, outcome)
}

#[track_caller]
fn assert_no_process_left(p: &Project) {
    let pgid = pid_in(p, "hook.pid");
    eventually(
        "a process of the hook's group survived the dispatch",
        || group_gone(pgid),
    );
    eventually("the hook's shell survived the dispatch", || {
        process_gone(pgid)
    });
    if p.exists("bg.pid") {
        let bg = pid_in(p, "bg.pid");
        eventually("the hook's background child survived the dispatch", || {
            process_gone(bg)
        });
    }
}

#[test]
fn hostile_hook_that_sleeps_forever_is_killed_at_the_timeout() {
    let (_p, outcome) = hostile("sleep 1000 & echo $! > bg.pid; wait", bash("ls"));
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Error);
    assert!(r.timed_out);
    assert!(!outcome.blocked(), "on_error = ignore fails open");
}

#[test]
fn hostile_background_daemon_holding_stdout_neither_wedges_nor_survives() {
    let (_p, outcome) = hostile("sleep 1000 & echo $! > bg.pid; echo '{}'", bash("ls"));
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert!(!r.timed_out);
    assert!(r.action.applied);
}

#[test]
fn hostile_100_mb_on_stdout_is_capped_and_marked_truncated() {
    let (_p, outcome) = hostile("head -c 100000000 /dev/zero", bash("ls"));
    let r = report(&outcome, "hostile");
    assert!(r.stdout_truncated);
    assert!(!r.action.applied);
}

#[test]
fn hostile_hook_exiting_without_reading_a_10_mb_payload_is_ok() {
    let big = "x".repeat(10 * 1024 * 1024);
    let (_p, outcome) = hostile_within(
        "exit 0",
        json!({"content": big, "path": "src/big.txt"}),
        Duration::from_secs(60),
    );
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert_eq!(r.stderr, "");
}

#[test]
fn hostile_invalid_utf8_on_stdout_is_ignored_with_a_diagnostic() {
    let (_p, outcome) = hostile(r#"printf '\377\376{"note":"x"}'"#, bash("ls"));
    assert_eq!(report(&outcome, "hostile").status, Status::Ok);
    assert!(outcome.notes.is_empty());
    assert!(has_diagnostic(
        &outcome,
        &["`hostile`", "not a single JSON object"]
    ));
}

#[test]
fn hostile_garbage_json_is_ignored_with_a_diagnostic() {
    let (_p, outcome) = hostile(r#"echo '{"note": "unterminated'"#, bash("ls"));
    assert_eq!(report(&outcome, "hostile").status, Status::Ok);
    assert!(outcome.notes.is_empty());
    assert!(has_diagnostic(
        &outcome,
        &["`hostile`", "not a single JSON object"]
    ));
}

#[test]
fn hostile_deeply_nested_json_is_ignored_without_panic() {
    let (_p, outcome) = hostile(r#"python3 -c "print('['*100000)""#, bash("ls"));
    assert_eq!(report(&outcome, "hostile").status, Status::Ok);
    assert!(has_diagnostic(
        &outcome,
        &["`hostile`", "not a single JSON object"]
    ));
}

#[test]
fn hostile_kill_9_of_itself_is_an_error_with_the_signal() {
    let (_p, outcome) = hostile("kill -9 $$", bash("ls"));
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.signal.as_deref(), Some("SIGKILL"));
}

#[test]
fn hostile_segv_of_itself_is_an_error_with_the_signal() {
    let (_p, outcome) = hostile("kill -SEGV $$", bash("ls"));
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.signal.as_deref(), Some("SIGSEGV"));
}

#[test]
fn hostile_missing_command_is_error_127() {
    let (_p, outcome) = hostile("no-such-command-xyz --flag", bash("ls"));
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.exit_code, Some(127));
}

#[test]
fn hostile_non_executable_script_is_error_126() {
    let (_p, outcome) = hostile(
        "printf '#!/bin/sh\\necho ran\\n' > script.sh; chmod 644 script.sh; ./script.sh",
        bash("ls"),
    );
    let r = report(&outcome, "hostile");
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.exit_code, Some(126));
}

#[test]
fn hostile_hooks_on_a_concurrent_event_are_bounded_too() {
    let p = hooks_project(&[
        hook(
            "forever",
            "post_tool_use",
            "echo $$ > forever.pid; sleep 1000",
            &["timeout = 2"],
        ),
        hook(
            "daemon",
            "post_tool_use",
            r#"echo $$ > daemon.pid; sleep 1000 & echo $! > bg.pid; echo '{"feedback":"ok"}'"#,
            &["timeout = 2"],
        ),
    ]);
    let config = p.load();
    let started = Instant::now();
    let outcome = config.dispatch(Request::tool_call(
        Event::PostToolUse,
        "bash",
        object(bash("ls")),
    ));
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert!(report(&outcome, "forever").timed_out);
    assert_eq!(report(&outcome, "daemon").status, Status::Ok);
    assert_eq!(outcome.feedback.as_deref(), Some("ok"));
    for file in ["forever.pid", "daemon.pid"] {
        let pgid = pid_in(&p, file);
        eventually(&format!("the group of {file} survived"), || {
            group_gone(pgid)
        });
    }
    let bg = pid_in(&p, "bg.pid");
    eventually("the daemon survived", || process_gone(bg));
}

// ---------------------------------------------------------------------------------------------
// The CLI: `ka-hooks run` (§7)
// ---------------------------------------------------------------------------------------------

fn cli_project() -> Project {
    hooks_project(&[
        hook(
            "guard",
            "pre_tool_use",
            r#"if grep -q README; then echo "README is read-only" >&2; exit 2; fi"#,
            &[r#"tool = "write""#],
        ),
        hook(
            "noter",
            "pre_tool_use",
            r#"touch ran-noter; echo '{"note":"seen"}'"#,
            &[],
        ),
    ])
}

#[test]
fn cli_run_exits_0_when_the_call_may_proceed() {
    let p = cli_project();
    p.cli()
        .args(["--project"])
        .arg(&p.root)
        .args(["run", "pre_tool_use", "--tool", "write"])
        .args(["--input", r#"{"arguments":{"path":"src/a.rs"}}"#])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("proceed"))
        .stdout(predicates::str::contains("note: seen"));
}

#[test]
fn cli_run_exits_2_when_a_hook_blocks() {
    let p = cli_project();
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write"])
        .args(["--input", r#"{"arguments":{"path":"README.md"}}"#])
        .arg("--project")
        .arg(&p.root)
        .assert()
        .code(2)
        .stdout(predicates::str::contains("blocked"))
        .stdout(predicates::str::contains("README is read-only"));
    assert!(!p.exists("ran-noter"), "the hook after the block ran");
}

#[test]
fn cli_run_exits_1_on_an_unknown_event_with_a_did_you_mean() {
    let p = cli_project();
    p.cli()
        .args(["run", "pre_tool_usee", "--tool", "write"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("unknown event `pre_tool_usee`"))
        .stderr(predicates::str::contains("did you mean `pre_tool_use`?"));
}

#[test]
fn cli_run_exits_1_on_malformed_input_json() {
    let p = cli_project();
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write"])
        .args(["--input", r#"{"arguments": "#])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("invalid JSON payload"));
    assert!(!p.exists("ran-noter"), "a hook ran on a malformed payload");
}

#[test]
/// A user file with an error no longer fails the whole run: it is skipped and
/// said, with the error and its fix; `check` still exits 1 on it.
fn cli_run_says_a_configuration_error_of_the_user_file() {
    let p = Project::with_user_toml(&hook("bad", "pre_tool_use", "true", &["timout = 5"]));
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("does not load"))
        .stdout(predicates::str::contains("timout"))
        .stdout(predicates::str::contains("did you mean `timeout`?"));
    p.cli()
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicates::str::contains("did you mean `timeout`?"));
}

#[test]
fn cli_run_json_prints_the_outcome_with_the_section_6_fields() {
    let p = cli_project();
    let assert = p
        .cli()
        .args(["run", "pre_tool_use", "--tool", "write", "--json"])
        .args(["--input", r#"{"arguments":{"path":"README.md"}}"#])
        .assert()
        .code(2);
    let outcome: Value =
        serde_json::from_slice(&assert.get_output().stdout).expect("stdout is one JSON document");
    for field in [
        "event",
        "tool",
        "blocked",
        "reason",
        "decision",
        "updated_input",
        "mode",
        "notes",
        "feedback",
        "mark_error",
        "hooks",
        "diagnostics",
        "untrusted",
    ] {
        assert!(
            outcome.get(field).is_some(),
            "missing `{field}` in {outcome:#}"
        );
    }
    assert_eq!(outcome["event"], "pre_tool_use");
    assert_eq!(outcome["tool"], "write");
    assert_eq!(outcome["blocked"], true);
    assert_eq!(outcome["reason"], "README is read-only");
    assert_eq!(outcome["decision"], Value::Null);
    let hooks = outcome["hooks"].as_array().expect("hooks array");
    assert_eq!(hooks.len(), 2);
    let guard = &hooks[0];
    for field in [
        "name",
        "source",
        "command",
        "status",
        "exit_code",
        "signal",
        "duration_ms",
        "stderr",
        "action",
    ] {
        assert!(
            guard.get(field).is_some(),
            "missing hooks[0].{field} in {guard:#}"
        );
    }
    assert_eq!(guard["name"], "guard");
    assert_eq!(guard["status"], "blocked");
    assert_eq!(guard["exit_code"], 2);
    assert_eq!(guard["source"]["layer"], "user");
    assert_eq!(hooks[1]["status"], "skipped");
}

#[test]
fn cli_run_reads_the_payload_from_a_file_with_at() {
    let p = cli_project();
    let file = p.write("payload.json", r#"{"arguments":{"path":"README.md"}}"#);
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write", "--input"])
        .arg(format!("@{}", file.display()))
        .assert()
        .code(2)
        .stdout(predicates::str::contains("README is read-only"));
}

#[test]
fn cli_run_reads_the_payload_from_stdin_with_dash() {
    let p = cli_project();
    p.cli()
        .args(["run", "pre_tool_use", "--input", "-"])
        .write_stdin(r#"{"tool":"write","arguments":{"path":"README.md"}}"#)
        .assert()
        .code(2)
        .stdout(predicates::str::contains("README is read-only"));
}

#[test]
fn cli_run_hook_runs_only_the_named_hook() {
    let p = cli_project();
    let assert = p
        .cli()
        .args([
            "run",
            "pre_tool_use",
            "--tool",
            "write",
            "--hook",
            "noter",
            "--json",
        ])
        .args(["--input", r#"{"arguments":{"path":"README.md"}}"#])
        .assert()
        .code(0);
    let outcome: Value = serde_json::from_slice(&assert.get_output().stdout).expect("JSON");
    let names: Vec<&str> = outcome["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert_eq!(names, ["noter"], "the guard would have blocked");
    assert!(p.exists("ran-noter"));
    assert_eq!(outcome["notes"], json!(["seen"]));
}

#[test]
fn missing_script_under_sh_is_a_broken_hook_not_a_veto() {
    let p = one_hook(
        "guard",
        "pre_tool_use",
        "sh examples/hooks/no-such-guard.sh",
        &[r#"on_error = "block""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "write", json!({"path": "src/a.rs"}));
    let r = report(&outcome, "guard");
    assert_eq!(
        r.status,
        Status::Error,
        "a typo in a path is not a veto: {r:?}"
    );
    let error = r.error.clone().unwrap_or_default();
    assert!(error.contains("could not open the script"), "{error}");
    assert!(outcome.blocked(), "on_error = block fails closed");
    let reason = outcome.reason().map(str::to_owned).unwrap_or_default();
    assert!(reason.contains("`guard` failed"), "{reason}");
}

// ---------------------------------------------------------------------------------------------
// Output that cannot be applied is a failure
// ---------------------------------------------------------------------------------------------

/// Attack: a deny with one key that does not belong to pre_tool_use voided the whole object, the
/// hook read as `ok` and the call went through, even with `on_error = "block"`.
#[test]
fn a_deny_voided_by_a_stray_key_is_a_failure_that_on_error_block_blocks() {
    let p = one_hook(
        "guard",
        "pre_tool_use",
        r#"echo '{"decision":"deny","reason":"no rm","feedback":"x"}'"#,
        &[r#"on_error = "block""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("rm -rf /"));
    let r = report(&outcome, "guard");
    assert_eq!(r.status, Status::Error);
    let error = r.error.as_deref().unwrap_or_default();
    assert!(error.contains("`feedback`"), "{error}");
    assert!(!r.action.applied);
    assert!(outcome.blocked(), "{outcome:#?}");
    let reason = outcome.reason().unwrap_or_default();
    assert!(
        reason.contains("`guard`") && reason.contains("on_error = \"block\""),
        "{reason}"
    );
}

#[test]
fn a_voided_object_with_on_error_ignore_is_a_recorded_failure_not_an_ok() {
    let p = one_hook(
        "guard",
        "pre_tool_use",
        r#"echo '{"decision":"allow","feedback":"x"}'"#,
        &[r#"on_error = "ignore""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert_eq!(report(&outcome, "guard").status, Status::Error);
    assert_eq!(outcome.decision(), None, "nothing of the object applies");
    assert!(outcome.any_hook_failed());
    assert!(has_diagnostic(&outcome, &["`guard`", "failed", "ignore"]));
}

#[test]
fn a_voided_object_from_a_guard_without_on_error_blocks() {
    let p = one_hook(
        "guard",
        "pre_tool_use",
        r#"echo '{"decision":"allow","feedback":"x"}'"#,
        &[],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert_eq!(report(&outcome, "guard").status, Status::Error);
    assert!(outcome.blocked(), "{outcome:#?}");
    assert_eq!(outcome.decision(), None, "nothing of the object applies");
}

#[test]
fn a_voided_object_on_pre_tool_use_with_on_error_ask_asks() {
    let p = one_hook(
        "guard",
        "pre_tool_use",
        r#"echo '{"decision":"allow","mode":7}'"#,
        &[r#"on_error = "ask""#],
    );
    let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
    assert_eq!(outcome.decision(), Some(Decision::Ask));
}

/// Attack: an allow, padding past the 1 MiB cap, then a second object. The cut stdout read as the
/// allow alone, and it was applied although stdout was not one JSON object.
#[test]
fn stdout_cut_at_the_cap_is_a_failure_and_its_allow_is_not_applied() {
    let command = r#"printf '{"decision":"allow"}'; head -c 1100000 /dev/zero | tr '\0' ' '; printf '{"decision":"deny"}'"#;
    for (on_error, blocked) in [("ignore", false), ("block", true)] {
        let p = one_hook(
            "guard",
            "pre_tool_use",
            command,
            &[&format!("on_error = \"{on_error}\"")],
        );
        let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
        let r = report(&outcome, "guard");
        assert!(r.stdout_truncated);
        assert_eq!(r.status, Status::Error, "on_error = {on_error}");
        assert!(
            r.error.as_deref().unwrap_or_default().contains("cap"),
            "{:?}",
            r.error
        );
        assert_eq!(outcome.decision(), None, "the allow must not apply");
        assert_eq!(outcome.blocked(), blocked, "on_error = {on_error}");
    }
}

#[test]
fn stdout_cut_at_the_cap_on_an_observational_event_applies_nothing() {
    let p = one_hook(
        "chatty",
        "stop",
        r#"printf '{"note":"hi"}'; head -c 1100000 /dev/zero | tr '\0' ' '"#,
        &[],
    );
    let outcome = p.event(Event::Stop, stop_payload());
    assert_eq!(report(&outcome, "chatty").status, Status::Error);
    assert!(outcome.notes.is_empty());
}

#[test]
fn empty_stdout_and_plain_text_still_mean_nothing_to_say() {
    for command in ["true", "echo 'formatted 3 files'"] {
        let p = one_hook("quiet", "pre_tool_use", command, &[r#"on_error = "block""#]);
        let outcome = p.tool_call(Event::PreToolUse, "bash", bash("ls"));
        assert_eq!(report(&outcome, "quiet").status, Status::Ok, "{command}");
        assert!(!outcome.blocked(), "{command}");
    }
}
