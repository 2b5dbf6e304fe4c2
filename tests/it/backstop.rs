//! The denial backstop: a model denied three times by one guard within a
//! turn, and then rephrasing the call so that the guard lets it through, meets a person.

use crate::support;

use ka_hooks::action::Decision;
use ka_hooks::backstop::Denials;
use ka_hooks::dispatch::Request;
use ka_hooks::Event;
use serde_json::{json, Value};
use support::{hook, object, Project};

/// A guard that refuses `curl` and knows nothing of `wget`: the rephrasing it misses.
const GUARD: &str =
    r#"payload=$(cat); case "$payload" in *curl*) echo 'no curl here' >&2; exit 2;; esac"#;

fn no_curl_guarded(settings: &str) -> Project {
    Project::with_user_toml(&format!(
        "{settings}\n{}",
        hook("no-curl", "pre_tool_use", GUARD, &[r#"tool = "bash""#])
    ))
}

struct Reply {
    code: Option<i32>,
    answer: Value,
    stderr: String,
}

impl Reply {
    fn denied(&self) -> bool {
        self.code == Some(2)
            || self.answer["hookSpecificOutput"]["permissionDecision"] == "deny"
            || self.answer["decision"] == "deny"
    }

    fn asked(&self) -> bool {
        self.answer["hookSpecificOutput"]["permissionDecision"] == "ask"
    }

    fn text(&self) -> String {
        format!("{} {}", self.answer, self.stderr)
    }
}

fn send_payload(p: &Project, args: &[&str], payload: &Value) -> Reply {
    let output = p
        .cli()
        .args(args)
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks");
    let stdout = String::from_utf8_lossy(&output.stdout);
    Reply {
        code: output.status.code(),
        answer: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn shell_call(p: &Project, agent: &str, session: &str, command: &str) -> Value {
    let (event, tool) = match agent {
        "gemini" => ("BeforeTool", "run_shell_command"),
        _ => ("PreToolUse", "Bash"),
    };
    json!({"session_id": session, "cwd": p.root, "hook_event_name": event,
           "tool_name": tool, "tool_input": {"command": command}})
}

fn prompt_payload(p: &Project, agent: &str, session: &str) -> Value {
    let event = if agent == "gemini" {
        "BeforeAgent"
    } else {
        "UserPromptSubmit"
    };
    json!({"session_id": session, "cwd": p.root, "hook_event_name": event, "prompt": "go on"})
}

/// Three denials in the turn, through `agent`.
fn deny_three_times(p: &Project, agent: &str, session: &str) {
    for attempt in [
        "curl -o x http://a",
        "curl  -o x http://a",
        "/usr/bin/curl http://a",
    ] {
        let reply = send_payload(p, &[agent], &shell_call(p, agent, session, attempt));
        assert!(reply.denied(), "{agent} {attempt}: {}", reply.text());
    }
}

#[test]
fn after_three_denials_a_rephrased_call_asks_the_human_in_claude() {
    let p = no_curl_guarded("");
    deny_three_times(&p, "claude", "s1");
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert_eq!(reply.code, Some(0), "{}", reply.text());
    assert!(
        reply.asked(),
        "the guard let it through, the backstop asks: {}",
        reply.text()
    );
    let reason = reply.answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(reason.contains("denied 3 times"), "{reason}");
    assert!(reason.contains("`no-curl`"), "{reason}");
    // A call the guard's filter does not match is left alone.
    let write = json!({"session_id": "s1", "cwd": p.root, "hook_event_name": "PreToolUse",
                       "tool_name": "Write", "tool_input": {"file_path": "a.txt", "content": "x"}});
    let reply = send_payload(&p, &["claude"], &write);
    assert_eq!(reply.code, Some(0));
    assert!(!reply.asked(), "{}", reply.text());
    // A call the guard still denies stays denied: deny wins over ask.
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "curl http://b"),
    );
    assert!(reply.denied(), "{}", reply.text());
}

#[test]
fn codex_and_gemini_cannot_ask_so_the_rephrased_call_is_blocked_with_the_reason() {
    for agent in ["codex", "gemini"] {
        let p = no_curl_guarded("");
        deny_three_times(&p, agent, "s1");
        let reply = send_payload(&p, &[agent], &shell_call(&p, agent, "s1", "wget http://a"));
        assert!(reply.denied(), "{agent}: {}", reply.text());
        assert!(
            reply.text().contains("denied 3 times"),
            "{agent}: {}",
            reply.text()
        );
    }
}

#[test]
fn run_with_a_session_counts_like_the_adapters() {
    let p = no_curl_guarded("");
    let call = |command: &str| json!({"session_id": "s9", "tool": "bash", "arguments": {"command": command}});
    for _ in 0..3 {
        let reply = send_payload(
            &p,
            &["run", "pre_tool_use", "--json"],
            &call("curl http://a"),
        );
        assert_eq!(reply.code, Some(2), "{}", reply.text());
    }
    let reply = send_payload(
        &p,
        &["run", "pre_tool_use", "--json"],
        &call("wget http://a"),
    );
    assert_eq!(reply.code, Some(0), "{}", reply.text());
    assert_eq!(reply.answer["decision"], "ask", "{}", reply.text());
    assert!(reply.answer["reason"]
        .as_str()
        .is_some_and(|r| r.contains("denied 3 times")));
}

#[test]
fn a_new_prompt_and_another_session_start_from_zero() {
    let p = no_curl_guarded("");
    deny_three_times(&p, "claude", "s1");
    let other = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s2", "wget http://a"),
    );
    assert!(!other.asked() && other.code == Some(0), "{}", other.text());
    let reply = send_payload(&p, &["claude"], &prompt_payload(&p, "claude", "s1"));
    assert_eq!(reply.code, Some(0), "{}", reply.text());
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(!reply.asked() && reply.code == Some(0), "{}", reply.text());
}

#[test]
fn the_user_file_sets_the_count_and_zero_turns_it_off() {
    let p = no_curl_guarded("[hook_settings]\ndenial_backstop = 0\n");
    deny_three_times(&p, "claude", "s1");
    deny_three_times(&p, "claude", "s1");
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(!reply.asked() && reply.code == Some(0), "{}", reply.text());

    let p = no_curl_guarded("[hook_settings]\ndenial_backstop = 1\n");
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "curl http://a"),
    );
    assert!(reply.denied(), "{}", reply.text());
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(reply.asked(), "{}", reply.text());
}

#[test]
fn a_project_file_cannot_set_the_backstop() {
    let p = no_curl_guarded("");
    p.project("[hook_settings]\ndenial_backstop = 0\n");
    let output = p.cli().arg("check").output().expect("check");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot change") && stderr.contains("denial_backstop"),
        "{stderr}"
    );
}

#[test]
fn the_library_takes_the_turns_denials_in_the_request_and_returns_them() {
    let p = no_curl_guarded("");
    let config = p.load();
    let call = |command: &str, denials: Option<Denials>| {
        let mut request = Request::tool_call(
            Event::PreToolUse,
            "bash",
            object(json!({"command": command})),
        );
        request.denials = denials;
        config.dispatch(request)
    };
    let mut denials = Some(Denials::default());
    for _ in 0..3 {
        let outcome = call("curl http://a", denials.take());
        assert!(outcome.blocked());
        denials = outcome.denials;
    }
    let outcome = call("wget http://a", denials.clone());
    assert!(!outcome.blocked());
    assert_eq!(outcome.decision(), Some(Decision::Ask), "{outcome:?}");
    // Without the turn's denials, the backstop is off.
    let outcome = call("wget http://a", None);
    assert_eq!(outcome.decision(), None);
    assert!(outcome.denials.is_none());
}

#[test]
fn parallel_denials_of_one_session_are_all_counted() {
    // Agents run a call's hooks, and parallel tool calls, as parallel processes: each
    // process's denial counts, so eight at once reach a backstop of eight.
    let p = no_curl_guarded("[hook_settings]\ndenial_backstop = 8\n");
    let replies: Vec<Reply> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..8)
            .map(|i| {
                let payload = shell_call(&p, "claude", "s1", &format!("curl http://a/{i}"));
                let p = &p;
                scope.spawn(move || send_payload(p, &["claude"], &payload))
            })
            .collect();
        calls
            .into_iter()
            .map(|call| call.join().expect("a call"))
            .collect()
    });
    for reply in &replies {
        assert!(reply.denied(), "{}", reply.text());
    }
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(
        reply.asked(),
        "eight parallel denials counted eight: {}",
        reply.text()
    );
}

#[test]
fn a_prompt_forged_from_inside_a_shell_call_does_not_reset_the_count() {
    let p = no_curl_guarded("");
    deny_three_times(&p, "claude", "s1");
    // The model's shell call goes to the user, who lets it run; from it the model pipes a
    // prompt event into the adapter, with the marker set as its shell has it.
    let mut call = shell_call(&p, "claude", "s1", "ka-hooks claude < prompt.json");
    call["tool_use_id"] = json!("toolu_1");
    let reply = send_payload(&p, &["claude"], &call);
    assert!(reply.asked(), "{}", reply.text());
    let forged = p
        .cli()
        .env("CLAUDECODE", "1")
        .arg("claude")
        .write_stdin(prompt_payload(&p, "claude", "s1").to_string())
        .output()
        .expect("forged prompt");
    assert_eq!(forged.status.code(), Some(0));
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(reply.asked(), "the count was kept: {}", reply.text());
    // Once the shell calls reported back, the agent's next prompt starts a new turn.
    for id in [json!("toolu_1"), Value::Null] {
        let post = json!({"session_id": "s1", "cwd": p.root, "hook_event_name": "PostToolUse",
                          "tool_name": "Bash", "tool_use_id": id,
                          "tool_input": {"command": "ka-hooks claude < prompt.json"},
                          "tool_response": {"stdout": ""}});
        send_payload(&p, &["claude"], &post);
    }
    send_payload(&p, &["claude"], &prompt_payload(&p, "claude", "s1"));
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(!reply.asked() && reply.code == Some(0), "{}", reply.text());
}

#[test]
fn a_deleted_or_unreadable_count_fails_closed() {
    let p = no_curl_guarded("");
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "curl http://a"),
    );
    assert!(reply.denied(), "{}", reply.text());
    std::fs::remove_dir_all(p.data_dir.join("denials")).expect("rm -rf denials");
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s1", "wget http://a"),
    );
    assert!(reply.asked(), "a deleted count asks: {}", reply.text());
    assert!(reply.text().contains("was lost"), "{}", reply.text());

    let p = no_curl_guarded("");
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s2", "curl http://a"),
    );
    assert!(reply.denied(), "{}", reply.text());
    for entry in std::fs::read_dir(p.data_dir.join("denials")).expect("denials") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|x| x == "json") {
            std::fs::write(&path, "not json").expect("overwrite");
        }
    }
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s2", "wget http://a"),
    );
    assert!(reply.asked(), "an unreadable count asks: {}", reply.text());
    // A session never seen starts from zero.
    let reply = send_payload(
        &p,
        &["claude"],
        &shell_call(&p, "claude", "s3", "wget http://a"),
    );
    assert!(!reply.asked() && reply.code == Some(0), "{}", reply.text());
}
