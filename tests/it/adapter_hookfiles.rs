//! `install` and `import` of the hook-file agents (Copilot, Cursor, Antigravity), the tool rows
//! of those agents, and their process markers.

use crate::support;

use std::fs;
use std::path::Path;

use ka_hooks::adapter::tools;
use ka_hooks::adapter::tools_agents::AGENT_TOOLS;
use predicates::prelude::*;
use serde_json::{json, Map, Value};
use support::{hook, Project};

fn hookfile_project() -> Project {
    let mut toml = String::new();
    toml.push_str(&hook(
        "guard",
        "pre_tool_use",
        "true",
        &["tool = [\"bash\"]", "timeout = 10"],
    ));
    toml.push_str(&hook("stopper", "stop", "true", &[]));
    Project::with_user_toml(&toml)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).expect("hook file")).expect("JSON")
}

/// A realistic Cursor file of the user's own, with keys and hooks ka must keep.
const CURSOR_FILE: &str = r#"{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": ".cursor/hooks/format.sh", "timeout": 20 }],
    "preToolUse": [
      { "command": ".cursor/hooks/validate.sh", "matcher": "Shell|Write", "failClosed": true, "timeout": 30 }
    ],
    "stop": [{ "command": "bun run .cursor/hooks/track-stop.ts --stop", "loop_limit": 10 }]
  }
}
"#;

#[test]
fn install_cursor_keeps_the_file_is_idempotent_and_removes_only_its_own() {
    let p = hookfile_project();
    p.write(".cursor/hooks.json", CURSOR_FILE);
    let file = p.root.join(".cursor/hooks.json");
    p.cli()
        .args(["install", "cursor", "--write"])
        .assert()
        .success();
    let after = read_json(&file);
    let pre = after["hooks"]["preToolUse"].as_array().expect("array");
    assert_eq!(pre.len(), 2, "{after}");
    assert_eq!(pre[0]["command"], ".cursor/hooks/validate.sh");
    assert_eq!(pre[1]["command"], support::adapter_command("cursor"));
    assert_eq!(pre[1]["failClosed"], true);
    assert!(pre[1]["timeout"].as_u64().is_some_and(|t| t >= 11));
    assert_eq!(after["hooks"]["afterFileEdit"][0]["timeout"], 20);
    assert_eq!(after["hooks"]["stop"][0]["loop_limit"], 10);
    assert_eq!(
        after["hooks"]["stop"][1]["command"],
        support::adapter_command("cursor")
    );
    // Again: nothing changes.
    let text = fs::read_to_string(&file).expect("file");
    p.cli()
        .args(["install", "cursor", "--write"])
        .assert()
        .success()
        .stdout(predicate::str::contains("already installed"));
    assert_eq!(fs::read_to_string(&file).expect("file"), text);
    // --print shows the file and writes nothing.
    fs::write(&file, CURSOR_FILE).expect("reset");
    p.cli()
        .args(["install", "cursor", "--print"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            json!(support::adapter_command("cursor")).to_string(),
        ));
    assert_eq!(fs::read_to_string(&file).expect("file"), CURSOR_FILE);
    // --remove takes out the adapter's entries and nothing else.
    p.cli()
        .args(["install", "cursor", "--write"])
        .assert()
        .success();
    p.cli()
        .args(["install", "cursor", "--remove", "--write"])
        .assert()
        .success();
    assert_eq!(
        read_json(&file),
        serde_json::from_str::<Value>(CURSOR_FILE).expect("JSON")
    );
}

#[test]
fn install_then_import_cursor_round_trips_without_loss() {
    let p = hookfile_project();
    p.write(".cursor/hooks.json", CURSOR_FILE);
    p.cli()
        .args(["install", "cursor", "--write"])
        .assert()
        .success();
    let output = p.cli().args(["import", "cursor"]).output().expect("import");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let table: toml::Table = text.parse().expect("the import is TOML");
    let hooks = table["hooks"].as_array().expect("[[hooks]]");
    // The three of the user's hooks, not the adapter's own.
    assert_eq!(hooks.len(), 3, "{text}");
    let by_command = |c: &str| {
        hooks
            .iter()
            .find(|h| h["command"].as_str() == Some(c))
            .unwrap_or_else(|| panic!("{c} not imported: {text}"))
    };
    let validate = by_command(".cursor/hooks/validate.sh");
    assert_eq!(validate["event"].as_str(), Some("pre_tool_use"));
    assert_eq!(validate["matcher"].as_str(), Some("bash|write"));
    assert_eq!(validate["timeout"].as_integer(), Some(30));
    // `failClosed: true` is what ka's `on_error = "block"` says.
    assert_eq!(validate["on_error"].as_str(), Some("block"));
    // Cursor lets a call through when a hook without `failClosed` fails: so does the import.
    assert!(
        matches!(
            by_command(".cursor/hooks/format.sh")
                .get("on_error")
                .and_then(toml::Value::as_str),
            None | Some("ignore")
        ),
        "an observer fails open in both: {text}"
    );
    assert_eq!(
        by_command(".cursor/hooks/format.sh")["event"].as_str(),
        Some("post_tool_use")
    );
    assert_eq!(
        by_command("bun run .cursor/hooks/track-stop.ts --stop")["event"].as_str(),
        Some("stop")
    );
    // What ka cannot take is named, not dropped silently.
    assert!(text.contains("failClosed"), "{text}");
    assert!(text.contains("loop_limit"), "{text}");
}

#[test]
fn install_then_import_copilot_round_trips_without_loss() {
    let p = hookfile_project();
    let theirs = json!({
        "version": 1,
        "hooks": {
            "preToolUse": [{"type": "command", "bash": "./scripts/policy.sh", "powershell": "./scripts/policy.ps1",
                            "matcher": "bash|create", "cwd": ".", "env": {"LOG": "1"}, "timeoutSec": 15}],
            "postToolUse": [{"type": "command", "bash": "echo done\u{1b}[2J", "matcher": "web_.*"}],
            "sessionStart": [{"type": "prompt", "prompt": "/plan"}]
        }
    });
    p.write(
        ".github/hooks/policy.json",
        &serde_json::to_string_pretty(&theirs).expect("JSON"),
    );
    p.cli()
        .args(["install", "copilot", "--write"])
        .assert()
        .success();
    // The adapter has a file of its own; the user's file is untouched.
    assert_eq!(read_json(&p.root.join(".github/hooks/policy.json")), theirs);
    let ours = read_json(&p.root.join(".github/hooks/ka-hooks.json"));
    assert_eq!(ours["version"], 1);
    assert_eq!(
        ours["hooks"]["preToolUse"][0]["bash"],
        format!("{} --event preToolUse", support::adapter_command("copilot"))
    );
    assert!(ours["hooks"]["agentStop"][0]["timeoutSec"]
        .as_u64()
        .is_some());
    let output = p
        .cli()
        .args(["import", "copilot"])
        .output()
        .expect("import");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let table: toml::Table = text.parse().expect("TOML");
    let hooks = table["hooks"].as_array().expect("[[hooks]]");
    assert_eq!(hooks.len(), 2, "{text}");
    assert_eq!(hooks[0]["command"].as_str(), Some("./scripts/policy.sh"));
    assert_eq!(hooks[0]["matcher"].as_str(), Some("bash|write"));
    assert_eq!(hooks[0]["timeout"].as_integer(), Some(15));
    // The escape character survives as itself in TOML and is never raw on the terminal.
    assert_eq!(hooks[1]["command"].as_str(), Some("echo done\u{1b}[2J"));
    assert!(!text.contains('\u{1b}'));
    // An anchored Copilot regex stays anchored.
    assert!(
        hooks[1]["matcher"]
            .as_str()
            .is_some_and(|m| m.contains("^(?:web_.*)$")),
        "{text}"
    );
    assert!(text.contains("env"), "{text}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("prompt"),
        "the prompt hook is named as skipped: {stderr}"
    );
}

#[test]
fn install_copilot_for_the_user_goes_to_copilot_home() {
    let p = hookfile_project();
    let home = p.base.join("copilot-home");
    p.cli()
        .env("COPILOT_HOME", &home)
        .args(["install", "copilot", "--user", "--write"])
        .assert()
        .success();
    assert!(home.join("hooks/ka-hooks.json").is_file());
}

#[test]
fn install_antigravity_writes_one_named_entry() {
    let p = hookfile_project();
    p.write(
        ".agents/hooks.json",
        r#"{"theirs": {"enabled": true, "Stop": [{"type": "command", "command": "x"}]}}"#,
    );
    p.cli()
        .args(["install", "antigravity", "--write"])
        .assert()
        .success();
    let file = read_json(&p.root.join(".agents/hooks.json"));
    assert_eq!(file["theirs"]["Stop"][0]["command"], "x");
    assert_eq!(file["ka-hooks"]["enabled"], true);
    assert_eq!(
        file["ka-hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        format!(
            "{} --event PreToolUse",
            support::adapter_command("antigravity")
        )
    );
    assert_eq!(
        file["ka-hooks"]["PostInvocation"][0]["command"],
        format!(
            "{} --event PostInvocation",
            support::adapter_command("antigravity")
        )
    );
    p.cli()
        .args(["install", "antigravity", "--remove", "--write"])
        .assert()
        .success();
    let file = read_json(&p.root.join(".agents/hooks.json"));
    assert!(file.get("ka-hooks").is_none(), "{file}");
    assert_eq!(file["theirs"]["Stop"][0]["command"], "x");
}

/// Inside any of these agents' tool calls, `trust` refuses: the model must not trust hooks.
#[test]
fn the_new_agents_markers_refuse_trust() {
    let p = Project::new();
    p.project("[[hooks]]\nevent = \"stop\"\ncommand = \"true\"\n");
    for (var, value) in [
        ("COPILOT_CLI", "1"),
        ("COPILOT_AGENT", "1"),
        ("COPILOT_AGENT_SESSION_ID", "abc"),
        ("CURSOR_AGENT", "1"),
        ("CURSOR_EXTENSION_HOST_ROLE", "agent-exec"),
        ("ANTIGRAVITY_AGENT", "1"),
    ] {
        p.cli()
            .env(var, value)
            .args(["trust", "--yes"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("a person must review"));
    }
    // Another role of Cursor's extension host is not an agent.
    p.cli()
        .env("CURSOR_EXTENSION_HOST_ROLE", "user")
        .args(["trust", "--yes"])
        .assert()
        .success();
}

/// Every row of the hook-file agents' table reads into ka's names and back.
#[test]
fn every_agent_tool_row_translates_both_ways() {
    for row in AGENT_TOOLS {
        assert_eq!(tools::ka_tool_name(row.agent, row.name), row.ka, "{row:?}");
        let mut theirs = Map::new();
        for (ka, name) in row.args {
            theirs.insert((*name).to_owned(), json!(ka));
        }
        theirs.insert("untouched".into(), json!(1));
        let ka = tools::args_to_ka(row.agent, row.name, &theirs);
        for (name, _) in row.args {
            assert_eq!(ka.get(*name), Some(&json!(name)), "{row:?}");
        }
        // Back under the first name of the ka tool in that agent (the table's first row).
        let first = AGENT_TOOLS
            .iter()
            .find(|t| t.agent == row.agent && t.ka == row.ka)
            .expect("a row");
        if first.name == row.name {
            assert_eq!(
                tools::args_from_ka(row.agent, row.ka, &ka),
                theirs,
                "{row:?}"
            );
        }
    }
}

/// docs/agents.md lists every tool of the hook-file agents.
#[test]
fn the_agents_doc_lists_every_tool_row() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agents.md"))
        .expect("docs/agents.md");
    for row in AGENT_TOOLS {
        assert!(
            doc.contains(&format!("`{}`", row.name)),
            "docs/agents.md lacks `{}`",
            row.name
        );
    }
}
