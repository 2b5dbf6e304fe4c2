//! Weakening a guard needs a person: inside an agent's tool call, trusting a changed file,
//! revoking, `init` over a removed file, `install --remove` and `import --remove-originals` are
//! refused. The tool call is told by an agent's marker variable set to anything, by an agent or
//! a `ka-hooks` hook among the ancestor processes, and by the missing terminal.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::support::{Project, AMBIENT_VARS};

const GUARD: &str = r#"
[[hooks]]
name = "guard"
event = "pre_tool_use"
tool = "write"
on_error = "block"
command = "echo 'guard: only src/ is writable' >&2; exit 2"
"#;

/// A trusted project whose guard blocks every write, then edited by the model (stale).
fn edited_project() -> Project {
    let p = Project::new();
    p.project(GUARD);
    p.cli().args(["trust", "--yes"]).assert().success();
    p.project(&format!("{GUARD}# edited by the model\n"));
    p
}

fn ka_hooks_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("ka-hooks")
}

/// A program named like an agent's CLI (a symlink to `sh`): the parent of the command it runs.
fn agent_shell(p: &Project, name: &str) -> PathBuf {
    let dir = p.base.join("agent-bin");
    std::fs::create_dir_all(&dir).expect("agent-bin");
    let path = dir.join(name);
    if !path.exists() {
        std::os::unix::fs::symlink("/bin/sh", &path).expect("symlink sh");
    }
    path
}

/// `script` run by a shell named `agent`, with no terminal and none of the ambient markers:
/// what the model's shell command looks like from inside the agent. `$KA` is ka-hooks.
fn under(p: &Project, agent: &str, script: &str) -> Output {
    let mut cmd = std::process::Command::new(agent_shell(p, agent));
    for var in AMBIENT_VARS {
        cmd.env_remove(var);
    }
    cmd.arg("-c")
        // `; exit $?` keeps the shell alive as the parent (no exec of the last command).
        .arg(format!("{script}; exit $?"))
        .env("KA", ka_hooks_bin())
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .env("NO_COLOR", "1")
        .current_dir(&p.root)
        .stdin(Stdio::null())
        .output()
        .expect("agent shell")
}

#[track_caller]
fn refused(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("refusing to") && stderr.contains("a person must review"),
        "{stderr}"
    );
}

/// The stale guard still blocks a write, as a changed file does.
#[track_caller]
fn still_blocks(p: &Project) {
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write", "--input"])
        .arg(r#"{"arguments":{"path":"README.md","content":"x"}}"#)
        .assert()
        .code(2);
}

#[test]
fn an_agent_shell_without_its_marker_cannot_trust_a_changed_file() {
    let p = edited_project();
    for agent in ["claude", "codex", "gemini", "copilot", "cursor-agent"] {
        refused(&under(&p, agent, r#""$KA" trust --yes"#));
    }
    // The marker taken away in every way a shell can.
    refused(&under(
        &p,
        "claude",
        r#"CLAUDECODE=1 env -u CLAUDECODE "$KA" trust --yes"#,
    ));
    refused(&under(
        &p,
        "claude",
        r#"env -i HOME="$HOME" KA_CONFIG_DIR="$KA_CONFIG_DIR" KA_DATA_DIR="$KA_DATA_DIR" "$KA" trust --yes"#,
    ));
    still_blocks(&p);
}

#[test]
fn a_marker_set_to_zero_or_empty_still_marks_a_tool_call() {
    let p = edited_project();
    for (var, value) in [("CLAUDECODE", "0"), ("CLAUDECODE", ""), ("GEMINI_CLI", "0")] {
        let output = p
            .cli()
            .env(var, value)
            .args(["trust", "--yes"])
            .output()
            .expect("trust");
        refused(&output);
    }
    still_blocks(&p);
}

#[test]
fn a_hook_that_drops_ka_marker_cannot_trust_its_project() {
    // The hook's own marker removed: its `ka-hooks` ancestor still says where it runs.
    let p = edited_project();
    p.user(&format!(
        "[[hooks]]\nevent = \"stop\"\ncommand = \"env -u KA_AGENT_TOOL_CALL {} trust --yes > tried 2>&1; true\"\n",
        ka_hooks_bin().display()
    ));
    p.cli().args(["run", "stop"]).assert().success();
    let tried = p.read("tried").unwrap_or_default();
    assert!(tried.contains("a person must review"), "{tried}");
    still_blocks(&p);
}

#[test]
fn revoking_a_current_record_is_refused_in_a_tool_call() {
    let p = Project::new();
    p.project(GUARD);
    p.cli().args(["trust", "--yes"]).assert().success();
    refused(
        &p.cli()
            .env("CLAUDECODE", "1")
            .args(["trust", "--revoke"])
            .output()
            .expect("revoke"),
    );
    refused(&under(&p, "claude", r#""$KA" trust --revoke"#));
    p.cli()
        .args(["trust", "--show"])
        .assert()
        .stdout(predicates::str::contains("trusted"));
}

#[test]
fn init_over_a_removed_trusted_file_is_refused_in_a_tool_call() {
    let p = Project::new();
    p.project(GUARD);
    p.cli().args(["trust", "--yes"]).assert().success();
    std::fs::remove_file(p.root.join(".ka/ka.toml")).expect("rm");
    refused(
        &p.cli()
            .env("CLAUDECODE", "1")
            .arg("init")
            .output()
            .expect("init"),
    );
    refused(&under(&p, "claude", r#""$KA" init"#));
    assert!(!p.exists(".ka/ka.toml"), "no starter replaced the guard");
    still_blocks(&p);
    // A person may.
    p.cli().arg("init").assert().success();
}

#[test]
fn removing_ka_hooks_from_an_agent_is_refused_in_a_tool_call() {
    let p = Project::new();
    p.project(GUARD);
    p.cli().args(["trust", "--yes"]).assert().success();
    p.cli()
        .args(["install", "claude", "--write"])
        .assert()
        .success();
    let settings = p.read(".claude/settings.json").expect("settings");
    refused(
        &p.cli()
            .env("CLAUDECODE", "1")
            .args(["install", "claude", "--remove", "--write"])
            .output()
            .expect("install --remove"),
    );
    refused(&under(
        &p,
        "claude",
        r#""$KA" install claude --remove --write"#,
    ));
    refused(&under(
        &p,
        "claude",
        r#""$KA" import claude --remove-originals --write"#,
    ));
    assert_eq!(p.read(".claude/settings.json"), Some(settings));
}

#[test]
fn a_person_without_a_terminal_still_trusts_with_yes() {
    // The test runner is no agent: no marker, no agent ancestor. `--yes` records as before.
    let p = edited_project();
    p.cli().args(["trust", "--yes"]).assert().success();
    assert!(Path::new(&p.data_dir).join("trust.json").exists());
}
