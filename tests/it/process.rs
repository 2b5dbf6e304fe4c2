//! The hook runner against real `sh` scripts.

use std::{
    fs,
    path::Path,
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use crate::support;

use ka_hooks::process::*;
use support::{eventually, group_gone, process_gone};

const TIMEOUT: Duration = Duration::from_secs(5);
/// The contract: `run` returns within the timeout plus this.
const SLACK: Duration = Duration::from_secs(1);

fn run_with(
    cwd: &Path,
    command: &str,
    env: &[(String, String)],
    stdin: Arc<[u8]>,
    timeout: Duration,
) -> Finished {
    let started = Instant::now();
    let finished = run(&HookProcess {
        command,
        cwd,
        env,
        clean_env: false,
        stdin,
        timeout,
        cancel: None,
        deadline: None,
    });
    let elapsed = started.elapsed();
    assert!(
        elapsed < timeout + SLACK,
        "`{command}` took {elapsed:?}, limit {timeout:?} + 1 s"
    );
    finished
}

/// Run `command` in a scratch directory with no env additions and an empty payload.
fn run_sh(command: &str, timeout: Duration) -> Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    run_with(dir.path(), command, &[], Arc::from(&b""[..]), timeout)
}

fn pid_of(finished: &Finished) -> i32 {
    finished.pid.expect("hook started") as i32
}

fn first_line_pid(text: &str) -> i32 {
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("expected a pid line in {text:?}"))
}

#[test]
fn exit_zero_captures_stdout() {
    let f = run_sh(r#"echo hello; echo '{"a":1}'"#, TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "hello\n{\"a\":1}\n");
    assert!(!f.stdout_truncated);
    assert_eq!(f.stderr, "");
    assert!(!f.output_held_open);
    assert!(f.pid.is_some());
}

#[test]
fn exit_two_captures_stderr() {
    let f = run_sh("echo 'no edits under src/' >&2; exit 2", TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(2));
    assert_eq!(f.stderr, "no edits under src/\n");
    assert_eq!(f.stdout, "");
}

#[test]
fn exit_three_is_reported_as_exit_three() {
    let f = run_sh("exit 3", TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(3));
    assert_eq!(f.termination.exit_code(), Some(3));
    assert_eq!(f.termination.describe(), "exit 3");
}

#[test]
fn env_vars_and_cwd_are_applied_on_top_of_inherited_env() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = [
        ("KA_EVENT".to_owned(), "pre_tool_use".to_owned()),
        ("KA_SPACED".to_owned(), "a b  c".to_owned()),
    ];
    let f = run_with(
        dir.path(),
        r#"printf '%s|%s|%s|%s' "$KA_EVENT" "$KA_SPACED" "$(pwd -P)" "${PATH:+inherited}""#,
        &env,
        Arc::from(&b""[..]),
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    let real = dir.path().canonicalize().expect("canonicalize");
    assert_eq!(
        f.stdout,
        format!("pre_tool_use|a b  c|{}|inherited", real.display())
    );
}

#[test]
fn stdin_payload_is_received_exactly() {
    let mut payload = String::from(r#"{"event":"pre_tool_use","tool":"Edit","arguments":{"p":""#);
    // Larger than a pipe buffer, so writing and reading must overlap.
    while payload.len() < 300_000 {
        payload.push_str("ünïcödé \\\" \u{1F980} ");
    }
    payload.push_str("\"}}");
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(
        dir.path(),
        "cat",
        &[],
        Arc::from(payload.as_bytes()),
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, payload);
}

#[test]
fn concurrent_hooks_share_one_payload() {
    let payload: Arc<[u8]> = Arc::from(&b"{\"event\":\"stop\",\"stop\":\"done\"}"[..]);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let payload = Arc::clone(&payload);
            thread::spawn(move || {
                let dir = tempfile::tempdir().expect("tempdir");
                run_with(dir.path(), "cat", &[], payload, TIMEOUT)
            })
        })
        .collect();
    for handle in handles {
        let f = handle.join().expect("hook thread");
        assert_eq!(f.termination, Termination::Exited(0));
        assert_eq!(f.stdout.as_bytes(), &payload[..]);
    }
}

#[test]
fn timeout_kills_the_process_group() {
    let timeout = Duration::from_secs(1);
    let f = run_sh("sleep 1000", timeout);
    assert_eq!(f.termination, Termination::TimedOut);
    assert_eq!(
        f.termination.describe_with_timeout(timeout),
        "timed out after 1s"
    );
    let pgid = pid_of(&f);
    eventually("the hook's process group survived the timeout", || {
        group_gone(pgid)
    });
}

#[test]
fn timeout_kills_grandchild_holding_stdout() {
    let f = run_sh(
        "(sleep 1000; echo late) & echo $! >&2; sleep 1000",
        Duration::from_secs(1),
    );
    assert_eq!(f.termination, Termination::TimedOut);
    assert!(!f.output_held_open);
    let grandchild = first_line_pid(&f.stderr);
    eventually("the grandchild survived the timeout", || {
        process_gone(grandchild)
    });
    let pgid = pid_of(&f);
    eventually("the hook's process group survived", || group_gone(pgid));
}

/// Attack: a hook leader that moved itself into another process group survived its timeout.
#[test]
fn timeout_kills_a_leader_that_moved_itself_into_another_group() {
    // Perl, because `sh` cannot change its own process group. It joins the group of its parent
    // (this test process) and ignores TERM, so only a KILL aimed at the leader itself ends it.
    let f = run_sh(
        r#"exec perl -e '$SIG{TERM} = "IGNORE"; setpgrp(0, getpgrp(getppid())) or die "setpgrp: $!"; print STDERR "$$\n"; sleep 1000'"#,
        Duration::from_secs(1),
    );
    assert_eq!(f.termination, Termination::TimedOut, "{}", f.stderr);
    let leader = pid_of(&f);
    assert_eq!(first_line_pid(&f.stderr), leader, "the leader moved");
    let moved_to = fs::read_to_string(format!("/proc/{leader}/stat")).ok();
    eventually(
        &format!("the leader that left its group survived its timeout ({moved_to:?})"),
        || process_gone(leader),
    );
}

/// A hook that stops itself (SIGSTOP) has not ended: it runs into its timeout, whose KILL ends
/// it and its group. (macOS's `waitid` reports a stop as if it were an exit; the thread fallback
/// must ask again rather than reap, which would block on the stopped leader.)
#[test]
fn a_stopped_hook_runs_into_its_timeout_and_its_group_is_killed() {
    let f = run_sh(
        "sleep 1000 & echo $! >&2; kill -STOP $$; echo resumed",
        Duration::from_secs(1),
    );
    assert_eq!(f.termination, Termination::TimedOut, "{f:?}");
    assert_eq!(f.stdout, "");
    let background = first_line_pid(&f.stderr);
    eventually("the stopped hook's background child survived", || {
        process_gone(background)
    });
    let pgid = pid_of(&f);
    eventually("the stopped hook's group survived", || group_gone(pgid));
}

#[test]
fn hook_ignoring_sigterm_is_killed_after_grace() {
    let f = run_sh(
        "trap '' TERM; sleep 1000; echo survived",
        Duration::from_secs(1),
    );
    assert_eq!(f.termination, Termination::TimedOut);
    assert_eq!(f.stdout, "");
    let pgid = pid_of(&f);
    eventually("the TERM-ignoring group survived", || group_gone(pgid));
}

#[test]
fn exit_kills_background_daemon_holding_stdout() {
    let f = run_sh("sleep 1000 & echo $! >&2; echo '{}'; exit 0", TIMEOUT);
    // Not TimedOut: the held stdout did not make us wait for the daemon.
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "{}\n");
    assert!(!f.output_held_open);
    let daemon = first_line_pid(&f.stderr);
    eventually("the background daemon survived the hook", || {
        process_gone(daemon)
    });
    let pgid = pid_of(&f);
    eventually("the hook's process group survived", || group_gone(pgid));
}

#[test]
fn setsid_grandchild_holding_stdout_does_not_block_return() {
    let dir = tempfile::tempdir().expect("tempdir");
    let timeout = Duration::from_secs(2);
    let f = run_with(
        dir.path(),
        "setsid sh -c 'echo $$ > held.pid; exec sleep 30' &
         while [ ! -s held.pid ]; do sleep 0.01; done
         echo done; exit 0",
        &[],
        Arc::from(&b""[..]),
        timeout,
    );
    let held = fs::read_to_string(dir.path().join("held.pid"))
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    if let Some(pid) = held {
        // SAFETY: plain kill of the sleeper this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(held.is_some(), "the escaped sleeper did not record its pid");
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "done\n");
    assert!(f.output_held_open);
}

#[test]
fn huge_stdout_is_capped_and_marked_truncated() {
    let f = run_sh("head -c 100000000 /dev/zero", TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout.len(), STDOUT_CAP);
    assert!(f.stdout_truncated);
    assert!(!f.stderr_truncated);
}

#[test]
fn huge_stderr_is_capped_and_marked_truncated() {
    let f = run_sh("head -c 10000000 /dev/zero >&2; echo ok", TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stderr.len(), STDERR_CAP);
    assert!(f.stderr_truncated);
    assert_eq!(f.stdout, "ok\n");
    assert!(!f.stdout_truncated);
}

#[test]
fn output_of_exactly_the_cap_is_not_truncated() {
    let f = run_sh(&format!("head -c {STDERR_CAP} /dev/zero >&2"), TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stderr.len(), STDERR_CAP);
    assert!(!f.stderr_truncated);
}

#[test]
fn hook_exiting_without_reading_large_payload_is_fine() {
    let payload: Arc<[u8]> = vec![b'x'; 10_000_000].into();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(dir.path(), "exit 0", &[], payload, TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stderr, "");
}

#[test]
fn hook_closing_stdin_early_keeps_running() {
    let payload: Arc<[u8]> = vec![b'x'; 1_000_000].into();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(
        dir.path(),
        "head -c 5 >/dev/null; exec 0<&-; sleep 0.2; echo still here",
        &[],
        payload,
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "still here\n");
}

#[test]
fn invalid_utf8_output_is_replaced_lossily() {
    let f = run_sh(r"printf '\377\376ok'; printf '\300bad' >&2", TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "\u{FFFD}\u{FFFD}ok");
    assert_eq!(f.stderr, "\u{FFFD}bad");
}

#[test]
fn death_by_sigkill_is_signaled_9() {
    let f = run_sh("kill -9 $$", TIMEOUT);
    assert_eq!(f.termination, Termination::Signaled(9));
    assert_eq!(f.termination.describe(), "killed by SIGKILL");
}

#[test]
fn death_by_sigsegv_is_signaled_11() {
    let f = run_sh("kill -SEGV $$", TIMEOUT);
    assert_eq!(f.termination, Termination::Signaled(11));
    assert_eq!(f.termination.signal(), Some(11));
    assert_eq!(f.termination.describe(), "killed by SIGSEGV");
}

#[test]
fn missing_command_exits_127() {
    let f = run_sh("definitely-not-a-command-xyz", TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(127));
    assert!(!f.stderr.is_empty(), "sh explains the missing command");
}

#[test]
fn non_executable_script_exits_126() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("hook.sh");
    fs::write(&script, "#!/bin/sh\necho ran\n").expect("write script");
    // Written without any execute bit (even root cannot exec that).
    let f = run_with(
        dir.path(),
        &format!("'{}'", script.display()),
        &[],
        Arc::from(&b""[..]),
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(126));
    assert_eq!(f.stdout, "");
}

#[test]
fn missing_cwd_is_spawn_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(
        &dir.path().join("does-not-exist"),
        "echo hi",
        &[],
        Arc::from(&b""[..]),
        TIMEOUT,
    );
    match &f.termination {
        Termination::SpawnFailed(err) => assert!(err.contains("does-not-exist"), "{err}"),
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
    assert!(f.termination.describe().starts_with("failed to start: "));
    assert_eq!(f.pid, None);
    assert_eq!(f.stdout, "");
}

#[test]
fn many_fast_hooks_in_a_row_all_exit_zero() {
    for _ in 0..20 {
        let f = run_sh("true", TIMEOUT);
        assert_eq!(f.termination, Termination::Exited(0));
        assert!(!f.output_held_open);
    }
}

// ---------------------------------------------------------------------------------------------
// The single poll loop: several pipes at once, none of them may starve or deadlock another.
// ---------------------------------------------------------------------------------------------

/// `n` numbered lines of about 110 bytes, as a hook prints them with `echo "<tag> $i <pad>"`.
fn numbered_lines(tag: &str, n: usize, pad: &str) -> String {
    (0..n).map(|i| format!("{tag} {i} {pad}\n")).collect()
}

#[test]
fn interleaved_stdout_and_stderr_while_a_large_stdin_is_never_read() {
    let pad = "x".repeat(100);
    let command = format!(
        r#"i=0; while [ $i -lt 5000 ]; do echo "out $i {pad}"; echo "err $i {pad}" >&2; i=$((i+1)); done"#
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let payload: Arc<[u8]> = vec![b'p'; 2_000_000].into();
    let f = run_with(dir.path(), &command, &[], payload, TIMEOUT);
    assert_eq!(f.termination, Termination::Exited(0));
    // 550 kB: more than a pipe holds, less than the cap.
    let out = numbered_lines("out", 5000, &pad);
    assert_eq!(f.stdout, out);
    assert!(!f.stdout_truncated);
    let err = numbered_lines("err", 5000, &pad);
    assert_eq!(f.stderr.len(), STDERR_CAP);
    assert!(err.starts_with(&f.stderr));
    assert!(f.stderr_truncated);
    assert!(!f.output_held_open);
}

#[test]
fn output_written_before_reading_a_large_stdin_does_not_deadlock() {
    // Both sides block on a full pipe unless the runner reads while it still has payload to write.
    let dir = tempfile::tempdir().expect("tempdir");
    let payload: Arc<[u8]> = vec![b'p'; 1_000_000].into();
    let f = run_with(
        dir.path(),
        "head -c 200000 /dev/zero >&2; head -c 500000 /dev/zero; wc -c",
        &[],
        payload,
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    let (zeros, count) = f.stdout.split_at(500_000);
    assert!(zeros.bytes().all(|b| b == 0));
    assert_eq!(count.trim(), "1000000");
    assert_eq!(f.stderr.len(), STDERR_CAP);
    assert!(f.stderr_truncated);
}

#[test]
fn payload_larger_than_a_pipe_reaches_a_slow_reader_exactly() {
    // 1000 lines of 100 bytes. The hook first lets the pipe fill up, then reads byte by byte (the
    // shell's `read` on a pipe), so the runner waits for room many times.
    let line = format!("{}\n", "y".repeat(99));
    let payload: String = line.repeat(1000);
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(
        dir.path(),
        r#"sleep 0.2; n=0; while IFS= read -r line; do [ ${#line} -eq 99 ] && n=$((n+1)); done; echo $n"#,
        &[],
        Arc::from(payload.as_bytes()),
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "1000\n");
}

#[test]
fn payload_is_received_exactly_by_a_reader_that_starts_late() {
    // Printable, position-dependent bytes: a lost or repeated chunk shows.
    let payload: Vec<u8> = (0..600_000u32).map(|i| b'!' + (i % 94) as u8).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(
        dir.path(),
        "sleep 0.2; cat",
        &[],
        Arc::from(&payload[..]),
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    assert!(f.stdout.as_bytes() == &payload[..], "payload garbled");
}

#[test]
fn hook_closing_stdout_early_is_still_waited_for() {
    let started = Instant::now();
    let f = run_sh(
        "echo early; exec >&-; sleep 0.3; echo late >&2; exit 0",
        TIMEOUT,
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "early\n");
    assert_eq!(f.stderr, "late\n");
    assert!(!f.output_held_open);
}

#[test]
fn hook_closing_all_its_pipes_early_is_still_waited_for() {
    let started = Instant::now();
    let f = run_sh("echo bye; exec <&- >&- 2>&-; sleep 0.3; exit 4", TIMEOUT);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(f.termination, Termination::Exited(4));
    assert_eq!(f.stdout, "bye\n");
    assert!(!f.output_held_open);
}

#[test]
fn hook_closing_all_its_pipes_still_times_out() {
    let f = run_sh("exec <&- >&- 2>&-; sleep 1000", Duration::from_secs(1));
    assert_eq!(f.termination, Termination::TimedOut);
    let pgid = pid_of(&f);
    eventually("the hook's process group survived the timeout", || {
        group_gone(pgid)
    });
}

#[test]
fn endless_output_on_both_streams_does_not_delay_the_timeout() {
    let f = run_sh("yes to-stderr >&2 & yes", Duration::from_secs(1));
    assert_eq!(f.termination, Termination::TimedOut);
    assert_eq!(f.stdout.len(), STDOUT_CAP);
    assert!(f.stdout_truncated);
    assert_eq!(f.stderr.len(), STDERR_CAP);
    assert!(f.stderr_truncated);
    let pgid = pid_of(&f);
    eventually("the hook's process group survived the timeout", || {
        group_gone(pgid)
    });
}

#[test]
fn an_sh_planted_earlier_in_path_is_not_used() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).expect("mkdir bin");
    let planted = bin.join("sh");
    fs::write(&planted, "#!/bin/sh\necho planted\n").expect("write planted sh");
    fs::set_permissions(
        &planted,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod planted sh");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let f = run_with(
        dir.path(),
        "echo real",
        &[("PATH".to_owned(), path)],
        Arc::from(&b""[..]),
        TIMEOUT,
    );
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "real\n");
}

static SIGPIPES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn count_sigpipe(_: libc::c_int) {
    SIGPIPES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn sigpipe_from_a_hook_that_stops_reading_never_reaches_the_process() {
    // Behave like an embedding program that did not ignore SIGPIPE (Rust programs do): count them.
    // SAFETY: sigaction is plain old data; the handler only touches an atomic (async-signal-safe).
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = count_sigpipe as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGPIPE, &action, &mut old), 0);
    }
    let payload: Arc<[u8]> = vec![b'x'; 4_000_000].into();
    let dir = tempfile::tempdir().expect("tempdir");
    // Each stops reading with most of the payload unwritten, so a write fails with EPIPE.
    for command in [
        "exec 0<&-; sleep 0.1; exit 0",
        "head -c 10 >/dev/null; exec 0<&-; sleep 0.1; exit 5",
        "exit 0",
    ] {
        let f = run_with(dir.path(), command, &[], Arc::clone(&payload), TIMEOUT);
        assert!(f.termination.exit_code().is_some(), "{command}: {f:?}");
    }
    // SAFETY: plain libc calls on valid sigaction/sigset values owned by this frame.
    let pending = unsafe {
        libc::sigaction(libc::SIGPIPE, &old, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set);
        libc::sigismember(&set, libc::SIGPIPE) == 1
    };
    assert_eq!(SIGPIPES.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(!pending, "a SIGPIPE was left pending");
}

/// Set in the process [`helper_threads_run_exactly_when_the_fallback_is_in_use`] runs itself in.
#[cfg(target_os = "linux")]
const HELPER_THREADS_ALONE: &str = "KA_HOOKS_TEST_HELPER_THREADS_ALONE";

/// The poll loop needs no helper thread; the thread fallback names its threads `ka-hook-*`. The
/// fallback is in use without `pidfd_open`, and wherever `KA_HOOKS_PROCESS_FALLBACK` forces it:
/// `scripts/test.sh` runs the process tests a second time so, to test the path macOS takes, and
/// this test fails that run should the switch not take effect. It looks at every thread of its
/// process, so it runs itself again in a process of its own: under a runner that runs the tests
/// on threads of one process (`cargo test`), other tests' hooks start `ka-hook-*` threads too.
#[cfg(target_os = "linux")]
#[test]
fn helper_threads_run_exactly_when_the_fallback_is_in_use() {
    if std::env::var_os(HELPER_THREADS_ALONE).is_none() {
        let name = "process::helper_threads_run_exactly_when_the_fallback_is_in_use";
        let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(HELPER_THREADS_ALONE, "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run the test binary");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{stdout}\n{stderr}"
        );
        return;
    }
    let forced = std::env::var(FORCE_FALLBACK_VAR).is_ok_and(|v| {
        ["1", "true", "yes", "on"].contains(&v.trim().to_ascii_lowercase().as_str())
    });
    assert_eq!(
        fallback_forced(),
        forced,
        "{FORCE_FALLBACK_VAR} was misread"
    );
    // SAFETY: pidfd_open takes no pointers; the fd, if any, is closed at once.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
    if pidfd >= 0 {
        // SAFETY: closing the descriptor just opened.
        unsafe { libc::close(pidfd as libc::c_int) };
    } else {
        eprintln!("no pidfd_open on this kernel: the thread fallback is in use");
    }
    let threads_expected = forced || pidfd < 0;

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let monitor = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut seen = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                for task in fs::read_dir("/proc/self/task")
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    let comm = fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                    if comm.starts_with("ka-hook") {
                        seen.push(comm.trim().to_owned());
                    }
                }
                thread::sleep(Duration::from_millis(5));
            }
            seen
        })
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run_with(
        dir.path(),
        "cat >/dev/null; echo out; echo err >&2; sleep 0.3",
        &[],
        vec![b'x'; 1_000_000].into(),
        TIMEOUT,
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = monitor.join().expect("monitor thread");
    assert_eq!(f.termination, Termination::Exited(0));
    assert_eq!(f.stdout, "out\n");
    if threads_expected {
        assert!(
            seen.iter().any(|name| name == "ka-hook-wait"),
            "the thread fallback was not used: {seen:?}"
        );
    } else {
        assert!(seen.is_empty(), "helper threads ran: {seen:?}");
    }
}
