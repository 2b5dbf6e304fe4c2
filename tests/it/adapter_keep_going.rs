//! `ka-hooks claude` on Stop: a hook keeps the turn going, and the adapter keeps the turn's
//! count in the data dir (keyed by session id) so `max_continuations` holds across the separate
//! processes Claude Code starts for each stop.

use crate::support;

use serde_json::{json, Value};
use support::{hook, Project};

fn claude_answer(p: &Project, payload: &Value) -> Value {
    let output = p
        .cli()
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks claude");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    if stdout.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn claude_stop(p: &Project, session: &str, active: bool) -> Value {
    claude_answer(
        p,
        &json!({"session_id": session, "cwd": p.root, "hook_event_name": "Stop",
                "stop_hook_active": active}),
    )
}

fn kept_going(answer: &Value) -> bool {
    answer["decision"] == "block"
}

fn capped(answer: &Value) -> bool {
    answer.get("decision").is_none()
        && answer["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("max_continuations = 3"))
}

fn looping(command: &str) -> Project {
    Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 3\n{}",
        hook("loop", "stop", command, &[])
    ))
}

#[test]
fn a_reason_that_repeats_word_for_word_counts_once() {
    let p = looping("echo 'tests still fail' >&2; exit 2");
    assert!(kept_going(&claude_stop(&p, "s1", false))); // count 0 -> 1
    assert!(kept_going(&claude_stop(&p, "s1", true))); // 1 -> 2: the same text again counts one
    assert!(kept_going(&claude_stop(&p, "s1", true))); // 2 -> 3: max_continuations = 3 lets 3 happen
    let answer = claude_stop(&p, "s1", true);
    assert!(capped(&answer), "{answer}");
}

#[test]
fn reasons_that_change_count_once_each_until_the_cap() {
    let p = looping(
        r#"n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo "attempt $n: tests still fail" >&2; exit 2"#,
    );
    assert!(kept_going(&claude_stop(&p, "s2", false)));
    assert!(kept_going(&claude_stop(&p, "s2", true)));
    assert!(kept_going(&claude_stop(&p, "s2", true)));
    let answer = claude_stop(&p, "s2", true);
    assert!(capped(&answer), "{answer}");
}

#[test]
fn the_hook_sees_the_count_and_a_new_turn_or_session_starts_over() {
    let p = looping("cat > payload.json; echo 'again' >&2; exit 2");
    claude_stop(&p, "s3", false);
    claude_stop(&p, "s3", true);
    let seen: Value =
        serde_json::from_str(&p.read("payload.json").expect("payload")).expect("json");
    assert_eq!(seen["continuations"], 1);
    assert_eq!(seen["stop_hook_active"], true);
    assert!(
        kept_going(&claude_stop(&p, "s3", true)),
        "the third of max_continuations = 3"
    );
    assert!(capped(&claude_stop(&p, "s3", true)));
    // Another session has its own count.
    assert!(kept_going(&claude_stop(&p, "other", true)));
    // A turn's first stop (stop_hook_active false) starts over.
    assert!(kept_going(&claude_stop(&p, "s3", false)));
    claude_stop(&p, "s3", true);
    claude_stop(&p, "s3", true);
    assert!(capped(&claude_stop(&p, "s3", true)));
    // So does a new prompt, and a session end forgets the session.
    claude_answer(
        &p,
        &json!({"session_id": "s3", "cwd": p.root, "hook_event_name": "UserPromptSubmit",
                "prompt": "go on"}),
    );
    assert!(kept_going(&claude_stop(&p, "s3", true)));
    claude_answer(
        &p,
        &json!({"session_id": "s3", "cwd": p.root, "hook_event_name": "SessionEnd",
                "reason": "other"}),
    );
    let left: Vec<_> = std::fs::read_dir(p.data_dir.join("continuations"))
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        left.len(),
        1,
        "only the other session's count is left: {left:?}"
    );
}

#[test]
fn codex_and_gemini_keep_going_in_their_own_form() {
    let p = looping("echo 'fix the failing test' >&2; exit 2");
    let output = p
        .cli()
        .arg("codex")
        .write_stdin(
            json!({"session_id": "c", "cwd": p.root, "hook_event_name": "Stop",
                   "turn_id": "1", "stop_hook_active": false})
            .to_string(),
        )
        .output()
        .expect("codex");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(
        answer,
        json!({"decision": "block", "reason": "fix the failing test"})
    );
    let output = p
        .cli()
        .arg("gemini")
        .write_stdin(
            json!({"session_id": "g", "cwd": p.root, "hook_event_name": "AfterAgent",
                   "prompt": "x", "prompt_response": "y", "stop_hook_active": false})
            .to_string(),
        )
        .output()
        .expect("gemini");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(
        answer,
        json!({"decision": "deny", "reason": "fix the failing test"})
    );
}
