//! The merge of layers is monotone: no layer weakens a guard of a layer it does not own.
//!
//! Each test is an attack on the merge and its de-duplication: a trusted project entry
//! named like the user's guard that switches it to report-only, moves it to another event, or
//! narrows it with `paths` or `if`; an unnamed project copy of the user's guard that would replace
//! it through de-duplication; the same de-duplication from the user file against a managed guard;
//! a trusted nested `.ka/` that disables the outer project's guard. Each is run through
//! `ka-hooks run` and the Claude, Codex and Gemini adapters, and must leave the guard blocking
//! and say that the weakening was refused; `ka-hooks check` reports it naming both files. The
//! user file still weakens a project's hooks: that is the user's own word.

use crate::support::readme_write;
use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use crate::support;

use support::Project;

const GUARD_SAYS: &str = "guard: no writes here";

/// The user's guard: blocks every write.
fn user_guard() -> String {
    format!(
        "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"echo '{GUARD_SAYS}' >&2; exit 2\"\n"
    )
}

/// A project whose user file holds the guard, and whose project file (`project`) is trusted.
fn attacked(project: &str) -> Project {
    let p = Project::new();
    p.user(&user_guard());
    p.project(project);
    p.cli().args(["trust", "--yes"]).assert().success();
    p
}

/// The agent's payload for a write of `README.md` under `dir`.
fn readme_write_payload(agent: &str, dir: &Path) -> Value {
    let file = dir.join("README.md");
    match agent {
        "claude" => json!({"session_id": "s", "cwd": dir, "hook_event_name": "PreToolUse",
                           "tool_name": "Write", "tool_input": {"file_path": file, "content": "x"}}),
        "codex" => json!({"session_id": "s", "turn_id": "1", "cwd": dir,
                          "hook_event_name": "PreToolUse", "model": "gpt-5-codex",
                          "permission_mode": "default", "tool_name": "apply_patch",
                          "tool_input": {"command":
                              "*** Begin Patch\n*** Add File: README.md\n+x\n*** End Patch\n"},
                          "tool_use_id": "call_1"}),
        _ => json!({"session_id": "s", "transcript_path": "/tmp/t.json", "cwd": dir,
                    "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00Z",
                    "tool_name": "write_file", "tool_input": {"file_path": file, "content": "x"}}),
    }
}

/// Whether the adapter's answer denies the call, and everything it said (stdout and stderr).
fn adapter_write(p: &Project, agent: &str, dir: &Path) -> (bool, String) {
    let out = p
        .cli()
        .current_dir(dir)
        .arg(agent)
        .write_stdin(readme_write_payload(agent, dir).to_string())
        .output()
        .expect("ka-hooks adapter");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    let denied = out.status.code() == Some(2)
        || answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        || answer["decision"] == "deny"
        || answer["decision"] == "block";
    let mut said = vec![stderr];
    strings(&answer, &mut said);
    (denied, said.join("\n"))
}

/// Every string in a JSON answer, unescaped (what the agent shows).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The guard blocks the write through `ka-hooks run` and every adapter, run from `dir`, and each
/// answer says every one of `said`.
#[track_caller]
fn guard_holds(p: &Project, dir: &Path, said: &[&str]) {
    let (code, text) = readme_write(p, dir);
    assert_eq!(code, Some(2), "ka-hooks run let the write through:\n{text}");
    assert!(text.contains(GUARD_SAYS), "the guard did not run:\n{text}");
    for s in said {
        assert!(text.contains(s), "ka-hooks run did not say {s:?}:\n{text}");
    }
    for agent in ["claude", "codex", "gemini"] {
        let (denied, text) = adapter_write(p, agent, dir);
        assert!(denied, "{agent} let the write through:\n{text}");
        assert!(
            text.contains(GUARD_SAYS),
            "{agent}: the guard did not run:\n{text}"
        );
        for s in said {
            assert!(text.contains(s), "{agent} did not say {s:?}:\n{text}");
        }
    }
}

/// `ka-hooks check` fails with an error at `at` (the refused entry) that names `original` too.
#[track_caller]
fn check_names_both(p: &Project, dir: &Path, at: &str, original: &str) {
    let out = p
        .cli()
        .current_dir(dir)
        .arg("check")
        .output()
        .expect("ka-hooks check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "check passed:\n{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains(at))
        .unwrap_or_else(|| panic!("no error at {at}:\n{stderr}"));
    assert!(line.contains(original), "{line}");
}

fn user_toml_shown(p: &Project) -> String {
    p.config_dir.join("ka.toml").display().to_string()
}

#[test]
fn a_project_entry_named_like_the_users_guard_cannot_weaken_it() {
    for (weakening, key) in [
        ("enforce = false", "enforce: true -> false"),
        (
            "event = \"post_tool_use\"",
            "event: pre_tool_use -> post_tool_use",
        ),
        (
            "paths = [\"nothing/**\"]",
            "paths: (none: every path) -> [\"nothing/**\"]",
        ),
        (
            "if = \"Write(nothing/**)\"",
            "if: (none: every call) -> \"Write(nothing/**)\"",
        ),
        ("enabled = false", "enabled: true -> false"),
        ("command = \"true\"", "command: "),
    ] {
        let p = attacked(&format!("[[hooks]]\nname = \"guard\"\n{weakening}\n"));
        guard_holds(&p, &p.root, &["would weaken it", key]);
        check_names_both(
            &p,
            &p.root,
            &format!("{}:1:", p.root.join(".ka/ka.toml").display()),
            &format!("{}:1", user_toml_shown(&p)),
        );
    }
}

/// A shorter timeout looks stronger, but a guard cut short by it fails, and with the default
/// `on_error = "ignore"` a failing guard lets the call through: a project must not shorten the
/// user's slow guard (found by review).
#[test]
fn a_project_cannot_cut_the_users_slow_guard_short_with_a_timeout() {
    let p = Project::new();
    p.user(&format!(
        "[[hooks]]\nname = \"guard\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"sleep 0.3; echo '{GUARD_SAYS}' >&2; exit 2\"\non_error = \"ignore\"\n"
    ));
    p.project("[[hooks]]\nname = \"guard\"\ntimeout = 0.05\n");
    p.cli().args(["trust", "--yes"]).assert().success();
    guard_holds(&p, &p.root, &["would weaken it", "timeout"]);
    check_names_both(
        &p,
        &p.root,
        &format!("{}:1:", p.root.join(".ka/ka.toml").display()),
        &format!("{}:1", user_toml_shown(&p)),
    );
}

#[test]
fn a_project_may_still_strengthen_the_users_guard() {
    let p = attacked("[[hooks]]\nname = \"guard\"\non_error = \"block\"\ntimeout = 5\n");
    let config = p.load();
    let guard = config.hook("guard").expect("guard");
    assert_eq!(guard.timeout.as_secs(), 5);
    assert_eq!(guard.on_error.as_str(), "block");
    assert!(config.refused.is_empty(), "{:?}", config.refused);
    p.cli().arg("check").assert().success();
}

#[test]
fn an_unnamed_project_copy_of_the_users_guard_does_not_replace_it() {
    let p = attacked(
        "[[hooks]]\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"echo 'guard: no writes here' >&2; exit 2\"\nenforce = false\n",
    );
    guard_holds(
        &p,
        &p.root,
        &[
            "is a copy of the user hook `guard`",
            "enforce: true -> false",
        ],
    );
    check_names_both(
        &p,
        &p.root,
        &format!("{}:1:", p.root.join(".ka/ka.toml").display()),
        &format!("{}:1", user_toml_shown(&p)),
    );
    // A copy as strong still replaces it (one run, the later place): nothing is refused.
    p.project(
        "[[hooks]]\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"echo 'guard: no writes here' >&2; exit 2\"\non_error = \"block\"\n",
    );
    p.cli().args(["trust", "--yes"]).assert().success();
    let config = p.load();
    assert!(config.refused.is_empty(), "{:?}", config.refused);
    assert_eq!(config.deduplicated.len(), 1);
    assert_eq!(config.deduplicated[0].name, "guard");
}

#[test]
fn a_user_copy_of_a_managed_guard_does_not_replace_it() {
    let p = Project::new();
    let managed = p.base.join("managed");
    fs::create_dir_all(&managed).expect("mkdir");
    fs::write(managed.join("ka.toml"), user_guard()).expect("write");
    p.user(
        "[[hooks]]\nname = \"mine\"\nevent = \"pre_tool_use\"\ntool = \"write\"\n\
         command = \"echo 'guard: no writes here' >&2; exit 2\"\nenforce = false\n",
    );
    let (code, text) = {
        let out = p
            .cli()
            .env("KA_MANAGED_DIR", &managed)
            .args(["run", "pre_tool_use", "--tool", "write", "--input"])
            .arg(r#"{"arguments":{"path":"README.md","content":"x"}}"#)
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains(GUARD_SAYS), "{text}");
    assert!(
        text.contains("is a copy of the managed hook `guard`"),
        "{text}"
    );
    for agent in ["claude", "codex", "gemini"] {
        let out = p
            .cli()
            .env("KA_MANAGED_DIR", &managed)
            .arg(agent)
            .write_stdin(readme_write_payload(agent, &p.root).to_string())
            .output()
            .expect("adapter");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let answer: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
        let denied = out.status.code() == Some(2)
            || answer["hookSpecificOutput"]["permissionDecision"] == "deny"
            || answer["decision"] == "deny";
        assert!(denied, "{agent}: {stdout}");
    }
    let out = p
        .cli()
        .env("KA_MANAGED_DIR", &managed)
        .arg("check")
        .output()
        .expect("check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:1:", user_toml_shown(&p)))
            && stderr.contains(&managed.join("ka.toml").display().to_string()),
        "{stderr}"
    );
    // Even a copy as strong never replaces a managed guard while other hooks are off.
    p.user(
        "[hook_settings]\ndisable_all = true\n[[hooks]]\nname = \"mine\"\nevent = \"pre_tool_use\"\n\
         tool = \"write\"\ncommand = \"echo 'guard: no writes here' >&2; exit 2\"\n",
    );
    let out = p
        .cli()
        .env("KA_MANAGED_DIR", &managed)
        .args(["run", "pre_tool_use", "--tool", "write"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_nested_project_cannot_disable_the_outer_projects_guard() {
    let p = Project::new();
    p.project(&user_guard());
    let sub = p.root.join("vendor/lib");
    fs::create_dir_all(sub.join(".ka")).expect("mkdir");
    fs::write(
        sub.join(".ka/ka.toml"),
        "[[hooks]]\nname = \"guard\"\nenabled = false\n",
    )
    .expect("write");
    p.cli()
        .current_dir(&sub)
        .args(["trust", "--yes"])
        .assert()
        .success();
    guard_holds(&p, &sub, &["would weaken it", "enabled: true -> false"]);
    check_names_both(
        &p,
        &sub,
        &format!("{}:1:", sub.join(".ka/ka.toml").display()),
        &format!("{}:1", p.root.join(".ka/ka.toml").display()),
    );
    // Its local file cannot either.
    fs::write(sub.join(".ka/ka.toml"), "").expect("write");
    fs::write(
        sub.join(".ka/ka.local.toml"),
        "[[hooks]]\nname = \"guard\"\nenforce = false\n",
    )
    .expect("write");
    p.cli()
        .current_dir(&sub)
        .args(["trust", "--yes"])
        .assert()
        .success();
    guard_holds(&p, &sub, &["would weaken it", "enforce: true -> false"]);
}

#[test]
fn a_local_file_cannot_weaken_the_users_guard_but_may_weaken_its_own_projects() {
    let p = Project::new();
    p.user(&user_guard());
    p.local("[[hooks]]\nname = \"guard\"\nenabled = false\n");
    p.cli().args(["trust", "--yes"]).assert().success();
    guard_holds(&p, &p.root, &["would weaken it"]);
    // The project's own guard: the local file is the user's, and the review says what it does.
    let q = Project::new();
    q.project(&user_guard());
    q.local("[[hooks]]\nname = \"guard\"\nenabled = false\n");
    let review = q.cli().args(["trust", "--yes"]).output().expect("trust");
    let review = String::from_utf8_lossy(&review.stdout);
    assert!(
        review.contains("changes the project hook `guard`") && review.contains("weaker"),
        "{review}"
    );
    let (code, text) = readme_write(&q, &q.root);
    assert_eq!(code, Some(0), "{text}");
}

#[test]
fn the_user_file_can_still_disable_a_project_hook_by_name() {
    let p = Project::new();
    p.user("[[hooks]]\nname = \"guard\"\nenabled = false\n");
    // Even when the project says `enabled = true` itself: the user's word about a repository is
    // final.
    p.project(&format!("{}enabled = true\n", user_guard()));
    p.cli().args(["trust", "--yes"]).assert().success();
    let (code, text) = readme_write(&p, &p.root);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("would weaken"), "{text}");
    let config = p.load();
    assert!(!config.hook("guard").expect("guard").enabled);
    assert!(config.refused.is_empty(), "{:?}", config.refused);
    p.cli().arg("check").assert().success();

    // In a project without that hook, the entry changes nothing, and the user's own guards run
    // (an error there would fail the user file's load, and with it every guard).
    let q = Project::new();
    q.user(&format!(
        "[[hooks]]\nname = \"fmt\"\nenabled = false\n\n{}",
        user_guard()
    ));
    guard_holds(&q, &q.root, &[]);
    let out = q.cli().arg("check").output().expect("check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("changes the hook `fmt`, which no other loaded layer defines here"),
        "{stderr}"
    );
}

#[test]
fn the_review_shows_every_key_of_an_override_before_and_after() {
    let p = Project::new();
    p.user(&user_guard());
    p.project(
        "[[hooks]]\nname = \"guard\"\nenforce = false\npaths = [\"src/**\"]\n\
         if = \"Write(src/**)\"\non_error = \"ignore\"\n",
    );
    // Before it is trusted, `check` already says what loading it would refuse.
    check_names_both(
        &p,
        &p.root,
        &format!("{}:1:", p.root.join(".ka/ka.toml").display()),
        &format!("{}:1", user_toml_shown(&p)),
    );
    let out = p.cli().args(["trust", "--yes"]).output().expect("trust");
    let review = String::from_utf8_lossy(&out.stdout);
    let user = user_toml_shown(&p);
    for needle in [
        format!("changes the user hook `guard` of {user}:1"),
        "enforce: true -> false (weaker)".to_owned(),
        "paths: (none: every path) -> [\"src/**\"] (weaker)".to_owned(),
        "if: (none: every call) -> \"Write(src/**)\" (weaker)".to_owned(),
        "on_error: block -> ignore (weaker)".to_owned(),
        "REFUSED".to_owned(),
    ] {
        assert!(review.contains(&needle), "missing {needle:?} in:\n{review}");
    }
    assert!(!review.contains("overrides settings only"), "{review}");
}

#[test]
fn a_projects_disable_all_or_timeout_does_not_reach_the_users_guard() {
    let p = attacked(
        "[hook_settings]\ndisable_all = true\ntimeout = 600\n\n\
         [[hooks]]\nname = \"own\"\nevent = \"pre_tool_use\"\ncommand = \"exit 2\"\n",
    );
    guard_holds(&p, &p.root, &[]);
    let config = p.load();
    assert!(config.settings.disabled.is_none());
    assert_eq!(config.hook("guard").expect("guard").timeout.as_secs(), 60);
    // Its own hooks it may turn off.
    assert!(!config.hook("own").expect("own").enabled);
}
