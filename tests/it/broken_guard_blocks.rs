//! A broken guard blocks by default: `on_error` defaults to `block` on the events that can veto
//! (`pre_tool_use`, `user_prompt_submit`, `permission_request`) and to `ignore` on observers;
//! every failure says the first line of the hook's stderr and, for exit 126 or 127, the fix;
//! `check` fails on a guard's tool name that no agent has; `trust` warns about a script run as
//! a program without its exec bit; `import` keeps what the source agent does when a hook fails.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use ka_hooks::outcome::Status;
use ka_hooks::Event;
use serde_json::{json, Value};
use support::{hook, report, Project};

/// A Python guard written for one payload shape, meeting another: `KeyError`, exit 1.
const CRASHING_GUARD: &str = "import json, sys\n\
    payload = json.load(sys.stdin)\n\
    path = payload['arguments']['file_path']\n\
    sys.exit(2 if path.endswith('.env') else 0)\n";

fn executable(path: &std::path::Path, yes: bool) {
    let mode = if yes { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Attack: a `pre_tool_use` guard without `on_error` whose script crashed on an unexpected
/// payload (a Python `KeyError`) let the call through.
#[test]
fn a_guard_without_on_error_that_crashes_blocks_and_says_the_stderr() {
    let p = Project::new();
    p.write(".ka/hooks/guard.py", CRASHING_GUARD);
    p.user(&hook(
        "secrets-guard",
        "pre_tool_use",
        "python3 .ka/hooks/guard.py",
        &[],
    ));
    let outcome = p.tool_call(
        Event::PreToolUse,
        "write",
        json!({"path": ".env", "content": "x"}),
    );
    assert_eq!(report(&outcome, "secrets-guard").status, Status::Error);
    assert!(outcome.blocked(), "{outcome:#?}");
    let reason = outcome.reason().unwrap_or_default();
    assert!(reason.contains("`secrets-guard`"), "{reason}");
    assert!(reason.contains("exit 1"), "{reason}");
    // The first line of a traceback is `Traceback (most recent call last):`.
    assert!(reason.contains("stderr: Traceback"), "{reason}");
}

/// Attack: a guard whose script lacks the exec bit (exit 126) let the call through, and only
/// `-v` said why.
#[test]
fn a_guard_without_the_exec_bit_blocks_with_the_chmod_fix() {
    let p = Project::new();
    let script = p.write(".ka/hooks/guard.sh", "#!/bin/sh\nexit 2\n");
    executable(&script, false);
    p.user(&hook(
        "secrets-guard",
        "pre_tool_use",
        "./.ka/hooks/guard.sh",
        &[],
    ));
    let out = p
        .cli()
        .args(["run", "pre_tool_use", "--tool", "write", "--input"])
        .arg(json!({"arguments": {"path": ".env", "content": "x"}}).to_string())
        .output()
        .expect("ka-hooks run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    for part in [
        "`secrets-guard` failed (exit 126: command not executable",
        "chmod +x",
        "stderr: ",
        "Permission denied",
    ] {
        assert!(stdout.contains(part), "lacks {part:?}:\n{stdout}");
    }
}

/// Attack: with `on_error = "ignore"`, the line the user saw (`hook secrets-guard failed (exit
/// 126); on_error = "ignore"`) said nothing of the missing exec bit.
#[test]
fn a_failure_line_names_the_fix_and_the_stderr_without_verbose() {
    let p = Project::new();
    let script = p.write(".ka/hooks/guard.sh", "#!/bin/sh\nexit 2\n");
    executable(&script, false);
    p.user(&hook(
        "secrets-guard",
        "pre_tool_use",
        "./.ka/hooks/guard.sh",
        &[r#"on_error = "ignore""#],
    ));
    let payload = json!({
        "session_id": "s",
        "cwd": p.root,
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": ".env", "content": "x"},
    });
    let out = p
        .cli()
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks claude");
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"));
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    for part in [
        "hook `secrets-guard` failed (exit 126: command not executable",
        "chmod +x",
        "Permission denied",
        "on_error = \"ignore\"",
    ] {
        assert!(message.contains(part), "lacks {part:?}: {message}");
    }
    // A missing script: exit 127 and the path to check.
    p.user(&hook(
        "secrets-guard",
        "pre_tool_use",
        "./.ka/hooks/no-such-guard.sh",
        &[r#"on_error = "ignore""#],
    ));
    let out = p
        .cli()
        .arg("claude")
        .write_stdin(payload.to_string())
        .output()
        .expect("ka-hooks claude");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"));
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("exit 127: command not found"), "{message}");
    assert!(message.contains("check the path"), "{message}");
}

/// Stderr is the hook's text: its control characters reach the user escaped.
#[test]
fn the_stderr_line_in_a_reason_is_escaped() {
    let p = Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        r"printf 'bad\033[2Kthing\nsecond line\n' >&2; exit 1",
        &[],
    ));
    let outcome = p.tool_call(Event::PreToolUse, "bash", json!({"command": "ls"}));
    assert!(outcome.blocked());
    let reason = outcome.reason().unwrap_or_default();
    assert!(!reason.contains('\u{1b}'), "{reason:?}");
    assert!(reason.contains("stderr: bad"), "{reason}");
    assert!(
        !reason.contains("second line"),
        "only the first line: {reason}"
    );
}

/// Every event that can veto fails closed by default; an observer still fails open.
#[test]
fn the_default_blocks_on_every_vetoing_event_and_ignores_on_observers() {
    let p = Project::with_user_toml(
        &[
            hook("prompt-guard", "user_prompt_submit", "exit 3", &[]),
            hook("permission-guard", "permission_request", "exit 4", &[]),
            hook("formatter", "post_tool_use", "exit 5", &[]),
            hook("goodbye", "session_end", "exit 6", &[]),
        ]
        .concat(),
    );
    let config = p.load();
    for (name, on_error) in [
        ("prompt-guard", "block"),
        ("permission-guard", "block"),
        ("formatter", "ignore"),
        ("goodbye", "ignore"),
    ] {
        let hook = config.hook(name).expect("hook");
        assert_eq!(hook.on_error.as_str(), on_error, "{name}");
    }
    let prompt = p.event(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    assert!(prompt.blocked(), "{prompt:#?}");
    let permission = p.tool_call(Event::PermissionRequest, "bash", json!({"command": "ls"}));
    assert!(permission.blocked(), "{permission:#?}");
    let observed = p.tool_call(Event::PostToolUse, "bash", json!({"command": "ls"}));
    assert!(
        !observed.mark_error,
        "an observer fails open: {observed:#?}"
    );
}

/// Attack: `tool = "wirte"` on an `on_error = "block"` guard passed `check` with exit 0, so the
/// guard never ran; the warning suggested Claude's `Write` for ka's `write`.
#[test]
fn check_fails_on_a_guard_whose_tool_matches_no_tool_and_suggests_kas_name() {
    let p = Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        "exit 2",
        &[r#"tool = "wirte""#, r#"on_error = "block""#],
    ));
    let out = p.cli().arg("check").output().expect("check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: hook `guard`"), "{stderr}");
    assert!(stderr.contains("`wirte` matches no tool"), "{stderr}");
    assert!(stderr.contains("did you mean `write`?"), "{stderr}");
    assert!(!stderr.contains("`Write`"), "{stderr}");
    let out = p.cli().args(["check", "--json"]).output().expect("check");
    assert_eq!(out.status.code(), Some(1));
    let value: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(value["ok"], false);
    assert_eq!(value["unknown_tools"].as_array().map(Vec::len), Some(1));
}

/// An observer's unknown tool name stays a warning: it guards nothing.
#[test]
fn check_only_warns_about_an_observers_unknown_tool() {
    let p = Project::with_user_toml(&hook(
        "fmt",
        "post_tool_use",
        "true",
        &[r#"tool = "wirte""#],
    ));
    let out = p.cli().arg("check").output().expect("check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning: hook `fmt`"), "{stderr}");
    assert!(stderr.contains("did you mean `write`?"), "{stderr}");
}

/// `trust` warns when a covered script that a hook runs as a program lacks the exec bit.
#[test]
fn trust_warns_about_a_covered_script_without_the_exec_bit() {
    let p = Project::new();
    let script = p.write(".ka/hooks/guard.sh", "#!/bin/sh\nexit 0\n");
    executable(&script, false);
    p.project(&hook("guard", "pre_tool_use", "./.ka/hooks/guard.sh", &[]));
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("./.ka/hooks/guard.sh as a program, but it is not executable"),
        "{stdout}"
    );
    assert!(stdout.contains("chmod +x ./.ka/hooks/guard.sh"), "{stdout}");
    // With the bit, or run through `sh`, nothing to say.
    executable(&script, true);
    p.project(&hook(
        "guard",
        "pre_tool_use",
        "./.ka/hooks/guard.sh # v2",
        &[],
    ));
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not executable"));
    executable(&script, false);
    p.project(&hook("guard", "pre_tool_use", "sh .ka/hooks/guard.sh", &[]));
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not executable"));
}

fn import_claude(p: &Project, hooks: Value) -> String {
    p.write(
        ".claude/settings.json",
        &json!({ "hooks": hooks }).to_string(),
    );
    let out = p.cli().args(["import", "claude"]).output().expect("import");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Claude Code lets the action through when a hook exits other than 0 and 2: an imported hook
/// keeps doing so, written out; `onFailure: "block"` keeps blocking.
#[test]
fn import_keeps_what_claude_code_does_when_a_hook_fails() {
    let p = Project::new();
    let text = import_claude(
        &p,
        json!({
            "PreToolUse": [{"matcher": "Write", "hooks": [
                {"type": "command", "command": "./open.sh"},
                {"type": "command", "command": "./closed.sh", "onFailure": "block"}
            ]}],
            "PostToolUse": [{"hooks": [{"type": "command", "command": "./fmt.sh"}]}]
        }),
    );
    let table: toml::Table = text.parse().expect("TOML");
    let hooks = table["hooks"].as_array().expect("hooks");
    let on_error = |command: &str| {
        hooks
            .iter()
            .find(|h| h["command"].as_str() == Some(command))
            .and_then(|h| h.get("on_error"))
            .and_then(toml::Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(on_error("./open.sh").as_deref(), Some("ignore"), "{text}");
    assert_eq!(on_error("./closed.sh").as_deref(), Some("block"), "{text}");
    assert_eq!(
        on_error("./fmt.sh"),
        None,
        "the default already ignores: {text}"
    );
    assert!(
        !text.contains("not imported (no ka equivalent): onFailure"),
        "{text}"
    );
}

/// Copilot denies a call whose `preToolUse` hook crashed: the imported guard blocks (ka's
/// default); on other events it fails open, as Copilot does.
#[test]
fn import_keeps_what_copilot_does_when_a_hook_fails() {
    let p = Project::new();
    p.write(
        ".github/hooks/policy.json",
        &json!({"version": 1, "hooks": {
            "preToolUse": [{"type": "command", "bash": "./policy.sh"}],
            "userPromptSubmitted": [{"type": "command", "bash": "./prompt.sh"}]
        }})
        .to_string(),
    );
    let out = p
        .cli()
        .args(["import", "copilot"])
        .output()
        .expect("import");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let table: toml::Table = text.parse().expect("TOML");
    let hooks = table["hooks"].as_array().expect("hooks");
    let find = |command: &str| {
        hooks
            .iter()
            .find(|h| h["command"].as_str() == Some(command))
            .unwrap_or_else(|| panic!("{command} not imported: {text}"))
    };
    // Written out or left to the default: a failed preToolUse guard blocks, as in Copilot.
    assert!(
        matches!(
            find("./policy.sh")
                .get("on_error")
                .and_then(toml::Value::as_str),
            None | Some("block")
        ),
        "{text}"
    );
    assert_eq!(
        find("./prompt.sh")
            .get("on_error")
            .and_then(toml::Value::as_str),
        Some("ignore"),
        "{text}"
    );
}

/// `ka-hooks init`'s template, `ka.toml.example` and the schema say a guard fails closed.
#[test]
fn the_template_example_and_schema_say_guards_fail_closed() {
    let p = Project::new();
    std::fs::remove_dir_all(p.root.join(".ka")).expect("rm .ka");
    p.cli().arg("init").assert().success();
    let starter = p.read(".ka/ka.toml").expect("init wrote .ka/ka.toml");
    assert!(starter.contains("block (the default on"), "{starter}");
    assert!(!starter.contains("ignore (default)"), "{starter}");
    let example = include_str!("../../ka.toml.example");
    assert!(!example.contains("\"ignore\" (default)"));
    let schema: Value =
        serde_json::from_str(include_str!("../../ka-hooks.schema.json")).expect("schema");
    let on_error = schema
        .pointer("/properties/hooks/items/properties/on_error")
        .expect("on_error");
    assert_eq!(on_error.get("default"), None, "{on_error}");
    assert!(on_error["description"]
        .as_str()
        .unwrap_or_default()
        .contains("Default: \"block\" on the events that can veto"));
}
