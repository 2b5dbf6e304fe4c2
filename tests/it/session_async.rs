//! The `tokio` feature (#23 item 4): `dispatch_async` without glue; a dropped future ends its
//! hooks. Runs with `--features tokio` (scripts/test.sh).

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

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

#[track_caller]
fn within(secs: u64, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
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
