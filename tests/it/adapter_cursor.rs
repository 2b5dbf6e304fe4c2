//! `ka-hooks cursor`: Cursor's payloads run the ka hooks, and the answer is in Cursor's flat
//! snake_case fields (`permission`, `updated_input`, `additional_context`, `continue`,
//! `followup_message`).

use crate::support;
use crate::support::agents::{agent_answer, Stdout};
use crate::support::agents::{rm_rf_rewriter, DONE_FIRST, NO_SECRET_PROMPTS, SRC_ONLY, WELCOME};

use serde_json::{json, Value};
use support::{hook, Project};

/// A project whose user layer blocks writes outside `src/`, rewrites `rm -rf` to `rm -ri`, blocks
/// `curl` in the shell, keeps the turn going once, blocks prompts that mention a secret, and gives
/// session context.
fn cursor_project() -> Project {
    let mut toml = String::new();
    toml.push_str(&hook(
        "src-only",
        "pre_tool_use",
        SRC_ONLY,
        &["tool = [\"write\", \"edit\"]"],
    ));
    toml.push_str(&hook(
        "no-rm-rf",
        "pre_tool_use",
        rm_rf_rewriter(false),
        &["tool = [\"bash\"]"],
    ));
    toml.push_str(&hook(
        "no-curl",
        "pre_tool_use",
        NO_CURL,
        &["tool = [\"bash\"]"],
    ));
    toml.push_str(&hook("tests-first", "stop", DONE_FIRST, &[]));
    toml.push_str(&hook(
        "no-secret-prompts",
        "user_prompt_submit",
        NO_SECRET_PROMPTS,
        &[],
    ));
    toml.push_str(&hook("welcome", "session_start", WELCOME, &[]));
    Project::with_user_toml(&toml)
}

/// A shell guard that blocks `curl`.
const NO_CURL: &str = r#"grep -q curl && { echo 'no network from the shell' >&2; exit 2; }; true"#;

/// `ka-hooks cursor` on `payload`: (exit code, stdout JSON or Null, stderr).
fn cursor_answer(p: &Project, payload: &Value) -> (Option<i32>, Value, String) {
    agent_answer(p.cli(), "cursor", None, payload, Stdout::Json)
}

/// Cursor's common input plus `fields`.
fn cursor_payload(p: &Project, event: &str, fields: Value) -> Value {
    let mut base = json!({"conversation_id": "c1", "generation_id": "g1", "model": "m",
        "hook_event_name": event, "cursor_version": "3.9.16", "workspace_roots": [p.root],
        "user_email": null, "transcript_path": null});
    for (k, v) in fields.as_object().into_iter().flatten() {
        base[k] = v.clone();
    }
    base
}

#[test]
fn a_write_outside_src_is_denied_to_user_and_agent() {
    let p = cursor_project();
    let (code, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "preToolUse",
            json!({"tool_name": "Write", "cwd": p.root,
            "tool_input": {"file_path": "README.md", "content": "x"}, "tool_use_id": "t1"}),
        ),
    );
    assert_eq!(code, Some(0));
    assert_eq!(answer["permission"], "deny", "{answer}");
    assert!(answer["agent_message"]
        .as_str()
        .is_some_and(|m| m.contains("outside src/")));
    assert!(answer["user_message"]
        .as_str()
        .is_some_and(|m| m.contains("outside src/")));
}

/// Cursor's `Delete` is a file writer: a guard on writes sees it.
#[test]
fn a_delete_is_guarded_like_a_write() {
    let p = cursor_project();
    let (_, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "preToolUse",
            json!({"tool_name": "Delete", "cwd": p.root,
            "tool_input": {"file_path": "Cargo.toml"}}),
        ),
    );
    assert_eq!(answer["permission"], "deny", "{answer}");
}

#[test]
fn a_rewrite_is_updated_input_in_cursors_names() {
    let p = cursor_project();
    let (_, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "preToolUse",
            json!({"tool_name": "Shell", "cwd": p.root,
            "tool_input": {"command": "rm -rf build", "working_directory": p.root}}),
        ),
    );
    assert_eq!(
        answer["updated_input"],
        json!({"command": "rm -ri build", "working_directory": p.root})
    );
}

#[test]
fn before_shell_execution_blocks_and_cannot_rewrite() {
    let p = cursor_project();
    let (_, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "beforeShellExecution",
            json!({"command": "curl example.com", "cwd": p.root, "sandbox": false}),
        ),
    );
    assert_eq!(answer["permission"], "deny");
    assert!(answer["agent_message"]
        .as_str()
        .is_some_and(|m| m.contains("no network")));
    // beforeShellExecution has no `updated_input`: a rewrite blocks, with why.
    let (_, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "beforeShellExecution",
            json!({"command": "rm -rf build", "cwd": p.root}),
        ),
    );
    assert_eq!(answer["permission"], "deny");
    assert!(answer["agent_message"]
        .as_str()
        .is_some_and(|m| m.contains("cannot rewrite")));
}

#[test]
fn before_read_file_is_a_read() {
    let p = cursor_project();
    let (code, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "beforeReadFile",
            json!({"file_path": p.root.join("README.md"), "content": "x"}),
        ),
    );
    assert_eq!(code, Some(0));
    assert_eq!(answer, Value::Null, "a read is not a write");
}

#[test]
fn a_blocked_prompt_is_continue_false() {
    let p = cursor_project();
    let (_, answer, _) = cursor_answer(
        &p,
        &cursor_payload(&p, "beforeSubmitPrompt", json!({"prompt": "SECRET=1"})),
    );
    assert_eq!(answer["continue"], false);
    assert!(answer["user_message"]
        .as_str()
        .is_some_and(|m| m.contains("must not carry secrets")));
}

#[test]
fn stop_keeps_going_with_a_followup_message() {
    let p = cursor_project();
    let stop = cursor_payload(&p, "stop", json!({"status": "completed", "loop_count": 0}));
    let (_, answer, _) = cursor_answer(&p, &stop);
    assert_eq!(answer["followup_message"], "write done.txt first");
    p.write("done.txt", "");
    let (_, answer, _) = cursor_answer(&p, &stop);
    assert_eq!(answer, Value::Null);
}

#[test]
fn session_start_context_is_additional_context() {
    let p = cursor_project();
    let (_, answer, _) = cursor_answer(
        &p,
        &cursor_payload(
            &p,
            "sessionStart",
            json!({"session_id": "s", "is_background_agent": false}),
        ),
    );
    assert_eq!(answer["additional_context"], "the tests live in tests/");
}

/// Tab completions are not agent tool calls: Cursor's `beforeTabFileRead` / `afterTabFileEdit`
/// (cursor.com/docs/hooks, "Tab" events) run `observe`, not the read and write guards, and the
/// adapter exits 0: every event Cursor can send is accepted, so an entry someone
/// registers on a Tab event never fails Cursor's hook.
#[test]
fn tab_events_run_observe_not_the_tool_guards() {
    let mut toml = hook(
        "no-reads",
        "pre_tool_use",
        "echo 'reads are forbidden' >&2; exit 2",
        &[],
    );
    toml.push_str(&hook(
        "edits-reviewed",
        "post_tool_use",
        "echo 'edits are reviewed' >&2; exit 2",
        &[],
    ));
    toml.push_str(
        r#"
[[hooks]]
name = "tab-watch"
event = "observe"
matcher = "^(beforeTabFileRead|afterTabFileEdit)$"
command = '''grep -o '"agent_event":"[^"]*"' | cut -d'"' -f4 >> observed.txt'''
"#,
    );
    let p = Project::with_user_toml(&toml);
    for (event, fields) in [
        (
            "beforeTabFileRead",
            json!({"file_path": "src/a.rs", "content": "x"}),
        ),
        (
            "afterTabFileEdit",
            json!({"file_path": "src/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ),
    ] {
        let (code, answer, stderr) = cursor_answer(&p, &cursor_payload(&p, event, fields));
        assert_eq!(code, Some(0), "{event}: {stderr}");
        assert!(answer.get("permission").is_none(), "{event}: {answer}");
        assert!(!stderr.contains("forbidden"), "{event}: {stderr}");
        assert!(!stderr.contains("reviewed"), "{event}: {stderr}");
    }
    assert_eq!(
        p.read("observed.txt").as_deref(),
        Some("beforeTabFileRead\nafterTabFileEdit\n")
    );
}

/// The project is `CURSOR_PROJECT_DIR`, not the payload's `cwd` (which follows the model).
#[test]
fn cursor_project_dir_finds_the_project() {
    let p = Project::new();
    p.project(&hook(
        "no-writes",
        "pre_tool_use",
        "echo 'the project forbids writes' >&2; exit 2",
        &["tool = [\"write\"]"],
    ));
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let call = json!({"conversation_id": "c", "hook_event_name": "preToolUse",
        "workspace_roots": [elsewhere.path()], "cwd": elsewhere.path(), "tool_name": "Write",
        "tool_input": {"file_path": "a.txt", "content": "x"}});
    let run = |project_dir: Option<&std::path::Path>| {
        let mut cmd = p.cli();
        cmd.current_dir(elsewhere.path())
            .args(["--trust", "cursor"]);
        if let Some(dir) = project_dir {
            cmd.env("CURSOR_PROJECT_DIR", dir);
        }
        let output = cmd.write_stdin(call.to_string()).output().expect("cursor");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert!(run(Some(&p.root)).contains("the project forbids writes"));
    assert!(!run(None).contains("the project forbids writes"));
}
