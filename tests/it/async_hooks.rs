//! `async = true`: the dispatch returns without waiting; the hook runs under every runner
//! guarantee; its result comes with the session's next dispatch; a newer run for the same paths
//! supersedes an older one; no process is left behind. Through the CLI (detached supervisor)
//! and the library (reaper thread).

use crate::support;
use crate::support::within;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{hook, object, pid_in, process_gone, Project};

use ka_hooks::{Event, Request};

/// The first `stop` dispatch of `session` (waited for up to 15 s) that delivers a background
/// result, through the library.
#[track_caller]
fn next_delivery(
    config: &ka_hooks::config::Config,
    session: &str,
    what: &str,
) -> ka_hooks::Outcome {
    let mut found = None;
    within(15, what, || {
        let next = config.dispatch(Request::new(
            Event::Stop,
            object(json!({ "session_id": session })),
        ));
        if next.delivered.is_empty() {
            // Nothing else runs on this stop: no result, no context.
            assert_eq!(next.context, None, "{next:#?}");
        } else {
            found = Some(next);
        }
        found.is_some()
    });
    found.expect("delivered")
}

/// `ka-hooks run` of `event` with `payload`, as JSON.
fn run_event(p: &Project, event: &str, tool: Option<&str>, payload: Value) -> Value {
    let mut cmd = p.cli();
    cmd.arg("run").arg(event).arg("--json");
    if let Some(tool) = tool {
        cmd.args(["--tool", tool]);
    }
    let out = cmd
        .arg("--input")
        .arg(payload.to_string())
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "ka-hooks run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json outcome")
}

fn session_write(session: &str, path: &str) -> Value {
    json!({"session_id": session, "arguments": {"path": path, "content": "x"}})
}

/// Results waiting in the data dir's mailbox.
fn waiting(p: &Project) -> usize {
    let dir = p.data_dir.join("async/results");
    fs::read_dir(&dir)
        .map(|sessions| {
            sessions
                .filter_map(Result::ok)
                .map(|s| {
                    fs::read_dir(s.path())
                        .map(|f| {
                            f.filter_map(Result::ok)
                                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                                .count()
                        })
                        .unwrap_or(0)
                })
                .sum()
        })
        .unwrap_or(0)
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn the_cli_returns_before_the_hook_ends_and_never_holds_its_stdout() {
    let p = Project::new();
    let marker = p.root.join("done");
    p.user(&hook(
        "slow",
        "post_tool_use",
        "echo $$ > pid; sleep 2; touch done",
        &["async = true", "timeout = 10"],
    ));
    // `output()` reads stdout to EOF: a supervisor holding it open would keep this waiting
    // until the hook ended (and `done` existed).
    let outcome = run_event(
        &p,
        "post_tool_use",
        Some("write"),
        session_write("s", "a.rs"),
    );
    assert!(!exists(&marker), "the dispatch waited for the async hook");
    assert_eq!(outcome["hooks"], json!([]), "{outcome:#}");
    assert_eq!(outcome["background"][0]["hook"], "slow", "{outcome:#}");
    assert_eq!(outcome["background"][0]["how"], "supervisor", "{outcome:#}");
    within(10, "the hook never wrote its pid", || p.exists("pid"));
    let pid = pid_in(&p, "pid");
    assert!(!process_gone(pid), "the hook did not outlive the CLI");
    within(15, "the async hook never finished", || exists(&marker));
}

#[test]
fn results_come_with_the_next_dispatch_of_the_same_session_only() {
    let p = Project::new();
    p.user(&hook(
        "fmt",
        "post_tool_use",
        r#"printf '{"feedback":"formatted %s","note":"fmt ran"}' {paths}"#,
        &["async = true", r#"paths = ["**/*.rs"]"#],
    ));
    let first = run_event(
        &p,
        "post_tool_use",
        Some("write"),
        session_write("s1", "src/a.rs"),
    );
    assert_eq!(first["delivered"], json!([]));
    within(15, "the result never reached the mailbox", || {
        waiting(&p) == 1
    });

    let other = run_event(&p, "stop", None, json!({"session_id": "s2"}));
    assert_eq!(
        other["delivered"],
        json!([]),
        "another session got it: {other:#}"
    );

    let next = run_event(&p, "stop", None, json!({"session_id": "s1"}));
    let delivered = &next["delivered"][0];
    assert_eq!(delivered["hook"], "fmt", "{next:#}");
    assert_eq!(delivered["status"], "ok");
    assert_eq!(delivered["paths"], json!(["src/a.rs"]));
    assert_eq!(delivered["feedback"], "formatted src/a.rs");
    let context = next["context"].as_str().unwrap_or_default();
    assert!(
        context.contains("async hook `fmt` after post_tool_use on src/a.rs")
            && context.contains("formatted src/a.rs"),
        "{next:#}"
    );
    assert!(next["notes"].to_string().contains("fmt ran"), "{next:#}");
    // Delivered once.
    let again = run_event(&p, "stop", None, json!({"session_id": "s1"}));
    assert_eq!(again["delivered"], json!([]), "{again:#}");
    assert_eq!(waiting(&p), 0);
}

#[test]
fn failures_and_timeouts_are_delivered_and_leave_no_process() {
    let p = Project::new();
    p.user(&format!(
        "{}{}",
        hook(
            "hangs",
            "stop",
            "echo $$ > hang.pid; (sleep 60; touch escaped) & sleep 60",
            &["async = true", "timeout = 1"],
        ),
        hook(
            "crashes",
            "stop",
            "echo broken >&2; exit 7",
            &["async = true"]
        ),
    ));
    let started = run_event(&p, "stop", None, json!({"session_id": "t"}));
    assert_eq!(started["background"].as_array().map(Vec::len), Some(2));
    within(20, "the timed-out run never reached the mailbox", || {
        waiting(&p) == 2
    });
    let next = run_event(&p, "session_end", None, json!({"session_id": "t"}));
    let delivered = next["delivered"].as_array().cloned().unwrap_or_default();
    let by = |name: &str| {
        delivered
            .iter()
            .find(|d| d["hook"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {next:#}"))
    };
    assert_eq!(by("hangs")["status"], "error");
    assert_eq!(by("hangs")["timed_out"], true);
    assert_eq!(by("crashes")["status"], "error");
    assert_eq!(by("crashes")["exit_code"], 7);
    let notes = next["notes"].to_string();
    assert!(
        notes.contains("async hook `crashes` after stop failed") && notes.contains("exit 7"),
        "{next:#}"
    );
    let pid = pid_in(&p, "hang.pid");
    assert!(process_gone(pid), "the timed-out hook survived");
    // Its background child was in its group: killed with it.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!p.exists("escaped"));
}

#[test]
fn a_newer_run_for_the_same_paths_supersedes_the_older_one() {
    let p = Project::new();
    // The run number goes through the payload's content, read by the hook from stdin.
    p.user(&hook(
        "fmt",
        "post_tool_use",
        r#"n=$(sed 's/.*"content":"\([0-9a-z]*\)".*/\1/'); echo $$ > "pid-$n"; sleep 30; echo done > "out-$n""#,
        &["async = true", "timeout = 60"],
    ));
    let call =
        |n: &str, path: &str| json!({"session_id": "d", "arguments": {"path": path, "content": n}});
    run_event(&p, "post_tool_use", Some("write"), call("1", "a.rs"));
    within(10, "run 1 never started", || p.exists("pid-1"));
    let first = pid_in(&p, "pid-1");
    // Another path: not the same run.
    run_event(&p, "post_tool_use", Some("write"), call("other", "b.rs"));
    within(10, "the other path's run never started", || {
        p.exists("pid-other")
    });
    run_event(&p, "post_tool_use", Some("write"), call("2", "a.rs"));
    within(10, "run 2 never started", || p.exists("pid-2"));
    within(10, "the superseded run's hook is still running", || {
        process_gone(first)
    });
    assert!(
        !process_gone(pid_in(&p, "pid-2")),
        "the newer run was killed"
    );
    assert!(
        !process_gone(pid_in(&p, "pid-other")),
        "a run for other paths was superseded"
    );
    within(10, "the superseded run was not recorded", || {
        waiting(&p) == 1
    });
    let next = run_event(&p, "stop", None, json!({"session_id": "d"}));
    let d = &next["delivered"][0];
    assert_eq!(d["superseded"], true, "{next:#}");
    assert_eq!(d["paths"], json!(["a.rs"]));
    assert_eq!(d["status"], "cancelled");
    // A superseded run says nothing to the model.
    assert_eq!(next["context"], Value::Null, "{next:#}");
    for pid in ["pid-2", "pid-other"] {
        // SAFETY: signal to a pid this test's hook wrote; it is a `sleep 30` shell.
        unsafe { libc::kill(pid_in(&p, pid), libc::SIGKILL) };
    }
}

#[test]
fn the_supervisor_reaps_its_hook_and_ends() {
    let p = Project::new();
    p.user(&hook(
        "quick",
        "post_tool_use",
        "echo $$ > pid; echo $PPID > supervisor.pid",
        &["async = true"],
    ));
    run_event(
        &p,
        "post_tool_use",
        Some("write"),
        session_write("z", "a.rs"),
    );
    within(15, "no result", || waiting(&p) == 1);
    let hook_pid = pid_in(&p, "pid");
    // Reaped by the supervisor before it wrote the result: not even a zombie.
    assert!(
        !Path::new(&format!("/proc/{hook_pid}")).exists(),
        "the hook's process was not reaped"
    );
    let supervisor = pid_in(&p, "supervisor.pid");
    let comm = fs::read_to_string(format!("/proc/{supervisor}/comm")).unwrap_or_default();
    assert!(
        comm.is_empty() || comm.trim() == "ka-hooks-async",
        "the hook's parent was not the supervisor: {comm:?}"
    );
    // Once the supervisor has exited, it is no child of ours or of ka-hooks: a zombie at most
    // until init (or a subreaper) reaps it, and never running.
    within(30, "the supervisor never ended", || {
        process_gone(supervisor)
    });
    if let Ok(stat) = fs::read_to_string(format!("/proc/{supervisor}/stat")) {
        let ppid: i32 = stat[stat.rfind(')').unwrap_or(0) + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        assert_ne!(
            ppid,
            std::process::id() as i32,
            "the supervisor is a zombie of the test process"
        );
    }
}

#[test]
fn async_runs_are_audited_when_they_end() {
    let p = Project::new();
    let log = p.base.join("audit.jsonl");
    p.user(&hook("later", "stop", "exit 0", &["async = true"]));
    let mut cmd = p.cli();
    cmd.args(["run", "stop", "--log"])
        .arg(&log)
        .args(["--input", r#"{"session_id":"a"}"#]);
    cmd.assert().success();
    within(15, "no audit line for the async run", || {
        fs::read_to_string(&log).is_ok_and(|t| t.contains("\"later\""))
    });
}

#[test]
fn the_library_returns_at_once_and_delivers_in_process() {
    let p = Project::new();
    p.user(&hook(
        "bg",
        "post_tool_use",
        r#"sleep 1; echo '{"context":"lint: 2 warnings"}'"#,
        &["async = true"],
    ));
    let config = p.load();
    let call = |session: &str| {
        Request::new(
            Event::PostToolUse,
            object(json!({"tool": "write", "session_id": session,
                          "arguments": {"path": "lib-a.rs"}})),
        )
    };
    let started = Instant::now();
    let outcome = config.dispatch(call("lib-session"));
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "the dispatch waited for the async hook"
    );
    assert_eq!(outcome.background.len(), 1);
    assert_eq!(
        outcome.background[0].how,
        ka_hooks::background::Handover::Thread
    );
    assert!(outcome.hooks.is_empty());
    let next = next_delivery(&config, "lib-session", "the in-process result never came");
    let delivered = &next.delivered;
    let context = next.context.as_deref().unwrap_or_default();
    assert!(context.contains("lint: 2 warnings"), "{context}");
    assert_eq!(delivered[0].hook, "bg");
    assert_eq!(delivered[0].context.as_deref(), Some("lint: 2 warnings"));
}

#[test]
fn replaying_an_async_hook_runs_it_in_the_foreground() {
    let p = Project::new();
    p.user(&hook("bg", "stop", "echo hi >&2", &["async = true"]));
    let out = p
        .cli()
        .args(["run", "stop", "--hook", "bg", "--json", "--input", "{}"])
        .output()
        .expect("run");
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(outcome["hooks"][0]["name"], "bg", "{outcome:#}");
    assert_eq!(outcome["background"], json!([]));
}

/// The dispatch hands its async hooks over before working out where they run: a working
/// directory that cannot be entered is still replaced (and said so) in the library, with the
/// delivered result.
#[test]
fn an_async_hook_whose_dir_cannot_be_entered_runs_elsewhere_and_says_so() {
    let p = Project::new();
    let ran_in = p.base.join("ran-in");
    p.user(&hook(
        "bg",
        "post_tool_use",
        r#"pwd > "$RAN_IN""#,
        &[
            "async = true",
            &format!("env = {{ RAN_IN = {:?} }}", ran_in.to_string_lossy()),
        ],
    ));
    // Outside the project: hooks run in the payload's `cwd`, which does not exist.
    let outside = p.base.join("outside");
    fs::create_dir_all(&outside).expect("mkdir");
    let config = ka_hooks::config::Config::load(&p.options(&outside, false)).expect("load");
    assert_eq!(
        config.project_root, None,
        "an ancestor of the temp dir holds .ka/"
    );
    let missing = p.base.join("missing").join("dir");
    let payload = json!({"tool": "write", "session_id": "dir-session", "cwd": missing,
                         "arguments": {"path": "a.rs"}});
    let outcome = config.dispatch(Request::new(Event::PostToolUse, object(payload)));
    assert_eq!(
        outcome.background[0].how,
        ka_hooks::background::Handover::Thread,
        "{outcome:#?}"
    );
    let delivered = next_delivery(&config, "dir-session", "the result never came").delivered;
    assert_eq!(delivered[0].status, ka_hooks::outcome::Status::Ok);
    assert!(
        delivered[0]
            .diagnostics
            .iter()
            .any(|d| d.contains("cannot be entered") && d.contains("the session's root")),
        "{:#?}",
        delivered[0]
    );
    let dir = fs::read_to_string(&ran_in).expect("the hook ran");
    assert!(!dir.contains("missing"), "ran in {dir}");
}

/// An async and a foreground hook of one call read the same payload (the async one's is
/// completed on the reaper thread).
#[test]
fn async_and_foreground_hooks_of_one_call_read_the_same_payload() {
    let p = Project::new();
    let (a, b) = (p.base.join("a.json"), p.base.join("b.json"));
    let env = |path: &Path| format!("env = {{ OUT = {:?} }}", path.to_string_lossy());
    let toml = hook(
        "bg",
        "post_tool_use_failure",
        r#"cat > "$OUT.tmp"; mv "$OUT.tmp" "$OUT""#,
        &["async = true", &env(&a)],
    ) + &hook(
        "fg",
        "post_tool_use_failure",
        r#"cat > "$OUT""#,
        &[&env(&b)],
    );
    p.user(&toml);
    let config = p.load();
    let payload = json!({"tool": "write", "session_id": "same", "arguments": {"path": "a.rs"}});
    let outcome = config.dispatch(Request::new(Event::PostToolUseFailure, object(payload)));
    assert_eq!(outcome.background.len(), 1, "{outcome:#?}");
    assert_eq!(outcome.hooks.len(), 1, "{outcome:#?}");
    within(15, "the async hook never wrote its payload", || a.exists());
    let read = |path: &Path| -> Value {
        serde_json::from_str(&fs::read_to_string(path).expect("payload")).expect("json")
    };
    let (a, b) = (read(&a), read(&b));
    assert_eq!(a, b);
    assert_eq!(a["event"], "post_tool_use_failure");
    assert_eq!(a["is_error"], true);
    assert!(a["cwd"].is_string(), "{a}");
}
