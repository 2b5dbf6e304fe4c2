//! A broken layer fails closed in its own scope, and nothing weakens a guard silently.
//!
//! Each test is an attack the model can run with its shell tool, through `ka-hooks run` and
//! through every adapter (`ka-hooks claude|codex|gemini`): one bad byte appended to the user file,
//! an unknown key, a directory in its place, bytes that are not UTF-8 (the guards of the file's
//! last good version still block, the managed and project guards still run, and the answer names
//! the file and the line); `disable_all = true`, `KA_HOOKS_DISABLE=1` and `stale = "skip"` (said
//! in every answer); a user guard made report-only or removed between two dispatches (the next
//! answer names the guard and the file).

use std::fs;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::support;

use support::Project;

/// The user's guard: no writes.
const USER_GUARD: &str = r#"[[hooks]]
name = "user-guard"
event = "pre_tool_use"
tool = "write"
paths = ["src/**"]
command = "cat >/dev/null; echo 'user guard: no writes' >&2; exit 2"
"#;
/// The same guard, report-only.
const USER_GUARD_REPORT_ONLY: &str = r#"[[hooks]]
name = "user-guard"
event = "pre_tool_use"
tool = "write"
paths = ["src/**"]
enforce = false
command = "cat >/dev/null; echo 'user guard: no writes' >&2; exit 2"
"#;
const MANAGED_GUARD: &str = r#"[[hooks]]
name = "managed-guard"
event = "pre_tool_use"
tool = "bash"
command = "cat >/dev/null; echo 'managed guard: no shell' >&2; exit 2"
"#;
const PROJECT_GUARD: &str = r#"[[hooks]]
name = "project-guard"
event = "pre_tool_use"
tool = "edit"
paths = ["lib/**"]
command = "cat >/dev/null; echo 'project guard: no edits' >&2; exit 2"
"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    Write,
    Edit,
    Bash,
}

#[derive(Clone, Copy, Debug)]
enum Via {
    Run,
    Claude,
    Codex,
    Gemini,
}

const ADAPTERS: [Via; 3] = [Via::Claude, Via::Codex, Via::Gemini];
const EVERY_WAY: [Via; 4] = [Via::Run, Via::Claude, Via::Codex, Via::Gemini];

/// A managed guard (bash), a user guard (write, in `src/`) and a trusted project guard (edit, in
/// `lib/`): in a guard `write` and `edit` both stand for every writer, so the paths keep the user
/// guard and the project guard apart.
fn three_layer_guards() -> Project {
    let p = Project::with_user_toml(USER_GUARD);
    fs::create_dir_all(managed_dir(&p)).expect("mkdir managed");
    fs::write(managed_dir(&p).join("ka.toml"), MANAGED_GUARD).expect("write managed");
    p.project(PROJECT_GUARD);
    managed_cli(&p).args(["trust", "--yes"]).assert().success();
    p
}

fn managed_dir(p: &Project) -> PathBuf {
    p.base.join("managed")
}

fn user_toml_path(p: &Project) -> PathBuf {
    p.config_dir.join("ka.toml")
}

fn managed_cli(p: &Project) -> assert_cmd::Command {
    let mut cmd = p.cli();
    cmd.env("KA_MANAGED_DIR", managed_dir(p));
    cmd
}

/// What an answer said: the block's reason (exit 2, or a deny in the JSON), and everything for
/// the user (stdout of `run`, `systemMessage` of an adapter).
#[derive(Debug)]
struct Said {
    code: Option<i32>,
    blocked: Option<String>,
    to_user: String,
}

fn ask(p: &Project, via: Via, tool: Tool) -> Said {
    ask_with(p, via, tool, &[])
}

fn ask_with(p: &Project, via: Via, tool: Tool, env: &[(&str, &str)]) -> Said {
    let mut cmd = managed_cli(p);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let path = p.root.join(match tool {
        Tool::Edit => "lib/a.rs",
        _ => "src/a.rs",
    });
    let path = path.to_string_lossy();
    let output = match via {
        Via::Run => {
            let (name, args) = match tool {
                Tool::Write => ("write", json!({"path": path, "content": "x"})),
                Tool::Edit => ("edit", json!({"path": path, "old": "a", "new": "b"})),
                Tool::Bash => ("bash", json!({"command": "ls"})),
            };
            cmd.args(["run", "pre_tool_use", "--tool", name, "--input"])
                .arg(json!({ "arguments": args }).to_string())
                .output()
        }
        _ => {
            let payload = payload_via(p, via, tool, &path);
            cmd.arg(match via {
                Via::Claude => "claude",
                Via::Codex => "codex",
                _ => "gemini",
            })
            .env("CLAUDE_PROJECT_DIR", &p.root)
            .write_stdin(payload.to_string())
            .output()
        }
    }
    .expect("ka-hooks");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let code = output.status.code();
    if let Via::Run = via {
        return Said {
            code,
            blocked: (code == Some(2)).then(|| stdout.clone()),
            to_user: stdout,
        };
    }
    let answer: Value = if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    let denied = answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        || answer["decision"] == "deny";
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .or(answer["reason"].as_str())
        .unwrap_or_default()
        .to_owned();
    Said {
        code,
        blocked: if code == Some(2) {
            Some(stderr)
        } else {
            denied.then_some(reason)
        },
        to_user: answer["systemMessage"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    }
}

fn payload_via(p: &Project, via: Via, tool: Tool, path: &str) -> Value {
    let root = &p.root;
    match via {
        Via::Claude => {
            let (name, input) = match tool {
                Tool::Write => ("Write", json!({"file_path": path, "content": "x"})),
                Tool::Edit => (
                    "Edit",
                    json!({"file_path": path, "old_string": "a", "new_string": "b"}),
                ),
                Tool::Bash => ("Bash", json!({"command": "ls"})),
            };
            json!({"session_id": "s", "cwd": root, "hook_event_name": "PreToolUse",
                   "tool_name": name, "tool_input": input})
        }
        Via::Codex => {
            let (name, input) = match tool {
                Tool::Write => (
                    "apply_patch",
                    json!({"command": format!(
                        "*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n")}),
                ),
                Tool::Edit => (
                    "apply_patch",
                    json!({"command": format!(
                        "*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n")}),
                ),
                Tool::Bash => ("Bash", json!({"command": "ls"})),
            };
            json!({"session_id": "s", "turn_id": "1", "cwd": root,
                   "hook_event_name": "PreToolUse", "model": "gpt-5-codex",
                   "permission_mode": "default", "tool_name": name, "tool_input": input,
                   "tool_use_id": "call_1"})
        }
        _ => {
            let (name, input) = match tool {
                Tool::Write => ("write_file", json!({"file_path": path, "content": "x"})),
                Tool::Edit => (
                    "replace",
                    json!({"file_path": path, "old_string": "a", "new_string": "b"}),
                ),
                Tool::Bash => ("run_shell_command", json!({"command": "ls"})),
            };
            json!({"session_id": "s", "transcript_path": "/tmp/t.json", "cwd": root,
                   "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00Z",
                   "tool_name": name, "tool_input": input})
        }
    }
}

#[track_caller]
fn assert_blocked(said: &Said, needles: &[&str], what: &str) {
    let reason = said
        .blocked
        .as_deref()
        .unwrap_or_else(|| panic!("{what}: not blocked: {said:#?}"));
    for n in needles {
        assert!(reason.contains(n), "{what}: {n:?} missing in {said:#?}");
    }
}

#[track_caller]
fn assert_told(said: &Said, needles: &[&str], what: &str) {
    for n in needles {
        assert!(
            said.to_user.contains(n),
            "{what}: {n:?} not said in {said:#?}"
        );
    }
}

/// One dispatch that loads the user file as it is (its last good version is kept).
fn dispatch_once(p: &Project) {
    let said = ask(p, Via::Run, Tool::Bash);
    assert_eq!(said.code, Some(2), "{said:#?}");
}

/// After the user file broke: the guards of its last good version block, the managed and
/// project guards run, and every answer names the file and `where_` (its line, or what it is).
#[track_caller]
fn last_good_guards_hold(p: &Project, where_: &str) {
    let file = user_toml_path(p).to_string_lossy().into_owned();
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        let write = ask(p, via, Tool::Write);
        assert_blocked(&write, &["`user-guard`", &file, where_], &what);
        assert_told(&write, &["does not load", &file, where_], &what);
        assert_blocked(
            &ask(p, via, Tool::Bash),
            &["managed guard: no shell"],
            &what,
        );
        assert_blocked(
            &ask(p, via, Tool::Edit),
            &["project guard: no edits"],
            &what,
        );
    }
    // `check` still reports the file as an error.
    managed_cli(p).arg("check").assert().code(1);
}

fn append(p: &Project, bytes: &[u8]) {
    let mut text = fs::read(user_toml_path(p)).expect("read user file");
    text.extend_from_slice(bytes);
    fs::write(user_toml_path(p), text).expect("append");
}

#[test]
fn a_stray_table_header_appended_to_the_user_file_keeps_its_guards() {
    let p = three_layer_guards();
    dispatch_once(&p);
    append(&p, b"[[hooks\n");
    last_good_guards_hold(&p, "line 7");
}

#[test]
fn an_unknown_key_in_the_user_file_keeps_its_guards() {
    let p = three_layer_guards();
    dispatch_once(&p);
    append(&p, b"enforcee = false\n");
    last_good_guards_hold(&p, "line 7");
}

#[test]
fn a_directory_in_place_of_the_user_file_keeps_its_guards() {
    let p = three_layer_guards();
    dispatch_once(&p);
    fs::remove_file(user_toml_path(&p)).expect("rm");
    fs::create_dir(user_toml_path(&p)).expect("mkdir");
    last_good_guards_hold(&p, "is a directory");
}

#[test]
fn non_utf8_bytes_in_the_user_file_keep_its_guards() {
    let p = three_layer_guards();
    dispatch_once(&p);
    append(&p, b"# \xff\xfe\n");
    last_good_guards_hold(&p, "line 7");
}

#[test]
fn a_broken_managed_file_keeps_its_guards_and_the_user_guard_runs() {
    let p = three_layer_guards();
    dispatch_once(&p);
    let managed = managed_dir(&p).join("ka.toml");
    fs::write(&managed, format!("{MANAGED_GUARD}[[hooks\n")).expect("break managed");
    let file = managed.to_string_lossy().into_owned();
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        let bash = ask(&p, via, Tool::Bash);
        assert_blocked(&bash, &["`managed-guard`", &file, "line 6"], &what);
        assert_told(&bash, &["does not load", &file], &what);
        assert_blocked(
            &ask(&p, via, Tool::Write),
            &["user guard: no writes"],
            &what,
        );
    }
}

#[test]
fn a_broken_user_file_that_never_loaded_lets_the_other_layers_run_and_says_so() {
    let p = three_layer_guards();
    append(&p, b"[[hooks\n");
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        let write = ask(&p, via, Tool::Write);
        assert_eq!(write.blocked, None, "{what}: {write:#?}");
        assert_told(
            &write,
            &["does not load", "line 7", "none of its guards hold"],
            &what,
        );
        assert_blocked(
            &ask(&p, via, Tool::Bash),
            &["managed guard: no shell"],
            &what,
        );
        assert_blocked(
            &ask(&p, via, Tool::Edit),
            &["project guard: no edits"],
            &what,
        );
    }
}

#[test]
fn disable_all_appended_to_the_user_file_is_said_in_every_answer() {
    let p = three_layer_guards();
    append(&p, b"\n[hook_settings]\ndisable_all = true\n");
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        for tool in [Tool::Write, Tool::Edit] {
            let said = ask(&p, via, tool);
            assert_eq!(said.blocked, None, "{what}: {said:#?}");
            assert_told(
                &said,
                &["every ka hook except managed ones is off", "disable_all"],
                &what,
            );
        }
        // Managed guards cannot be switched off from below, and the answer still says it.
        let bash = ask(&p, via, Tool::Bash);
        assert_blocked(&bash, &["managed guard: no shell"], &what);
        assert_told(&bash, &["every ka hook except managed ones is off"], &what);
    }
}

#[test]
fn ka_hooks_disable_is_said_in_every_answer() {
    let p = three_layer_guards();
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        let said = ask_with(&p, via, Tool::Write, &[("KA_HOOKS_DISABLE", "1")]);
        assert_eq!(said.blocked, None, "{what}: {said:#?}");
        assert_told(
            &said,
            &[
                "every ka hook except managed ones is off",
                "KA_HOOKS_DISABLE",
            ],
            &what,
        );
    }
}

#[test]
fn stale_skip_is_said_in_every_answer() {
    let p = three_layer_guards();
    p.project(&format!("{PROJECT_GUARD}# edited\n"));
    append(&p, b"\n[hook_settings]\nstale = \"skip\"\n");
    let project_file = p.root.join(".ka/ka.toml").to_string_lossy().into_owned();
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        let said = ask(&p, via, Tool::Edit);
        assert_eq!(said.blocked, None, "{what}: {said:#?}");
        assert_told(&said, &["`stale = \"skip\"`", &project_file], &what);
    }
}

#[test]
fn a_user_guard_made_report_only_is_named_in_the_next_answer() {
    let p = three_layer_guards();
    let file = user_toml_path(&p).to_string_lossy().into_owned();
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        p.write_user_toml(USER_GUARD);
        dispatch_once(&p);
        p.write_user_toml(USER_GUARD_REPORT_ONLY);
        let said = ask(&p, via, Tool::Edit);
        assert_told(
            &said,
            &["`user-guard`", "is weaker", "enforce: true -> false", &file],
            &what,
        );
        // Said once: the snapshot moved on.
        let again = ask(&p, via, Tool::Edit);
        assert!(
            !again.to_user.contains("`user-guard`"),
            "{what}: {again:#?}"
        );
    }
}

#[test]
fn a_user_guard_removed_is_named_in_the_next_answer() {
    let p = three_layer_guards();
    let file = user_toml_path(&p).to_string_lossy().into_owned();
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        p.write_user_toml(USER_GUARD);
        dispatch_once(&p);
        p.write_user_toml("# nothing here\n");
        let said = ask(&p, via, Tool::Write);
        assert_eq!(said.blocked, None, "{what}: {said:#?}");
        assert_told(&said, &["`user-guard`", "is gone", &file], &what);
    }
    // Deleting the file says it too.
    p.write_user_toml(USER_GUARD);
    dispatch_once(&p);
    fs::remove_file(user_toml_path(&p)).expect("rm");
    assert_told(
        &ask(&p, Via::Claude, Tool::Write),
        &["`user-guard`", "is gone", "was deleted"],
        "deleted",
    );
}

#[test]
fn a_trusted_root_project_guard_weakened_without_review_is_named() {
    let p = Project::new();
    let user = format!(
        "[hook_settings]\ntrusted_roots = [{:?}]\n",
        p.base.display().to_string()
    );
    p.user(&user);
    let file = p.root.join(".ka/ka.toml").to_string_lossy().into_owned();
    for via in ADAPTERS.into_iter().chain([Via::Run]) {
        let what = format!("{via:?}");
        p.project(PROJECT_GUARD);
        assert_blocked(&ask(&p, Via::Run, Tool::Edit), &["project guard"], &what);
        p.project(&PROJECT_GUARD.replace("tool = \"edit\"", "tool = \"edit\"\nenabled = false"));
        let said = ask(&p, via, Tool::Edit);
        assert_eq!(said.blocked, None, "{what}: {said:#?}");
        assert_told(&said, &["`project-guard`", "disabled", &file], &what);
    }
}

/// Dispatches at once each replace the last good version by a rename: none leaves it torn or
/// leaves a temporary file behind, and the guard of the version they kept still holds.
#[test]
fn concurrent_dispatches_never_tear_the_last_good_version() {
    let p = three_layer_guards();
    let mut big = String::from(USER_GUARD);
    for i in 0..200 {
        big.push_str(&support::hook(
            &format!("fmt-{i}"),
            "post_tool_use",
            "true",
            &[],
        ));
    }
    p.write_user_toml(&big);
    let bin = assert_cmd::cargo::cargo_bin("ka-hooks");
    let children: Vec<std::process::Child> = (0..8)
        .map(|_| {
            let mut cmd = std::process::Command::new(&bin);
            for var in support::AMBIENT_VARS {
                cmd.env_remove(var);
            }
            cmd.env("KA_CONFIG_DIR", &p.config_dir)
                .env("KA_DATA_DIR", &p.data_dir)
                .env("KA_MANAGED_DIR", managed_dir(&p))
                .current_dir(&p.root)
                .args(["run", "pre_tool_use", "--tool", "bash"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn ka-hooks")
        })
        .collect();
    for mut child in children {
        assert_eq!(child.wait().expect("wait").code(), Some(2));
    }
    let kept: Vec<PathBuf> = fs::read_dir(p.data_dir.join("layers"))
        .expect("layers/")
        .map(|e| e.expect("entry").path())
        .collect();
    // The user file's and the managed file's, and nothing half-written beside them.
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.iter()
            .any(|k| fs::read_to_string(k).is_ok_and(|t| t == big)),
        "{kept:?}"
    );
    append(&p, b"[[hooks\n");
    assert_blocked(
        &ask(&p, Via::Claude, Tool::Write),
        &["`user-guard`", "does not load"],
        "after the race",
    );
}

/// An entry appended to the user file that only changes a hook no layer defines changes
/// nothing: it is ignored with a warning, and every guard still runs (it used to fail the whole
/// load, and the adapters then failed open). `check` warns about it.
#[test]
fn a_user_override_of_a_hook_no_layer_defines_switches_nothing_off() {
    let p = three_layer_guards();
    append(
        &p,
        b"\n[[hooks]]\nname = \"no-such-hook\"\nenabled = false\n",
    );
    for via in EVERY_WAY {
        let what = format!("{via:?}");
        assert_blocked(
            &ask(&p, via, Tool::Write),
            &["user guard: no writes"],
            &what,
        );
        assert_blocked(
            &ask(&p, via, Tool::Bash),
            &["managed guard: no shell"],
            &what,
        );
        assert_blocked(
            &ask(&p, via, Tool::Edit),
            &["project guard: no edits"],
            &what,
        );
    }
    let check = managed_cli(&p).arg("check").output().expect("check");
    assert!(
        String::from_utf8_lossy(&check.stderr).contains("no-such-hook"),
        "{check:?}"
    );
}
