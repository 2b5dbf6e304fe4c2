//! `Outcome::next()` is the typed answer a host matches, one enum per kind of
//! event, and `Outcome::for_user()` is everything the user must hear. The examples used to check
//! only `blocked`, so a host that copied them ran calls that ka's own protection marked `ask`.

use crate::support;
use crate::support::hooks_project;

use ka_hooks::next::{Next, Other, Permission, Prompt, Stop, ToolResult};
use ka_hooks::{Event, Outcome};
use serde_json::{json, Map, Value};
use support::{hook, object, Project};

const SETTINGS: &str = "[hook_settings]\ntimeout = 10\n\n";

/// The answer of a tool call (else a panic); likewise for the other kinds below.
#[track_caller]
fn permission(outcome: &Outcome) -> Permission {
    match outcome.next() {
        Next::ToolCall(permission, _) => permission,
        other => panic!("expected a tool call's answer, got {other:?}"),
    }
}

#[track_caller]
fn prompt_of(outcome: &Outcome) -> Prompt {
    match outcome.next() {
        Next::Prompt(prompt, _) => prompt,
        other => panic!("expected a prompt's answer, got {other:?}"),
    }
}

#[track_caller]
fn tool_result(outcome: &Outcome) -> ToolResult {
    match outcome.next() {
        Next::ToolResult(result, _) => result,
        other => panic!("expected a tool result's answer, got {other:?}"),
    }
}

#[track_caller]
fn stop_of(outcome: &Outcome) -> Stop {
    match outcome.next() {
        Next::Stop(stop, _) => stop,
        other => panic!("expected a stop's answer, got {other:?}"),
    }
}

#[track_caller]
fn other(outcome: &Outcome) -> Other {
    match outcome.next() {
        Next::Other(other, _) => other,
        other => panic!("expected another event's answer, got {other:?}"),
    }
}

fn args(value: Value) -> Map<String, Value> {
    object(value)
}

/// Attack: a host that follows the docs checks `blocked`, and runs a write to `.ka/ka.toml`
/// that the built-in protection wants a human to approve. `next()` makes it an `Ask`.
#[test]
fn a_write_to_ka_toml_is_an_ask_with_its_arguments() {
    let p = hooks_project(&[]);
    let target = p.root.join(".ka/ka.toml");
    let sent = json!({"path": target, "content": "[[hooks]]\n"});
    let outcome = p.tool_call(Event::PreToolUse, "write", sent.clone());
    match outcome.next() {
        Next::ToolCall(
            Permission::Ask {
                reason, arguments, ..
            },
            _,
        ) => {
            assert!(!reason.is_empty());
            assert_eq!(arguments, args(sent));
        }
        other => panic!("expected an ask, got {other:?}"),
    }
}

#[test]
fn a_read_of_ka_toml_changes_nothing_and_is_not_asked_but_an_edit_is() {
    let p = hooks_project(&[]);
    let target = p.root.join(".ka/ka.toml");
    let read = p.tool_call(Event::PreToolUse, "read", json!({"path": target}));
    assert!(
        matches!(
            read.next(),
            Next::ToolCall(
                Permission::Run {
                    pre_approved: false,
                    ..
                },
                _
            )
        ),
        "{:?}",
        read.next()
    );
    let edit = json!({"path": target, "old": "a", "new": "b"});
    let edited = p.tool_call(Event::PreToolUse, "edit", edit);
    assert!(
        matches!(edited.next(), Next::ToolCall(Permission::Ask { .. }, _)),
        "{:?}",
        edited.next()
    );
}

#[test]
fn a_write_to_an_agents_file_that_calls_ka_hooks_is_an_ask() {
    // Dropping the `ka-hooks claude` entry (or Cursor's, Copilot's) switches every guard off as
    // surely as emptying `.ka/ka.toml`.
    let p = hooks_project(&[]);
    for rel in [
        ".claude/settings.json",
        ".cursor/hooks.json",
        ".agents/hooks.json",
    ] {
        let sent = json!({"path": p.root.join(rel), "content": "{}"});
        let outcome = p.tool_call(Event::PreToolUse, "write", sent);
        assert!(
            matches!(permission(&outcome), Permission::Ask { .. }),
            "{rel}: {:?}",
            outcome.next()
        );
    }
}

#[test]
fn a_veto_is_a_block_with_the_reason_for_the_model() {
    let p = hooks_project(&[hook(
        "veto",
        "pre_tool_use",
        "echo 'not here' >&2; exit 2",
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        permission(&outcome),
        Permission::Block {
            reason: "not here".into(),
            context: None
        }
    );
}

#[test]
fn a_halt_is_a_halt_with_the_reason_for_the_user() {
    let p = hooks_project(&[hook(
        "stopper",
        "pre_tool_use",
        r#"echo '{"halt":"out of budget"}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        permission(&outcome),
        Permission::Halt {
            reason: "out of budget".into()
        }
    );
}

/// A deferral and a permission request's rule updates reach the host through `next()` alone
/// (they were only in `Outcome`'s hidden fields): the host's own flow decides a deferred call,
/// and an approval carries the rules to apply with it.
#[test]
fn a_deferral_and_permission_rule_updates_are_in_next() {
    let p = hooks_project(&[hook(
        "later",
        "pre_tool_use",
        r#"echo '{"hookSpecificOutput":{"permissionDecision":"defer"}}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert!(
        matches!(
            permission(&outcome),
            Permission::Run {
                deferred: true,
                pre_approved: false,
                ..
            }
        ),
        "{:?}",
        outcome.next()
    );
    let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
        "behavior": "allow", "destination": "session"});
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedPermissions": [rule]}}});
    let p = hooks_project(&[hook(
        "rules",
        "permission_request",
        &format!("echo '{answer}'"),
        &[],
    )]);
    let outcome = p.tool_call(Event::PermissionRequest, "bash", json!({"command": "ls"}));
    match permission(&outcome) {
        Permission::Run {
            pre_approved: true,
            deferred: false,
            permission_updates,
            ..
        } => assert_eq!(permission_updates, vec![rule]),
        other => panic!("{other:?}"),
    }
}

/// A rewrite runs the rewritten arguments (the host cannot run the originals by forgetting
/// `updated_input`); without an allow it is not pre-approved.
#[test]
fn a_rewrite_runs_the_rewritten_arguments_and_an_allow_pre_approves() {
    let p = hooks_project(&[hook(
        "scrub",
        "pre_tool_use",
        r#"echo '{"updated_input":{"command":"ls -la"}}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        permission(&outcome),
        Permission::Run {
            arguments: args(json!({"command": "ls -la"})),
            pre_approved: false,
            context: None,
            deferred: false,
            permission_updates: Vec::new(),
        }
    );
    let p = hooks_project(&[hook(
        "ok",
        "pre_tool_use",
        r#"echo '{"decision":"allow"}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        permission(&outcome),
        Permission::Run {
            arguments: args(json!({"command": "ls"})),
            pre_approved: true,
            context: None,
            deferred: false,
            permission_updates: Vec::new(),
        }
    );
}

#[test]
fn a_prompt_is_blocked_or_submitted_with_context() {
    let p = hooks_project(&[hook(
        "ctx",
        "user_prompt_submit",
        r#"echo '{"context":"the repo uses tabs"}'"#,
        &[],
    )]);
    let outcome = p.event(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    assert_eq!(
        prompt_of(&outcome),
        Prompt::Submit {
            context: Some("the repo uses tabs".into())
        }
    );
    let p = hooks_project(&[hook(
        "no",
        "user_prompt_submit",
        "echo 'no secrets' >&2; exit 2",
        &[],
    )]);
    let outcome = p.event(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    assert_eq!(
        prompt_of(&outcome),
        Prompt::Block {
            reason: "no secrets".into()
        }
    );
}

#[test]
fn a_tool_result_is_marked_as_an_error_with_the_feedback() {
    let p = hooks_project(&[hook(
        "lint",
        "post_tool_use",
        "echo 'lint failed' >&2; exit 2",
        &[],
    )]);
    let outcome = p.tool_call(Event::PostToolUse, "write", json!({"path": "a.rs"}));
    assert_eq!(
        tool_result(&outcome),
        ToolResult::Block {
            feedback: Some("lint failed".into()),
            context: None
        }
    );
}

#[test]
fn a_stop_keeps_going_or_ends() {
    let p = hooks_project(&[hook(
        "more",
        "stop",
        "echo 'run the tests' >&2; exit 2",
        &[],
    )]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(
        stop_of(&outcome),
        Stop::KeepGoing {
            reason: "run the tests".into(),
            context: None
        }
    );
    let p = hooks_project(&[hook("quiet", "stop", "true", &[])]);
    assert_eq!(
        stop_of(&p.event(Event::Stop, json!({}))),
        Stop::End { context: None }
    );
}

#[test]
fn another_event_continues_with_its_context_or_halts() {
    let p = hooks_project(&[hook(
        "ctx",
        "session_start",
        r#"echo '{"context":"hello"}'"#,
        &[],
    )]);
    let outcome = p.event(Event::SessionStart, json!({"source": "startup"}));
    assert_eq!(
        other(&outcome),
        Other::Continue {
            context: Some("hello".into())
        }
    );
}

/// What the user must hear comes in one value: a failed hook, a note, and a weakening.
#[test]
fn for_user_folds_notes_failures_and_weakenings() {
    let p = Project::with_user_toml(&format!(
        "{SETTINGS}disable_all = true\n\n{}{}",
        hook("broken", "stop", "exit 3", &[]),
        hook("noter", "stop", r#"echo '{"note":"saved"}'"#, &[])
    ));
    let outcome = p.event(Event::Stop, json!({}));
    let for_user = outcome.for_user();
    let all: Vec<&str> = for_user.lines().collect();
    assert!(
        all.iter().any(|l| l.contains("except managed ones is off")),
        "{all:?}"
    );
    let p = hooks_project(&[
        hook("broken", "stop", "exit 3", &[]),
        hook("noter", "stop", r#"echo '{"note":"saved"}'"#, &[]),
    ]);
    let outcome = p.event(Event::Stop, json!({}));
    let for_user = outcome.for_user();
    assert!(for_user.hooks.iter().any(|l| l == "saved"), "{for_user:?}");
    assert!(
        for_user.hooks.iter().any(|l| l.contains("`broken` failed")),
        "{for_user:?}"
    );
}

/// Attack: a project with no `.ka/` whose `.claude/settings.json` calls `ka-hooks claude` (the
/// user's guards live in the user file). Dropping that entry switches every guard off for this
/// project, so a write to it asks, from the repository root and from a directory below it.
#[test]
fn a_write_to_an_agents_file_of_a_project_without_ka_is_an_ask() {
    let p = hooks_project(&[]);
    std::fs::remove_dir(p.root.join(".ka")).expect("no .ka/");
    std::fs::create_dir_all(p.root.join(".git")).expect("a repository");
    std::fs::create_dir_all(p.root.join("src/deep")).expect("a directory below");
    for start in [p.root.clone(), p.root.join("src/deep")] {
        let config = ka_hooks::config::Config::load(&p.options(&start, false)).expect("load");
        assert!(config.project_root.is_none(), "no project layer");
        for rel in [".claude/settings.json", ".cursor/hooks.json"] {
            let sent = json!({"path": p.root.join(rel), "content": "{}"});
            let outcome = config.dispatch(ka_hooks::dispatch::Request::tool_call(
                Event::PreToolUse,
                "write",
                args(sent),
            ));
            assert!(
                matches!(permission(&outcome), Permission::Ask { .. }),
                "{rel} from {}: {:?}",
                start.display(),
                outcome.next()
            );
        }
    }
}

/// What a host that follows `next()` alone delivers: every text of the answer, as often as it
/// appears in it (the `Debug` form holds every field of every variant).
fn times_in(next: &Next, text: &str) -> usize {
    format!("{next:?}").matches(text).count()
}

/// A guard's `context` and `mode` used to reach the model 0 times through `next()`:
/// `Permission::Run` had no field for them.
#[test]
fn a_guards_context_mode_and_message_come_with_the_answer_once() {
    let p = hooks_project(&[hook(
        "ok",
        "pre_tool_use",
        r#"echo '{"decision":"allow","context":"CTX-PRE","mode":"plan","systemMessage":"MSG-PRE"}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    let next = outcome.next();
    match &next {
        Next::ToolCall(
            Permission::Run {
                pre_approved: true,
                context,
                ..
            },
            always,
        ) => {
            assert_eq!(context.as_deref(), Some("CTX-PRE"));
            assert_eq!(always.mode.as_deref(), Some("plan"));
            assert_eq!(always.for_user.lines().collect::<Vec<_>>(), ["MSG-PRE"]);
        }
        other => panic!("expected a pre-approved run, got {other:?}"),
    }
    for text in ["CTX-PRE", "MSG-PRE", "plan"] {
        assert_eq!(times_in(&next, text), 1, "{text} in {next:?}");
    }
    // A veto's and an ask's context reach the model too.
    for (said, blocked) in [
        (r#""decision":"deny""#, true),
        (r#""decision":"ask""#, false),
    ] {
        let p = hooks_project(&[hook(
            "judge",
            "pre_tool_use",
            &format!(r#"echo '{{{said},"reason":"no","context":"CTX-J"}}'"#),
            &[],
        )]);
        let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
        let context = match permission(&outcome) {
            Permission::Block { context, .. } if blocked => context,
            Permission::Ask { context, .. } if !blocked => context,
            other => panic!("{said}: {other:?}"),
        };
        assert_eq!(context.as_deref(), Some("CTX-J"), "{said}");
    }
}

/// A stop hook's `context` used to reach the model 0 times: `Stop::KeepGoing` and `Stop::End`
/// had no field for it.
#[test]
fn a_stop_hooks_context_comes_with_keep_going_and_with_end() {
    let p = hooks_project(&[hook(
        "more",
        "stop",
        r#"echo '{"keep_going":"run the tests","context":"CTX-STOP"}'"#,
        &[],
    )]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(
        stop_of(&outcome),
        Stop::KeepGoing {
            reason: "run the tests".into(),
            context: Some("CTX-STOP".into())
        }
    );
    assert_eq!(times_in(&outcome.next(), "CTX-STOP"), 1);
    let p = hooks_project(&[hook("note", "stop", r#"echo '{"context":"CTX-END"}'"#, &[])]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(
        stop_of(&outcome),
        Stop::End {
            context: Some("CTX-END".into())
        }
    );
}

/// A tool result marked as an error keeps the hook's context as well as its feedback; each
/// text is in the answer once.
#[test]
fn a_result_marked_as_an_error_keeps_its_context() {
    let p = hooks_project(&[hook(
        "lint",
        "post_tool_use",
        r#"echo '{"decision":"block","reason":"FB-LINT","context":"CTX-LINT"}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PostToolUse, "write", json!({"path": "a.rs"}));
    assert_eq!(
        tool_result(&outcome),
        ToolResult::Block {
            feedback: Some("FB-LINT".into()),
            context: Some("CTX-LINT".into())
        }
    );
    let next = outcome.next();
    assert_eq!(times_in(&next, "FB-LINT"), 1, "{next:?}");
    assert_eq!(times_in(&next, "CTX-LINT"), 1, "{next:?}");
}
