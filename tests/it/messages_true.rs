//! Every message of the hook author's loop is true. Each test is one item of the
//! issue that misled a new user (doctor on a stop hook's exit 2, `run --tool Bash`, the stop
//! headline and counts, `events`, golden-case hints).

use crate::support;
use crate::support::cli_output;

use serde_json::{json, Value};
use support::{hook, Project};

#[test]
fn doctor_says_exit_2_on_stop_is_keep_going_not_a_mistake() {
    let p = Project::with_user_toml(&hook(
        "more",
        "stop",
        "echo 'tests still fail' >&2; exit 2",
        &[],
    ));
    let (code, stdout, stderr) = cli_output(&p, &["doctor", "--exec", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let entries: Vec<Value> = serde_json::from_str(&stdout).expect("json");
    let exec = entries
        .iter()
        .find(|e| e["name"] == "more")
        .and_then(|e| e["checks"].as_array())
        .and_then(|c| c.iter().find(|c| c["check"] == "exec"))
        .cloned()
        .expect("an exec check");
    assert_eq!(exec["state"], "ok", "{exec}");
    let message = exec["message"].as_str().unwrap_or_default();
    assert!(message.contains("keep going"), "{message}");
    assert!(!message.contains("no effect"), "{message}");
}

#[test]
fn doctor_still_warns_on_exit_2_where_it_has_no_effect() {
    let p = Project::with_user_toml(&hook("bye", "session_end", "exit 2", &[]));
    let (_, stdout, _) = cli_output(&p, &["doctor", "--exec", "--json"]);
    let entries: Vec<Value> = serde_json::from_str(&stdout).expect("json");
    let text = serde_json::to_string(&entries).unwrap_or_default();
    assert!(text.contains("no effect on session_end"), "{text}");
}

#[test]
fn run_tool_takes_every_agent_spelling_an_entry_takes() {
    let p = Project::with_user_toml(&hook(
        "no-rm",
        "pre_tool_use",
        "echo 'no rm' >&2; exit 2",
        &["tool = \"bash\"", "if = \"Bash(rm:*)\""],
    ));
    for tool in ["bash", "Bash", "run_shell_command"] {
        let outcome = p.run_json(tool, json!({"command": "rm -rf x"}));
        assert_eq!(outcome["blocked"], true, "--tool {tool}: {outcome}");
        assert_eq!(outcome["tool"], "bash", "--tool {tool}: {outcome}");
    }
}

#[test]
fn run_tool_with_a_typo_answers_with_did_you_mean() {
    let p = Project::with_user_toml(&hook("any", "pre_tool_use", "exit 0", &[]));
    let (code, _, stderr) = cli_output(
        &p,
        &[
            "run",
            "pre_tool_use",
            "--tool",
            "bsah",
            "--input",
            r#"{"arguments":{}}"#,
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("did you mean `bash`?"), "{stderr}");
}

#[test]
fn run_renames_an_agents_arguments_with_its_tool_name() {
    let p = Project::with_user_toml(&hook(
        "env-guard",
        "pre_tool_use",
        "echo 'no .env' >&2; exit 2",
        &["tool = \"write\"", "paths = [\"**/.env\"]"],
    ));
    let outcome = p.run_json("Write", json!({"file_path": ".env", "content": "x"}));
    assert_eq!(outcome["blocked"], true, "{outcome}");
}

const GOLDEN_BASH: &str = r#"
[[case]]
name = "rm is refused, spelled as Claude Code spells the tool"
event = "pre_tool_use"
tool = "Bash"
arguments = { command = "rm -rf build" }
expect = { verdict = "blocked", reason_contains = "no rm" }
"#;

#[test]
fn a_golden_case_with_tool_bash_reaches_a_bash_guard() {
    let p = Project::with_user_toml(&hook(
        "no-rm",
        "pre_tool_use",
        "echo 'no rm' >&2; exit 2",
        &["tool = \"bash\"", "if = \"Bash(rm:*)\""],
    ));
    p.write(".ka/tests/bash.toml", GOLDEN_BASH);
    let (code, stdout, stderr) = cli_output(&p, &["test"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("ok "), "{stdout}");
}

#[test]
fn a_golden_typo_suggests_the_nearest_key_with_its_suffix() {
    let p = Project::with_user_toml(&hook("any", "stop", "exit 0", &[]));
    p.write(
        ".ka/tests/typo.toml",
        "[[case]]\nname = \"t\"\nevent = \"stop\"\nexpect = { reson_contains = \"x\" }\n",
    );
    let (code, stdout, stderr) = cli_output(&p, &["test"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("did you mean `reason_contains`?"), "{all}");
}

#[test]
fn the_run_headline_of_a_stop_that_keeps_going_says_so() {
    let p = Project::with_user_toml(&hook(
        "more",
        "stop",
        "echo 'tests still fail' >&2; exit 2",
        &[],
    ));
    let (code, stdout, stderr) = cli_output(&p, &["run", "stop", "--input", "{}"]);
    assert_eq!(code, 0, "{stderr}");
    let headline = stdout.lines().next().unwrap_or_default();
    assert_eq!(headline, "stop: keep going", "{stdout}");
    assert!(stdout.contains("keep going: tests still fail"), "{stdout}");
}

#[test]
fn run_stop_counts_continuations_like_the_adapters_and_says_capped() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 2\n{}",
        hook(
            "loop",
            "stop",
            r#"n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; echo "try $n" >&2; exit 2"#,
            &[]
        )
    ));
    let stop = |active: bool| {
        let input = json!({"session_id": "s-run", "stop_hook_active": active}).to_string();
        cli_output(&p, &["run", "stop", "--input", &input]).1
    };
    assert!(stop(false).starts_with("stop: keep going"));
    assert!(stop(true).starts_with("stop: keep going"));
    let third = stop(true);
    assert!(third.starts_with("stop: capped"), "{third}");
    assert!(third.contains("already continued 2 time(s)"), "{third}");
}

#[test]
fn the_claude_cap_message_shows_the_continuations_that_happened() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 8\n{}",
        hook("same", "stop", "echo 'not done' >&2; exit 2", &[])
    ));
    let mut kept = 0;
    let mut last = Value::Null;
    for i in 0..10 {
        let payload = json!({"session_id": "s-claude", "cwd": p.root,
            "hook_event_name": "Stop", "stop_hook_active": i > 0});
        let out = p
            .cli()
            .arg("claude")
            .write_stdin(payload.to_string())
            .output()
            .expect("ka-hooks claude");
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        if answer["decision"] == "block" {
            kept += 1;
        } else {
            last = answer;
            break;
        }
    }
    assert_eq!(
        kept, 8,
        "a repeated request counts once: a cap of 8 lets 8 happen"
    );
    let message = last["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("already continued {kept} time(s)")),
        "{message}"
    );
}

const STOP_CASES: &str = r#"
[[case]]
name = "a fresh turn keeps going"
event = "stop"
continuations = 0
expect = { verdict = "keep_going", keep_going_contains = "not done" }

[[case]]
name = "at the cap the agent stops"
event = "stop"
continuations = 3
expect = { verdict = "capped", capped = true, notes_contains = "max_continuations = 3" }
"#;

#[test]
fn golden_cases_state_continuations_and_expect_keep_going_or_the_cap() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 3\n{}",
        hook("same", "stop", "echo 'not done' >&2; exit 2", &[])
    ));
    p.write(".ka/tests/stop.toml", STOP_CASES);
    let (code, stdout, stderr) = cli_output(&p, &["test"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // And the cap is real: a case that says it keeps going at the cap fails.
    p.write(
        ".ka/tests/stop.toml",
        &STOP_CASES.replace(
            "verdict = \"capped\", capped = true",
            "verdict = \"keep_going\"",
        ),
    );
    let (code, stdout, _) = cli_output(&p, &["test"]);
    assert_eq!(code, 1, "{stdout}");
}

#[test]
fn events_lists_each_alias_once_and_never_an_empty_actions_line() {
    let p = Project::new();
    let (code, stdout, _) = cli_output(&p, &["events"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("aliases:  PreToolUse, BeforeTool\n"),
        "{stdout}"
    );
    for line in stdout.lines() {
        assert_ne!(line.trim_end(), "actions:", "{stdout}");
    }
}

#[test]
fn import_offers_only_the_agent_it_can_read() {
    let p = Project::new();
    let (_, help, _) = cli_output(&p, &["import", "--help"]);
    let offered = "[possible values: claude, copilot, cursor, antigravity]";
    assert!(help.contains(offered), "{help}");
    let (code, _, stderr) = cli_output(&p, &["import", "codex"]);
    assert_eq!(code, 1);
    assert!(stderr.contains(offered), "{stderr}");
}

#[test]
fn install_codex_says_which_events_codex_lacks_and_not_session_end() {
    let p = Project::with_user_toml(&hook("bye", "session_end", "true", &[]));
    let (code, _, stderr) = cli_output(&p, &["install", "codex"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("no session end"), "{stderr}");
    assert!(stderr.contains("has no event for"), "{stderr}");
    let lacks = stderr.split("has no event for").nth(1).unwrap_or_default();
    assert!(!lacks.contains("session_end"), "{stderr}");
    assert!(lacks.contains("notification"), "{stderr}");
}

#[test]
fn trust_and_log_are_not_offered_where_they_mean_nothing() {
    let p = Project::new();
    for command in ["completions", "schema", "events"] {
        let (_, help, _) = cli_output(&p, &[command, "--help"]);
        assert!(!help.contains("--trust"), "{command}: {help}");
        assert!(!help.contains("--log"), "{command}: {help}");
    }
    let (_, help, _) = cli_output(&p, &["check", "--help"]);
    assert!(help.contains("--trust"), "{help}");
    let (code, _, stderr) = cli_output(&p, &["completions", "bash", "--trust"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("--trust means nothing"), "{stderr}");
}

#[test]
fn a_single_bracket_hooks_table_gets_a_hint() {
    let p = Project::with_user_toml(
        "# my hooks\n[hooks]\nname = \"g\"\nevent = \"stop\"\ncommand = \"true\"\n",
    );
    let (code, _, stderr) = cli_output(&p, &["check"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("ka.toml:2:1"), "{stderr}");
    assert!(stderr.contains("write `[[hooks]]`"), "{stderr}");
}

#[test]
fn a_single_bracket_case_table_gets_a_hint() {
    let p = Project::with_user_toml(&hook("any", "stop", "exit 0", &[]));
    p.write(
        ".ka/tests/one.toml",
        "[case]\nname = \"t\"\nevent = \"stop\"\nexpect = { verdict = \"proceed\" }\n",
    );
    let (code, stdout, stderr) = cli_output(&p, &["test"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stderr.contains("one.toml:1:"), "{stderr}");
    assert!(stderr.contains("write `[[case]]`"), "{stderr}");
}

/// The documented completion commands, run as written by `sh -e` in a fresh `HOME` (whichever of
/// README.md and docs/*.md holds them, as the README is split into docs/).
#[test]
fn the_completion_commands_work_in_a_fresh_home() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = vec![std::fs::read_to_string(repo.join("README.md")).expect("README")];
    if let Ok(dir) = std::fs::read_dir(repo.join("docs")) {
        texts.extend(dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()));
    }
    let marker = "`ka-hooks completions SHELL` prints";
    let text = texts
        .iter()
        .find(|t| t.contains(marker))
        .expect("the completions section");
    let section = &text[text.find(marker).unwrap_or(0)..];
    let start = section.find("```sh\n").expect("an sh block") + "```sh\n".len();
    let block = &section[start..start + section[start..].find("```").expect("end")];
    let home = tempfile::tempdir().expect("home");
    let bin = assert_cmd::cargo::cargo_bin("ka-hooks");
    let bin_dir = bin.parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("sh")
        .args(["-ec", block])
        .env("HOME", home.path())
        .env("PATH", path)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{block}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        ".local/share/bash-completion/completions/ka-hooks",
        ".config/fish/completions/ka-hooks.fish",
        ".zfunc/_ka-hooks",
    ] {
        let written = std::fs::metadata(home.path().join(file)).map_or(0, |m| m.len());
        assert!(written > 0, "{file} was not written");
    }
}
