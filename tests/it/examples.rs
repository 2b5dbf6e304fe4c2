//! The shipped examples: `ka.toml.example` loads as a project file and wires every script in
//! `examples/hooks/`, and each script does what its header says through a real dispatch.
//!
//! Each test copies the example config to `<scratch>/.ka/ka.toml` and the scripts to
//! `<scratch>/examples/hooks/`, and loads it with `--trust` for the run.

use crate::support;
use crate::support::repo;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use ka_hooks::action::InputPatch;
use ka_hooks::config::{Config, LayerState, OnError};
use ka_hooks::outcome::{Outcome, Status};
use ka_hooks::Event;
use serde_json::{json, Value};
use support::{has_diagnostic, report, Project};

/// The five scripts, by hook name (each is `examples/hooks/<name>.sh`).
const SCRIPTS: [&str; 5] = [
    "scrub-secrets",
    "guard-writes",
    "format-feedback",
    "tests-failing-plan-mode",
    "notify-stop",
];

fn hooks_dir() -> PathBuf {
    repo().join("examples").join("hooks")
}

/// Every file in `examples/hooks/`, sorted.
fn example_scripts() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(hooks_dir())
        .expect("examples/hooks exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// A scratch project set up like a repository that adopted the example: `.ka/ka.toml` is
/// `ka.toml.example`, the scripts are in `examples/hooks/`, and `src/` exists. `local` becomes
/// `.ka/ka.local.toml` when given.
fn example_project(local: Option<&str>) -> Project {
    let p = Project::new();
    let example = fs::read_to_string(repo().join("ka.toml.example")).expect("ka.toml.example");
    p.write(".ka/ka.toml", &example);
    if let Some(local) = local {
        p.write(".ka/ka.local.toml", local);
    }
    let dest = p.root.join("examples").join("hooks");
    fs::create_dir_all(&dest).expect("mkdir examples/hooks");
    for script in example_scripts() {
        // `fs::copy` keeps the permission bits.
        fs::copy(&script, dest.join(script.file_name().expect("file name"))).expect("copy");
    }
    fs::create_dir_all(p.root.join("src")).expect("mkdir src");
    p
}

/// A local layer that keeps the notifier off the desktop and off a developer's KA_NOTIFY_FILE,
/// and runs it in the foreground, so that a test reads its report in the same dispatch.
const QUIET_NOTIFY: &str = r#"
[[hooks]]
name = "notify-stop"
env = { KA_NOTIFY_FILE = "", KA_NOTIFY_DESKTOP = "0" }
async = false
"#;

fn write_outcome(p: &Project, path: &str) -> Outcome {
    p.tool_call(
        Event::PreToolUse,
        "write",
        json!({"path": path, "content": "x\n"}),
    )
}

// ---------------------------------------------------------------------------------------------
// ka.toml.example
// ---------------------------------------------------------------------------------------------

#[test]
fn ka_toml_example_loads_as_a_project_file_without_errors() {
    let p = example_project(None);
    let report = Config::check(&p.options(&p.root, true));
    assert!(
        report.errors.is_empty(),
        "ka.toml.example has errors:\n{}",
        report
            .errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let config = p.load();
    assert!(config.untrusted.is_empty());
    assert_eq!(config.project_root.as_deref(), Some(p.root.as_path()));
    let project_layer = config
        .layers
        .iter()
        .find(|l| l.file.ends_with(".ka/ka.toml"))
        .expect("the project layer was read");
    assert_eq!(project_layer.state, LayerState::TrustedOnce);
    // A project file's default timeout is its own hooks' (the merge is monotone, so
    // it never lengthens the user's).
    assert_eq!(config.settings.timeout, None);
    assert_eq!(
        config
            .hook("format-feedback")
            .expect("format-feedback")
            .timeout,
        std::time::Duration::from_secs(30)
    );
    assert_eq!(config.settings.disabled, None);
}

#[test]
fn ka_toml_example_is_skipped_until_trusted() {
    let p = example_project(None);
    let config = Config::load(&p.options(&p.root, false)).expect("load");
    assert!(config.hooks.is_empty());
    assert_eq!(config.untrusted.len(), 1);
}

#[test]
fn ka_toml_example_wires_all_five_example_scripts() {
    let config = example_project(None).load();
    let names: Vec<&str> = config.hooks.iter().map(|h| h.name.as_str()).collect();
    let mut expected = SCRIPTS.to_vec();
    // The one-line formatter runs no script of its own.
    expected.insert(3, "rustfmt");
    assert_eq!(names, expected, "hooks in run order");
    for hook in config.hooks.iter().filter(|h| h.name != "rustfmt") {
        let args = if hook.name == "format-feedback" {
            " {paths}"
        } else {
            ""
        };
        assert_eq!(
            hook.command,
            format!("sh examples/hooks/{}.sh{args}", hook.name),
            "hook `{}`",
            hook.name
        );
        assert!(hook.enabled, "hook `{}` is disabled", hook.name);
    }
    assert_eq!(
        config.hook("rustfmt").expect("rustfmt").command,
        "rustfmt --edition 2021 {paths}"
    );
    assert!(config.hook("notify-stop").expect("notify").is_async);
    let event_of = |name: &str| config.hook(name).expect(name).event;
    assert_eq!(event_of("scrub-secrets"), Event::PreToolUse);
    assert_eq!(event_of("guard-writes"), Event::PreToolUse);
    assert_eq!(event_of("format-feedback"), Event::PostToolUse);
    assert_eq!(event_of("tests-failing-plan-mode"), Event::PostToolUse);
    assert_eq!(event_of("notify-stop"), Event::Stop);

    let guard = config.hook("guard-writes").expect("guard");
    assert_eq!(guard.on_error, OnError::Block);
    assert_eq!(
        guard.env,
        [("GUARD_ROOTS".to_owned(), "src,.ka".to_owned())]
    );
    let plan = config.hook("tests-failing-plan-mode").expect("plan");
    assert!(
        plan.filter.describe().starts_with("matcher"),
        "{}",
        plan.filter.describe()
    );
    assert!(plan.matches_tool(Some("bash")) && plan.matches_tool(Some("Bash")));
    assert!(!plan.matches_tool(Some("write")));
}

#[test]
fn every_script_in_examples_hooks_is_wired_by_the_example_config() {
    let example = fs::read_to_string(repo().join("ka.toml.example")).expect("ka.toml.example");
    let scripts = example_scripts();
    assert_eq!(scripts.len(), SCRIPTS.len(), "{scripts:?}");
    for script in scripts {
        let name = script.file_name().expect("name").to_string_lossy();
        assert!(
            example.contains(&format!("command = \"sh examples/hooks/{name}\""))
                || example.contains(&format!("command = \"sh examples/hooks/{name} {{paths}}\"")),
            "examples/hooks/{name} is not wired in ka.toml.example"
        );
    }
}

#[test]
fn every_example_script_is_an_executable_commented_posix_sh_script() {
    for script in example_scripts() {
        let name = script.display();
        let mode = fs::metadata(&script)
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o111,
            0o111,
            "{name} is not executable (mode {mode:o})"
        );
        let text = fs::read_to_string(&script).expect("read script");
        assert!(text.starts_with("#!/bin/sh\n"), "{name}: shebang");
        let header: String = text
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            Event::ALL.iter().any(|e| header.contains(e.as_str())),
            "{name}: the header names no event"
        );
        for part in ["Prints:", "Exits:"] {
            assert!(header.contains(part), "{name}: the header lacks `{part}`");
        }
        let syntax = std::process::Command::new("sh")
            .arg("-n")
            .arg(&script)
            .output()
            .expect("run sh -n");
        assert!(
            syntax.status.success(),
            "{name}: sh -n failed: {}",
            String::from_utf8_lossy(&syntax.stderr)
        );
    }
}

#[test]
fn ka_toml_example_documents_every_key() {
    let example = fs::read_to_string(repo().join("ka.toml.example")).expect("ka.toml.example");
    for key in [
        "name", "event", "tool", "matcher", "command", "timeout", "on_error", "enabled", "env",
    ] {
        assert!(
            example.contains(&format!("\n{key} = ")),
            "hook key `{key}` is not shown"
        );
        assert!(
            example.contains(&format!("# {key}:")),
            "hook key `{key}` is not explained"
        );
    }
    for key in [
        "timeout = ",
        "disable_all = ",
        "# log = ",
        "# trusted_roots = ",
    ] {
        assert!(example.contains(key), "hook_settings `{key}` is not shown");
    }
    assert!(example.contains("[hook_settings]"));
    assert!(example.contains("user layer ONLY"));
    for on_error in ["\"ignore\"", "\"block\"", "\"ask\""] {
        assert!(
            example.contains(on_error),
            "on_error {on_error} not explained"
        );
    }
    // The commented-out override by name.
    assert!(example.contains("# name = \"format-feedback\"\n# enabled = false"));
}

// ---------------------------------------------------------------------------------------------
// guard-writes.sh
// ---------------------------------------------------------------------------------------------

#[test]
fn guard_blocks_writes_outside_src_and_ka() {
    let p = example_project(None);
    for path in [
        "/etc/passwd",
        "../x",
        "README.md",
        "src/../README.md",
        "./.git/config",
        ".",
    ] {
        let outcome = write_outcome(&p, path);
        assert!(outcome.blocked(), "{path} was allowed");
        let r = report(&outcome, "guard-writes");
        assert_eq!(r.status, Status::Blocked, "{path}: {:?}", r.error);
        let reason = outcome.reason().unwrap_or_default();
        assert!(
            reason.starts_with("guard-writes: ") && reason.contains("outside the allowed roots"),
            "{path}: {reason}"
        );
        assert_eq!(reason.lines().count(), 1, "{path}: {reason}");
    }
}

#[test]
fn guard_names_the_resolved_path_in_its_reason() {
    let p = example_project(None);
    let outcome = write_outcome(&p, "/etc/passwd");
    assert!(outcome
        .reason()
        .unwrap_or_default()
        .contains("/etc/passwd is outside"));
    let outcome = write_outcome(&p, "src/../README.md");
    assert!(outcome
        .reason()
        .unwrap_or_default()
        .contains("README.md is outside"));
}

#[test]
fn guard_allows_writes_under_src_and_ka() {
    let p = example_project(None);
    let absolute = p.root.join("src").join("c.rs");
    for path in [
        "src/a.rs",
        "./src/b.rs",
        ".ka/x",
        "src/nested/deep/d.rs",
        absolute.to_str().expect("utf-8 path"),
    ] {
        let outcome = write_outcome(&p, path);
        assert!(!outcome.blocked(), "{path}: {:?}", outcome.reason());
        assert_eq!(
            report(&outcome, "guard-writes").status,
            Status::Ok,
            "{path}"
        );
    }
}

#[test]
fn guard_reads_claude_file_path_on_edit() {
    let p = example_project(None);
    let outcome = p.tool_call(
        Event::PreToolUse,
        "edit",
        json!({"file_path": "README.md", "old_string": "a", "new_string": "b"}),
    );
    assert!(outcome.blocked());
    let outcome = p.tool_call(
        Event::PreToolUse,
        "edit",
        json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"}),
    );
    assert!(!outcome.blocked(), "{:?}", outcome.reason());
}

#[test]
fn guard_fails_closed_on_arguments_it_cannot_read() {
    let p = example_project(None);
    let outcome = p.tool_call(Event::PreToolUse, "write", json!({"path": 42}));
    assert!(outcome.blocked());
    assert!(outcome
        .reason()
        .unwrap_or_default()
        .contains("could not read"));
}

#[test]
fn guard_roots_can_be_overridden_by_name_from_the_local_layer() {
    let p = example_project(Some(
        "[[hooks]]\nname = \"guard-writes\"\nenv = { GUARD_ROOTS = \"docs, ./tests/\" }\n",
    ));
    assert!(!write_outcome(&p, "docs/guide.md").blocked());
    assert!(!write_outcome(&p, "tests/it.rs").blocked());
    let outcome = write_outcome(&p, "src/a.rs");
    assert!(outcome.blocked());
    assert!(outcome
        .reason()
        .unwrap_or_default()
        .contains("docs, ./tests/"));
}

#[test]
fn guard_also_runs_as_an_executable_without_sh() {
    let p = example_project(None);
    p.write_user_toml(
        "[[hooks]]\nname = \"direct\"\nevent = \"pre_tool_use\"\n\
         command = \"examples/hooks/guard-writes.sh\"\nenv = { GUARD_ROOTS = \"src\" }\n",
    );
    let config = Config::load(&p.options(&p.root, false)).expect("load");
    let outcome = config.dispatch(ka_hooks::dispatch::Request::tool_call(
        Event::PreToolUse,
        "write",
        support::object(json!({"path": "README.md"})),
    ));
    assert_eq!(report(&outcome, "direct").status, Status::Blocked);
}

// ---------------------------------------------------------------------------------------------
// guard-writes.sh: every writing tool, natively and through every agent
// ---------------------------------------------------------------------------------------------

const PATCH_TWO_FILES: &str =
    "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Add File: README.md\n+x\n*** End Patch\n";
const PATCH_MOVE_OUT: &str =
    "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: docs/a.rs\n@@\n-a\n+b\n*** End Patch\n";
const PATCH_INSIDE: &str =
    "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-a\n+b\n*** End Patch\n";

/// Native calls of every writing tool, each writing `README.md` (outside the allowed roots).
fn native_writes_outside() -> Vec<(&'static str, Value)> {
    vec![
        ("write", json!({"path": "README.md", "content": "x"})),
        (
            "edit",
            json!({"path": "README.md", "old_string": "a", "new_string": "b"}),
        ),
        (
            "multi_edit",
            json!({"file_path": "README.md", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ),
        (
            "notebook_edit",
            json!({"notebook_path": "README.md", "new_source": "x"}),
        ),
        (
            "notebook_edit",
            json!({"path": "README.md", "new_source": "x"}),
        ),
        (
            "apply_patch",
            json!({"patch": PATCH_TWO_FILES, "paths": ["src/a.rs", "README.md"]}),
        ),
        ("apply_patch", json!({"patch": PATCH_TWO_FILES})),
        (
            "apply_patch",
            json!({"patch": PATCH_MOVE_OUT, "paths": ["src/a.rs", "docs/a.rs"]}),
        ),
        ("apply_patch", json!({"patch": PATCH_MOVE_OUT})),
    ]
}

#[test]
fn guard_blocks_every_native_writing_tool_outside_the_roots() {
    let p = example_project(None);
    for (tool, args) in native_writes_outside() {
        let outcome = p.tool_call(Event::PreToolUse, tool, args.clone());
        assert!(outcome.blocked(), "{tool} {args} was allowed");
        assert_eq!(
            report(&outcome, "guard-writes").status,
            Status::Blocked,
            "{tool} {args}"
        );
        let reason = outcome.reason().unwrap_or_default();
        assert!(reason.contains("is outside the allowed roots"), "{reason}");
    }
}

#[test]
fn guard_allows_every_native_writing_tool_inside_the_roots() {
    let p = example_project(None);
    for (tool, args) in [
        ("multi_edit", json!({"file_path": "src/a.rs", "edits": []})),
        (
            "notebook_edit",
            json!({"notebook_path": "src/n.ipynb", "new_source": "x"}),
        ),
        (
            "apply_patch",
            json!({"patch": PATCH_INSIDE, "paths": ["src/a.rs", "src/b.rs"]}),
        ),
    ] {
        let outcome = p.tool_call(Event::PreToolUse, tool, args.clone());
        assert!(!outcome.blocked(), "{tool} {args}: {:?}", outcome.reason());
    }
}

#[test]
fn guard_blocks_a_patch_that_names_no_file() {
    let p = example_project(None);
    let outcome = p.tool_call(
        Event::PreToolUse,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** End Patch\n"}),
    );
    assert!(outcome.blocked());
    assert!(outcome
        .reason()
        .unwrap_or_default()
        .contains("could not read"));
}

/// Exit code and stderr of `ka-hooks --trust <agent>` on `payload` (`$ROOT` is the project root).
fn through(p: &Project, agent: &str, payload: &str) -> (Option<i32>, String) {
    let payload = payload.replace("$ROOT", &p.root.to_string_lossy());
    let output = p
        .cli()
        .args(["--trust", agent])
        .write_stdin(payload)
        .output()
        .expect("ka-hooks adapter");
    // Gemini CLI's block is `{"decision": "deny", "reason"}` on exit 0: read as exit 2 + reason.
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
    if agent == "gemini" && answer["decision"] == "deny" {
        let reason = answer["reason"].as_str().unwrap_or_default();
        return (Some(2), reason.trim().to_owned());
    }
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).trim().to_owned(),
    )
}

fn pre_tool(agent: &str, tool: &str, input: Value) -> String {
    let event = if agent == "gemini" {
        "BeforeTool"
    } else {
        "PreToolUse"
    };
    json!({"session_id": "s", "transcript_path": "/tmp/t", "cwd": "$ROOT",
           "hook_event_name": event, "tool_name": tool, "tool_input": input})
    .to_string()
}

#[test]
fn guard_blocks_every_agents_writing_tools_outside_the_roots() {
    let p = example_project(None);
    let out = "$ROOT/README.md";
    let cases = [
        ("claude", "Write", json!({"file_path": out, "content": "x"})),
        (
            "claude",
            "Edit",
            json!({"file_path": out, "old_string": "a", "new_string": "b"}),
        ),
        (
            "claude",
            "MultiEdit",
            json!({"file_path": out, "edits": [{"old_string": "a", "new_string": "b"}]}),
        ),
        (
            "claude",
            "NotebookEdit",
            json!({"notebook_path": out, "new_source": "x"}),
        ),
        (
            "gemini",
            "write_file",
            json!({"file_path": out, "content": "x"}),
        ),
        (
            "gemini",
            "replace",
            json!({"file_path": out, "old_string": "a", "new_string": "b"}),
        ),
        (
            "codex",
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** Add File: README.md\n+x\n*** End Patch\n"}),
        ),
        (
            "codex",
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** Update File: README.md\n@@\n-a\n+b\n*** End Patch\n"}),
        ),
        ("codex", "apply_patch", json!({"command": PATCH_TWO_FILES})),
        ("codex", "apply_patch", json!({"command": PATCH_MOVE_OUT})),
        (
            "codex",
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** Delete File: README.md\n*** End Patch\n"}),
        ),
        (
            "codex",
            "apply_patch",
            json!({"command": " *** Begin Patch\n  *** Add File: README.md\n+x\n *** End Patch\n"}),
        ),
    ];
    for (agent, tool, input) in cases {
        let (code, stderr) = through(&p, agent, &pre_tool(agent, tool, input.clone()));
        assert_eq!(
            code,
            Some(2),
            "{agent} {tool} {input} was allowed: {stderr}"
        );
        assert!(
            stderr.starts_with("guard-writes: ") && stderr.contains("outside the allowed roots"),
            "{agent} {tool}: {stderr}"
        );
    }
}

#[test]
fn guard_allows_every_agents_writing_tools_inside_the_roots() {
    let p = example_project(None);
    let inside = "$ROOT/src/a.rs";
    let cases = [
        (
            "claude",
            "MultiEdit",
            json!({"file_path": inside, "edits": []}),
        ),
        (
            "claude",
            "NotebookEdit",
            json!({"notebook_path": "$ROOT/src/n.ipynb", "new_source": "x"}),
        ),
        (
            "gemini",
            "replace",
            json!({"file_path": inside, "old_string": "a", "new_string": "b"}),
        ),
        ("codex", "apply_patch", json!({"command": PATCH_INSIDE})),
    ];
    for (agent, tool, input) in cases {
        let (code, stderr) = through(&p, agent, &pre_tool(agent, tool, input.clone()));
        assert_eq!(code, Some(0), "{agent} {tool} {input}: {stderr}");
    }
}

#[test]
fn guard_blocks_when_python3_is_missing() {
    // A PATH with a shell and nothing else: the guard cannot parse the payload, so it blocks.
    let p = example_project(None);
    let bin = p.base.join("bin-without-python");
    fs::create_dir_all(&bin).expect("mkdir bin");
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).expect("symlink sh");
    let output = p
        .cli()
        .env("PATH", &bin)
        .args([
            "--trust",
            "run",
            "pre_tool_use",
            "--tool",
            "write",
            "--input",
        ])
        .arg(r#"{"arguments":{"path":"src/a.rs","content":"x"}}"#)
        .output()
        .expect("ka-hooks run");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Whichever fail-closed hook meets the missing python3 first blocks, naming why.
    assert!(
        stdout.contains("reason: guard-writes: could not read the tool call payload")
            || (stdout.contains("failed (exit 127: command not found; check the path")
                && stdout.contains("and on_error = \"block\"")),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------------
// scrub-secrets.sh
// ---------------------------------------------------------------------------------------------

/// A local hook after the scrubber that records what it saw and vetoes a raw AWS key.
const SECRET_GUARD: &str = r#"
[[hooks]]
name = "secret-guard"
event = "pre_tool_use"
tool = "bash"
command = '''cat > seen-by-secret-guard.json; if grep -q AKIA seen-by-secret-guard.json; then echo "raw AWS key in the command" >&2; exit 2; fi'''
"#;

#[test]
fn scrubber_rewrites_an_aws_key_before_a_later_guard_sees_it() {
    let p = example_project(Some(SECRET_GUARD));
    let outcome = p.tool_call(
        Event::PreToolUse,
        "bash",
        json!({"command": "aws s3 ls --key AKIAIOSFODNN7EXAMPLE", "description": "list"}),
    );
    assert!(!outcome.blocked(), "{:?}", outcome.reason());
    let updated = outcome.updated_input.clone().expect("the scrubber patched");
    let command = updated["command"].as_str().expect("command");
    assert!(!command.contains("AKIA"), "{command}");
    assert!(command.contains("[REDACTED"), "{command}");
    assert_eq!(updated["description"], "list", "untouched keys stay");
    assert_eq!(outcome.notes, ["scrubbed 1 secret(s)"]);

    let seen: Value =
        serde_json::from_str(&p.read("seen-by-secret-guard.json").expect("the guard ran"))
            .expect("JSON");
    assert_eq!(seen["arguments"]["command"], command, "pipeline order");
}

#[test]
fn without_the_scrubber_the_later_guard_sees_the_raw_key() {
    // Same pipeline with the scrubber disabled by name: proves the guard really looks.
    let local = format!("[[hooks]]\nname = \"scrub-secrets\"\nenabled = false\n{SECRET_GUARD}");
    let p = example_project(Some(&local));
    let outcome = p.tool_call(
        Event::PreToolUse,
        "bash",
        json!({"command": "aws s3 ls --key AKIAIOSFODNN7EXAMPLE"}),
    );
    assert!(outcome.blocked());
    assert_eq!(outcome.reason(), Some("raw AWS key in the command"));
}

#[test]
fn scrubber_counts_every_kind_of_secret_and_patches_only_scrubbed_keys() {
    let p = example_project(None);
    let content = format!(
        "token = \"ghp_{}\"\ndb: password=hunter2\n\
         -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----\nend\n",
        "a1".repeat(18)
    );
    let outcome = p.tool_call(
        Event::PreToolUse,
        "write",
        json!({"path": "src/config.rs", "content": content}),
    );
    assert!(!outcome.blocked(), "{:?}", outcome.reason());
    assert_eq!(outcome.notes, ["scrubbed 3 secret(s)"]);
    let r = report(&outcome, "scrub-secrets");
    let patch = r
        .action
        .action
        .as_ref()
        .and_then(|a| a.input_patch.clone())
        .expect("a patch");
    let InputPatch::Merge(patch) = patch else {
        panic!("expected a merge patch, got {patch:?}");
    };
    assert_eq!(
        patch.keys().collect::<Vec<_>>(),
        ["content"],
        "only scrubbed keys"
    );
    let scrubbed = patch["content"].as_str().expect("content");
    for secret in ["ghp_a1", "hunter2", "b3BlbnNzaC1rZXk=", "BEGIN OPENSSH"] {
        assert!(!scrubbed.contains(secret), "{secret} survived: {scrubbed}");
    }
    assert!(scrubbed.starts_with("token = \"[REDACTED"), "{scrubbed}");
    assert!(scrubbed.ends_with("\nend\n"), "{scrubbed}");
    let updated = outcome.updated_input.expect("merged");
    assert_eq!(updated["path"], "src/config.rs");
}

#[test]
fn scrubber_blocks_an_input_too_large_to_hand_back_rather_than_let_a_secret_through() {
    let p = example_project(None);
    // ka reads at most 1 MiB of a hook's stdout: a 2 MiB rewrite could not be applied.
    let content = format!("{}\nAKIAIOSFODNN7EXAMPLE\n", "x".repeat(2 * 1024 * 1024));
    let outcome = p.tool_call(
        Event::PreToolUse,
        "write",
        json!({"path": "src/big.txt", "content": content}),
    );
    assert!(outcome.blocked());
    assert_eq!(
        outcome.reason(),
        Some("scrub-secrets: found 1 secret(s) in an input too large to rewrite")
    );
    assert_eq!(report(&outcome, "guard-writes").status, Status::Skipped);
}

#[test]
fn scrubber_leaves_clean_input_alone() {
    let p = example_project(None);
    let outcome = p.tool_call(
        Event::PreToolUse,
        "bash",
        json!({"command": "grep -r password_hint src/"}),
    );
    assert_eq!(outcome.updated_input, None);
    assert!(outcome.notes.is_empty());
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    assert_eq!(report(&outcome, "scrub-secrets").status, Status::Ok);
}

// ---------------------------------------------------------------------------------------------
// format-feedback.sh
// ---------------------------------------------------------------------------------------------

#[test]
fn format_feedback_names_the_file_and_its_problem_lines() {
    let p = example_project(None);
    p.write(
        "src/messy.md",
        "fn main() {  \n\tlet x = 1;\n    x\n}\t\n// end \n",
    );
    let outcome = p.tool_call(
        Event::PostToolUse,
        "write",
        json!({"path": "src/messy.md", "content": "..."}),
    );
    assert_eq!(report(&outcome, "format-feedback").status, Status::Ok);
    assert_eq!(
        outcome.feedback.as_deref(),
        Some("src/messy.md: trailing whitespace on line(s) 1, 4, 5; tab(s) on line(s) 2, 4")
    );
    assert!(!outcome.mark_error);
}

#[test]
fn format_feedback_says_nothing_for_a_clean_file() {
    let p = example_project(None);
    p.write("src/clean.md", "fn main() {\n    let x = 1;\n}\n");
    let outcome = p.tool_call(Event::PostToolUse, "edit", json!({"path": "src/clean.md"}));
    assert_eq!(report(&outcome, "format-feedback").status, Status::Ok);
    assert_eq!(outcome.feedback, None);
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
}

#[test]
fn format_feedback_skips_a_failed_write() {
    let p = example_project(None);
    p.write("src/messy.md", "x  \n");
    let outcome = p.event(
        Event::PostToolUse,
        json!({"tool": "write", "arguments": {"path": "src/messy.md"},
               "result": "permission denied", "is_error": true}),
    );
    assert_eq!(outcome.feedback, None);
}

#[test]
fn format_feedback_is_not_spawned_for_files_its_paths_leave_out() {
    let p = example_project(None);
    p.write("data.json", "x  \n");
    p.write("target/debug/gen.md", "x  \n");
    for path in ["data.json", "target/debug/gen.md"] {
        let outcome = p.tool_call(
            Event::PostToolUse,
            "write",
            json!({"path": path, "content": "..."}),
        );
        assert!(
            !outcome.hooks.iter().any(|h| h.name == "format-feedback"),
            "{path}: {:?}",
            outcome.hooks
        );
        assert_eq!(outcome.feedback, None, "{path}");
    }
}

#[test]
fn format_feedback_gets_only_the_matching_files_of_a_patch() {
    let p = example_project(None);
    p.write("src/a.md", "a  \n");
    p.write("src/b.toml", "\tb\n");
    p.write("data.json", "untidy  \n");
    let outcome = p.tool_call(
        Event::PostToolUse,
        "apply_patch",
        json!({"patch": "...", "paths": ["src/a.md", "data.json", "src/b.toml"]}),
    );
    assert_eq!(report(&outcome, "format-feedback").status, Status::Ok);
    assert_eq!(
        outcome.feedback.as_deref(),
        Some("src/a.md: trailing whitespace on line(s) 1\nsrc/b.toml: tab(s) on line(s) 1")
    );
}

#[test]
fn format_feedback_treats_hostile_file_names_as_names() {
    let p = example_project(None);
    let names = [
        "src/a b.md",
        "src/$(touch pwned).md",
        "-rf.md",
        "src/it's \"q\".md",
        "src/new\nline.md",
        "src/back\\slash.md",
    ];
    for name in names {
        p.write(name, "x  \n");
    }
    let outcome = p.tool_call(
        Event::PostToolUse,
        "apply_patch",
        json!({"patch": "...", "paths": names}),
    );
    assert_eq!(report(&outcome, "format-feedback").status, Status::Ok);
    assert!(!p.exists("pwned") && !p.exists("src/pwned"), "a name ran");
    let feedback = outcome.feedback.expect("feedback for every file");
    let lines: Vec<&str> = feedback.lines().collect();
    assert_eq!(
        lines,
        [
            "src/a b.md: trailing whitespace on line(s) 1",
            "src/$(touch pwned).md: trailing whitespace on line(s) 1",
            "-rf.md: trailing whitespace on line(s) 1",
            "src/it's \"q\".md: trailing whitespace on line(s) 1",
            "src/new line.md: trailing whitespace on line(s) 1",
            "src/back\\slash.md: trailing whitespace on line(s) 1",
        ],
        "{feedback}"
    );
}

#[test]
fn format_feedback_needs_no_python() {
    let script = fs::read_to_string(hooks_dir().join("format-feedback.sh")).expect("script");
    let code: String = script
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!code.contains("python"), "format-feedback.sh runs python");
}

// ---------------------------------------------------------------------------------------------
// rustfmt: the one-line formatter
// ---------------------------------------------------------------------------------------------

/// rustfmt comes with every rustup toolchain; CI installs the component.
fn have_rustfmt() -> bool {
    std::process::Command::new("rustfmt")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_one_line_rustfmt_hook_formats_the_rust_files_written() {
    assert!(
        have_rustfmt(),
        "rustfmt is not on PATH (rustup component add rustfmt)"
    );
    let p = example_project(None);
    let messy = "fn main(){let x=1;println!(\"{}\",x);}\n";
    let tidy = "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n";
    p.write("src/a b.rs", messy);
    p.write("src/-x.rs", messy);
    p.write("README.md", messy);
    let outcome = p.tool_call(
        Event::PostToolUse,
        "apply_patch",
        json!({"patch": "...", "paths": ["src/a b.rs", "README.md", "src/-x.rs"]}),
    );
    let r = report(&outcome, "rustfmt");
    assert_eq!(r.status, Status::Ok, "{:?} {}", r.error, r.stderr);
    assert_eq!(p.read("src/a b.rs").as_deref(), Some(tidy));
    assert_eq!(p.read("src/-x.rs").as_deref(), Some(tidy));
    assert_eq!(
        p.read("README.md").as_deref(),
        Some(messy),
        "not a Rust file"
    );
}

#[test]
fn the_one_line_rustfmt_hook_is_not_spawned_without_a_rust_file() {
    let p = example_project(None);
    let outcome = p.tool_call(
        Event::PostToolUse,
        "write",
        json!({"path": "README.md", "content": "x"}),
    );
    assert!(!outcome.hooks.iter().any(|h| h.name == "rustfmt"));
    let outcome = p.tool_call(Event::PostToolUse, "bash", json!({"command": "ls"}));
    assert!(!outcome.hooks.iter().any(|h| h.name == "rustfmt"));
}

// ---------------------------------------------------------------------------------------------
// tests-failing-plan-mode.sh
// ---------------------------------------------------------------------------------------------

fn bash_result(p: &Project, tool: &str, command: &str, result: &str, is_error: bool) -> Outcome {
    p.event(
        Event::PostToolUse,
        json!({"tool": tool, "arguments": {"command": command},
               "result": result, "is_error": is_error}),
    )
}

#[test]
fn failing_cargo_test_switches_to_plan_mode() {
    let p = example_project(None);
    let outcome = bash_result(
        &p,
        "bash",
        "cargo test --workspace",
        "test parse::odd ... FAILED\n\ntest result: FAILED. 41 passed; 1 failed; 0 ignored",
        true,
    );
    assert_eq!(
        report(&outcome, "tests-failing-plan-mode").status,
        Status::Ok
    );
    assert_eq!(outcome.mode.as_deref(), Some("plan"));
    assert_eq!(outcome.notes, ["tests failing: plan before touching code"]);
}

#[test]
fn failing_tests_are_read_from_the_result_and_from_claude_bash() {
    let p = example_project(None);
    let outcome = bash_result(&p, "bash", "npm test", "Tests: 2 failed, 10 passed", false);
    assert_eq!(outcome.mode.as_deref(), Some("plan"));
    let outcome = bash_result(&p, "Bash", "pytest -q", "1 failed, 3 passed in 0.1s", false);
    assert_eq!(outcome.mode.as_deref(), Some("plan"));
}

#[test]
fn passing_tests_and_other_failures_keep_the_mode() {
    let p = example_project(None);
    let outcome = bash_result(
        &p,
        "bash",
        "cargo test",
        "test result: ok. 42 passed; 0 failed; 0 ignored",
        false,
    );
    assert_eq!(outcome.mode, None);
    assert!(outcome.notes.is_empty());
    let outcome = bash_result(&p, "bash", "ls /nope", "No such file or directory", true);
    assert_eq!(outcome.mode, None);
}

// ---------------------------------------------------------------------------------------------
// notify-stop.sh
// ---------------------------------------------------------------------------------------------

#[test]
fn notify_stop_appends_the_stop_reason_to_the_project_log() {
    let p = example_project(Some(QUIET_NOTIFY));
    for stop in ["done", "aborted"] {
        let outcome = p.event(Event::Stop, json!({ "stop": stop }));
        let r = report(&outcome, "notify-stop");
        assert_eq!(r.status, Status::Ok, "{:?} {}", r.error, r.stderr);
        assert!(outcome.notes.is_empty() && outcome.mode.is_none());
    }
    let log = p
        .read(".ka/notifications.log")
        .expect("the log was written");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    let root = p.root.display().to_string();
    assert!(
        lines[0].ends_with(&format!(" stop=done project={root}")),
        "{log}"
    );
    assert!(
        lines[1].ends_with(&format!(" stop=aborted project={root}")),
        "{log}"
    );
}

#[test]
fn notify_stop_runs_in_the_background_and_reports_with_the_next_dispatch() {
    let p = example_project(Some(
        "[[hooks]]\nname = \"notify-stop\"\n\
         env = { KA_NOTIFY_FILE = \"logs/turns.log\", KA_NOTIFY_DESKTOP = \"0\" }\n",
    ));
    let config = p.load();
    let stop = ka_hooks::Request::new(
        Event::Stop,
        support::object(json!({"stop": "done", "session_id": "s1"})),
    );
    let outcome = config.dispatch(stop);
    assert!(
        !outcome.hooks.iter().any(|h| h.name == "notify-stop"),
        "waited for the notifier: {:?}",
        outcome.hooks
    );
    assert_eq!(outcome.background.len(), 1, "{:?}", outcome.background);
    assert_eq!(outcome.background[0].hook, "notify-stop");
    support::eventually("the notifier wrote its line", || {
        p.read("logs/turns.log")
            .is_some_and(|l| l.contains(" stop=done "))
    });
    let mut delivered = Vec::new();
    support::eventually("its result came with the next dispatch", || {
        let next = ka_hooks::Request::new(
            Event::SessionEnd,
            support::object(json!({"session_id": "s1"})),
        );
        delivered.extend(config.dispatch(next).delivered);
        !delivered.is_empty()
    });
    assert_eq!(delivered[0].hook, "notify-stop");
    assert_eq!(delivered[0].status, Status::Ok);
}

#[test]
fn notify_stop_writes_where_ka_notify_file_points() {
    let p = example_project(Some(
        "[[hooks]]\nname = \"notify-stop\"\n\
         env = { KA_NOTIFY_FILE = \"logs/turns.log\", KA_NOTIFY_DESKTOP = \"0\" }\n\
         async = false\n",
    ));
    let outcome = p.event(Event::Stop, json!({"stop": "error"}));
    assert_eq!(report(&outcome, "notify-stop").status, Status::Ok);
    assert!(!p.exists(".ka/notifications.log"));
    let log = p.read("logs/turns.log").expect("written to KA_NOTIFY_FILE");
    assert!(log.contains(" stop=error "), "{log}");
    assert!(!has_diagnostic(&outcome, &["notify-stop"]));
}
