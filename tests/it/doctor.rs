//! `ka-hooks doctor`: every hook is wired and working, or the report says what to fix.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use ka_hooks::doctor::{self, State};
use ka_hooks::Event;
use serde_json::Value;
use support::{hook, Project};

/// `ka-hooks doctor [--exec] --json` in the project root: the exit code and the entries.
#[track_caller]
fn doctor_json(project: &Project, exec: bool) -> (i32, Vec<Value>) {
    let mut cmd = project.cli();
    cmd.arg("doctor").arg("--json");
    if exec {
        cmd.arg("--exec");
    }
    let out = cmd.output().expect("run ka-hooks doctor");
    let code = out.status.code().expect("an exit code");
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "--json is not a JSON array ({e}):\n{}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, entries)
}

/// The entry named `name`.
#[track_caller]
fn entry_named<'a>(entries: &'a [Value], name: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no entry `{name}` in {entries:#?}"))
}

/// The check of kind `check` of an entry.
#[track_caller]
fn check_of<'a>(entry: &'a Value, check: &str) -> &'a Value {
    entry["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["check"] == check)
        .unwrap_or_else(|| panic!("no `{check}` check in {entry:#}"))
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn a_command_that_is_not_on_path_is_failing_and_exits_1() {
    let project = Project::with_user_toml(&hook(
        "typo",
        "stop",
        "definitely-not-a-cmd-xyz --flag",
        &[],
    ));
    let (code, entries) = doctor_json(&project, false);
    assert_eq!(code, 1);
    let typo = entry_named(&entries, "typo");
    assert_eq!(typo["state"], "failing");
    let command = check_of(typo, "command");
    assert_eq!(command["state"], "failing");
    let message = command["message"].as_str().unwrap_or_default();
    assert!(message.contains("`definitely-not-a-cmd-xyz`"), "{message}");
    assert!(message.contains("not on PATH"), "{message}");
}

#[test]
fn a_script_that_is_not_executable_is_failing_with_the_chmod_fix() {
    let project = Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        "./guard.sh",
        &[r#"on_error = "block""#],
    ));
    let script = project.write("guard.sh", "#!/bin/sh\nexit 0\n");
    chmod(&script, 0o644);
    let (code, entries) = doctor_json(&project, false);
    assert_eq!(code, 1);
    let command = check_of(entry_named(&entries, "guard"), "command");
    assert_eq!(command["state"], "failing");
    assert!(command["message"]
        .as_str()
        .is_some_and(|m| m.contains("not executable")));
    assert_eq!(
        command["fix"],
        format!("chmod +x {}", project.root.join("guard.sh").display())
    );

    chmod(&script, 0o755);
    let (code, entries) = doctor_json(&project, false);
    assert_eq!(code, 0, "{entries:#?}");
    assert_eq!(entry_named(&entries, "guard")["state"], "ok");
}

#[test]
fn a_script_given_to_an_interpreter_must_exist_but_need_not_be_executable() {
    let project = Project::with_user_toml(&format!(
        "{}{}",
        hook("present", "stop", "GREETING=hi sh hooks/present.sh", &[]),
        hook("missing", "stop", "python3 -u hooks/missing.py", &[]),
    ));
    let script = project.write("hooks/present.sh", "exit 0\n");
    chmod(&script, 0o644);
    let (code, entries) = doctor_json(&project, false);
    assert_eq!(code, 1);
    assert_eq!(
        entry_named(&entries, "present")["state"],
        "ok",
        "{entries:#?}"
    );
    let script = check_of(entry_named(&entries, "missing"), "script");
    assert_eq!(script["state"], "failing");
    assert!(script["message"]
        .as_str()
        .is_some_and(|m| m.contains("`hooks/missing.py` does not exist")));
}

#[test]
fn relative_commands_resolve_against_the_project_root_from_a_subdirectory() {
    let project = Project::new();
    std::fs::write(
        project.root.join(".ka/ka.toml"),
        hook(
            "fmt",
            "post_tool_use",
            "sh hooks/fmt.sh",
            &["tool = \"write\""],
        ),
    )
    .expect("write project file");
    project.write("hooks/fmt.sh", "exit 0\n");
    let sub = project.root.join("src/deep");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let out = project
        .cli()
        .current_dir(&sub)
        .args(["--trust", "doctor", "--json"])
        .output()
        .expect("run");
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    let fmt = entry_named(&entries, "fmt");
    assert_eq!(check_of(fmt, "command")["state"], "ok", "{fmt:#}");
    assert_eq!(check_of(fmt, "script")["state"], "ok", "{fmt:#}");
}

#[test]
fn an_untrusted_layer_is_failing_with_the_exact_trust_command_and_never_runs() {
    let project = Project::new();
    let marker = project.root.join("ran");
    std::fs::write(
        project.root.join(".ka/ka.toml"),
        hook(
            "notify",
            "stop",
            &format!("touch {}", marker.display()),
            &[],
        ),
    )
    .expect("write project file");
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 1);
    let fix = format!("ka-hooks --project {} trust", project.root.display());

    let layer = entry_named(
        &entries,
        &project.root.join(".ka/ka.toml").display().to_string(),
    );
    assert_eq!(layer["kind"], "layer");
    assert_eq!(layer["state"], "failing");
    assert_eq!(check_of(layer, "trust")["fix"], fix.as_str());

    let notify = entry_named(&entries, "notify");
    assert_eq!(notify["state"], "failing");
    assert_eq!(notify["runs"], false);
    assert_eq!(check_of(notify, "trust")["fix"], fix.as_str());
    assert_eq!(check_of(notify, "command")["state"], "ok");
    assert!(
        !marker.exists(),
        "the doctor ran a hook of an untrusted layer"
    );

    // Once trusted, the same hook is ok.
    project.cli().args(["trust", "--yes"]).assert().success();
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 0, "{entries:#?}");
    assert_eq!(entry_named(&entries, "notify")["state"], "ok");
    assert!(marker.exists());
}

#[test]
fn a_hook_that_hangs_is_failing_as_timed_out_under_exec() {
    let project = Project::with_user_toml(&hook("hang", "stop", "sleep 1000", &["timeout = 1"]));
    let started = Instant::now();
    let (code, entries) = doctor_json(&project, true);
    // The hook's timeout is 1 s; the runner's contract is timeout + 1 s. Generous margin.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(code, 1);
    let exec = check_of(entry_named(&entries, "hang"), "exec");
    assert_eq!(exec["state"], "failing");
    assert!(
        exec["message"]
            .as_str()
            .is_some_and(|m| m.contains("timed out")),
        "{exec:#}"
    );
    // Statically, `sleep` is fine.
    assert_eq!(
        check_of(entry_named(&entries, "hang"), "command")["state"],
        "ok"
    );
}

#[test]
fn a_good_hook_is_ok_and_the_doctor_exits_0() {
    let project = Project::with_user_toml(&hook("good", "stop", "true", &[]));
    for exec in [false, true] {
        let (code, entries) = doctor_json(&project, exec);
        assert_eq!(code, 0, "{entries:#?}");
        let good = entry_named(&entries, "good");
        assert_eq!(good["state"], "ok");
        assert_eq!(good["kind"], "hook");
        assert_eq!(good["event"], "stop");
        assert_eq!(good["layer"], "user");
        assert_eq!(good["runs"], true);
        let has_exec = good["checks"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["check"] == "exec"));
        assert_eq!(has_exec, exec);
    }
}

#[test]
fn exec_accepts_a_veto_of_the_synthetic_payload() {
    let project = Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        "echo 'outside the allowed roots' >&2; exit 2",
        &["tool = \"write\""],
    ));
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 0, "{entries:#?}");
    let exec = check_of(entry_named(&entries, "guard"), "exec");
    assert_eq!(exec["state"], "ok");
    let message = exec["message"].as_str().unwrap_or_default();
    assert!(message.contains("vetoed"), "{message}");
    assert!(message.contains("outside the allowed roots"), "{message}");
}

#[test]
fn exec_warns_on_stdout_that_is_not_an_action() {
    let project = Project::with_user_toml(&format!(
        "{}{}",
        hook("chatty", "stop", "echo all done", &[]),
        hook("noted", "stop", "echo '{\"note\":\"hi\"}'", &[]),
    ));
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 0, "warnings alone exit 0: {entries:#?}");
    let chatty = check_of(entry_named(&entries, "chatty"), "exec");
    assert_eq!(chatty["state"], "warning");
    assert!(chatty["message"]
        .as_str()
        .is_some_and(|m| m.contains("not a valid action") && m.contains("all done")));
    assert_eq!(
        check_of(entry_named(&entries, "noted"), "exec")["state"],
        "ok"
    );
}

#[test]
fn exec_fails_a_hook_that_crashes() {
    let project = Project::with_user_toml(&hook("crash", "session_start", "exit 3", &[]));
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 1);
    let exec = check_of(entry_named(&entries, "crash"), "exec");
    assert_eq!(exec["state"], "failing");
    assert!(exec["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("exit 3")));
}

#[test]
fn a_disabled_hook_is_not_run_and_its_problems_are_warnings() {
    let project = Project::with_user_toml(&hook(
        "off",
        "stop",
        "definitely-not-a-cmd-xyz",
        &["enabled = false"],
    ));
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 0, "{entries:#?}");
    let off = entry_named(&entries, "off");
    assert_eq!(off["state"], "warning");
    assert_eq!(off["runs"], false);
    assert_eq!(check_of(off, "command")["state"], "warning");
    assert_eq!(check_of(off, "exec")["state"], "ok");
}

#[test]
fn configuration_errors_are_failing_entries() {
    let project = Project::with_user_toml("[[hooks]]\nevent = \"stop\"\ntimeout = -1\n");
    let (code, entries) = doctor_json(&project, false);
    assert_eq!(code, 1);
    assert!(!entries.is_empty());
    assert!(entries
        .iter()
        .all(|e| e["kind"] == "config" && e["state"] == "failing"));
}

/// Every event: the hook gets `KA_HOOKS_DOCTOR=1` and exactly the library's synthetic payload,
/// whose paths all lie in a scratch directory outside the project, removed afterwards.
#[test]
fn exec_hooks_see_the_doctor_env_and_the_synthetic_payload_inside_a_scratch_dir() {
    let record = "cat > \"$KA_PROJECT_DIR/seen-$KA_HOOK_NAME.json\"; \
                  echo \"$KA_HOOKS_DOCTOR\" > \"$KA_PROJECT_DIR/env-$KA_HOOK_NAME\"";
    let mut toml = String::new();
    for event in Event::ALL {
        let extra: &[&str] = if event.is_tool_event() {
            &["tool = [\"edit\", \"mcp__*\"]"]
        } else {
            &[]
        };
        toml.push_str(&hook(event.as_str(), event.as_str(), record, extra));
    }
    let project = Project::with_user_toml(&toml);
    let (code, entries) = doctor_json(&project, true);
    assert_eq!(code, 0, "{entries:#?}");
    for event in Event::ALL {
        let name = event.as_str();
        let env = project.read(&format!("env-{name}")).expect("the hook ran");
        assert_eq!(env.trim(), "1", "{name}: KA_HOOKS_DOCTOR");
        let text = project
            .read(&format!("seen-{name}.json"))
            .expect("the hook saved its stdin");
        let seen: Value = serde_json::from_str(&text).expect("the payload is JSON");
        let scratch = Path::new(seen["cwd"].as_str().expect("cwd"));
        assert!(scratch.is_absolute());
        assert!(!scratch.starts_with(&project.root), "{name}: {scratch:?}");
        assert!(!scratch.exists(), "{name}: the scratch dir was left behind");
        let tool = event.is_tool_event().then_some("edit");
        let expected = doctor::synthetic_payload(event, tool, scratch);
        assert_eq!(seen, Value::Object(expected), "{name}");
        assert_paths_inside(&seen, scratch);
    }
}

/// Every string in `value` that looks like a path lies inside `dir`.
#[track_caller]
fn assert_paths_inside(value: &Value, dir: &Path) {
    match value {
        Value::String(s) => {
            for word in s.split_whitespace() {
                let word = word.trim_matches(|c| c == '\'' || c == '"');
                if word.starts_with('/') || word.starts_with('~') || word.starts_with("..") {
                    assert!(
                        Path::new(word).starts_with(dir),
                        "{word} is outside {dir:?}"
                    );
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| assert_paths_inside(v, dir)),
        Value::Object(map) => map.values().for_each(|v| assert_paths_inside(v, dir)),
        _ => {}
    }
}

#[test]
fn the_shipped_examples_pass_the_doctor_with_exec() {
    let project = Project::new();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(manifest.join("ka.toml.example")).expect("example");
    std::fs::write(project.root.join(".ka/ka.toml"), example).expect("write");
    for script in std::fs::read_dir(manifest.join("examples/hooks")).expect("examples/hooks") {
        let script = script.expect("entry").path();
        let name = script
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&script).expect("read script");
        project.write(&format!("examples/hooks/{name}"), &text);
    }
    project.cli().args(["trust", "--yes"]).assert().success();
    let out = project
        .cli()
        .env("KA_NOTIFY_DESKTOP", "0")
        .args(["doctor", "--exec"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("failing "), "{text}");
    assert!(!text.contains("warning "), "{text}");
    assert!(
        text.contains("6 hook(s): 6 ok, 0 warning, 0 failing"),
        "{text}"
    );
}

#[test]
fn human_report_names_states_fixes_and_totals() {
    let project = Project::with_user_toml(&format!(
        "{}{}{}",
        hook("good", "stop", "true", &[]),
        hook("chatty", "stop", "echo all done", &[]),
        hook("guard", "pre_tool_use", "./guard.sh", &["tool = \"write\""]),
    ));
    chmod(&project.write("guard.sh", "#!/bin/sh\nexit 0\n"), 0o644);
    let out = project
        .cli()
        .args(["doctor", "--exec"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("ok       hook good (stop)"), "{text}");
    assert!(text.contains("warning  hook chatty (stop)"), "{text}");
    assert!(
        text.contains("failing  hook guard (pre_tool_use, tool = [\"write\"])"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "fix: chmod +x {}",
            project.root.join("guard.sh").display()
        )),
        "{text}"
    );
    assert!(
        text.contains("3 hook(s): 1 ok, 1 warning, 1 failing"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "NO_COLOR: no escape codes");
}

#[test]
fn diagnose_reports_states_and_counts_in_run_order() {
    let project = Project::with_user_toml(&format!(
        "{}{}",
        hook("good", "stop", "true", &[]),
        hook("typo", "stop", "definitely-not-a-cmd-xyz", &[]),
    ));
    let report = doctor::diagnose(&project.options(&project.root, false), false, &mut |_| {})
        .expect("diagnose");
    assert!(report.failing());
    assert_eq!(report.counts(), [1, 0, 1]);
    let states: Vec<(&str, State)> = report
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.state))
        .collect();
    assert_eq!(states, [("good", State::Ok), ("typo", State::Failing)]);
    assert!(!report.executed);
}

/// The footer and `--help` say where `--exec` runs hooks: in the project root (where a session
/// runs them), with a payload whose paths point into a scratch directory.
#[test]
fn the_wording_says_hooks_run_in_the_project_root() {
    let project = Project::with_user_toml(&hook("fine", "stop", "true", &[]));
    let out = project.cli().arg("doctor").output().expect("doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("in the project root"), "{text}");
    assert!(!text.contains("payload in a scratch directory"), "{text}");
    let help = project
        .cli()
        .args(["doctor", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("in the project root"), "{help}");
}
