//! Stop hooks that keep the agent going (exit 2, `keep_going`, Claude's `decision: "block"`),
//! governed by `[hook_settings] max_continuations`; `halt`; matchers on non-tool events.

use crate::support;
use crate::support::hooks_project;

use ka_hooks::Event;
use serde_json::json;
use support::{has_diagnostic, hook, Project};

#[test]
fn stop_exit_2_keeps_the_agent_going_with_stderr_as_the_next_input() {
    let p = hooks_project(&[hook(
        "tests-pass",
        "stop",
        "echo 'tests still fail: fix them' >&2; exit 2",
        &[],
    )]);
    let outcome = p.event(Event::Stop, json!({"stop": "done"}));
    assert_eq!(
        outcome.keep_going.as_deref(),
        Some("tests still fail: fix them")
    );
    assert!(!outcome.blocked());
}

#[test]
fn claude_block_and_ka_keep_going_on_stop_join_in_hook_order() {
    let p = hooks_project(&[
        hook(
            "claude-style",
            "Stop",
            r#"echo '{"decision":"block","reason":"run the linter"}'"#,
            &[],
        ),
        hook(
            "ka-style",
            "stop",
            r#"echo '{"keep_going":"update the changelog"}'"#,
            &[],
        ),
    ]);
    let outcome = p.event(Event::Stop, json!({"stop": "done"}));
    assert_eq!(
        outcome.keep_going.as_deref(),
        Some("run the linter\nupdate the changelog")
    );
}

#[test]
fn past_max_continuations_the_request_is_recorded_not_applied() {
    let p = hooks_project(&[hook("loop", "stop", "echo 'again' >&2; exit 2", &[])]);
    let outcome = p.event(
        Event::Stop,
        json!({"stop_hook_active": true, "continuations": 7}),
    );
    assert_eq!(outcome.keep_going.as_deref(), Some("again"));
    let outcome = p.event(
        Event::Stop,
        json!({"stop_hook_active": true, "continuations": 8}),
    );
    assert_eq!(outcome.keep_going, None);
    assert!(
        outcome
            .notes
            .iter()
            .any(|n| n.contains("max_continuations = 8") && n.contains("the agent stops")),
        "{:?}",
        outcome.notes
    );
    // Said once: in the note, which names the request that was not applied.
    assert!(outcome.notes.iter().any(|n| n.contains("(\"again\")")));
    assert!(!has_diagnostic(&outcome, &["max_continuations"]));
}

#[test]
fn max_continuations_is_a_setting() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 2\n{}",
        hook("loop", "stop", "echo 'again' >&2; exit 2", &[])
    ));
    let outcome = p.event(Event::Stop, json!({"continuations": 1}));
    assert!(outcome.keep_going.is_some());
    let outcome = p.event(Event::Stop, json!({"continuations": 2}));
    assert_eq!(outcome.keep_going, None);
}

#[test]
fn max_continuations_out_of_range_is_a_config_error() {
    let p = Project::with_user_toml("[hook_settings]\nmax_continuations = 100000\n");
    let output = p.cli().arg("check").output().expect("ka-hooks check");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    assert!(stderr.contains("max_continuations"), "{stderr}");
}

#[test]
fn a_halt_wins_over_keep_going() {
    let p = hooks_project(&[
        hook("loop", "stop", "echo 'again' >&2; exit 2", &[]),
        hook(
            "budget",
            "stop",
            r#"echo '{"continue":false,"stopReason":"budget spent"}'"#,
            &[],
        ),
    ]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(outcome.halt.as_deref(), Some("budget spent"));
    assert_eq!(outcome.keep_going, None);
}

#[test]
fn on_error_block_on_stop_never_keeps_the_agent_going() {
    let p = hooks_project(&[hook("broken", "stop", "exit 3", &["on_error = \"block\""])]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(outcome.keep_going, None);
}

#[test]
fn subagent_teammate_and_task_events_keep_going_like_stop() {
    for event in [
        Event::SubagentStop,
        Event::TeammateIdle,
        Event::TaskCompleted,
    ] {
        let p = hooks_project(&[hook(
            "more",
            event.as_str(),
            "echo 'not yet' >&2; exit 2",
            &[],
        )]);
        let outcome = p.event(event, json!({}));
        assert_eq!(outcome.keep_going.as_deref(), Some("not yet"), "{event}");
    }
}

#[test]
fn session_start_matcher_matches_the_source() {
    let p = hooks_project(&[
        hook(
            "on-startup",
            "session_start",
            r#"echo '{"note":"startup"}'"#,
            &["matcher = \"startup\""],
        ),
        hook(
            "on-resume-or-clear",
            "SessionStart",
            r#"echo '{"note":"resume|clear"}'"#,
            &["matcher = \"resume|clear\""],
        ),
        hook("always", "session_start", r#"echo '{"note":"any"}'"#, &[]),
    ]);
    let outcome = p.event(Event::SessionStart, json!({"source": "startup"}));
    assert_eq!(outcome.notes, ["startup", "any"]);
    let outcome = p.event(Event::SessionStart, json!({"source": "clear"}));
    assert_eq!(outcome.notes, ["resume|clear", "any"]);
    let outcome = p.event(Event::SessionStart, json!({}));
    assert_eq!(outcome.notes, ["any"]);
}

#[test]
fn compact_and_notification_matchers_match_trigger_and_type() {
    let p = hooks_project(&[
        hook(
            "auto-only",
            "pre_compact",
            r#"echo '{"note":"auto"}'"#,
            &["matcher = \"auto\""],
        ),
        hook(
            "idle",
            "Notification",
            r#"echo '{"note":"idle"}'"#,
            &["matcher = \"idle_prompt\""],
        ),
    ]);
    assert_eq!(
        p.event(Event::PreCompact, json!({"trigger": "auto"})).notes,
        ["auto"]
    );
    assert!(p
        .event(Event::PreCompact, json!({"trigger": "manual"}))
        .notes
        .is_empty());
    assert_eq!(
        p.event(
            Event::Notification,
            json!({"notification_type": "idle_prompt"})
        )
        .notes,
        ["idle"]
    );
}

#[test]
fn matcher_on_an_event_with_nothing_to_match_is_a_config_error() {
    let p = Project::with_user_toml(&hook(
        "x",
        "user_prompt_submit",
        "true",
        &["matcher = \"x\""],
    ));
    let output = p.cli().arg("check").output().expect("ka-hooks check");
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("`matcher` does not apply to user_prompt_submit"),
        "{text}"
    );
}

#[test]
fn every_new_event_is_hookable_by_its_agent_spelling() {
    for event in Event::ALL {
        let p = hooks_project(&[hook(
            "say",
            event.claude_name(),
            r#"echo '{"note":"ran"}'"#,
            &[],
        )]);
        let outcome = if event.is_tool_event() {
            p.tool_call(event, "bash", json!({"command": "ls"}))
        } else {
            p.event(event, json!({}))
        };
        assert_eq!(outcome.notes, ["ran"], "{event}");
        let info = event.info();
        assert!(
            !info.when.is_empty() && !info.exit_two.is_empty(),
            "{event}"
        );
    }
}

#[test]
fn a_huge_stderr_is_cut_before_it_becomes_the_models_input() {
    let p = hooks_project(&[hook(
        "loud",
        "stop",
        "head -c 30000 /dev/zero | tr '\\0' 'x' >&2; exit 2",
        &[],
    )]);
    let outcome = p.event(Event::Stop, json!({}));
    let text = outcome.keep_going.clone().expect("keeps going");
    assert_eq!(text.chars().count(), 10_000);
    assert!(has_diagnostic(&outcome, &["cut to 10000"]));
}

#[test]
fn a_report_only_stop_hook_says_it_would_keep_going_and_does_not() {
    let p = hooks_project(&[
        hook(
            "trial",
            "stop",
            "echo 'not done' >&2; exit 2",
            &["enforce = false"],
        ),
        hook(
            "trial-halt",
            "stop",
            r#"echo '{"halt":"enough"}'"#,
            &["enforce = false"],
        ),
    ]);
    let outcome = p.event(Event::Stop, json!({}));
    assert_eq!(outcome.keep_going, None);
    assert_eq!(outcome.halt, None);
    let effects: Vec<&str> = outcome
        .report_only
        .iter()
        .map(|w| w.effect.as_str())
        .collect();
    assert_eq!(effects, ["keep_going", "halt"]);
}
