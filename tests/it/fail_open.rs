//! `check` and `doctor` warn about guards that fail open: a `pre_tool_use` or
//! `user_prompt_submit` hook with `on_error = "ignore"` written out lets the call through when it
//! breaks. A warning, never an error: the exit code does not change. A guard without `on_error`
//! fails closed (the default on events that can veto) and is not warned about.

use crate::support;

use serde_json::Value;
use support::{hook, Project};

const IGNORE: &str = r#"on_error = "ignore""#;

fn guards() -> Project {
    // Distinct commands: identical hooks of one event would run once.
    Project::with_user_toml(
        &[
            hook("open-guard", "pre_tool_use", "true 1", &[IGNORE]),
            hook("prompt-guard", "user_prompt_submit", "true 2", &[IGNORE]),
            hook("defaulted-guard", "pre_tool_use", "true 6", &[]),
            hook(
                "closed-guard",
                "pre_tool_use",
                "true 3",
                &[r#"on_error = "block""#],
            ),
            hook(
                "asking-guard",
                "pre_tool_use",
                "true 4",
                &[r#"on_error = "ask""#],
            ),
            hook("formatter", "post_tool_use", "true 5", &[]),
        ]
        .concat(),
    )
}

#[test]
fn check_warns_about_each_fail_open_guard_and_still_exits_zero() {
    let p = guards();
    let output = p.cli().arg("check").output().expect("run");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("fails open"))
        .collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings.iter().any(|w| w.contains("`open-guard`")),
        "{stderr}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("`prompt-guard`")),
        "{stderr}"
    );
    assert!(
        warnings.iter().all(|w| w.starts_with("warning:")),
        "{stderr}"
    );
}

#[test]
fn check_json_lists_the_warnings() {
    let p = guards();
    let output = p.cli().args(["check", "--json"]).output().expect("run");
    assert_eq!(output.status.code(), Some(0));
    let value: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(value["ok"], true);
    assert_eq!(
        value["warnings"].as_array().map(Vec::len),
        Some(2),
        "{value}"
    );
}

#[test]
fn doctor_marks_a_fail_open_guard_as_a_warning_with_the_fix() {
    let p = guards();
    let output = p.cli().args(["doctor", "--json"]).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "a warning keeps exit 0");
    let value: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let text = value.to_string();
    let entries = value
        .get("entries")
        .and_then(Value::as_array)
        .or_else(|| value.as_array())
        .unwrap_or_else(|| panic!("no entries in {text}"));
    let state = |name: &str| {
        entries
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| e["state"].clone())
            .unwrap_or_else(|| panic!("no entry {name} in {text}"))
    };
    assert_eq!(state("open-guard"), "warning");
    assert_eq!(state("prompt-guard"), "warning");
    assert_eq!(state("closed-guard"), "ok");
    assert_eq!(state("defaulted-guard"), "ok");
    assert_eq!(state("asking-guard"), "ok");
    assert_eq!(state("formatter"), "ok");
    let open = entries
        .iter()
        .find(|e| e["name"] == "open-guard")
        .expect("entry");
    let check = open["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["check"] == "on_error"))
        .unwrap_or_else(|| panic!("no on_error check in {open}"));
    assert!(check["fix"].as_str().unwrap_or_default().contains("block"));
}
