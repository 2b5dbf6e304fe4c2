//! What the adapter tests share: running `ka-hooks <agent>` on a payload, the agents' payloads
//! and settings files, and the guards several of them install.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::Project;

/// How an adapter's stdout is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    /// Empty is `Null`; anything else must be JSON, or the test fails.
    Json,
    /// What is not JSON (empty included) is `Null`.
    JsonOrNull,
}

/// `cmd <agent> [--event E]` with `payload` on stdin (`cmd` carries `--trust`, env and the
/// like): the exit code, stdout read as `stdout` says, and stderr.
pub fn agent_answer(
    mut cmd: assert_cmd::Command,
    agent: &str,
    event: Option<&str>,
    payload: &Value,
    stdout: Stdout,
) -> (Option<i32>, Value, String) {
    cmd.arg(agent);
    if let Some(event) = event {
        cmd.args(["--event", event]);
    }
    let output = cmd
        .write_stdin(payload.to_string())
        .output()
        .unwrap_or_else(|e| panic!("ka-hooks {agent}: {e}"));
    let text = String::from_utf8_lossy(&output.stdout);
    let answer = match stdout {
        Stdout::JsonOrNull => serde_json::from_str(text.trim()).unwrap_or(Value::Null),
        Stdout::Json if text.trim().is_empty() => Value::Null,
        Stdout::Json => {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
        }
    };
    (
        output.status.code(),
        answer,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Codex CLI's `PreToolUse` payload for `tool` with `input`.
pub fn codex_pre(p: &Project, tool: &str, input: Value) -> Value {
    json!({"session_id": "s", "turn_id": "1", "cwd": p.root, "hook_event_name": "PreToolUse",
           "model": "gpt-5-codex", "permission_mode": "default", "tool_name": tool,
           "tool_input": input, "tool_use_id": "call_1"})
}

/// The project's Claude Code settings file, `.claude/settings.json`.
pub fn claude_settings_file(p: &Project) -> PathBuf {
    p.root.join(".claude").join("settings.json")
}

/// The project's Claude Code settings, parsed.
pub fn claude_settings(p: &Project) -> Value {
    let text = fs::read_to_string(claude_settings_file(p)).expect("settings");
    serde_json::from_str(&text).expect("json")
}

/// Copies the shipped example guard to `examples/hooks/guard-writes.sh` and makes `src/`.
pub fn copy_example_guard(p: &Project) {
    let guard = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hooks/guard-writes.sh");
    p.write(
        "examples/hooks/guard-writes.sh",
        &fs::read_to_string(guard).expect("guard"),
    );
    fs::create_dir_all(p.root.join("src")).expect("src");
}

/// A guard in Python that blocks a write or edit whose `arguments.path` is outside `src/`.
pub const SRC_ONLY: &str = r#"python3 -c 'import json,sys; p=json.load(sys.stdin)["arguments"].get("path",""); sys.exit(0) if "/src/" in p or p.startswith("src/") else (print(p+" is outside src/", file=sys.stderr), sys.exit(2))'"#;

/// A hook in Python that rewrites `rm -rf` to `rm -ri` in a shell call's `command`. Its
/// `updated_input` holds every argument when `whole` is set, only `command` otherwise.
pub fn rm_rf_rewriter(whole: bool) -> &'static str {
    if whole {
        r#"python3 -c 'import json,sys; a=json.load(sys.stdin)["arguments"]; c=a.get("command",""); print(json.dumps({"updated_input": dict(a, command=c.replace("rm -rf", "rm -ri"))})) if "rm -rf" in c else None'"#
    } else {
        r#"python3 -c 'import json,sys; a=json.load(sys.stdin)["arguments"]; c=a.get("command",""); print(json.dumps({"updated_input": {"command": c.replace("rm -rf", "rm -ri")}})) if "rm -rf" in c else None'"#
    }
}

/// A stop hook that keeps the turn going until `done.txt` exists.
pub const DONE_FIRST: &str = r#"test -f done.txt || echo '{"keep_going": "write done.txt first"}'"#;

/// A prompt guard that blocks prompts mentioning `SECRET`.
pub const NO_SECRET_PROMPTS: &str =
    r#"grep -q SECRET && { echo 'prompts must not carry secrets' >&2; exit 2; }; true"#;

/// A hook that gives the model context about the tests.
pub const WELCOME: &str = r#"echo '{"context": "the tests live in tests/"}'"#;
