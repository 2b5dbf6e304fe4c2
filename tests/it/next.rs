//! `Outcome::next()` is the typed answer a host matches, one enum per kind of
//! event, and `Outcome::for_user()` is everything the user must hear. The examples used to check
//! only `blocked`, so a host that copied them ran calls that ka's own protection marked `ask`.

use crate::support;

use ka_hooks::next::{Next, Other, Permission, Prompt, Stop, ToolResult};
use ka_hooks::Event;
use serde_json::{json, Map, Value};
use support::{hook, object, Project};

const SETTINGS: &str = "[hook_settings]\ntimeout = 10\n\n";

fn project(hooks: &[String]) -> Project {
    Project::with_user_toml(&format!("{SETTINGS}{}", hooks.concat()))
}

fn args(value: Value) -> Map<String, Value> {
    object(value)
}

/// Attack: a host that follows the docs checks `blocked`, and runs a write to `.ka/ka.toml`
/// that the built-in protection wants a human to approve. `next()` makes it an `Ask`.
#[test]
fn a_write_to_ka_toml_is_an_ask_with_its_arguments() {
    let p = project(&[]);
    let target = p.root.join(".ka/ka.toml");
    let sent = json!({"path": target, "content": "[[hooks]]\n"});
    let outcome = p.tool_call(Event::PreToolUse, "write", sent.clone());
    match outcome.next() {
        Next::ToolCall(Permission::Ask { reason, arguments }) => {
            assert!(!reason.is_empty());
            assert_eq!(arguments, args(sent));
        }
        other => panic!("expected an ask, got {other:?}"),
    }
}

#[test]
fn a_read_of_ka_toml_changes_nothing_and_is_not_asked_but_an_edit_is() {
    let p = project(&[]);
    let target = p.root.join(".ka/ka.toml");
    let read = p.tool_call(Event::PreToolUse, "read", json!({"path": target}));
    assert!(
        matches!(
            read.next(),
            Next::ToolCall(Permission::Run {
                pre_approved: false,
                ..
            })
        ),
        "{:?}",
        read.next()
    );
    let edit = json!({"path": target, "old": "a", "new": "b"});
    let edited = p.tool_call(Event::PreToolUse, "edit", edit);
    assert!(
        matches!(edited.next(), Next::ToolCall(Permission::Ask { .. })),
        "{:?}",
        edited.next()
    );
}

#[test]
fn a_write_to_an_agents_file_that_calls_ka_hooks_is_an_ask() {
    // Dropping the `ka-hooks claude` entry (or Cursor's, Copilot's) switches every guard off as
    // surely as emptying `.ka/ka.toml`.
    let p = project(&[]);
    for rel in [
        ".claude/settings.json",
        ".cursor/hooks.json",
        ".agents/hooks.json",
    ] {
        let sent = json!({"path": p.root.join(rel), "content": "{}"});
        let outcome = p.tool_call(Event::PreToolUse, "write", sent);
        assert!(
            matches!(outcome.next(), Next::ToolCall(Permission::Ask { .. })),
            "{rel}: {:?}",
            outcome.next()
        );
    }
}

#[test]
fn a_veto_is_a_block_with_the_reason_for_the_model() {
    let p = project(&[hook(
        "veto",
        "pre_tool_use",
        "echo 'not here' >&2; exit 2",
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        outcome.next(),
        Next::ToolCall(Permission::Block {
            reason: "not here".into()
        })
    );
}

#[test]
fn a_halt_is_a_halt_with_the_reason_for_the_user() {
    let p = project(&[hook(
        "stopper",
        "pre_tool_use",
        r#"echo '{"halt":"out of budget"}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        outcome.next(),
        Next::ToolCall(Permission::Halt {
            reason: "out of budget".into()
        })
    );
}

/// A rewrite runs the rewritten arguments (the host cannot run the originals by forgetting
/// `updated_input`); without an allow it is not pre-approved.
#[test]
fn a_rewrite_runs_the_rewritten_arguments_and_an_allow_pre_approves() {
    let p = project(&[hook(
        "scrub",
        "pre_tool_use",
        r#"echo '{"updated_input":{"command":"ls -la"}}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        outcome.next(),
        Next::ToolCall(Permission::Run {
            arguments: args(json!({"command": "ls -la"})),
            pre_approved: false
        })
    );
    let p = project(&[hook(
        "ok",
        "pre_tool_use",
        r#"echo '{"decision":"allow"}'"#,
        &[],
    )]);
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert_eq!(
        outcome.next(),
        Next::ToolCall(Permission::Run {
            arguments: args(json!({"command": "ls"})),
            pre_approved: true
        })
    );
}

#[test]
fn a_prompt_is_blocked_or_submitted_with_context() {
    let p = project(&[hook(
        "ctx",
        "user_prompt_submit",
        r#"echo '{"context":"the repo uses tabs"}'"#,
        &[],
    )]);
    let outcome = p.event(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    assert_eq!(
        outcome.next(),
        Next::Prompt(Prompt::Submit {
            context: Some("the repo uses tabs".into())
        })
    );
    let p = project(&[hook(
        "no",
        "user_prompt_submit",
        "echo 'no secrets' >&2; exit 2",
        &[],
    )]);
    let outcome = p.event(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    assert_eq!(
        outcome.next(),
        Next::Prompt(Prompt::Block {
            reason: "no secrets".into()
        })
    );
}

#[test]
fn a_tool_result_is_marked_as_an_error_with_the_feedback() {
    let p = project(&[hook(
        "lint",
        "post_tool_use",
        "echo 'lint failed' >&2; exit 2",
        &[],
    )]);
    let outcome = p.tool_call(Event::PostToolUse, "write", json!({"path": "a.rs"}));
    assert_eq!(
        outcome.next(),
        Next::ToolResult(ToolResult::Block {
            feedback: Some("lint failed".into())
        })
    );
}

#[test]
fn a_stop_keeps_going_or_ends() {
    let p = project(&[hook(
        "more",
        "stop",
        "echo 'run the tests' >&2; exit 2",
        &[],
    )]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(
        outcome.next(),
        Next::Stop(Stop::KeepGoing {
            reason: "run the tests".into()
        })
    );
    let p = project(&[hook("quiet", "stop", "true", &[])]);
    assert_eq!(
        p.event(Event::Stop, json!({})).next(),
        Next::Stop(Stop::End)
    );
}

#[test]
fn another_event_continues_with_its_context_or_halts() {
    let p = project(&[hook(
        "ctx",
        "session_start",
        r#"echo '{"context":"hello"}'"#,
        &[],
    )]);
    let outcome = p.event(Event::SessionStart, json!({"source": "startup"}));
    assert_eq!(
        outcome.next(),
        Next::Other(Other::Continue {
            context: Some("hello".into())
        })
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
    let p = project(&[
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
    let p = project(&[]);
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
                matches!(outcome.next(), Next::ToolCall(Permission::Ask { .. })),
                "{rel} from {}: {:?}",
                start.display(),
                outcome.next()
            );
        }
    }
}
