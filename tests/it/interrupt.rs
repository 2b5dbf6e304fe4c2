//! SIGINT, SIGTERM and SIGHUP to `ka-hooks` while hooks run: every hook's
//! process group is ended before `ka-hooks` exits with 128 + the signal; under an adapter the
//! answer follows `--fail-closed`.

use crate::support;

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{eventually, group_gone, hook, pid_in, process_gone, Project, AMBIENT_VARS};

/// A guard that records its pid and a background child's, then sleeps far past the test.
fn sleeping_guard() -> Project {
    Project::with_user_toml(&hook(
        "guard",
        "pre_tool_use",
        "sleep 1000 & echo $! > guard.bg; echo $$ > guard.pid; sleep 1000",
        &["timeout = 60"],
    ))
}

fn spawn_ka_hooks(p: &Project, args: &[&str], stdin: &str) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ka-hooks"));
    for var in AMBIENT_VARS {
        cmd.env_remove(var);
    }
    let mut child = cmd
        .args(args)
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .env("NO_COLOR", "1")
        .current_dir(&p.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ka-hooks");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("write stdin");
    }
    child
}

/// Wait for the guard to start, send `signal` to ka-hooks, and return its output once it exits
/// (within a generous bound), with the guard's pids.
fn interrupt(p: &Project, mut child: Child, signal: i32) -> (std::process::Output, i32, i32) {
    eventually("the guard never started", || {
        p.read("guard.pid").is_some_and(|t| t.ends_with('\n'))
    });
    let (guard, bg) = (pid_in(p, "guard.pid"), pid_in(p, "guard.bg"));
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: kill of the child this test spawned and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ka-hooks did not exit after signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (child.wait_with_output().expect("output"), guard, bg)
}

#[track_caller]
fn assert_hooks_ended(guard: i32, bg: i32) {
    eventually("the guard was orphaned and kept running", || {
        process_gone(guard)
    });
    eventually("the guard's background child kept running", || {
        process_gone(bg)
    });
    eventually("the guard's group kept running", || group_gone(guard));
}

/// Attack: Ctrl-C (or the agent killing its hook command) orphaned the running hooks.
#[test]
fn each_interrupt_ends_every_hook_and_exits_with_the_conventional_code() {
    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let p = sleeping_guard();
        let child = spawn_ka_hooks(
            &p,
            &["run", "pre_tool_use", "--tool", "bash", "--input", "-"],
            r#"{"arguments":{"command":"ls"}}"#,
        );
        let (output, guard, bg) = interrupt(&p, child, signal);
        assert_hooks_ended(guard, bg);
        assert_eq!(
            output.status.code(),
            Some(code),
            "signal {signal}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

const CLAUDE_PRE_TOOL_USE: &str = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"session_id":"s","transcript_path":"/dev/null"}"#;

#[test]
fn an_interrupted_adapter_call_with_fail_closed_blocks_with_a_reason() {
    let p = sleeping_guard();
    let child = spawn_ka_hooks(&p, &["claude", "--fail-closed"], CLAUDE_PRE_TOOL_USE);
    let (output, guard, bg) = interrupt(&p, child, libc::SIGTERM);
    assert_hooks_ended(guard, bg);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cancelled") && stderr.contains("SIGTERM"),
        "{stderr}"
    );
}

#[test]
fn an_interrupted_adapter_call_without_fail_closed_exits_with_the_signal_code() {
    let p = sleeping_guard();
    let child = spawn_ka_hooks(&p, &["claude"], CLAUDE_PRE_TOOL_USE);
    let (output, guard, bg) = interrupt(&p, child, libc::SIGINT);
    assert_hooks_ended(guard, bg);
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The handler for `signal` is installed in `pid` (`SigCgt` in `/proc/PID/status`).
fn catches(pid: i32, signal: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

#[test]
fn an_adapter_interrupted_before_its_hooks_ran_follows_fail_closed() {
    for (fail_closed, code) in [(true, 2), (false, 143)] {
        let p = sleeping_guard();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ka-hooks"));
        for var in AMBIENT_VARS {
            cmd.env_remove(var);
        }
        let args: &[&str] = if fail_closed {
            &["claude", "--fail-closed"]
        } else {
            &["claude"]
        };
        // stdin stays open and empty: ka-hooks waits for the payload.
        let mut child = cmd
            .args(args)
            .env("KA_CONFIG_DIR", &p.config_dir)
            .env("KA_DATA_DIR", &p.data_dir)
            .current_dir(&p.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ka-hooks");
        let pid = i32::try_from(child.id()).expect("pid");
        eventually("ka-hooks never installed its SIGTERM handler", || {
            catches(pid, libc::SIGTERM)
        });
        // SAFETY: kill of the child this test spawned and has not reaped.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().expect("try_wait").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("ka-hooks did not exit after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let output = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{stderr}");
        if fail_closed {
            assert!(stderr.contains("--fail-closed"), "{stderr}");
        }
    }
}
