//! Payloads the agents send are read, and a payload that cannot be read never lets a call
//! through.
//!
//! The JavaScript agents write a lone surrogate as `"\udc80"` and nest arrays as deep as the
//! model did; both used to make the adapters and `ka-hooks run` reject the payload and fail
//! open, so a model could switch every guard off with one escape in a tool argument.

use crate::support;

use serde_json::{json, Value};
use support::{hook, Project};

/// A guard on shell commands that refuses `rm -rf`, whatever else the payload holds.
fn no_rm_guarded() -> Project {
    Project::with_user_toml(&hook(
        "no-rm",
        "pre_tool_use",
        r#"payload=$(cat); case "$payload" in *'rm -rf'*) echo 'no rm -rf here' >&2; exit 2;; esac"#,
        &[r#"tool = "bash""#],
    ))
}

const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];

/// The agent's PreToolUse payload for a shell command, as JSON text with `extra` spliced into
/// `tool_input` verbatim (so it can hold what `serde_json` would never write).
fn shell_payload(p: &Project, agent: &str, command: &str, extra: &str) -> String {
    let (event, tool) = match agent {
        "gemini" => ("BeforeTool", "run_shell_command"),
        _ => ("PreToolUse", "Bash"),
    };
    format!(
        r#"{{"session_id":"{agent}","cwd":{cwd},"hook_event_name":"{event}","tool_name":"{tool}","tool_input":{{"command":{command}{extra}}}}}"#,
        cwd = json!(p.root),
        command = json!(command),
    )
}

struct Reply {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or(Value::Null)
    }

    /// The agent was told not to run the call: exit 2, or a deny in its JSON.
    fn blocked(&self) -> bool {
        let answer = self.json();
        self.code == Some(2)
            || (self.code == Some(0)
                && (answer["hookSpecificOutput"]["permissionDecision"] == "deny"
                    || answer["decision"] == "deny"
                    || answer["decision"] == "block"))
    }

    fn said(&self, needle: &str) -> bool {
        self.stderr.contains(needle) || self.stdout.contains(needle)
    }
}

fn send_bytes(p: &Project, args: &[&str], stdin: impl Into<Vec<u8>>) -> Reply {
    let output = p
        .cli()
        .args(args)
        .write_stdin(stdin.into())
        .output()
        .expect("ka-hooks");
    Reply {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn a_lone_surrogate_in_a_tool_argument_still_meets_the_guard() {
    let p = no_rm_guarded();
    for agent in AGENTS {
        let payload = shell_payload(&p, agent, "rm -rf build", r#","description":"x\udc80y""#);
        let reply = send_bytes(&p, &[agent], payload);
        assert!(
            reply.blocked(),
            "{agent}: {:?} {} {}",
            reply.code,
            reply.stdout,
            reply.stderr
        );
        assert!(reply.said("no rm -rf here"), "{agent}: {}", reply.stderr);
        assert!(
            reply.said("U+FFFD"),
            "{agent}: the lossy read is said: {}",
            reply.stdout
        );
        // A harmless call with the same escape runs: nothing else changed.
        let payload = shell_payload(&p, agent, "ls \u{1F600}", r#","description":"\udc80""#);
        let reply = send_bytes(&p, &[agent], payload);
        assert_eq!(reply.code, Some(0), "{agent}: {}", reply.stderr);
        assert!(!reply.blocked(), "{agent}: {}", reply.stdout);
    }
    let reply = send_bytes(
        &p,
        &["run", "pre_tool_use"],
        r#"{"tool":"bash","arguments":{"command":"rm -rf build \udc80"}}"#,
    );
    assert_eq!(reply.code, Some(2), "{}", reply.stderr);
    assert!(reply.said("U+FFFD"), "{}", reply.stdout);
}

#[test]
fn an_argument_127_arrays_deep_still_meets_the_guard() {
    let p = no_rm_guarded();
    // 127 arrays inside `tool_input` inside the payload: past serde_json's default of 128.
    for depth in [127, 1000] {
        let extra = format!(r#","nested":{}"#, nested(depth));
        for agent in AGENTS {
            let reply = send_bytes(
                &p,
                &[agent],
                shell_payload(&p, agent, "rm -rf build", &extra),
            );
            assert!(
                reply.blocked(),
                "{agent} at {depth}: {:?} {}",
                reply.code,
                reply.stderr
            );
            assert!(reply.said("no rm -rf here"), "{agent}: {}", reply.stderr);
        }
        let payload = format!(
            r#"{{"tool":"bash","arguments":{{"command":"rm -rf build","nested":{}}}}}"#,
            nested(depth)
        );
        let reply = send_bytes(&p, &["run", "pre_tool_use"], payload);
        assert_eq!(reply.code, Some(2), "run at {depth}: {}", reply.stderr);
    }
}

#[test]
fn a_payload_100000_levels_deep_fails_closed_without_overflowing() {
    let p = no_rm_guarded();
    let extra = format!(r#","nested":{}"#, nested(100_000));
    for agent in AGENTS {
        // Even a harmless command: the guards cannot judge a call they cannot read.
        let reply = send_bytes(&p, &[agent], shell_payload(&p, agent, "ls", &extra));
        assert_eq!(reply.code, Some(2), "{agent}: {}", reply.stderr);
        assert!(
            reply.stderr.contains("nested more than"),
            "{agent}: {}",
            reply.stderr
        );
        assert!(
            reply.stderr.contains("blocked"),
            "{agent}: {}",
            reply.stderr
        );
    }
    let payload = format!(
        r#"{{"tool":"bash","arguments":{{"command":"ls","nested":{}}}}}"#,
        nested(100_000)
    );
    let reply = send_bytes(&p, &["run", "pre_tool_use"], payload);
    assert_eq!(reply.code, Some(2), "{}", reply.stderr);
    assert!(
        reply.stderr.contains("nested more than"),
        "{}",
        reply.stderr
    );
}

#[test]
fn a_payload_that_cannot_be_read_blocks_a_tool_call_by_default() {
    let p = no_rm_guarded();
    for agent in AGENTS {
        let whole = shell_payload(&p, agent, "ls", "");
        let truncated = &whole[..whole.len() - 10];
        for payload in [truncated, "not json", "[1, 2]"] {
            let reply = send_bytes(&p, &[agent], payload);
            assert_eq!(reply.code, Some(2), "{agent} {payload}: {}", reply.stdout);
            assert!(
                reply.stderr.contains("fails closed"),
                "{agent}: {}",
                reply.stderr
            );
        }
    }
    let reply = send_bytes(
        &p,
        &["run", "pre_tool_use"],
        r#"{"tool":"bash","arguments":{"#,
    );
    assert_eq!(reply.code, Some(2), "{}", reply.stderr);
    assert!(
        reply.stderr.contains("invalid JSON payload"),
        "{}",
        reply.stderr
    );
}

#[test]
fn a_broken_payload_of_an_event_that_cannot_be_vetoed_fails_open_and_says_so() {
    let p = no_rm_guarded();
    let payload = format!(
        r#"{{"session_id":"s","cwd":{},"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"#,
        json!(p.root)
    );
    let reply = send_bytes(&p, &["claude"], payload);
    assert_eq!(reply.code, Some(0), "{}", reply.stderr);
    assert!(reply.json()["systemMessage"]
        .as_str()
        .is_some_and(|m| m.contains("not valid JSON") && m.contains("failing open")));
    let reply = send_bytes(&p, &["run", "post_tool_use"], r#"{"tool":"bash","#);
    assert_eq!(
        reply.code,
        Some(1),
        "a usage error, not a block: {}",
        reply.stderr
    );
}

#[test]
fn bytes_that_are_not_utf8_in_a_tool_argument_still_meet_the_guard() {
    let p = no_rm_guarded();
    for agent in AGENTS {
        let mut payload =
            shell_payload(&p, agent, "rm -rf build", r#","description":"x"#).into_bytes();
        // `"x` + 0xFF + `y"` inside tool_input, then the closing braces.
        let tail = payload.split_off(payload.len() - 2);
        payload.extend_from_slice(b"\xffy\"");
        payload.extend_from_slice(&tail);
        let reply = send_bytes(&p, &[agent], payload);
        assert!(
            reply.blocked(),
            "{agent}: {:?} {} {}",
            reply.code,
            reply.stdout,
            reply.stderr
        );
        assert!(reply.said("no rm -rf here"), "{agent}: {}", reply.stderr);
        assert!(reply.said("not UTF-8"), "{agent}: {}", reply.stdout);
    }
}
