//! Trust covers exactly what a hook executes: the programs it runs by path and the files it
//! hands to an interpreter, read as the shell reads the command. A data file a hook reads or
//! writes (`test-status.txt`, a log it appends to, the file a formatter or `grep` is given) is
//! never covered, so writing it neither makes the project stale nor asks the user; a script
//! named through `{root}` is covered; and the review says nothing untrue about what it covers.
//!
//! Before, every project path named in a command counted as "a file its hooks run": the first
//! write of `test-status.txt` made the layer stale (its stop hook never ran again), a logging
//! hook's own first run did the same, a model's write of `src/notes.md` was an `ask`, and
//! `sh {root}/.ka/hooks/g.sh` was not covered at all.

use crate::support;

use serde_json::{json, Value};
use support::Project;

/// A project whose `.ka/ka.toml` is `toml`, trusted with `--yes`: its review.
fn trusted_review(p: &Project, toml: &str) -> String {
    p.project(toml);
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn hook_entry(name: &str, event: &str, command: &str, extra: &str) -> String {
    format!("[[hooks]]\nname = {name:?}\nevent = {event:?}\ncommand = {command:?}\n{extra}\n")
}

/// `ka-hooks run EVENT --json` with `input`: the outcome.
fn run_outcome(p: &Project, args: &[&str], input: Value) -> Value {
    let out = p
        .cli()
        .arg("run")
        .args(args)
        .args(["--json", "--input"])
        .arg(input.to_string())
        .output()
        .expect("ka-hooks run");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no outcome ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

fn run_stop(p: &Project) -> Value {
    run_outcome(p, &["stop"], json!({"stop": "done"}))
}

/// The README's stop hook (the ```toml block that defines `until-tests-pass`), as written.
fn readme_stop_hook() -> String {
    let readme = include_str!("../../README.md");
    readme
        .split("```toml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|block| block.contains("name = \"until-tests-pass\""))
        .expect("README has the until-tests-pass stop hook")
        .to_string()
}

#[test]
fn the_readmes_stop_hook_keeps_going_across_writes_of_its_status_file() {
    let p = Project::new();
    let review = trusted_review(&p, &readme_stop_hook());
    assert!(
        support::review_of(&review, "until-tests-pass")
            .contains("\n    covers no file of the project\n")
            && !review.contains("no such file"),
        "{review}"
    );
    let instruction = "run the tests; write the result to test-status.txt";
    assert_eq!(
        run_stop(&p)["keep_going"],
        instruction,
        "no status file yet"
    );
    for status in [
        "3 failed",
        "1 failed",
        "still 1 failed",
        "0 passed, 2 failed",
    ] {
        p.write("test-status.txt", status);
        let outcome = run_stop(&p);
        assert_eq!(
            outcome["keep_going"], instruction,
            "after writing {status:?}: {outcome}"
        );
    }
    p.write("test-status.txt", "tests pass\n");
    let outcome = run_stop(&p);
    assert!(outcome["keep_going"].is_null(), "{outcome}");
    let shown = p.cli().args(["trust", "--show"]).output().expect("show");
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains(": trusted"),
        "{shown:?}"
    );
}

#[test]
fn a_logging_hook_does_not_untrust_its_project_by_running() {
    let p = Project::new();
    let toml = format!(
        "{}{}",
        hook_entry(
            "log",
            "post_tool_use",
            "jq -c . >> \"$CLAUDE_PROJECT_DIR\"/edited.log",
            ""
        ),
        hook_entry(
            "no-env",
            "pre_tool_use",
            "grep -q '[.]env' && { echo 'no .env' >&2; exit 2; } || exit 0",
            "tool = \"write\"",
        ),
    );
    let review = trusted_review(&p, &toml);
    assert!(
        support::review_of(&review, "log").contains("\n    covers no file of the project\n")
            && !review.contains("no such file"),
        "{review}"
    );
    for _ in 0..2 {
        run_outcome(
            &p,
            &["post_tool_use", "--tool", "write"],
            json!({"arguments": {"path": "a.txt"}}),
        );
    }
    assert!(p.exists("edited.log"), "the hook ran and created its log");
    let outcome = p.run_json("write", json!({"path": ".env", "content": "x"}));
    assert_eq!(outcome["blocked"], true, "{outcome}");
    assert!(
        outcome["reason"].as_str().unwrap_or("").contains("no .env"),
        "the guard itself ran, not a stale block: {outcome}"
    );
}

#[test]
fn the_operands_of_ordinary_programs_are_not_protected_files() {
    for (command, file) in [
        ("grep -c TODO src/notes.md", "src/notes.md"),
        ("black src/app.py", "src/app.py"),
        ("grep -q TODO README.md", "README.md"),
    ] {
        let p = Project::new();
        p.write(file, "TODO\n");
        let review = trusted_review(
            &p,
            &hook_entry("post", "post_tool_use", command, "tool = \"write\""),
        );
        assert!(review.contains("covers no file of the project"), "{review}");
        let outcome = p.run_json("write", json!({"path": file, "content": "x"}));
        assert!(
            outcome["blocked"] == false && outcome["decision"].is_null(),
            "{command}: {outcome}"
        );
        // Through Claude Code's Write too: no `ask`.
        let payload = json!({
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": p.root.join(file), "content": "x"},
            "cwd": p.root,
            "session_id": "s",
        });
        let out = p
            .cli()
            .env("CLAUDE_PROJECT_DIR", &p.root)
            .arg("claude")
            .write_stdin(payload.to_string())
            .output()
            .expect("claude");
        let told = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !told.contains("\"ask\"") && !told.contains("ka's own"),
            "{command}: {told}"
        );
        // And writing it leaves the project trusted.
        p.write(file, "done\n");
        let shown = p.cli().args(["trust", "--show"]).output().expect("show");
        assert!(
            String::from_utf8_lossy(&shown.stdout).contains(": trusted"),
            "{shown:?}"
        );
    }
}

#[test]
fn a_script_named_through_the_root_placeholder_is_covered() {
    const BLOCKS: &str = "#!/bin/sh\ncat >/dev/null\necho 'g: no writes' >&2\nexit 2\n";
    for command in [
        "sh {root}/.ka/hooks/g.sh",
        "\"{root}/.ka/hooks/g.sh\"",
        "bash \"$KA_PROJECT_DIR/.ka/hooks/g.sh\"",
    ] {
        let p = Project::new();
        let script = p.write(".ka/hooks/g.sh", BLOCKS);
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let review = trusted_review(
            &p,
            &hook_entry(
                "g",
                "pre_tool_use",
                command,
                "tool = \"write\"\npaths = [\"a.txt\"]",
            ),
        );
        assert!(
            support::review_of(&review, "g").contains("\n    covers .ka/hooks/g.sh: new"),
            "{command}: {review}"
        );
        let outcome = p.run_json("write", json!({"path": "a.txt", "content": "x"}));
        assert_eq!(outcome["blocked"], true, "{command}: {outcome}");
        // The script is ka's own file now: a model's write of it asks.
        let outcome = p.run_json("write", json!({"path": ".ka/hooks/g.sh", "content": "x"}));
        assert!(
            outcome["reason"]
                .as_str()
                .unwrap_or("")
                .contains("ka's own hook files")
                && outcome["decision"] == "ask",
            "{outcome}"
        );
        p.write(".ka/hooks/g.sh", "#!/bin/sh\nexit 0\n");
        let outcome = p.run_json("write", json!({"path": "a.txt", "content": "x"}));
        assert_eq!(outcome["blocked"], true, "{command}: {outcome}");
        let reason = outcome["reason"].as_str().unwrap_or("");
        assert!(
            reason.contains(".ka/hooks/g.sh (changed)"),
            "{command}: the edited script ran: {outcome}"
        );
    }
}

#[test]
fn the_review_says_what_each_hook_runs_and_nothing_untrue() {
    let p = Project::new();
    p.write(".ka/hooks/guard.sh", "#!/bin/sh\nexit 0\n");
    let toml = format!(
        "{}{}{}",
        hook_entry(
            "only-src",
            "pre_tool_use",
            "echo 'writes go under src/ only' >&2; exit 2",
            "tool = \"write\"\npaths = [\"**\", \"!src/**\"]",
        ),
        hook_entry(
            "fix-name",
            "post_tool_use",
            "sed -i 's/colour/color/g' docs/guide.md",
            ""
        ),
        hook_entry("guard", "pre_tool_use", "sh .ka/hooks/guard.sh", ""),
    );
    let review = trusted_review(&p, &toml);
    assert!(!review.contains("no such file"), "{review}");
    assert!(
        support::review_of(&review, "only-src").contains("\n    covers no file of the project\n"),
        "{review}"
    );
    assert!(
        support::review_of(&review, "fix-name").contains("\n    covers no file of the project\n"),
        "{review}"
    );
    assert!(
        support::review_of(&review, "fix-name")
            .contains("\n    not covered: sed: found on PATH, outside the project\n"),
        "{review}"
    );
    assert!(
        support::review_of(&review, "guard").contains("\n    covers .ka/hooks/guard.sh: new"),
        "{review}"
    );
    assert!(
        support::review_of(&review, "guard")
            .contains("\n    not covered: sh: found on PATH, outside the project\n"),
        "{review}"
    );
    // A script that really is missing is said so, and it is true: creating it untrusts.
    let q = Project::new();
    let review = trusted_review(
        &q,
        &hook_entry("later", "pre_tool_use", "sh .ka/later.sh", ""),
    );
    assert!(
        review.contains(
            ".ka/later.sh: no such file in the project now (creating it untrusts the file)"
        ),
        "{review}"
    );
    q.write(".ka/later.sh", "exit 0\n");
    let outcome = q.run_json("write", json!({"path": "a.txt", "content": "x"}));
    assert!(
        outcome["reason"]
            .as_str()
            .unwrap_or("")
            .contains(".ka/later.sh (created)"),
        "{outcome}"
    );
}
