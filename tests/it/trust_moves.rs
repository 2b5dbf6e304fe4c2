//! Trust covers what it claims to: a covered script that is a symlink out of
//! the project is bound to its target's content, and a project that was renamed or moved keeps
//! its guards failing closed, with the `trust` command for the new place, instead of having them
//! all skipped as unreviewed.

use crate::support;

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use support::Project;

const PROJECT_TOML: &str = r#"
[[hooks]]
name = "no-rm"
event = "pre_tool_use"
tool = "bash"
command = "sh .ka/hooks/guard.sh"
"#;

const GUARD: &str =
    "payload=$(cat); case \"$payload\" in *'rm -rf'*) echo 'no rm -rf here' >&2; exit 2;; esac\n";

struct Reply {
    code: Option<i32>,
    text: String,
}

/// Runs `ka-hooks` with `args` in `dir` (the project root), the payload on stdin.
fn send_from(p: &Project, dir: &Path, args: &[&str], payload: &Value) -> Reply {
    let output = p
        .cli()
        .current_dir(dir)
        .env("CLAUDE_PROJECT_DIR", dir)
        .env("GEMINI_PROJECT_DIR", dir)
        .args(args)
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks");
    Reply {
        code: output.status.code(),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// The shell call `command` in `dir`, through `ka-hooks run` and each adapter: (which, payload).
fn every_way(dir: &Path, command: &str) -> Vec<(Vec<&'static str>, Value)> {
    let agent = |event: &str, tool: &str| {
        // No `session_id`: the denial backstop stays out of these tests.
        json!({"cwd": dir, "hook_event_name": event, "tool_name": tool,
               "tool_input": {"command": command}})
    };
    vec![
        (
            vec!["run", "pre_tool_use"],
            json!({"tool": "bash", "arguments": {"command": command}}),
        ),
        (vec!["claude"], agent("PreToolUse", "Bash")),
        (vec!["codex"], agent("PreToolUse", "Bash")),
        (vec!["gemini"], agent("BeforeTool", "run_shell_command")),
    ]
}

fn reply_blocks(reply: &Reply) -> bool {
    reply.code == Some(2)
        || reply.text.contains(r#""permissionDecision":"deny""#)
        || reply.text.contains(r#""decision":"deny""#)
}

fn trust_from(p: &Project, dir: &Path) {
    let output = p
        .cli()
        .current_dir(dir)
        .args(["trust", "--yes"])
        .output()
        .expect("trust");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn editing_the_target_of_a_symlinked_script_outside_the_project_fails_closed() {
    let p = Project::new();
    p.project(PROJECT_TOML);
    let outside = p.base.join("outside");
    fs::create_dir_all(&outside).expect("outside dir");
    fs::write(outside.join("guard.sh"), GUARD).expect("guard");
    fs::create_dir_all(p.root.join(".ka/hooks")).expect("hooks dir");
    std::os::unix::fs::symlink(outside.join("guard.sh"), p.root.join(".ka/hooks/guard.sh"))
        .expect("symlink");
    trust_from(&p, &p.root);
    for (args, payload) in every_way(&p.root, "rm -rf build") {
        let reply = send_from(&p, &p.root, &args, &payload);
        assert!(reply_blocks(&reply), "{args:?} trusted: {}", reply.text);
    }
    // The model rewrites the link's target, which trust reviewed through the link.
    fs::write(outside.join("guard.sh"), "exit 0\n").expect("neuter");
    for (args, payload) in every_way(&p.root, "rm -rf build") {
        let reply = send_from(&p, &p.root, &args, &payload);
        assert!(
            reply_blocks(&reply),
            "{args:?} after the edit: {}",
            reply.text
        );
        assert!(
            reply.text.contains(".ka/hooks/guard.sh (changed)"),
            "{args:?}: {}",
            reply.text
        );
    }
}

#[test]
fn a_renamed_project_keeps_its_guards_failing_closed_and_names_the_trust_command() {
    let p = Project::new();
    p.project(PROJECT_TOML);
    p.write(".ka/hooks/guard.sh", GUARD);
    trust_from(&p, &p.root);
    let moved = p.base.join("renamed project");
    fs::rename(&p.root, &moved).expect("rename");
    let fix = format!("ka-hooks --project '{}' trust", moved.display());
    for (args, payload) in every_way(&moved, "rm -rf build") {
        let reply = send_from(&p, &moved, &args, &payload);
        assert!(reply_blocks(&reply), "{args:?}: {}", reply.text);
        assert!(
            reply.text.contains(&fix),
            "{args:?} names {fix}: {}",
            reply.text
        );
        assert!(
            reply.text.contains("moved or renamed"),
            "{args:?}: {}",
            reply.text
        );
    }
    // Once a person trusts it at its new place, it runs as reviewed.
    trust_from(&p, &moved);
    for (args, payload) in every_way(&moved, "ls") {
        let reply = send_from(&p, &moved, &args, &payload);
        assert_eq!(reply.code, Some(0), "{args:?}: {}", reply.text);
        assert!(!reply_blocks(&reply), "{args:?}: {}", reply.text);
    }
    for (args, payload) in every_way(&moved, "rm -rf build") {
        let reply = send_from(&p, &moved, &args, &payload);
        assert!(reply_blocks(&reply), "{args:?}: {}", reply.text);
        assert!(
            reply.text.contains("no rm -rf here"),
            "{args:?}: {}",
            reply.text
        );
    }
}

#[test]
fn a_project_moved_to_another_file_system_is_recognised_by_its_reviewed_content() {
    let p = Project::new();
    p.project(PROJECT_TOML);
    p.write(".ka/hooks/guard.sh", GUARD);
    trust_from(&p, &p.root);
    // A copy and a removal, as `mv` across file systems does: a new directory (a new inode).
    let moved = p.base.join("elsewhere");
    fs::create_dir_all(moved.join(".ka/hooks")).expect("new root");
    for rel in [".ka/ka.toml", ".ka/hooks/guard.sh"] {
        fs::copy(p.root.join(rel), moved.join(rel)).expect("copy");
    }
    fs::remove_dir_all(&p.root).expect("remove the old root");
    for (args, payload) in every_way(&moved, "ls") {
        let reply = send_from(&p, &moved, &args, &payload);
        assert!(reply_blocks(&reply), "{args:?}: {}", reply.text);
        assert!(reply.text.contains("trust"), "{args:?}: {}", reply.text);
    }
}
