//! `ka-hooks run` tells the truth: it reads a piped payload, refuses payloads the hooks would
//! misread, shows what the hooks got and said (`-v`), and names the verdict in its headline.

use crate::support;

use predicates::prelude::*;
use support::{hook, Project};

/// A guard that blocks writes to `.env` (it reads `arguments.path` from the payload).
const ENV_GUARD: &str = r#"grep -q '"path":"\.env"' && { echo "no .env" >&2; exit 2; }; exit 0"#;

fn guard_project() -> Project {
    Project::with_user_toml(&hook("env-guard", "pre_tool_use", ENV_GUARD, &[]))
}

#[test]
fn a_piped_payload_is_read_without_input() {
    let p = guard_project();
    p.cli()
        .args(["run", "pre_tool_use"])
        .write_stdin(r#"{"tool":"write","arguments":{"path":".env"}}"#)
        .assert()
        .code(2)
        .stdout(predicate::str::starts_with(
            "pre_tool_use (write): blocked\n",
        ))
        .stdout(predicate::str::contains("reason: no .env"));
}

#[test]
fn a_flat_tool_payload_is_an_error_with_a_hint() {
    let p = guard_project();
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write"])
        .write_stdin(r#"{"path":".env"}"#)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no \"arguments\" object, so the hooks would not see path",
        ))
        .stderr(predicate::str::contains(
            r#"{"tool":"write","arguments":{"path":".env"}}"#,
        ));
}

#[test]
fn arguments_that_are_not_an_object_are_an_error() {
    let p = guard_project();
    p.cli()
        .args([
            "run",
            "pre_tool_use",
            "--input",
            r#"{"tool":"write","arguments":".env"}"#,
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("\"arguments\" must be an object"));
}

#[test]
fn a_tool_flag_that_disagrees_with_the_payload_is_an_error() {
    let p = guard_project();
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "bash", "--input"])
        .arg(r#"{"tool":"write","arguments":{"path":".env"}}"#)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--tool bash disagrees with the payload's \"tool\": \"write\"",
        ));
    // Agreeing is fine.
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "write", "--input"])
        .arg(r#"{"tool":"write","arguments":{"path":".env"}}"#)
        .assert()
        .code(2);
}

#[test]
fn verbose_shows_the_payload_and_each_hooks_raw_output() {
    let p = Project::with_user_toml(&hook(
        "chatty",
        "pre_tool_use",
        "cat >/dev/null; echo 'to stderr' >&2; echo '{\"note\":\"hello\"}'",
        &[],
    ));
    p.cli()
        .args(["run", "pre_tool_use", "-v", "--input"])
        .arg(r#"{"tool":"bash","arguments":{"command":"ls"}}"#)
        .assert()
        .success()
        .stderr(predicate::str::contains("payload sent:"))
        .stderr(predicate::str::contains("\"command\": \"ls\""))
        .stderr(predicate::str::contains("\"event\": \"pre_tool_use\""))
        .stderr(predicate::str::contains("hook chatty [user]: ok (exit 0)"))
        .stderr(predicate::str::contains("| {\"note\":\"hello\"}"))
        .stderr(predicate::str::contains("| to stderr"));
}

#[test]
fn a_json_deny_is_blocked_deny_and_never_listed_as_ok() {
    let p = Project::with_user_toml(&hook(
        "json-deny",
        "pre_tool_use",
        r#"cat >/dev/null; echo '{"decision":"deny","reason":"nope"}'"#,
        &[],
    ));
    let out = p
        .cli()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .assert()
        .code(2)
        .stdout(predicate::str::starts_with(
            "pre_tool_use (bash): blocked (deny)\n",
        ))
        .stdout(predicate::str::contains(
            "hook json-deny [user]: blocked (deny, exit 0)",
        ));
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains("ok (exit 0)"), "{text}");
}

#[test]
fn an_ask_and_an_allow_are_named_in_the_headline() {
    let p = Project::with_user_toml(&hook(
        "asker",
        "pre_tool_use",
        r#"cat >/dev/null; echo '{"decision":"ask","reason":"sure?"}'"#,
        &["tool = \"bash\""],
    ));
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("pre_tool_use (bash): ask\n"));
    p.write_user_toml(&hook(
        "allower",
        "pre_tool_use",
        r#"cat >/dev/null; echo '{"decision":"allow"}'"#,
        &[],
    ));
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("pre_tool_use (bash): allow\n"));
}

#[test]
fn an_untrusted_project_says_no_hook_ran_and_how_to_trust_it() {
    let p = Project::new();
    p.project(&hook("g", "pre_tool_use", "exit 2", &[]));
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no hook ran: 1 layer(s) skipped"))
        .stdout(predicate::str::contains("trust"))
        .stdout(predicate::str::contains("no hook matched").not());
}

#[test]
fn example_builds_a_realistic_payload_for_the_event_and_tool() {
    let p = Project::with_user_toml(&hook(
        "echo-path",
        "pre_tool_use",
        r#"cat > "$KA_PROJECT_DIR/payload.json""#,
        &[],
    ));
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "edit", "--example"])
        .assert()
        .success();
    let payload: serde_json::Value =
        serde_json::from_str(&p.read("payload.json").unwrap_or_default()).expect("payload JSON");
    assert_eq!(payload["tool"], "edit");
    let path = payload["arguments"]["path"].as_str().unwrap_or_default();
    assert!(path.ends_with("src/example.rs"), "{payload}");
}

#[test]
fn help_documents_the_exit_codes_and_the_verdicts() {
    let p = Project::new();
    p.cli()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit codes: 0"))
        .stdout(predicate::str::contains("2 blocked"))
        .stdout(predicate::str::contains("blocked (deny)"));
}

#[test]
fn a_report_only_hook_says_what_it_would_have_done_without_blocking() {
    let p = Project::with_user_toml(&hook(
        "new-guard",
        "pre_tool_use",
        "echo 'would refuse' >&2; exit 2",
        &["enforce = false"],
    ));
    p.cli()
        .args(["run", "pre_tool_use", "--tool", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "pre_tool_use (bash): proceed\n",
        ))
        .stdout(predicate::str::contains(
            "report-only hook new-guard would have: block: would refuse",
        ));
}
