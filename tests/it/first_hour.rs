//! A new user's first hour: every line `run`, `events`, `import`, `install` and `doctor` print
//! is true and names what happened (a hook's failure and its cause, a stop hook that keeps the
//! turn going, a guard that blocked without running, the stop cap said once).

use crate::support;
use crate::support::cli_output;

use serde_json::json;
use support::{hook, Project};

/// The line of hook `name` in `run`'s output, up to its duration.
fn hook_line<'a>(stdout: &'a str, name: &str) -> &'a str {
    let prefix = format!("  hook {name} [");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line for hook {name}: {stdout}"));
    line.rsplit_once(", ").map_or(line, |(head, _)| head)
}

#[test]
fn a_failing_hook_line_carries_the_first_line_of_its_stderr() {
    let p = Project::with_user_toml(&hook(
        "rustfmt",
        "post_tool_use",
        "echo 'error: toolchain stable is not installed' >&2; echo 'help: rustup install' >&2; exit 1",
        &[],
    ));
    let (_, stdout, _) = cli_output(&p, &["run", "post_tool_use", "--tool", "write"]);
    assert_eq!(
        hook_line(&stdout, "rustfmt"),
        "  hook rustfmt [user]: error (exit 1; stderr: error: toolchain stable is not installed)"
    );
}

#[test]
fn a_stop_hook_that_exits_2_is_said_to_keep_going_not_to_block() {
    let p = Project::with_user_toml(&hook("more", "stop", "echo 'tests fail' >&2; exit 2", &[]));
    let (_, stdout, _) = cli_output(&p, &["run", "stop"]);
    assert_eq!(
        hook_line(&stdout, "more"),
        "  hook more [user]: asked to keep going (exit 2)"
    );
    let p = Project::with_user_toml(&hook("mark", "post_tool_use", "exit 2", &[]));
    let (_, stdout, _) = cli_output(&p, &["run", "post_tool_use", "--tool", "write"]);
    assert_eq!(
        hook_line(&stdout, "mark"),
        "  hook mark [user]: marked the result as an error (exit 2)"
    );
}

#[test]
fn the_stop_cap_is_said_once() {
    let p = Project::with_user_toml(&format!(
        "[hook_settings]\nmax_continuations = 3\n{}",
        hook("more", "stop", "echo 'tests fail' >&2; exit 2", &[])
    ));
    let payload = json!({"stop_hook_active": true, "continuations": 3}).to_string();
    let (_, stdout, _) = cli_output(&p, &["run", "stop", "--input", &payload]);
    assert!(stdout.starts_with("stop: capped\n"), "{stdout}");
    assert_eq!(stdout.matches("max_continuations").count(), 1, "{stdout}");
    assert!(
        stdout.contains(
            "  note: a stop hook asked to keep going (\"tests fail\"), but this turn already \
             continued 3 time(s) (max_continuations = 3); the agent stops\n"
        ),
        "{stdout}"
    );
}

#[test]
fn a_guard_that_blocked_without_running_says_so() {
    let p = Project::with_user_toml(&hook("no-env", "pre_tool_use", "exit 0", &[]));
    let (code, _, _) = cli_output(&p, &["run", "pre_tool_use", "--tool", "bash"]);
    assert_eq!(code, 0);
    // A stray table header makes the user file stop loading: its last good guard blocks.
    let user = p.config_dir.join("ka.toml");
    let mut text = std::fs::read_to_string(&user).expect("user file");
    text.push_str("\n[[hooks\n");
    std::fs::write(&user, text).expect("write user file");
    let (code, stdout, _) = cli_output(&p, &["run", "pre_tool_use", "--tool", "bash"]);
    assert_eq!(code, 2, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("  hook no-env [user]: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.starts_with(
            "  hook no-env [user]: blocked without running (blocked by the guard `no-env`"
        ),
        "{line}"
    );
    assert!(!line.contains("exit 2") && !line.contains(" ms"), "{line}");
}

#[test]
fn a_guard_of_a_file_changed_since_it_was_trusted_says_it_never_ran() {
    let p = Project::new();
    p.write(
        ".ka/ka.toml",
        &hook("no-env", "pre_tool_use", "exit 0", &[]),
    );
    p.cli().args(["trust", "--yes"]).assert().success();
    p.write(
        ".ka/ka.toml",
        &hook("no-env", "pre_tool_use", "exit 0 # edited", &[]),
    );
    let (code, stdout, _) = cli_output(&p, &["run", "pre_tool_use", "--tool", "bash"]);
    assert_eq!(code, 2, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("  hook no-env [project]: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.starts_with(
            "  hook no-env [project]: blocked without running (blocked by the guard `no-env` of "
        ),
        "{line}"
    );
    assert!(
        line.contains("which changed since it was trusted"),
        "{line}"
    );
    assert!(!line.contains("exit 2") && !line.contains(" ms"), "{line}");
}

/// A value a hook may print for action key `key`.
fn sample(key: &str) -> serde_json::Value {
    match key {
        "decision" => json!("allow"),
        "updated_input" => json!({"path": "b.txt"}),
        "mode" => json!("plan"),
        _ => json!("some text"),
    }
}

#[test]
fn every_action_key_events_lists_is_read_on_its_event() {
    let p = Project::new();
    let (_, stdout, _) = cli_output(&p, &["events", "--json"]);
    let events: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("events --json");
    let (_, text, _) = cli_output(&p, &["events"]);
    for common in ["message", "mark_error"] {
        assert!(
            !text.contains(&format!(" {common},")) && !text.contains(&format!(" {common}\n")),
            "`events` offers `{common}`, which no event reads: {text}"
        );
    }
    for e in &events {
        let event = e["event"].as_str().expect("event");
        let mut keys: Vec<&str> = e["actions"]
            .as_array()
            .expect("actions")
            .iter()
            .filter_map(|k| k.as_str())
            .collect();
        keys.extend(["note", "halt", "mode"]);
        for key in keys {
            let out = json!({ key: sample(key) }).to_string();
            p.write_user_toml(&hook("says", event, &format!("printf '%s' '{out}'"), &[]));
            let mut args = vec!["run", event, "--json"];
            if e["tool_event"] == true {
                args.extend(["--tool", "write"]);
            }
            let (_, stdout, stderr) = cli_output(&p, &args);
            let outcome: serde_json::Value =
                serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{event}: {stderr}"));
            let said = outcome.to_string();
            assert!(
                !said.contains("unknown key") && !said.contains("voided"),
                "{event} lists `{key}`, but a hook printing it gets: {said}"
            );
            assert_eq!(
                outcome["hooks"][0]["action"]["applied"], true,
                "{event} {key}: {said}"
            );
        }
    }
}

#[test]
fn install_says_created_for_a_file_it_created_and_updated_after() {
    let p = Project::new();
    let (code, stdout, stderr) = cli_output(&p, &["install", "claude", "--write"]);
    assert_eq!(code, 0, "{stderr}");
    let file = p.root.join(".claude/settings.json");
    assert!(
        stdout.starts_with(&format!("created {}:\n", file.display())),
        "{stdout}"
    );
    let p = Project::new();
    p.write(".claude/settings.json", "{\"permissions\": {}}\n");
    let (_, stdout, _) = cli_output(&p, &["install", "claude", "--write"]);
    let file = p.root.join(".claude/settings.json");
    assert!(
        stdout.starts_with(&format!("updated {}:\n", file.display())),
        "{stdout}"
    );
}

#[test]
fn trust_help_offers_no_global_flag_that_means_nothing_there() {
    let p = Project::new();
    let (_, help, _) = cli_output(&p, &["trust", "--help"]);
    assert!(!help.contains("--trust"), "{help}");
    assert!(!help.contains("--log"), "{help}");
    let (code, _, stderr) = cli_output(&p, &["--trust", "trust", "--yes"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--trust means nothing for `ka-hooks trust`"),
        "{stderr}"
    );
}

#[test]
fn run_example_is_not_dressed_as_the_doctor() {
    let p = Project::with_user_toml(&hook("seen", "pre_tool_use", "cat >/dev/null", &[]));
    let (_, _, stderr) = cli_output(
        &p,
        &["run", "pre_tool_use", "--tool", "write", "--example", "-v"],
    );
    assert!(
        stderr.contains("\"session_id\": \"ka-hooks-example\""),
        "{stderr}"
    );
    assert!(!stderr.contains("doctor"), "{stderr}");
}

#[test]
fn the_example_config_points_to_sections_that_exist() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(repo.join("ka.toml.example")).expect("ka.toml.example");
    let mut seen = 0;
    for (at, _) in example.match_indices(", \"") {
        let before = &example[..at];
        let file = before.rsplit(['(', ' ']).next().unwrap_or("");
        let file = if file == "README" { "README.md" } else { file };
        if !file.ends_with(".md") {
            continue;
        }
        let rest = &example[at + 3..];
        let heading = &rest[..rest.find('"').expect("closing quote")];
        let text = std::fs::read_to_string(repo.join(file)).expect("the file it names");
        assert!(
            text.lines()
                .any(|l| l.trim_start_matches('#').trim() == heading && l.starts_with('#')),
            "ka.toml.example points to {file}, \"{heading}\", which has no such heading"
        );
        seen += 1;
    }
    assert!(seen > 0, "no pointer found in ka.toml.example");
}

#[test]
fn doctor_does_not_call_ignore_the_default_on_a_guard() {
    let p = Project::with_user_toml(&hook(
        "open",
        "pre_tool_use",
        "exit 0",
        &["on_error = \"ignore\""],
    ));
    let (_, stdout, stderr) = cli_output(&p, &["doctor"]);
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("fails open"), "{all}");
    assert!(!all.contains("(the default)"), "{all}");
    assert!(
        all.contains("(the default on pre_tool_use is \"block\")"),
        "{all}"
    );
}

/// The `exec` check of hook `name` in `doctor --exec --json`.
fn exec_check(p: &Project, name: &str) -> serde_json::Value {
    let (_, stdout, stderr) = cli_output(p, &["doctor", "--exec", "--json"]);
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stdout}{stderr}"));
    entries
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["checks"].as_array())
        .and_then(|c| c.iter().find(|c| c["check"] == "exec"))
        .cloned()
        .unwrap_or_else(|| panic!("no exec check for {name}: {stdout}"))
}

#[test]
fn doctor_exec_sends_a_call_the_hooks_own_filters_select() {
    let p = Project::with_user_toml(
        &[
            hook(
                "md-only",
                "post_tool_use",
                "grep -q '[.]md\"' || { echo 'not a Markdown file' >&2; exit 4; }",
                &["paths = [\"docs/**/*.md\"]"],
            ),
            hook(
                "no-rm",
                "pre_tool_use",
                "grep -q '\"rm ' || { echo 'not an rm' >&2; exit 4; }; echo 'no rm' >&2; exit 2",
                &["if = \"Bash(rm:*)\""],
            ),
        ]
        .concat(),
    );
    let md = exec_check(&p, "md-only");
    assert_eq!(md["state"], "ok", "{md}");
    let rm = exec_check(&p, "no-rm");
    assert_eq!(rm["state"], "ok", "{rm}");
    assert!(
        rm["message"].as_str().unwrap_or("").contains("vetoed"),
        "{rm}"
    );
}

#[test]
fn doctor_exec_says_why_it_did_not_run_a_hook_no_synthetic_call_matches() {
    let p = Project::with_user_toml(&hook(
        "etc-only",
        "post_tool_use",
        "echo ran > ran.txt; exit 4",
        &["paths = [\"/etc/**\"]"],
    ));
    let check = exec_check(&p, "etc-only");
    assert_eq!(check["state"], "warning", "{check}");
    let message = check["message"].as_str().unwrap_or("");
    assert!(
        message.contains("no synthetic call matches its own filters (paths = [\"/etc/**\"])"),
        "{check}"
    );
    assert!(!p.exists("ran.txt"), "the hook ran");
}

#[test]
fn remove_originals_refuses_while_the_replacements_are_untrusted() {
    let p = Project::new();
    let claude = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "./no-rm.sh"}]}]}});
    p.write(".claude/settings.json", &claude.to_string());
    let (code, _, stderr) = cli_output(&p, &["import", "claude", "--write"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) =
        cli_output(&p, &["import", "claude", "--remove-originals", "--write"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stderr.contains("untrusted, so the hooks imported into it do not run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Review and trust it first (`ka-hooks "),
        "{stderr}"
    );
    assert!(p
        .read(".claude/settings.json")
        .is_some_and(|s| s.contains("no-rm.sh")));
    // Once trusted, the replacements run, and the originals go.
    p.cli().args(["trust", "--yes"]).assert().success();
    let (code, stdout, stderr) =
        cli_output(&p, &["import", "claude", "--remove-originals", "--write"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(p
        .read(".claude/settings.json")
        .is_some_and(|s| !s.contains("no-rm.sh")));
}

#[test]
fn imported_hooks_have_names_that_do_not_shift_with_the_users_file() {
    let claude = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./no-rm.sh"}]},
        {"matcher": "Write", "hooks": [{"type": "command", "command": "./no-env.sh"}]}]}});
    let names = |user: &str| {
        let p = Project::with_user_toml(user);
        p.write(".claude/settings.json", &claude.to_string());
        cli_output(&p, &["import", "claude", "--write"]);
        let (_, stdout, _) = cli_output(&p, &["--trust", "list", "--names"]);
        let mut names: Vec<String> = stdout.lines().map(str::to_owned).collect();
        names.retain(|n| n != "mine" && n != "pre_tool_use#1");
        (names, p.read(".ka/ka.toml").unwrap_or_default())
    };
    let (alone, file) = names("");
    let (beside, _) = names(&hook("", "pre_tool_use", "exit 0", &[]).replace("name = \"\"\n", ""));
    assert_eq!(alone.len(), 2, "{alone:?}");
    assert_eq!(alone, beside);
    for name in &alone {
        assert!(!name.contains('#'), "{name}");
        assert!(file.contains(&format!("name = \"{name}\"")), "{file}");
    }
}

#[test]
fn doctors_fix_names_an_unnamed_hook_by_where_it_is() {
    let p = Project::with_user_toml(
        "[[hooks]]\nevent = \"pre_tool_use\"\ncommand = \"exit 0\"\non_error = \"ignore\"\n",
    );
    let (_, stdout, _) = cli_output(&p, &["doctor", "--json"]);
    let text = stdout;
    let file = p.config_dir.join("ka.toml");
    assert!(
        text.contains(&format!(
            "set `on_error = \\\"block\\\"` on the pre_tool_use hook without a name at {}:1",
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains("hook `pre_tool_use#1`"), "{text}");
}
