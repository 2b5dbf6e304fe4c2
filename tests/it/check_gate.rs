//! `ka-hooks check` is a gate: it exits 1 when a layer file that exists is skipped
//! (unless `--allow-skipped`), reports a skipped file's warnings without trusting or running
//! it, and reports a hook whose script is missing or not executable, as `doctor` does.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use support::{hook, Project};

fn run_check(p: &Project, args: &[&str]) -> (i32, String) {
    let out = p.cli().arg("check").args(args).output().expect("check");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn an_untrusted_project_file_fails_check_unless_allowed() {
    let p = Project::new();
    p.project(&hook("fmt", "post_tool_use", "true", &["tool = \"write\""]));
    let (code, text) = run_check(&p, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("--allow-skipped"), "{text}");
    assert!(text.contains(".ka/ka.toml"), "{text}");
    let (code, text) = run_check(&p, &["--allow-skipped"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("1 layer(s) skipped"), "{text}");
}

#[test]
fn a_trusted_file_edited_since_fails_check() {
    let p = Project::new();
    p.project(&hook("fmt", "post_tool_use", "true", &[]));
    p.cli().args(["trust", "--yes"]).assert().success();
    assert_eq!(run_check(&p, &[]).0, 0);
    p.project(&hook("fmt", "post_tool_use", "true; true", &[]));
    let (code, text) = run_check(&p, &[]);
    assert_eq!(code, 1, "{text}");
}

#[test]
fn check_json_says_not_ok_for_a_skipped_layer() {
    let p = Project::new();
    p.project(&hook("fmt", "stop", "true", &[]));
    let out = p.cli().args(["check", "--json"]).output().expect("check");
    assert_eq!(out.status.code(), Some(1));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(value["ok"], false, "{value}");
    assert_eq!(
        value["skipped"].as_array().map(Vec::len),
        Some(1),
        "{value}"
    );
}

#[test]
fn a_skipped_files_warnings_are_reported_without_running_it() {
    let p = Project::new();
    p.project(&hook(
        "guard",
        "pre_tool_use",
        "touch ran; exit 0",
        &["tool = \"bsah\""],
    ));
    let (code, text) = run_check(&p, &["--allow-skipped"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("bsah"),
        "the unknown tool is reported: {text}"
    );
    assert!(text.contains("skipped layer"), "{text}");
    assert!(!p.exists("ran"), "nothing ran");
}

#[test]
fn a_missing_script_fails_check_like_doctor() {
    let p = Project::with_user_toml(&hook("lint", "stop", "./scripts/lint.sh", &[]));
    let (code, text) = run_check(&p, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("hook `lint`"), "{text}");
    assert!(text.contains("lint.sh"), "{text}");
}

#[test]
fn a_script_that_is_not_executable_fails_check_with_the_fix() {
    let p = Project::with_user_toml(&hook("lint", "stop", "./scripts/lint.sh", &[]));
    let script = p.write("scripts/lint.sh", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let (code, text) = run_check(&p, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("chmod"), "{text}");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (code, text) = run_check(&p, &[]);
    assert_eq!(code, 0, "{text}");
}
