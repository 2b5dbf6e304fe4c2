//! Cancelling a dispatch from the library: a `CancelToken` from another thread, or a deadline.
//! Every hook group is killed, the cancelled hooks say so, and a cancelled
//! guard never reads as allowed.

use crate::support;

use std::time::{Duration, Instant};

use ka_hooks::outcome::Status;
use ka_hooks::{CancelToken, Event, Request};
use serde_json::json;
use support::{eventually, group_gone, hook, object, pid_in, process_gone, report, Project};

/// Far beyond any test: only a cancel can end these hooks early.
const LONG: &str = "timeout = 60";

/// A hook that records its pid and a background child's, then sleeps.
fn sleeper(name: &str, event: &str) -> String {
    hook(
        name,
        event,
        &format!("sleep 1000 & echo $! > {name}.bg; echo $$ > {name}.pid; sleep 1000"),
        &[LONG],
    )
}

/// Wait until the hook wrote its pid file.
fn started(p: &Project, name: &str) -> i32 {
    let rel = format!("{name}.pid");
    eventually(&format!("{name} never started"), || {
        p.read(&rel).is_some_and(|t| t.ends_with('\n'))
    });
    pid_in(p, &rel)
}

#[test]
fn cancel_from_another_thread_blocks_the_guard_and_kills_every_group() {
    let p = Project::with_user_toml(
        &[
            sleeper("slow-guard", "pre_tool_use"),
            hook("later", "pre_tool_use", "touch later.ran", &[]),
        ]
        .concat(),
    );
    let config = p.load();
    let token = CancelToken::new();
    let request = Request::tool_call(
        Event::PreToolUse,
        "bash",
        object(json!({"command": "rm -rf /"})),
    )
    .with_cancel(token.clone());
    let began = Instant::now();
    let outcome = std::thread::scope(|s| {
        let run = s.spawn(|| config.dispatch(request));
        let pid = started(&p, "slow-guard");
        token.cancel();
        let outcome = run.join().expect("dispatch thread");
        eventually("the cancelled hook survived", || process_gone(pid));
        eventually("its group survived", || group_gone(pid));
        outcome
    });
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    let bg = pid_in(&p, "slow-guard.bg");
    eventually("the hook's background child survived", || process_gone(bg));

    assert!(
        outcome.blocked(),
        "a cancelled guard never reads as allowed"
    );
    let reason = outcome.reason().unwrap_or_default();
    assert!(reason.contains("cancelled"), "{reason}");
    assert_eq!(
        outcome.cancelled.as_deref(),
        Some("cancelled by the caller")
    );
    assert_eq!(outcome.decision(), None);
    assert_eq!(report(&outcome, "slow-guard").status, Status::Cancelled);
    assert_eq!(report(&outcome, "later").status, Status::Cancelled);
    assert!(!p.exists("later.ran"), "a hook started after the cancel");
    assert!(!outcome.any_hook_failed(), "cancelled is not failed");
}

#[test]
fn a_deadline_cancels_concurrent_hooks_without_blocking_an_advisory_event() {
    let p = Project::with_user_toml(&[sleeper("a", "stop"), sleeper("b", "stop")].concat());
    let began = Instant::now();
    let outcome = p.dispatch(
        Request::new(Event::Stop, object(json!({"stop": "done"})))
            .with_deadline(Instant::now() + Duration::from_millis(500)),
    );
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    for name in ["a", "b"] {
        let r = report(&outcome, name);
        assert_eq!(r.status, Status::Cancelled, "{name}");
        assert!(!r.timed_out, "{name}: a deadline is not the hook's timeout");
        let pid = pid_in(&p, &format!("{name}.pid"));
        eventually("a hook outlived the deadline", || group_gone(pid));
    }
    assert!(!outcome.blocked(), "stop cannot be blocked");
    assert_eq!(
        outcome.cancelled.as_deref(),
        Some("the dispatch deadline passed")
    );
}

#[test]
fn a_token_cancelled_before_the_dispatch_starts_no_hook() {
    let p = Project::with_user_toml(&hook("guard", "user_prompt_submit", "touch guard.ran", &[]));
    let token = CancelToken::new();
    token.cancel();
    let outcome = p.dispatch(
        Request::new(Event::UserPromptSubmit, object(json!({"prompt": "hi"}))).with_cancel(token),
    );
    assert!(!p.exists("guard.ran"));
    assert_eq!(report(&outcome, "guard").status, Status::Cancelled);
    assert!(outcome.blocked(), "a cancelled prompt guard blocks");
}

#[test]
fn an_uncancelled_token_changes_nothing() {
    let p = Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        r#"echo '{"decision":"allow"}'"#,
        &[],
    ));
    let outcome = p.dispatch(
        Request::tool_call(Event::PreToolUse, "bash", object(json!({"command": "ls"})))
            .with_cancel(CancelToken::new())
            .with_deadline(Instant::now() + Duration::from_secs(60)),
    );
    assert_eq!(report(&outcome, "guard").status, Status::Ok);
    assert!(!outcome.blocked());
    assert_eq!(outcome.cancelled, None);
}
