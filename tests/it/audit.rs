//! The JSONL audit log: whole lines under concurrent dispatches, no secrets, no surprises from
//! its path.

use crate::support;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use ka_hooks::config::{Config, LoadOptions};
use ka_hooks::dispatch::Request;
use ka_hooks::paths::Paths;
use ka_hooks::Event;
use serde_json::{json, Value};
use support::{hook, object, Project};

#[test]
fn concurrent_dispatches_append_whole_parsable_lines() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config_dir = tmp.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("mkdir");
    let log = tmp.path().join("audit.jsonl");
    // A long stderr makes each outcome line big, so interleaving would show.
    std::fs::write(
        config_dir.join("ka.toml"),
        format!(
            "[hook_settings]\nlog = {:?}\n\
             [[hooks]]\nname = \"ok\"\nevent = \"pre_tool_use\"\ncommand = \"echo '{{\\\"note\\\":\\\"hi\\\"}}'\"\n\
             [[hooks]]\nname = \"no\"\nevent = \"pre_tool_use\"\ncommand = \"head -c 3000 /dev/zero | tr '\\\\0' x >&2; exit 2\"\n",
            log.to_string_lossy()
        ),
    )
    .expect("write");
    let config = Config::load(&LoadOptions {
        paths: Paths::isolated(&config_dir, tmp.path().join("data")),
        start_dir: tmp.path().to_path_buf(),
        trust_once: false,
    })
    .expect("load");
    std::thread::scope(|s| {
        for i in 0..16 {
            let config = &config;
            s.spawn(move || {
                let args = json!({ "command": format!("echo secret-{i}") });
                let args = args.as_object().cloned().unwrap_or_default();
                let outcome = config.dispatch(Request::tool_call(Event::PreToolUse, "bash", args));
                assert!(outcome.blocked());
                assert!(outcome.diagnostics.iter().all(|d| !d.contains("audit log")));
            });
        }
    });
    let text = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is whole JSON"))
        .collect();
    assert_eq!(
        lines.len(),
        16 * 3,
        "two hook lines and one outcome line each"
    );
    let outcomes: Vec<_> = lines.iter().filter(|l| l["kind"] == "outcome").collect();
    assert_eq!(outcomes.len(), 16);
    assert!(outcomes.iter().all(|o| o["verdict"] == "blocked"));
    let hooks: Vec<_> = lines.iter().filter(|l| l["kind"] == "hook").collect();
    assert!(hooks
        .iter()
        .any(|h| h["hook"] == "ok" && h["status"] == "ok"));
    assert!(hooks
        .iter()
        .any(|h| h["hook"] == "no" && h["status"] == "blocked"));
    assert!(!text.contains("secret-"), "tool arguments are not copied");
}

#[test]
fn unwritable_log_is_a_diagnostic_not_a_failure() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config_dir = tmp.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("mkdir");
    std::fs::write(
        config_dir.join("ka.toml"),
        "[hook_settings]\nlog = \"/nonexistent-dir/for/sure/audit.jsonl\"\n\
         [[hooks]]\nevent = \"stop\"\ncommand = \"true\"\n",
    )
    .expect("write");
    let config = Config::load(&LoadOptions {
        paths: Paths::isolated(&config_dir, tmp.path().join("data")),
        start_dir: tmp.path().to_path_buf(),
        trust_once: false,
    })
    .expect("load");
    let outcome = config.dispatch(Request::new(Event::Stop, serde_json::Map::new()));
    assert_eq!(outcome.hooks.len(), 1);
    assert!(
        outcome.diagnostics.iter().any(|d| d.contains("audit log")),
        "{:?}",
        outcome.diagnostics
    );
}

/// A project whose user layer logs to `log` and holds these hooks.
fn logged(log: &Path, hooks: &[String]) -> Project {
    Project::with_user_toml(&format!(
        "[hook_settings]\ntimeout = 10\nlog = {:?}\n\n{}",
        log.to_string_lossy(),
        hooks.concat()
    ))
}

/// Attack: the README says the log never copies tool arguments, yet it copied the applied
/// `updated_input` values (what a scrubber had just removed) and stdout excerpts.
#[test]
fn the_log_holds_no_argument_values_patches_notes_feedback_or_stdout_excerpts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("audit.jsonl");
    let p = logged(
        &log,
        &[
            hook(
                "scrub",
                "pre_tool_use",
                r#"echo '{"updated_input":{"command":"echo SECRET-PATCH"},"note":"SECRET-NOTE"}'"#,
                &[],
            ),
            hook("noise", "pre_tool_use", "echo 'SECRET-STDOUT token'", &[]),
            hook(
                "void",
                "pre_tool_use",
                r#"echo '{"decision":"SECRET-DECISION"}'"#,
                &[r#"on_error = "ignore""#],
            ),
            hook(
                "fb",
                "post_tool_use",
                r#"echo '{"feedback":"SECRET-FEEDBACK"}'"#,
                &[],
            ),
            hook("prompt", "user_prompt_submit", "cat >/dev/null", &[]),
        ],
    );
    let args = serde_json::json!({"command": "echo SECRET-ARG"});
    let outcome = p.tool_call(Event::PreToolUse, "bash", args.clone());
    assert!(outcome.updated_input.is_some(), "{outcome:#?}");
    p.tool_call(Event::PostToolUse, "bash", args);
    p.event(
        Event::UserPromptSubmit,
        serde_json::json!({"prompt": "SECRET-PROMPT"}),
    );

    let text = std::fs::read_to_string(&log).expect("log");
    assert!(!text.contains("SECRET"), "the log leaks:\n{text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let scrub = lines
        .iter()
        .find(|l| l["hook"] == "scrub")
        .expect("scrub line");
    assert_eq!(
        scrub["action"]["patched_keys"],
        serde_json::json!(["command"])
    );
    let outcome_line = lines
        .iter()
        .find(|l| l["kind"] == "outcome" && l["event"] == "pre_tool_use")
        .expect("outcome line");
    assert_eq!(outcome_line["patched_keys"], serde_json::json!(["command"]));
    let sha = outcome_line["updated_input"]["sha256"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(sha.len(), 16, "{outcome_line}");
}

/// Dispatch in a thread and wait a generous bound: a log that hangs the dispatch fails the test
/// instead of hanging it.
fn dispatch_within_bound(p: &Project, payload: Value) -> ka_hooks::Outcome {
    let config = p.load();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = config.dispatch(Request::new(Event::Stop, object(payload)));
        let _ = tx.send(outcome);
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the dispatch hung on the audit log")
}

/// Attack: a `log` path that is a FIFO hung the dispatch forever.
#[test]
fn a_fifo_log_is_a_diagnostic_and_never_hangs_the_dispatch() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("audit.jsonl");
    let c_path = std::ffi::CString::new(log.to_string_lossy().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let p = logged(&log, &[hook("h", "stop", "true", &[])]);
    let outcome = dispatch_within_bound(&p, serde_json::json!({"stop": "done"}));
    assert_eq!(outcome.hooks.len(), 1);
    assert!(
        outcome
            .diagnostics
            .iter()
            .any(|d| d.contains("audit log") && d.contains("FIFO")),
        "{:?}",
        outcome.diagnostics
    );
}

/// Attack: a `log` the repository later turned into a symlink appended JSON lines to
/// `~/.bashrc`.
#[test]
fn a_log_path_that_became_a_symlink_is_never_followed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bashrc = tmp.path().join("bashrc");
    std::fs::write(&bashrc, "export PATH\n").expect("write");
    let log = tmp.path().join("audit.jsonl");
    std::os::unix::fs::symlink(&bashrc, &log).expect("symlink");
    let p = logged(&log, &[hook("h", "stop", "true", &[])]);
    let outcome = dispatch_within_bound(&p, serde_json::json!({"stop": "done"}));
    assert_eq!(
        std::fs::read_to_string(&bashrc).expect("read"),
        "export PATH\n",
        "the symlink's target was written"
    );
    assert!(
        outcome
            .diagnostics
            .iter()
            .any(|d| d.contains("audit log") && d.contains("symlink")),
        "{:?}",
        outcome.diagnostics
    );
}

#[test]
fn a_directory_log_is_a_diagnostic() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = logged(tmp.path(), &[hook("h", "stop", "true", &[])]);
    let outcome = dispatch_within_bound(&p, serde_json::json!({"stop": "done"}));
    assert!(
        outcome.diagnostics.iter().any(|d| d.contains("audit log")),
        "{:?}",
        outcome.diagnostics
    );
}

#[test]
fn a_new_log_is_created_private_and_regular() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("audit.jsonl");
    let p = logged(&log, &[hook("h", "stop", "true", &[])]);
    let outcome = dispatch_within_bound(&p, serde_json::json!({"stop": "done"}));
    assert!(
        outcome.diagnostics.iter().all(|d| !d.contains("audit log")),
        "{:?}",
        outcome.diagnostics
    );
    let meta = std::fs::metadata(&log).expect("log created");
    assert!(meta.is_file());
    assert_eq!(meta.permissions().mode() & 0o077, 0, "readable by others");
}
