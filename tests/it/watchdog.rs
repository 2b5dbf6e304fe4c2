//! Hooks die with their host, SIGKILL included ([`ka_hooks::watchdog`]): when the watchdog
//! starts, and what ends a hook whose host is killed before it does. Linux: they read `/proc`.
#![cfg(target_os = "linux")]

use crate::support;

use std::process::{Command, Stdio};

use support::{eventually, group_gone, hook, pid_in, Project, AMBIENT_VARS};

/// `ka-hooks run pre_tool_use --tool bash` in `p`, on the thread fallback (and `std`'s spawn)
/// when `fallback`.
fn host(p: &Project, fallback: bool) -> Command {
    let mut host = Command::new(env!("CARGO_BIN_EXE_ka-hooks"));
    for var in AMBIENT_VARS {
        host.env_remove(var);
    }
    host.env_remove(ka_hooks::process::FORCE_FALLBACK_VAR);
    if fallback {
        host.env(ka_hooks::process::FORCE_FALLBACK_VAR, "1");
    }
    host.env("KA_CONFIG_DIR", &p.config_dir)
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
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    host
}

/// Runs a hook that, after `first`, writes the command lines of its host's children (one line
/// each), and returns them with the hook's pid.
fn children_of_the_host(first: &str, fallback: bool) -> (Vec<String>, i32) {
    let p = Project::new();
    p.user(&hook(
        "look",
        "pre_tool_use",
        &format!(
            "{first} for c in $(cat /proc/$PPID/task/*/children); do \
             tr '\\0\\n' '  ' < /proc/$c/cmdline; echo; done > children; echo $$ > pid"
        ),
        &[],
    ));
    let status = host(&p, fallback).status().expect("run ka-hooks");
    assert!(status.success(), "{status:?}");
    let children = p.read("children").expect("the hook's list");
    let lines = children.lines().map(str::to_owned).collect();
    (lines, pid_in(&p, "pid"))
}

/// A hook that runs on is put on the watchdog's list, the watchdog started for it.
#[test]
fn a_hook_that_runs_on_gets_the_watchdog() {
    for fallback in [false, true] {
        let (children, _) = children_of_the_host("sleep 0.3;", fallback);
        assert_eq!(children.len(), 2, "fallback {fallback}: {children:?}");
        assert!(
            children.iter().any(|c| c.contains("kill -s KILL")),
            "fallback {fallback}: no watchdog in {children:?}"
        );
    }
}

/// Where `std` spawns the hook (macOS; here the forced fallback), its leader has no
/// parent-death signal: the watchdog is up before the first hook starts.
#[test]
fn without_the_own_spawn_the_watchdog_starts_before_the_hook() {
    let (children, _) = children_of_the_host("", true);
    assert_eq!(children.len(), 2, "{children:?}");
}

/// The host is SIGKILLed the moment its hook has started, before the watchdog may run: the
/// hook's leader dies all the same, by its parent-death signal (ka's own spawn).
#[test]
fn a_hook_dies_with_a_host_killed_the_moment_it_started() {
    let p = Project::new();
    p.user(&hook(
        "slow",
        "pre_tool_use",
        "echo $$ > pid; exec sleep 60",
        &[],
    ));
    let mut host = host(&p, false).spawn().expect("spawn ka-hooks");
    let pid = pid_in(&p, "pid");
    host.kill().expect("SIGKILL the host");
    host.wait().expect("reap the host");
    eventually("the hook outlived its SIGKILLed host", || group_gone(pid));
}
