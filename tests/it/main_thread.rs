//! The binary's `main` is Rust's own (`src/main.rs`): a panic on the main thread ends the process
//! the ordinary way (the panic message, exit 101), and a stack overflow is reported by name. A C
//! `main` turned the first into "panic in a function that cannot unwind" (SIGABRT, exit 134) and
//! the second into a bare SIGSEGV.
#![cfg(unix)]

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crate::support;

/// `ka-hooks install claude --remove` with no settings file prints "nothing to remove" with
/// `println!`, which panics when stdout is a pipe nobody reads (EPIPE: Rust's runtime ignores
/// SIGPIPE). That is the main-thread panic used here; if it stops panicking, this test fails and
/// says so, rather than pass without a panic.
#[test]
fn a_main_thread_panic_exits_101_with_its_message() {
    let p = support::Project::new();
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ka-hooks"));
    for var in support::AMBIENT_VARS {
        cmd.env_remove(var);
    }
    let out = cmd
        .env("KA_CONFIG_DIR", &p.config_dir)
        .env("KA_DATA_DIR", &p.data_dir)
        .env("CLAUDE_CONFIG_DIR", p.base.join("claude-home"))
        .current_dir(&p.root)
        .args(["install", "claude", "--remove"])
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run ka-hooks");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("panicked"),
        "no panic (status {:?}): pick another main-thread panic for this test: {stderr}",
        out.status
    );
    assert_eq!(
        out.status.signal(),
        None,
        "killed by a signal (SIGABRT is a C main's abort on unwinding): {stderr}"
    );
    assert_eq!(out.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("cannot unwind"), "{stderr}");
}

/// A main stack of 64 KiB (`ulimit -s`) is too small for a run: Rust's runtime reports the
/// overflow by name and aborts.
#[test]
fn a_main_thread_stack_overflow_is_reported() {
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -s 64 && exec \"$0\" --help")
        .arg(env!("CARGO_BIN_EXE_ka-hooks"))
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has overflowed its stack"),
        "status {:?}, stderr: {stderr}",
        out.status
    );
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{stderr}");
}
