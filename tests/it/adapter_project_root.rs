//! The adapters find the session's project, not the model's current directory.
//!
//! The attack: through an adapter, the model runs `cd /elsewhere` in its shell; Claude Code then
//! sends the next payload with `cwd: /elsewhere` and runs the hook there. If the root followed that
//! `cwd`, the project's `.ka/` would be left behind and its guard would no longer run. The agent's
//! project directory (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`) wins over the payload's `cwd`.

use crate::support;
use crate::support::agents::copy_example_guard;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::Project;

/// A project whose *project* layer holds the example guard: writes outside `src/` are blocked.
fn project_layer_guarded() -> Project {
    let p = Project::new();
    p.project(
        "[[hooks]]\nname = \"guard-writes\"\nevent = \"pre_tool_use\"\n\
         tool = [\"write\", \"edit\"]\ncommand = \"sh examples/hooks/guard-writes.sh\"\n\
         on_error = \"block\"\n",
    );
    copy_example_guard(&p);
    p
}

/// The directory the model `cd`-ed into: beside the project, with or without a `.ka/` of its own
/// (one that runs a hook allowing everything).
fn elsewhere(p: &Project, with_ka: bool) -> PathBuf {
    let dir = p.base.join(if with_ka { "other-ka" } else { "other" });
    fs::create_dir_all(&dir).expect("mkdir elsewhere");
    if with_ka {
        fs::create_dir_all(dir.join(".ka")).expect("mkdir .ka");
        fs::write(
            dir.join(".ka/ka.toml"),
            "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"true\"\n",
        )
        .expect("write other ka.toml");
    }
    dir
}

/// A write to the project's README (outside `src/`), sent with the payload's `cwd` at `cwd`.
fn write_payload(p: &Project, agent: &str, cwd: &Path) -> Value {
    let (event, tool) = match agent {
        "gemini" => ("BeforeTool", "write_file"),
        _ => ("PreToolUse", "Write"),
    };
    json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
        "hook_event_name": event, "tool_name": tool,
        "tool_input": {"file_path": p.root.join("README.md"), "content": "x\n"}
    })
}

/// Runs `ka-hooks --trust <agent>` from `cwd` (where the agent runs its hooks after the `cd`),
/// with `env` set (`Project::cli` removes the agents' project variables); returns the exit code and stderr.
fn adapter_from(
    p: &Project,
    agent: &str,
    cwd: &Path,
    env: &[(&str, &Path)],
) -> (Option<i32>, String) {
    let mut cmd = p.cli();
    cmd.current_dir(cwd);
    for (var, value) in env {
        cmd.env(var, value);
    }
    let output = cmd
        .args(["--trust", agent])
        .write_stdin(write_payload(p, agent, cwd).to_string())
        .output()
        .expect("ka-hooks adapter");
    // Gemini CLI's block is on stdout (exit 0), the others' on stderr (exit 2).
    let said = if agent == "gemini" {
        &output.stdout
    } else {
        &output.stderr
    };
    (
        output.status.code(),
        String::from_utf8_lossy(said).trim().to_owned(),
    )
}

#[track_caller]
fn assert_guarded(p: &Project, (code, stderr): (Option<i32>, String)) {
    assert_eq!(code, Some(2), "the guard did not block: {stderr}");
    assert_reason(p, &stderr);
}

/// Gemini CLI's block: exit 0 with `{"decision": "deny", "reason"}` on stdout.
#[track_caller]
fn assert_gemini_guarded(p: &Project, (code, stdout): (Option<i32>, String)) {
    assert_eq!(code, Some(0), "{stdout}");
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_default();
    assert_eq!(
        answer["decision"], "deny",
        "the guard did not block: {stdout}"
    );
    assert_reason(p, answer["reason"].as_str().unwrap_or_default());
}

#[track_caller]
fn assert_reason(p: &Project, stderr: &str) {
    assert!(
        stderr.starts_with("guard-writes: ") && stderr.contains("outside the allowed roots"),
        "{stderr}"
    );
    assert!(!p.exists("README.md"));
}

#[test]
fn claude_cd_elsewhere_does_not_leave_the_projects_guard_behind() {
    let p = project_layer_guarded();
    for with_ka in [false, true] {
        let other = elsewhere(&p, with_ka);
        let reply = adapter_from(&p, "claude", &other, &[("CLAUDE_PROJECT_DIR", &p.root)]);
        assert_guarded(&p, reply);
    }
}

#[test]
fn gemini_cd_elsewhere_does_not_leave_the_projects_guard_behind() {
    let p = project_layer_guarded();
    for with_ka in [false, true] {
        let other = elsewhere(&p, with_ka);
        let reply = adapter_from(&p, "gemini", &other, &[("GEMINI_PROJECT_DIR", &p.root)]);
        assert_gemini_guarded(&p, reply);
        // Gemini CLI also sets CLAUDE_PROJECT_DIR, as an alias.
        let reply = adapter_from(&p, "gemini", &other, &[("CLAUDE_PROJECT_DIR", &p.root)]);
        assert_gemini_guarded(&p, reply);
    }
}

#[test]
fn the_agents_project_dir_wins_over_a_subdirectory_cwd_too() {
    // A `cd src/nested` whose folder has its own `.ka/`: the root stays the project's.
    let p = project_layer_guarded();
    let nested = p.root.join("src").join("nested");
    fs::create_dir_all(nested.join(".ka")).expect("mkdir nested .ka");
    fs::write(nested.join(".ka/ka.toml"), "").expect("write nested ka.toml");
    let reply = adapter_from(&p, "claude", &nested, &[("CLAUDE_PROJECT_DIR", &p.root)]);
    assert_guarded(&p, reply);
}

#[test]
fn project_flag_still_wins_over_the_agents_project_dir() {
    let p = project_layer_guarded();
    let other = elsewhere(&p, true);
    // `--project` names the other folder, whose hooks allow everything: the guard is not loaded.
    let output = p
        .cli()
        .env("CLAUDE_PROJECT_DIR", &p.root)
        .current_dir(&other)
        .args(["--trust", "--project"])
        .arg(&other)
        .arg("claude")
        .write_stdin(write_payload(&p, "claude", &other).to_string())
        .output()
        .expect("ka-hooks claude");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn without_a_project_dir_the_payloads_cwd_still_finds_the_project() {
    // Codex names no project directory: its payload's `cwd` (the session's) finds the root.
    let p = project_layer_guarded();
    let reply = adapter_from(&p, "claude", &p.root, &[]);
    assert_guarded(&p, reply);
    let other = elsewhere(&p, false);
    let payload = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": p.root,
        "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
        "tool_input": {"command": "*** Begin Patch\n*** Add File: README.md\n+x\n*** End Patch\n"}
    });
    let output = p
        .cli()
        .current_dir(&other)
        .args(["--trust", "codex"])
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks codex");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}
