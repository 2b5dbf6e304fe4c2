//! `ka-hooks import claude`: Claude Code's hooks become `[[hooks]]` entries. The README's
//! example round-trips: importing it gives the README's TOML, and the imported hooks answer
//! Claude Code the way the original hooks did.

mod support;

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use support::Project;

/// The fenced block after `<!-- import-example: NAME -->` in the README.
fn readme_block(name: &str) -> String {
    let readme = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let marker = format!("<!-- import-example: {name} -->");
    let after = &readme[readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README has no {marker}"))..];
    let start = after.find("```").expect("a fence") + 3;
    let body = &after[start..];
    let body = &body[body.find('\n').expect("fence line") + 1..];
    body[..body.find("```").expect("closing fence")].to_owned()
}

fn import(p: &Project, args: &[&str]) -> (Option<i32>, String, String) {
    let output = p
        .cli()
        .env("CLAUDE_CONFIG_DIR", p.base.join("claude-home"))
        .args(["import", "claude"])
        .args(args)
        .output()
        .expect("ka-hooks import");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The project of the README's example.
fn readme_project() -> Project {
    let p = Project::new();
    p.write(".claude/settings.json", &readme_block("settings.json"));
    p.write(
        ".claude/hooks/protect-env.sh",
        &readme_block("protect-env.sh"),
    );
    p
}

fn pre_tool_use(p: &Project, file: &str) -> Value {
    json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": p.root,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": p.root.join(file), "content": "KEY=1\n"}
    })
}

/// Exit code and stderr of Claude Code's own run of the settings' PreToolUse command.
fn original_hook(p: &Project, payload: &Value) -> (Option<i32>, String) {
    let settings: Value =
        serde_json::from_str(&readme_block("settings.json")).expect("README settings");
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .expect("command");
    let output = assert_cmd::Command::new("sh")
        .args(["-c", command])
        .current_dir(&p.root)
        .env("CLAUDE_PROJECT_DIR", &p.root)
        .write_stdin(payload.to_string())
        .output()
        .expect("sh");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).trim().to_owned(),
    )
}

fn through_adapter(p: &Project, payload: &Value) -> (Option<i32>, String) {
    let output = p
        .cli()
        .args(["--trust", "claude"])
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks claude");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).trim().to_owned(),
    )
}

#[test]
fn readme_example_imports_to_the_readme_toml() {
    let p = readme_project();
    let (code, stdout, stderr) = import(&p, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let expected = readme_block("ka.toml").replace("/path/to/project", &p.root.to_string_lossy());
    assert_eq!(stdout, expected);
    assert!(
        stderr.contains("1 hook(s) of Notification: ka has no notification event"),
        "{stderr}"
    );
    assert!(!p.exists(".ka/ka.toml"), "printing wrote a file");
}

#[test]
fn readme_example_round_trips_through_the_adapter() {
    let p = readme_project();
    let (code, _, stderr) = import(&p, &["--write"]);
    assert_eq!(code, Some(0), "{stderr}");
    let check = p.cli().args(["--trust", "check"]).output().expect("check");
    assert!(check.status.success(), "{check:?}");

    let blocked = pre_tool_use(&p, ".env");
    let original = original_hook(&p, &blocked);
    assert_eq!(original.0, Some(2), "the README's hook itself");
    assert_eq!(
        original.1,
        "protect-env: .env files hold secrets; edit .env.example instead"
    );
    assert_eq!(through_adapter(&p, &blocked), original);

    let allowed = pre_tool_use(&p, ".env.example");
    assert_eq!(original_hook(&p, &allowed).0, Some(0));
    assert_eq!(through_adapter(&p, &allowed).0, Some(0));
}

#[test]
fn write_appends_after_existing_content_and_a_rerun_adds_nothing() {
    let p = readme_project();
    let mine = "# my hooks\n[hook_settings]\ntimeout = 30\n";
    p.write(".ka/ka.toml", mine);
    let (_, stdout, _) = import(&p, &["--write"]);
    assert!(stdout.contains("appended 2 hook(s)"), "{stdout}");
    assert!(stdout.contains("ka-hooks --project"), "{stdout}");
    let text = p.read(".ka/ka.toml").expect("ka.toml");
    assert!(text.starts_with(mine), "{text}");
    assert!(text.contains("# imported from "), "{text}");

    let (code, stdout, _) = import(&p, &["--write"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("already in"), "{stdout}");
    assert_eq!(p.read(".ka/ka.toml").expect("ka.toml"), text);
}

#[test]
fn adapter_entries_and_non_command_hooks_are_not_imported() {
    let p = Project::new();
    p.write(
        ".claude/settings.json",
        &json!({"hooks": {
            "PreToolUse": [
                {"matcher": "*", "hooks": [{"type": "command", "command": "ka-hooks claude", "timeout": 21}]},
                {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Is this safe?"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
        }})
        .to_string(),
    );
    let (code, stdout, stderr) = import(&p, &[]);
    assert_eq!(code, Some(0));
    assert!(
        !stdout.contains("command = \"ka-hooks claude\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("event = \"stop\"\ncommand = \"say done\"\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("a `prompt` hook has no ka equivalent"),
        "{stderr}"
    );
}

#[test]
fn regex_matchers_gain_ka_names_and_unreadable_ones_are_skipped() {
    let p = Project::new();
    p.write(
        ".claude/settings.json",
        &json!({"hooks": {"PostToolUse": [
            {"matcher": "Notebook.*|mcp__github__.*", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "(?!Bash).*", "hooks": [{"type": "command", "command": "b"}]}
        ]}})
        .to_string(),
    );
    let (_, stdout, stderr) = import(&p, &[]);
    assert!(
        stdout.contains("matcher = \"^(?:notebook_edit)$|Notebook.*|mcp__github__.*\""),
        "{stdout}"
    );
    assert!(!stdout.contains("command = \"b\""), "{stdout}");
    assert!(stderr.contains("not a regex ka can read"), "{stderr}");
}

#[test]
fn explicit_from_file_must_exist() {
    let p = Project::new();
    let (code, _, stderr) = import(&p, &["--from", "missing.json"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("missing.json"), "{stderr}");
}

#[test]
fn only_claude_can_be_imported() {
    let p = Project::new();
    let (code, _, stderr) = import_agent(&p, "gemini");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("not supported"), "{stderr}");
}

fn import_agent(p: &Project, agent: &str) -> (Option<i32>, String, String) {
    let output = p
        .cli()
        .args(["import", agent])
        .output()
        .expect("ka-hooks import");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
