//! The `tokio` feature: `dispatch_async` without glue; a dropped future ends its
//! hooks. Runs with `--features tokio` (scripts/test.sh).

use crate::support;
use crate::support::within;

use std::sync::Arc;

use serde_json::json;
use support::{group_gone, hook, object, pid_in, Project};

use ka_hooks::session::Session;
use ka_hooks::{Event, Request};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("tokio runtime")
}

fn guard_call() -> Request {
    Request::tool_call(Event::PreToolUse, "bash", object(json!({"command": "ls"})))
}

#[test]
fn config_dispatch_async_answers_like_dispatch() {
    let p = Project::new();
    p.user(&hook(
        "no",
        "pre_tool_use",
        "echo 'not now' >&2; exit 2",
        &[],
    ));
    let config = Arc::new(p.load());
    let outcome = runtime().block_on(Arc::clone(&config).dispatch_async(guard_call()));
    assert!(outcome.blocked(), "{outcome:?}");
    assert_eq!(outcome.reason(), Some("not now"));
}

#[test]
fn dropping_the_future_mid_hook_ends_its_process_group() {
    let p = Project::new();
    p.user(&hook(
        "slow",
        "pre_tool_use",
        "echo $$ > pid; exec sleep 60",
        &[],
    ));
    let config = Arc::new(p.load());
    let rt = runtime();
    let task = rt.spawn(config.dispatch_async(guard_call()));
    within(10, "the hook never started", || p.exists("pid"));
    let pid = pid_in(&p, "pid");
    // The turn is abandoned: the task is aborted, which drops the dispatch's future.
    task.abort();
    let aborted = rt.block_on(task);
    assert!(
        aborted.is_err_and(|e| e.is_cancelled()),
        "the task was not aborted"
    );
    within(10, "the hook outlived its dropped future", || {
        group_gone(pid)
    });
}

#[test]
fn session_dispatch_async_counts_the_stop_loop_itself() {
    let p = Project::new();
    p.user(&format!(
        "[hook_settings]\nmax_continuations = 2\n\n{}",
        hook("again", "stop", "echo 'keep going' >&2; exit 2", &[])
    ));
    let s = Session::new(Arc::new(p.load()), "s-async-stop", &p.root);
    let rounds = runtime().block_on(async {
        let mut rounds = 0;
        for _ in 0..10 {
            let stop = Request::new(Event::Stop, object(json!({})));
            let o = s.dispatch_async(stop).await;
            if o.keep_going.is_none() {
                break;
            }
            rounds += 1;
        }
        rounds
    });
    assert_eq!(rounds, 2);
}

/// Once the hook of `task` wrote its pid, abort the task: its dispatch's future is dropped
/// mid-hook.
fn drop_mid_hook(
    rt: &tokio::runtime::Runtime,
    task: tokio::task::JoinHandle<ka_hooks::Outcome>,
    p: &Project,
) {
    within(10, "the guard never started", || p.exists("pid"));
    task.abort();
    let aborted = rt.block_on(task);
    assert!(
        aborted.is_err_and(|e| e.is_cancelled()),
        "the guard answered"
    );
}

/// Hooks for every kind of event that leave a marker when they run; the `pre_tool_use` one
/// hangs while the file `hang` exists.
fn marking_hooks() -> String {
    [
        hook(
            "guard",
            "pre_tool_use",
            "if [ -f hang ]; then echo $$ > pid; exec sleep 60; fi; touch ran-pre",
            &[],
        ),
        hook("prompt", "user_prompt_submit", "touch ran-prompt", &[]),
        hook("post", "post_tool_use", "touch ran-post", &[]),
        hook("stop", "stop", "touch ran-stop", &[]),
        hook("end", "session_end", "touch ran-end", &[]),
    ]
    .concat()
}

#[test]
fn dropping_one_session_future_cancels_that_dispatch_and_never_the_session() {
    let p = Project::new();
    p.user(&marking_hooks());
    p.write("hang", "");
    let s = Arc::new(Session::new(Arc::new(p.load()), "s-drop-one", &p.root));
    let rt = runtime();
    let task = rt.spawn({
        let s = Arc::clone(&s);
        async move { s.dispatch_async(guard_call()).await }
    });
    drop_mid_hook(&rt, task, &p);
    let pid = pid_in(&p, "pid");
    within(10, "the dropped dispatch's hook outlived it", || {
        group_gone(pid)
    });
    std::fs::remove_file(p.root.join("hang")).expect("rm hang");

    let steps = [
        (
            Event::UserPromptSubmit,
            json!({"prompt": "go on"}),
            "ran-prompt",
        ),
        (
            Event::PreToolUse,
            json!({"tool": "bash", "arguments": {"command": "ls"}}),
            "ran-pre",
        ),
        (
            Event::PostToolUse,
            json!({"tool": "bash", "arguments": {"command": "ls"}, "result": "ok"}),
            "ran-post",
        ),
        (Event::Stop, json!({}), "ran-stop"),
        (Event::SessionEnd, json!({}), "ran-end"),
    ];
    for (event, payload, marker) in steps {
        let o = rt.block_on(s.dispatch_async(Request::new(event, object(payload))));
        assert_eq!(
            o.cancelled, None,
            "{event}: the session was cancelled: {o:?}"
        );
        assert!(!o.blocked(), "{event} was blocked: {o:?}");
        assert!(p.exists(marker), "the {event} hook did not run: {o:?}");
    }
}

#[test]
fn dropping_one_future_leaves_the_hosts_shared_token_and_its_other_dispatches_alone() {
    let p = Project::new();
    p.user(&marking_hooks());
    p.write("hang", "");
    let config = Arc::new(p.load());
    let esc = ka_hooks::CancelToken::new(); // the turn's Esc, given to every call of the turn
    let rt = runtime();
    let first = guard_call().with_cancel(esc.clone());
    let task = rt.spawn(Arc::clone(&config).dispatch_async(first));
    drop_mid_hook(&rt, task, &p);
    let pid = pid_in(&p, "pid");
    within(10, "the dropped dispatch's hook outlived it", || {
        group_gone(pid)
    });
    assert!(
        !esc.is_cancelled(),
        "dropping one future cancelled the host's token"
    );
    std::fs::remove_file(p.root.join("hang")).expect("rm hang");
    let o = rt.block_on(Arc::clone(&config).dispatch_async(guard_call().with_cancel(esc.clone())));
    assert_eq!(o.cancelled, None, "{o:?}");
    assert!(
        p.exists("ran-pre"),
        "the next call's guard did not run: {o:?}"
    );
    let s = Arc::new(Session::new(Arc::clone(&config), "s-shared-esc", &p.root));
    p.write("hang", "");
    std::fs::remove_file(p.root.join("pid")).expect("rm pid");
    let task = rt.spawn({
        let (s, esc) = (Arc::clone(&s), esc.clone());
        async move { s.dispatch_async(guard_call().with_cancel(esc)).await }
    });
    drop_mid_hook(&rt, task, &p);
    assert!(
        !esc.is_cancelled(),
        "dropping a session's future cancelled the host's token"
    );
    let pid = pid_in(&p, "pid");
    within(10, "the dropped dispatch's hook outlived it", || {
        group_gone(pid)
    });
}

/// `Config::dispatch_async` counts by the payload's `session_id` as `Config::dispatch` does:
/// the stop loop is capped and the turn's denials reach the backstop.
#[test]
fn config_dispatch_async_counts_a_session_id() {
    let p = Project::new();
    p.user(&format!(
        "[hook_settings]\nmax_continuations = 3\ndenial_backstop = 2\n\n{}{}",
        hook("again", "stop", "echo 'keep going' >&2; exit 2", &[]),
        hook(
            "no-curl",
            "pre_tool_use",
            r#"case "$(cat)" in *curl*) echo 'no curl' >&2; exit 2;; esac"#,
            &[r#"tool = "bash""#],
        ),
    ));
    let config = Arc::new(p.load());
    let rt = runtime();
    let with_id = |mut payload: serde_json::Value| {
        payload["session_id"] = json!("async-counted");
        object(payload)
    };
    let mut kept_going = 0;
    for _ in 0..20 {
        let stop = Request::new(Event::Stop, with_id(json!({})));
        if rt
            .block_on(Arc::clone(&config).dispatch_async(stop))
            .keep_going
            .is_none()
        {
            break;
        }
        kept_going += 1;
    }
    assert_eq!(
        kept_going, 3,
        "max_continuations = 3 through dispatch_async"
    );
    let bash = |command: &str| {
        let call = json!({"tool": "bash", "arguments": {"command": command}});
        Request::new(Event::PreToolUse, with_id(call))
    };
    for _ in 0..2 {
        let o = rt.block_on(Arc::clone(&config).dispatch_async(bash("curl x")));
        assert!(o.blocked(), "{o:?}");
    }
    let o = rt.block_on(Arc::clone(&config).dispatch_async(bash("wget x")));
    assert!(
        matches!(
            o.next(),
            ka_hooks::next::Next::ToolCall(ka_hooks::next::Permission::Ask { .. }, _)
        ),
        "after two denials a person is asked: {:?}",
        o.next()
    );
}
