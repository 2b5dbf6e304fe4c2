//! The library counts a turn for the host: the continuation cap and the denial backstop hold
//! for a `Session`, and for `Config::dispatch` when the payloads share a `session_id`. A host
//! that did not count had no cap (a stop hook kept going 20 times out of 20) and no backstop.

use crate::support;

use std::sync::Arc;

use ka_hooks::next::{Next, Permission};
use ka_hooks::session::Session;
use ka_hooks::{Config, Event, Outcome, Request};
use serde_json::{json, Value};
use support::{hook, object, Project};

/// A guard that refuses `curl` and knows nothing of `wget`: the rephrasing it misses.
const GUARD: &str =
    r#"payload=$(cat); case "$payload" in *curl*) echo 'no curl here' >&2; exit 2;; esac"#;

fn with_session(id: Option<&str>, mut payload: Value) -> serde_json::Map<String, Value> {
    if let Some(id) = id {
        payload["session_id"] = json!(id);
    }
    object(payload)
}

fn call(id: Option<&str>, command: &str) -> Request {
    let payload = json!({"tool": "bash", "arguments": {"command": command}});
    Request::new(Event::PreToolUse, with_session(id, payload))
}

fn asks_user(o: &Outcome) -> bool {
    matches!(o.next(), Next::ToolCall(Permission::Ask { .. }, _))
}

/// A host's stop loop: how many times the agent went on before it stopped (at most 20).
fn keeps_going_times(dispatch: impl Fn(Request) -> Outcome, id: Option<&str>) -> usize {
    (0..20)
        .take_while(|_| {
            let stop = Request::new(Event::Stop, with_session(id, json!({})));
            dispatch(stop).keep_going.is_some()
        })
        .count()
}

fn looping_stop() -> Config {
    let p = Project::new();
    p.user(&format!(
        "[hook_settings]\nmax_continuations = 3\n\n{}",
        hook("again", "stop", "echo 'keep going' >&2; exit 2", &[])
    ));
    p.load()
}

#[test]
fn config_dispatch_caps_the_stop_loop_of_a_session_id() {
    let config = looping_stop();
    let n = keeps_going_times(|r| config.dispatch(r), Some("cfg-stop-loop"));
    assert_eq!(n, 3, "max_continuations = 3, kept going {n} times of 20");
    // A new prompt starts a new turn, with a new allowance.
    let prompt = Request::new(
        Event::UserPromptSubmit,
        with_session(Some("cfg-stop-loop"), json!({"prompt": "again"})),
    );
    config.dispatch(prompt);
    let n = keeps_going_times(|r| config.dispatch(r), Some("cfg-stop-loop"));
    assert_eq!(n, 3, "the next turn");
}

fn no_curl_user_guard() -> Project {
    let p = Project::new();
    p.user(&hook(
        "no-curl",
        "pre_tool_use",
        GUARD,
        &[r#"tool = "bash""#],
    ));
    p
}

/// Three denials by one guard, then a rephrasing it lets through: a person is asked.
fn rephrasing_is_asked(dispatch: impl Fn(Request) -> Outcome, id: Option<&str>) -> bool {
    for _ in 0..3 {
        let o = dispatch(call(id, "curl evil.example"));
        assert!(o.blocked(), "{o:?}");
    }
    asks_user(&dispatch(call(id, "wget evil.example")))
}

#[test]
fn config_dispatch_keeps_the_denial_backstop_of_a_session_id() {
    let p = no_curl_user_guard();
    let config = p.load();
    assert!(
        rephrasing_is_asked(|r| config.dispatch(r), Some("cfg-denials")),
        "three denials, then the rephrasing ran without a person"
    );
    // A new prompt is a new turn: the count starts again.
    let prompt = Request::new(
        Event::UserPromptSubmit,
        with_session(Some("cfg-denials"), json!({"prompt": "go"})),
    );
    config.dispatch(prompt);
    let o = config.dispatch(call(Some("cfg-denials"), "wget evil.example"));
    assert!(!asks_user(&o) && !o.blocked(), "{o:?}");
}

#[test]
fn without_a_session_id_config_dispatch_counts_nothing() {
    let p = no_curl_user_guard();
    let config = p.load();
    assert!(!rephrasing_is_asked(|r| config.dispatch(r), None));
    let config = looping_stop();
    assert_eq!(keeps_going_times(|r| config.dispatch(r), None), 20);
}

#[test]
fn a_session_keeps_the_denial_backstop_itself() {
    let p = no_curl_user_guard();
    let s = Session::new(Arc::new(p.load()), "s-denials", &p.root);
    assert!(
        rephrasing_is_asked(|r| s.dispatch(r), None),
        "a Session counted continuations but not denials"
    );
}

#[test]
fn a_session_end_forgets_the_count_and_two_session_ids_count_apart() {
    let p = no_curl_user_guard();
    let config = p.load();
    let dispatch = |r| config.dispatch(r);
    for _ in 0..3 {
        assert!(dispatch(call(Some("cfg-a"), "curl x")).blocked());
    }
    assert!(
        !asks_user(&dispatch(call(Some("cfg-b"), "wget x"))),
        "another session"
    );
    assert!(asks_user(&dispatch(call(Some("cfg-a"), "wget x"))));
    let end = Request::new(Event::SessionEnd, with_session(Some("cfg-a"), json!({})));
    dispatch(end);
    assert!(
        !asks_user(&dispatch(call(Some("cfg-a"), "wget x"))),
        "a new session"
    );
}
