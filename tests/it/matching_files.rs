//! Guards match the file, not its spelling: symlinks, `..`,
//! `/proc/self/cwd`, a project reached through a symlink, a decoy `path` next to the agent's own
//! `file_path`, every tool that writes or reads files, and placeholders in any quoting. Each
//! attack runs through `ka-hooks run` and the adapters, with a real guard spawned through `sh`.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::{hook, Project};

const GUARD: &str = "cat >/dev/null; echo 'GUARDED' >&2; exit 2";

/// A user-layer guard with these extra keys.
fn guarded_with(extra: &[&str]) -> Project {
    Project::with_user_toml(&hook("guard", "pre_tool_use", GUARD, extra))
}

/// `ka-hooks run pre_tool_use` of `tool` with `arguments`: whether it was blocked.
fn run_blocks(p: &Project, tool: &str, arguments: Value) -> bool {
    let out = p
        .cli()
        .args(["run", "pre_tool_use", "--tool", tool, "--input"])
        .arg(json!({ "arguments": arguments }).to_string())
        .output()
        .expect("ka-hooks run");
    out.status.code() == Some(2)
}

/// An adapter's answer to a `PreToolUse`/`BeforeTool` of the agent's `tool` with `input`.
fn adapter_on_tool(
    p: &Project,
    agent: &str,
    tool: &str,
    input: Value,
    dir: &Path,
) -> (Option<i32>, Value) {
    let event = if agent == "gemini" {
        "BeforeTool"
    } else {
        "PreToolUse"
    };
    let payload = json!({"session_id": "s", "turn_id": "1", "cwd": dir, "hook_event_name": event,
        "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
        "transcript_path": "/tmp/t.json", "permission_mode": "default"});
    let out = p
        .cli()
        .env("CLAUDE_PROJECT_DIR", dir)
        .env("GEMINI_PROJECT_DIR", dir)
        .current_dir(dir)
        .arg(agent)
        .write_stdin(payload.to_string())
        .output()
        .expect("adapter");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.code(), answer)
}

fn adapter_blocks(p: &Project, agent: &str, tool: &str, input: Value) -> bool {
    adapter_blocks_in(p, agent, tool, input, &p.root)
}

fn adapter_blocks_in(p: &Project, agent: &str, tool: &str, input: Value, dir: &Path) -> bool {
    let (code, answer) = adapter_on_tool(p, agent, tool, input, dir);
    code == Some(2)
        || answer["decision"] == "deny"
        || answer["decision"] == "block"
        || answer["hookSpecificOutput"]["permissionDecision"] == "deny"
}

fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).expect("symlink");
}

#[test]
fn paths_see_through_a_symlinked_directory() {
    let p = guarded_with(&[r#"paths = ["secrets/**"]"#]);
    p.write("secrets/.keep", "");
    std::fs::create_dir_all(p.root.join("src")).expect("src");
    symlink("../secrets", p.root.join("src/s"));
    assert!(run_blocks(
        &p,
        "write",
        json!({"path": "src/s/key", "content": "x"})
    ));
    assert!(adapter_blocks(
        &p,
        "claude",
        "Write",
        json!({"file_path": "src/s/key", "content": "x"})
    ));
    assert!(adapter_blocks(
        &p,
        "gemini",
        "write_file",
        json!({"file_path": "src/s/key", "content": "x"})
    ));
    assert!(adapter_blocks(
        &p,
        "codex",
        "apply_patch",
        json!({"command": "*** Begin Patch\n*** Add File: src/s/key\n+x\n*** End Patch\n"})
    ));
    // The other files are still free.
    assert!(!run_blocks(
        &p,
        "write",
        json!({"path": "src/other", "content": "x"})
    ));
}

#[test]
fn paths_see_through_proc_self_cwd_from_any_working_directory() {
    let p = guarded_with(&[r#"paths = ["secrets/**"]"#]);
    assert!(run_blocks(
        &p,
        "write",
        json!({"path": "/proc/self/cwd/secrets/k", "content": "x"})
    ));
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let out = p
        .cli()
        .current_dir(elsewhere.path())
        .env("CLAUDE_PROJECT_DIR", &p.root)
        .arg("claude")
        .write_stdin(
            json!({"session_id": "s", "cwd": p.root, "hook_event_name": "PreToolUse",
                   "tool_name": "Write",
                   "tool_input": {"file_path": "/proc/self/cwd/secrets/k", "content": "x"}})
            .to_string(),
        )
        .output()
        .expect("claude");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_project_reached_through_a_symlink_is_the_same_project() {
    let p = guarded_with(&[r#"paths = ["secrets/**"]"#]);
    p.write(".ka/.keep", "");
    let link = p.base.join("link");
    symlink(&p.root, &link);
    let target = link.join("secrets/k");
    for agent in ["claude", "gemini"] {
        let input = json!({"file_path": target, "content": "x"});
        assert!(
            adapter_blocks_in(
                &p,
                agent,
                if agent == "claude" {
                    "Write"
                } else {
                    "write_file"
                },
                input,
                &link
            ),
            "{agent}"
        );
    }
    let out = p
        .cli()
        .current_dir(&link)
        .args(["run", "pre_tool_use", "--tool", "write", "--input"])
        .arg(json!({"arguments": {"path": target, "content": "x"}}).to_string())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn write_rules_match_dotted_spellings() {
    let p = guarded_with(&[r#"if = "Write(secrets/**)""#]);
    for path in ["./secrets/k", "src/../secrets/k", "secrets//k"] {
        assert!(
            run_blocks(&p, "write", json!({"path": path, "content": "x"})),
            "{path}"
        );
        assert!(
            adapter_blocks(
                &p,
                "claude",
                "Write",
                json!({"file_path": path, "content": "x"})
            ),
            "{path}"
        );
        assert!(
            adapter_blocks(
                &p,
                "gemini",
                "replace",
                json!({"file_path": path, "old_string": "a", "new_string": "b"})
            ),
            "{path}"
        );
    }
    assert!(!run_blocks(
        &p,
        "write",
        json!({"path": "src/k", "content": "x"})
    ));
}

#[test]
fn a_project_file_linked_to_the_user_file_asks_a_human() {
    let p = Project::new();
    p.user("# the user's file\n");
    symlink(p.config_dir.join("ka.toml"), p.root.join("notes.toml"));
    let outcome = p.run_json("write", json!({"path": "notes.toml", "content": "x"}));
    assert_eq!(outcome["decision"], "ask", "{outcome}");
    let (_, answer) = adapter_on_tool(
        &p,
        "claude",
        "Edit",
        json!({"file_path": "notes.toml", "old_string": "a", "new_string": "b"}),
        &p.root,
    );
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "ask",
        "{answer}"
    );
    // The project's own `.ka/ka.toml` as a link to the user file: asked under either name.
    std::fs::remove_file(p.root.join("notes.toml")).expect("rm");
    symlink(p.config_dir.join("ka.toml"), p.root.join(".ka/ka.toml"));
    let (_, answer) = adapter_on_tool(
        &p,
        "claude",
        "Write",
        json!({"file_path": p.config_dir.join("ka.toml"), "content": "x"}),
        &p.root,
    );
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "ask",
        "{answer}"
    );
}

#[test]
fn a_decoy_path_never_hides_the_file_the_agent_writes() {
    let p = guarded_with(&[r#"paths = ["secrets/**"]"#]);
    for input in [
        json!({"file_path": "secrets/k", "path": "README.md", "content": "x"}),
        json!({"path": "README.md", "file_path": "secrets/k", "content": "x"}),
    ] {
        assert!(
            adapter_blocks(&p, "claude", "Write", input.clone()),
            "{input}"
        );
        assert!(
            adapter_blocks(&p, "gemini", "write_file", input.clone()),
            "{input}"
        );
    }
    // `{path}` is the agent's own file.
    let q = Project::with_user_toml(&hook(
        "seen",
        "pre_tool_use",
        r#"cat >/dev/null; printf '%s' {path} > seen.txt"#,
        &[r#"tool = "write""#],
    ));
    adapter_on_tool(
        &q,
        "claude",
        "Write",
        json!({"path": "README.md", "file_path": "secrets/k", "content": "x"}),
        &q.root,
    );
    assert_eq!(q.read("seen.txt").as_deref(), Some("secrets/k"));
}

#[test]
fn a_guard_on_write_and_edit_sees_every_tool_that_writes_files() {
    for tool in [
        r#"tool = ["write", "edit"]"#,
        r#"tool = "@file_writes""#,
        r#"tool = ["Write", "Edit"]"#,
    ] {
        let p = guarded_with(&[tool]);
        assert!(
            adapter_blocks(
                &p,
                "claude",
                "MultiEdit",
                json!({"file_path": "a.rs", "edits": [{"old_string": "a", "new_string": "b"}]})
            ),
            "{tool}"
        );
        assert!(
            adapter_blocks(
                &p,
                "claude",
                "NotebookEdit",
                json!({"notebook_path": "n.ipynb", "new_source": "x"})
            ),
            "{tool}"
        );
        let patch =
            "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Add File: b.txt\n+y\n*** End Patch\n";
        assert!(
            adapter_blocks(&p, "codex", "apply_patch", json!({"command": patch})),
            "{tool}"
        );
        assert!(
            run_blocks(
                &p,
                "apply_patch",
                json!({"paths": ["a", "b"], "patch": "x"})
            ),
            "{tool}"
        );
        // Reading is not writing.
        assert!(
            !adapter_blocks(&p, "claude", "Read", json!({"file_path": "a.rs"})),
            "{tool}"
        );
    }
}

#[test]
fn a_guard_listing_some_writers_elsewhere_is_told_by_check() {
    let p = guarded_with(&[r#"tool = ["multi_edit"]"#]);
    p.cli()
        .arg("check")
        .assert()
        .stderr(predicates::str::contains("@file_writes"));
    // `{path}` in a guard on `edit`, which also sees a patch of several files: blocked, and said.
    let q = Project::with_user_toml(&hook(
        "one",
        "pre_tool_use",
        "cat >/dev/null; exit 0 # {path}",
        &[r#"tool = "edit""#],
    ));
    q.cli()
        .arg("check")
        .assert()
        .stderr(predicates::str::contains("write `{paths}`"));
    assert!(run_blocks(
        &q,
        "apply_patch",
        json!({"paths": ["a", "b"], "patch": "x"})
    ));
    assert!(!run_blocks(
        &q,
        "edit",
        json!({"path": "a", "old_string": "x", "new_string": "y"})
    ));
}

#[test]
fn read_rules_cover_every_reading_and_searching_tool() {
    let p = guarded_with(&[r#"if = "Read(~/.ssh/**)""#]);
    let home = p.base.join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("home");
    let ssh = home.join(".ssh");
    let blocks = |agent: &str, tool: &str, input: Value| {
        let payload_dir = p.root.clone();
        let event = if agent == "gemini" {
            "BeforeTool"
        } else {
            "PreToolUse"
        };
        let out = p
            .cli()
            .env("HOME", &home)
            .env("CLAUDE_PROJECT_DIR", &payload_dir)
            .arg(agent)
            .write_stdin(
                json!({"session_id": "s", "cwd": payload_dir, "hook_event_name": event,
                       "tool_name": tool, "tool_input": input, "transcript_path": "/tmp/t"})
                .to_string(),
            )
            .output()
            .expect("adapter");
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        out.status.code() == Some(2) || answer["decision"] == "deny"
    };
    assert!(blocks(
        "claude",
        "Read",
        json!({"file_path": ssh.join("id_ed25519")})
    ));
    assert!(blocks(
        "claude",
        "Grep",
        json!({"pattern": "PRIVATE", "path": ssh})
    ));
    assert!(blocks(
        "claude",
        "Grep",
        json!({"pattern": "PRIVATE", "path": home})
    ));
    assert!(blocks(
        "claude",
        "Glob",
        json!({"pattern": "*", "path": ssh})
    ));
    assert!(blocks("claude", "LS", json!({"path": home})));
    assert!(blocks(
        "gemini",
        "read_many_files",
        json!({"include": [format!("{}/*", ssh.display())]})
    ));
    assert!(blocks(
        "gemini",
        "read_many_files",
        json!({"paths": [ssh.join("id_rsa")]})
    ));
    assert!(blocks(
        "gemini",
        "grep_search",
        json!({"pattern": "KEY", "dir_path": ssh})
    ));
    assert!(blocks(
        "gemini",
        "glob",
        json!({"pattern": "**/*", "dir_path": home})
    ));
    // A search elsewhere is not a read of ~/.ssh.
    assert!(!blocks(
        "claude",
        "Grep",
        json!({"pattern": "x", "path": p.root.join("src")})
    ));
    assert!(!blocks("claude", "Glob", json!({"pattern": "*.rs"})));
}

#[test]
fn a_paths_guard_on_reads_sees_searches_of_the_tree() {
    let p = guarded_with(&[r#"tool = "@file_reads""#, r#"paths = ["secrets/**"]"#]);
    p.write("secrets/k", "key");
    p.write("src/a.rs", "");
    assert!(adapter_blocks(
        &p,
        "claude",
        "Grep",
        json!({"pattern": "key"})
    ));
    assert!(adapter_blocks(
        &p,
        "claude",
        "Grep",
        json!({"pattern": "key", "path": "secrets"})
    ));
    assert!(adapter_blocks(
        &p,
        "claude",
        "Glob",
        json!({"pattern": "**/*", "path": p.root})
    ));
    assert!(adapter_blocks(
        &p,
        "gemini",
        "grep_search",
        json!({"pattern": "key", "dir_path": "."})
    ));
    assert!(adapter_blocks(
        &p,
        "gemini",
        "read_many_files",
        json!({"include": ["secrets/*"]})
    ));
    assert!(run_blocks(&p, "ls", json!({"path": "secrets"})));
    assert!(adapter_blocks(
        &p,
        "claude",
        "Read",
        json!({"file_path": "secrets/k"})
    ));
    // A search of another tree, a read of another file: free.
    assert!(!adapter_blocks(
        &p,
        "claude",
        "Grep",
        json!({"pattern": "key", "path": "src"})
    ));
    assert!(!adapter_blocks(
        &p,
        "claude",
        "Read",
        json!({"file_path": "src/a.rs"})
    ));
}

#[test]
fn a_quoted_placeholder_stays_inert() {
    for command in [
        r#"cat >/dev/null; printf '%s' "{path}" > seen.txt"#,
        r#"cat >/dev/null; printf '%s' '{path}' > seen.txt"#,
        r#"cat >/dev/null; x="$(printf '%s' "{path}")"; printf '%s' "$x" > seen.txt"#,
    ] {
        let p = Project::with_user_toml(&hook(
            "fmt",
            "pre_tool_use",
            command,
            &[r#"tool = "write""#],
        ));
        p.cli().arg("check").assert().success();
        let name = "src/$(touch PWNED)";
        p.cli()
            .args(["run", "pre_tool_use", "--tool", "write", "--input"])
            .arg(json!({"arguments": {"path": name, "content": "x"}}).to_string())
            .assert()
            .success();
        assert!(!p.exists("PWNED"), "{command} ran the file name");
        assert_eq!(p.read("seen.txt").as_deref(), Some(name), "{command}");
        std::fs::remove_file(p.root.join("seen.txt")).expect("rm");
        adapter_on_tool(
            &p,
            "claude",
            "Write",
            json!({"file_path": name, "content": "x"}),
            &p.root,
        );
        assert!(
            !p.exists("PWNED"),
            "{command} ran the file name through claude"
        );
        assert_eq!(p.read("seen.txt").as_deref(), Some(name), "{command}");
    }
}

/// The scripts the user's guards run are the user's configuration too: emptying one (a write
/// the model's own file tool can make) switches the guard off as surely as editing `ka.toml`.
/// A write to one kept beside `ka.toml`, or anywhere outside the project, asks a human (found by
/// review: both writes went through).
#[test]
fn a_write_to_a_script_a_user_guard_runs_asks_a_human() {
    let p = Project::new();
    let outside = p.base.join("guards");
    std::fs::create_dir_all(&outside).expect("mkdir");
    for script in [p.config_dir.join("guard.sh"), outside.join("other.sh")] {
        std::fs::write(&script, "echo no >&2; exit 2\n").expect("write script");
    }
    p.user(&format!(
        "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"bash\"\n\
         command = \"sh '{}'\"\n\n\
         [[hooks]]\nname = \"other\"\nevent = \"pre_tool_use\"\ntool = \"bash\"\n\
         command = \"sh {}\"\n",
        p.config_dir.join("guard.sh").display(),
        outside.join("other.sh").display()
    ));
    for script in [p.config_dir.join("guard.sh"), outside.join("other.sh")] {
        let outcome = p.run_json("write", json!({"path": script, "content": "exit 0"}));
        assert_eq!(
            outcome["decision"],
            "ask",
            "{}: {outcome}",
            script.display()
        );
        let (_, answer) = adapter_on_tool(
            &p,
            "claude",
            "Write",
            json!({"file_path": script, "content": "exit 0"}),
            &p.root,
        );
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"],
            "ask",
            "{}: {answer}",
            script.display()
        );
    }
    // Another file outside the project is not the user's configuration.
    let outcome = p.run_json(
        "write",
        json!({"path": outside.join("notes.txt"), "content": "x"}),
    );
    assert_eq!(outcome["decision"], Value::Null, "{outcome}");
}
