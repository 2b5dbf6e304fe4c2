//! `Session`: a host that follows the docs cannot lose the trust, the continuation
//! cap, async results or its hooks. Each test is a failure of the issue: it failed with the
//! `Config`-per-load API the crate offered before.

use crate::support;
use crate::support::within;

use std::fs;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{eventually, group_gone, hook, object, pid_in, Project};

use ka_hooks::action::Decision;
use ka_hooks::config::{Config, LoadOptions};
use ka_hooks::paths::Paths;
use ka_hooks::session::Session;
use ka_hooks::{Event, Outcome, Request};

/// Trust the project's layers as a person would (`ka-hooks trust --yes`), then load.
fn trusted_config(p: &Project) -> Arc<Config> {
    p.cli().args(["trust", "--yes"]).assert().success();
    let config = Config::load(&p.options(&p.root, false)).expect("load");
    assert!(
        config.untrusted.is_empty(),
        "the project did not load: {:?}",
        config.untrusted
    );
    Arc::new(config)
}

fn session(config: Arc<Config>, p: &Project) -> Session {
    Session::new(config, "s-1", &p.root)
}

fn write_request(path: &str, content: &str) -> Request {
    let args = object(json!({ "path": path, "content": content }));
    Request::tool_call(Event::PreToolUse, "write", args)
}

// The outcome fields this file reads, in one place (the `Outcome` API is being reshaped).
fn is_blocked(o: &Outcome) -> bool {
    o.blocked()
}
fn asks(o: &Outcome) -> bool {
    o.decision() == Some(Decision::Ask)
}

/// A project whose guard is a covered script: it blocks any write that holds `SECRET`.
fn scrubbed_project() -> Project {
    let p = Project::new();
    p.write(
        ".ka/hooks/scrub.sh",
        "grep -q SECRET && { echo 'secret in the write' >&2; exit 2; }\nexit 0\n",
    );
    p.project(&hook(
        "scrub",
        "pre_tool_use",
        "sh .ka/hooks/scrub.sh",
        &[r#"tool = "write""#],
    ));
    p
}

#[test]
fn a_covered_script_rewritten_mid_session_never_runs_and_its_guard_fails_closed() {
    let p = scrubbed_project();
    let s = session(trusted_config(&p), &p);
    let o = s.dispatch(write_request("notes.txt", "SECRET=1"));
    assert!(is_blocked(&o), "the guard did not run: {o:?}");
    // The model rewrites the script the guard runs.
    p.write(".ka/hooks/scrub.sh", "touch ran-new-script\nexit 0\n");
    let o = s.dispatch(write_request("notes.txt", "SECRET=1"));
    assert!(
        is_blocked(&o),
        "the rewritten guard let the secret through: {o:?}"
    );
    assert!(!p.exists("ran-new-script"), "the rewritten script ran");
    // Also a call the old guard would have allowed: a stale guard blocks what it matches.
    let o = s.dispatch(write_request("notes.txt", "fine"));
    assert!(is_blocked(&o), "{o:?}");
    assert!(!p.exists("ran-new-script"), "the rewritten script ran");
    assert!(
        s.config()
            .untrusted
            .iter()
            .any(|u| u.file.ends_with(".ka/ka.toml")),
        "the layer is not reported stale: {:?}",
        s.config().untrusted
    );
}

#[test]
fn a_layer_file_edited_mid_session_is_stale_at_the_next_dispatch() {
    let p = scrubbed_project();
    let s = session(trusted_config(&p), &p);
    // The guard is edited out, and an allow-all hook put in its place.
    p.project(&hook(
        "scrub",
        "pre_tool_use",
        "touch ran-new-layer; exit 0",
        &[r#"tool = "write""#],
    ));
    let o = s.dispatch(write_request("notes.txt", "SECRET=1"));
    assert!(is_blocked(&o), "{o:?}");
    assert!(!p.exists("ran-new-layer"), "the edited layer ran");
}

#[test]
fn a_change_between_load_and_session_start_is_seen_too() {
    let p = scrubbed_project();
    let config = trusted_config(&p);
    p.write(".ka/hooks/scrub.sh", "touch ran-new-script\nexit 0\n");
    let s = session(config, &p);
    let o = s.dispatch(write_request("a.txt", "SECRET"));
    assert!(is_blocked(&o), "{o:?}");
    assert!(!p.exists("ran-new-script"));
}

#[test]
fn an_unchanged_session_keeps_its_configuration() {
    let p = scrubbed_project();
    let config = trusted_config(&p);
    let s = session(Arc::clone(&config), &p);
    for _ in 0..3 {
        let o = s.dispatch(write_request("a.txt", "fine"));
        assert!(!is_blocked(&o), "{o:?}");
    }
    assert!(
        Arc::ptr_eq(&s.config(), &config),
        "reloaded without a change"
    );
}

#[test]
fn writes_to_a_covered_script_ask_a_person() {
    let p = scrubbed_project();
    p.write("tools/check.sh", "exit 0\n");
    p.project(&format!(
        "{}{}",
        hook(
            "scrub",
            "pre_tool_use",
            "sh .ka/hooks/scrub.sh",
            &[r#"tool = "write""#]
        ),
        hook(
            "check",
            "pre_tool_use",
            "sh tools/check.sh",
            &[r#"tool = "bash""#]
        ),
    ));
    let s = session(trusted_config(&p), &p);
    for target in [".ka/hooks/scrub.sh", "tools/check.sh"] {
        let o = s.dispatch(write_request(target, "exit 0"));
        assert!(
            asks(&o),
            "a write to the covered {target} was not asked: {o:?}"
        );
    }
    let o = s.dispatch(write_request("src/lib.rs", "fine"));
    assert!(!asks(&o), "{o:?}");
}

#[test]
fn a_stop_hook_that_always_continues_stops_at_the_cap_without_host_help() {
    let p = Project::new();
    p.user(&format!(
        "[hook_settings]\nmax_continuations = 3\n\n{}",
        hook("again", "stop", "echo 'keep going' >&2; exit 2", &[])
    ));
    let s = Session::new(Arc::new(p.load()), "s-stop", &p.root);
    // The host sends a bare stop payload each time: no `continuations`, no `stop_hook_active`.
    let rounds = (0..12)
        .take_while(|_| {
            let o = s.dispatch(Request::new(Event::Stop, object(json!({}))));
            o.keep_going.is_some()
        })
        .count();
    assert_eq!(rounds, 3, "the stop loop ran {rounds} of 12 rounds");
    // A new prompt starts a new turn: the hook may continue again.
    s.dispatch(Request::new(
        Event::UserPromptSubmit,
        object(json!({"prompt": "next"})),
    ));
    let o = s.dispatch(Request::new(Event::Stop, object(json!({}))));
    assert!(o.keep_going.is_some(), "{o:?}");
}

#[test]
fn the_payload_carries_the_sessions_id_cwd_and_continuations() {
    let p = Project::new();
    p.user(&hook("seen", "stop", "cat > seen.json", &[]));
    let s = Session::new(Arc::new(p.load()), "s-stamp", &p.root);
    s.dispatch(Request::new(
        Event::Stop,
        object(json!({"session_id": "forged"})),
    ));
    let seen: Value = serde_json::from_str(&p.read("seen.json").expect("payload")).expect("json");
    assert_eq!(seen["session_id"], "s-stamp", "{seen}");
    assert_eq!(seen["cwd"], p.root.to_string_lossy().as_ref(), "{seen}");
    assert_eq!(seen["continuations"], 0, "{seen}");
    assert_eq!(seen["stop_hook_active"], false, "{seen}");
}

#[test]
fn async_results_are_received_once_and_not_folded_into_later_outcomes() {
    let p = Project::new();
    p.user(&hook(
        "fmt",
        "post_tool_use",
        r#"echo '{"context":"formatted a.rs"}'"#,
        &["async = true", "timeout = 10"],
    ));
    let s = Session::new(Arc::new(p.load()), "s-async", &p.root);
    let args = object(json!({"path": "a.rs", "content": "x"}));
    s.dispatch(Request::tool_call(Event::PostToolUse, "write", args));
    // An idle host waits for the result; it sends no dummy event.
    let delivered = s.wait_delivered(Duration::from_secs(15));
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert_eq!(delivered[0].context.as_deref(), Some("formatted a.rs"));
    assert!(s.poll_delivered().is_empty(), "delivered twice");
    let o = s.dispatch(Request::new(Event::Stop, object(json!({}))));
    assert!(o.delivered.is_empty(), "delivered again: {:?}", o.delivered);
    assert_eq!(o.context, None, "folded into the outcome too");
}

#[test]
fn wait_delivered_returns_empty_after_its_timeout() {
    let p = Project::new();
    let s = Session::new(Arc::new(p.load()), "s-idle", &p.root);
    let started = Instant::now();
    assert!(s.wait_delivered(Duration::from_millis(200)).is_empty());
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn shutdown_ends_the_sessions_async_hooks() {
    let p = Project::new();
    p.user(&hook(
        "long",
        "post_tool_use",
        "echo $$ > pid; exec sleep 60",
        &["async = true", "timeout = 120"],
    ));
    let s = Session::new(Arc::new(p.load()), "s-shutdown", &p.root);
    let args = object(json!({"path": "a.rs"}));
    s.dispatch(Request::tool_call(Event::PostToolUse, "write", args));
    within(10, "the async hook never started", || p.exists("pid"));
    let pid = pid_in(&p, "pid");
    let started = Instant::now();
    drop(s); // shutdown on drop
    assert!(group_gone(pid), "the async hook outlived its session");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn shutdown_cancels_a_dispatch_in_flight_and_later_ones_start_nothing() {
    let p = Project::new();
    p.user(&hook(
        "slow",
        "pre_tool_use",
        "echo $$ > pid; exec sleep 60",
        &[],
    ));
    let s = Arc::new(Session::new(Arc::new(p.load()), "s-cancel", &p.root));
    let worker = {
        let s = Arc::clone(&s);
        std::thread::spawn(move || s.dispatch(write_request("a", "b")))
    };
    within(10, "the guard never started", || p.exists("pid"));
    let pid = pid_in(&p, "pid");
    s.shutdown();
    let o = worker.join().expect("thread");
    assert!(is_blocked(&o), "a cut-short guard read as allowed: {o:?}");
    eventually("the guard outlived shutdown", || group_gone(pid));
    fs::remove_file(p.root.join("pid")).expect("rm pid");
    let o = s.dispatch(write_request("a", "b"));
    assert!(is_blocked(&o), "{o:?}");
    assert!(!p.exists("pid"), "a hook started after shutdown");
}

#[test]
fn paths_new_keeps_the_managed_layer_and_isolated_opts_out_by_name() {
    let new = Paths::new("/c", "/d");
    assert!(new.managed_dir.is_some(), "{new:?}");
    let isolated = Paths::isolated("/c", "/d");
    assert_eq!(isolated.managed_dir, None);
}

#[test]
fn a_managed_layer_from_paths_new_runs() {
    let p = Project::new();
    let managed = p.base.join("managed");
    fs::create_dir_all(&managed).expect("mkdir");
    fs::write(
        managed.join("ka.toml"),
        hook(
            "admin",
            "pre_tool_use",
            "echo 'managed says no' >&2; exit 2",
            &[],
        ),
    )
    .expect("write managed");
    let mut paths = Paths::new(&p.config_dir, &p.data_dir);
    // Where `Paths::new` found it (`$KA_MANAGED_DIR` or /etc/ka), pointed at the scratch one.
    assert!(paths.managed_dir.is_some());
    paths.managed_dir = Some(managed);
    let config = Config::load(&LoadOptions {
        paths,
        start_dir: p.root.clone(),
        trust_once: false,
    })
    .expect("load");
    let s = Session::new(Arc::new(config), "s-managed", &p.root);
    assert!(is_blocked(&s.dispatch(write_request("a", "b"))));
}

#[test]
fn hooks_die_with_a_host_killed_by_sigkill() {
    hook_dies_with_its_sigkilled_host(None);
}

/// The same with a temp directory that cannot be written: the watchdog keeps its list in memory
/// (Linux), and still kills the hook.
#[cfg(target_os = "linux")]
#[test]
fn hooks_die_with_a_sigkilled_host_whose_temp_dir_cannot_be_written() {
    let missing = std::path::Path::new("/nonexistent/ka-hooks-tmp");
    hook_dies_with_its_sigkilled_host(Some(missing));
}

/// A `ka-hooks run` host (with `TMPDIR` set to `tmpdir`) starts a hook that sleeps, and is
/// SIGKILLed: the hook's process group must be gone soon after.
fn hook_dies_with_its_sigkilled_host(tmpdir: Option<&std::path::Path>) {
    let p = Project::new();
    p.user(&hook(
        "slow",
        "pre_tool_use",
        "echo $$ > pid; exec sleep 60",
        &[],
    ));
    // The `ka-hooks` binary is a host like any other: it embeds the library.
    let mut host = std::process::Command::new(assert_cmd::cargo::cargo_bin("ka-hooks"));
    for var in support::AMBIENT_VARS {
        host.env_remove(var);
    }
    if let Some(dir) = tmpdir {
        host.env("TMPDIR", dir);
    }
    let mut host = host
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .current_dir(&p.root)
        .args([
            "run",
            "pre_tool_use",
            "--tool",
            "bash",
            "--input",
            r#"{"arguments":{}}"#,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn host");
    within(10, "the hook never started", || p.exists("pid"));
    let pid = pid_in(&p, "pid");
    // The host registers the group with one write right after the spawn returns; on a loaded
    // machine the hook can write its pid first. Give the host that moment (see the watchdog's
    // module doc: a SIGKILL inside that window is the one case it cannot cover).
    std::thread::sleep(Duration::from_millis(300));
    host.kill().expect("SIGKILL the host");
    host.wait().expect("reap host");
    within(10, "the hook outlived its SIGKILLed host", || {
        group_gone(pid)
    });
}
