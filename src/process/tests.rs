//! Unit tests of the runner: the same scenarios through the poll loop and the thread fallback.

use std::sync::Mutex;

use super::threaded::{read_capped, take_output};
use super::*;

#[test]
fn describe_is_short_and_names_signals() {
    assert_eq!(Termination::Exited(3).describe(), "exit 3");
    assert_eq!(
        Termination::Signaled(libc::SIGKILL).describe(),
        "killed by SIGKILL"
    );
    assert_eq!(Termination::Signaled(63).describe(), "killed by signal 63");
    assert_eq!(
        Termination::TimedOut.describe_with_timeout(Duration::from_secs(10)),
        "timed out after 10s"
    );
    assert_eq!(
        Termination::TimedOut.describe_with_timeout(Duration::from_millis(1500)),
        "timed out after 1.5s"
    );
    assert_eq!(
        Termination::TimedOut.describe_with_timeout(Duration::from_millis(250)),
        "timed out after 250ms"
    );
    assert_eq!(
        Termination::SpawnFailed("nope".into()).to_string(),
        "failed to start: nope"
    );
}

type Runner = fn(HookChild, &HookProcess<'_>, Instant) -> Finished;

/// The poll loop (where the kernel has `pidfd_open`) and the thread fallback, to run the same
/// scenarios through both.
fn runners() -> Vec<(&'static str, Runner)> {
    fn threads(child: HookChild, hook: &HookProcess<'_>, started: Instant) -> Finished {
        run_threaded(child, hook, started, &mut Watch::off())
    }
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut runners: Vec<(&'static str, Runner)> = vec![("threads", threads)];
    #[cfg(target_os = "linux")]
    {
        fn run_polled(child: HookChild, hook: &HookProcess<'_>, started: Instant) -> Finished {
            match polled::prepare(&child) {
                Some(pidfd) => polled::run(child, pidfd, hook, started, &mut Watch::off()),
                None => panic!("pidfd_open worked a moment ago"),
            }
        }
        if polled::pidfd_open(std::process::id()).is_some() {
            runners.push(("poll", run_polled));
        } else {
            eprintln!("no pidfd_open here: only the thread fallback is tested");
        }
    }
    runners
}

fn exec(runner: Runner, command: &str, payload: &[u8], timeout: Duration) -> Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    let hook = HookProcess {
        command,
        cwd: dir.path(),
        env: &[],
        stdin: Arc::from(payload),
        timeout,
        cancel: None,
        deadline: None,
        clean_env: false,
    };
    let started = Instant::now();
    let child = spawn(&hook, None, spawn::own()).expect("spawn /bin/sh");
    let finished = runner(child, &hook, started);
    let elapsed = started.elapsed();
    assert!(
        elapsed < timeout + Duration::from_secs(1),
        "`{command}` took {elapsed:?}"
    );
    finished
}

/// The process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.trim().chars().next());
        return !matches!(state, Some('Z' | 'X'));
    }
    if Path::new("/proc/self").exists() {
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn eventually_dead(pid: i32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive(pid) {
        assert!(Instant::now() < deadline, "{what} survived");
        thread::sleep(Duration::from_millis(10));
    }
}

fn first_line_pid(text: &str) -> i32 {
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("expected a pid line in {text:?}"))
}

const LONG: Duration = Duration::from_secs(5);

#[test]
fn both_runners_report_exit_code_stdout_and_stderr() {
    for (name, runner) in runners() {
        let f = exec(runner, "echo out; echo err >&2; exit 3", b"", LONG);
        assert_eq!(f.termination, Termination::Exited(3), "{name}");
        assert_eq!(
            (f.stdout.as_str(), f.stderr.as_str()),
            ("out\n", "err\n"),
            "{name}"
        );
        assert!(!f.output_held_open, "{name}");
    }
}

#[test]
fn both_runners_deliver_a_payload_larger_than_a_pipe() {
    let payload: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    for (name, runner) in runners() {
        let f = exec(runner, "cat", &payload, LONG);
        assert_eq!(f.termination, Termination::Exited(0), "{name}");
        assert!(
            f.stdout.as_bytes() == &payload[..],
            "{name}: payload garbled"
        );
    }
}

#[test]
fn both_runners_survive_a_hook_that_never_reads_stdin() {
    let payload = vec![b'x'; 10_000_000];
    for (name, runner) in runners() {
        let f = exec(runner, "echo done", &payload, LONG);
        assert_eq!(f.termination, Termination::Exited(0), "{name}");
        assert_eq!(f.stdout, "done\n", "{name}");
    }
}

#[test]
fn both_runners_kill_the_group_on_timeout() {
    for (name, runner) in runners() {
        let f = exec(
            runner,
            "sleep 1000 & echo $! >&2; sleep 1000",
            b"",
            Duration::from_millis(300),
        );
        assert_eq!(f.termination, Termination::TimedOut, "{name}");
        eventually_dead(first_line_pid(&f.stderr), name);
        eventually_dead(f.pid.expect("started") as i32, name);
    }
}

/// A leader that moves itself into another process group (here: the test's own) is out of
/// reach of the group kill; it must still die at its timeout.
#[test]
fn both_runners_kill_a_leader_that_left_its_group_at_timeout() {
    for (name, runner) in runners() {
        let f = exec(
            runner,
            "exec perl -e 'setpgrp(0, getpgrp(getppid())) or die \"setpgrp: $!\"; \
             print STDERR \"$$\\n\"; sleep 1000'",
            b"",
            Duration::from_millis(500),
        );
        assert_eq!(f.termination, Termination::TimedOut, "{name}: {}", f.stderr);
        let pid = f.pid.expect("started") as i32;
        assert_eq!(first_line_pid(&f.stderr), pid, "{name}: the leader moved");
        eventually_dead(pid, name);
    }
}

/// Like `exec`, with a cancel token and a dispatch deadline.
fn exec_stoppable(
    runner: Runner,
    command: &str,
    cancel: Option<&CancelToken>,
    deadline: Option<Instant>,
) -> Finished {
    let dir = tempfile::tempdir().expect("tempdir");
    let hook = HookProcess {
        command,
        cwd: dir.path(),
        env: &[],
        stdin: Arc::from(&b""[..]),
        timeout: LONG,
        cancel,
        deadline,
        clean_env: false,
    };
    let started = Instant::now();
    let child = spawn(&hook, None, spawn::own()).expect("spawn /bin/sh");
    runner(child, &hook, started)
}

#[test]
fn both_runners_end_the_group_when_cancelled_even_if_it_ignores_term() {
    for (name, runner) in runners() {
        let token = CancelToken::new();
        let canceller = {
            let token = token.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(200));
                token.cancel();
            })
        };
        let started = Instant::now();
        let f = exec_stoppable(
            runner,
            "trap '' TERM; sleep 1000 & echo $! >&2; sleep 1000",
            Some(&token),
            None,
        );
        let _ = canceller.join();
        assert_eq!(f.termination, Termination::Cancelled, "{name}");
        assert!(started.elapsed() < LONG, "{name}: {:?}", started.elapsed());
        eventually_dead(first_line_pid(&f.stderr), name);
        eventually_dead(f.pid.expect("started") as i32, name);
    }
}

#[test]
fn both_runners_treat_the_dispatch_deadline_as_a_cancel_not_a_timeout() {
    for (name, runner) in runners() {
        let deadline = Instant::now() + Duration::from_millis(200);
        let f = exec_stoppable(runner, "sleep 1000", None, Some(deadline));
        assert_eq!(f.termination, Termination::Cancelled, "{name}");
        eventually_dead(f.pid.expect("started") as i32, name);
    }
}

#[test]
fn a_cancelled_token_starts_nothing() {
    let token = CancelToken::new();
    token.cancel();
    let dir = tempfile::tempdir().expect("tempdir");
    let f = run(&HookProcess {
        command: "touch ran",
        cwd: dir.path(),
        env: &[],
        stdin: Arc::from(&b""[..]),
        timeout: LONG,
        cancel: Some(&token),
        deadline: None,
        clean_env: false,
    });
    assert_eq!(f.termination, Termination::Cancelled);
    assert_eq!(f.pid, None);
    assert!(!dir.path().join("ran").exists());
}

#[test]
fn both_runners_sigkill_a_hook_ignoring_sigterm_after_the_grace() {
    for (name, runner) in runners() {
        let started = Instant::now();
        let f = exec(
            runner,
            "trap '' TERM; sleep 1000",
            b"",
            Duration::from_millis(300),
        );
        assert!(started.elapsed() >= Duration::from_millis(300) + KILL_GRACE);
        assert_eq!(f.termination, Termination::TimedOut, "{name}");
        eventually_dead(f.pid.expect("started") as i32, name);
    }
}

#[test]
fn both_runners_kill_a_background_daemon_holding_stdout_at_exit() {
    for (name, runner) in runners() {
        let f = exec(runner, "sleep 1000 & echo $! >&2; echo '{}'", b"", LONG);
        assert_eq!(f.termination, Termination::Exited(0), "{name}");
        assert_eq!(f.stdout, "{}\n", "{name}");
        assert!(!f.output_held_open, "{name}");
        assert!(
            f.duration < Duration::from_secs(1),
            "{name}: {:?}",
            f.duration
        );
        eventually_dead(first_line_pid(&f.stderr), name);
    }
}

#[test]
fn both_runners_give_up_on_output_held_by_an_escaped_process() {
    for (name, runner) in runners() {
        let f = exec(
            runner,
            "setsid sh -c 'echo $$ >&2; exec sleep 30' & sleep 0.2; echo done",
            b"",
            LONG,
        );
        let escaped = first_line_pid(&f.stderr);
        // SAFETY: plain kill of the sleeper this test started.
        unsafe { libc::kill(escaped, libc::SIGKILL) };
        assert_eq!(f.termination, Termination::Exited(0), "{name}");
        assert_eq!(f.stdout, "done\n", "{name}");
        assert!(f.output_held_open, "{name}");
        assert!(
            f.duration < Duration::from_secs(1),
            "{name}: {:?}",
            f.duration
        );
    }
}

#[test]
fn both_runners_cap_and_mark_huge_output() {
    for (name, runner) in runners() {
        let f = exec(
            runner,
            "head -c 3000000 /dev/zero >&2; head -c 5000000 /dev/zero",
            b"",
            LONG,
        );
        assert_eq!(f.termination, Termination::Exited(0), "{name}");
        assert_eq!(f.stdout.len(), STDOUT_CAP, "{name}");
        assert!(f.stdout_truncated, "{name}");
        assert_eq!(f.stderr.len(), STDERR_CAP, "{name}");
        assert!(f.stderr_truncated, "{name}");
    }
}

#[test]
fn both_runners_report_death_by_signal() {
    for (name, runner) in runners() {
        let f = exec(runner, "kill -SEGV $$", b"", LONG);
        assert_eq!(
            f.termination,
            Termination::Signaled(libc::SIGSEGV),
            "{name}"
        );
    }
}

#[cfg(target_os = "linux")]
extern "C" fn ignore_signal(_: libc::c_int) {}

/// What a SIGPIPE test changes and restores: SIGPIPE's disposition and this thread's mask.
#[cfg(target_os = "linux")]
struct SigpipeState {
    action: libc::sigaction,
    mask: libc::sigset_t,
}

/// Give SIGPIPE the disposition `handler` and block it in this thread; the previous state.
#[cfg(target_os = "linux")]
fn handle_and_block_sigpipe(handler: libc::sighandler_t) -> SigpipeState {
    // SAFETY: sigaction and sigset_t are plain old data, owned by this frame; this changes
    // SIGPIPE's disposition and this thread's mask, which `restore_sigpipe` puts back.
    unsafe {
        let mut old: SigpipeState = std::mem::zeroed();
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGPIPE, &action, &mut old.action);
        libc::pthread_sigmask(libc::SIG_BLOCK, &sigpipe_set(), &mut old.mask);
        old
    }
}

/// Put back what [`handle_and_block_sigpipe`] changed.
#[cfg(target_os = "linux")]
fn restore_sigpipe(old: &SigpipeState) {
    // SAFETY: restores values saved by `handle_and_block_sigpipe`.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old.mask, std::ptr::null_mut());
        libc::sigaction(libc::SIGPIPE, &old.action, std::ptr::null_mut());
    }
}

/// The poll loop consumes the SIGPIPE its own failed write raised, but must not take one that
/// was already pending (blocked) in the thread before: that one belongs to the embedding program.
#[cfg(target_os = "linux")]
#[test]
fn poll_loop_leaves_a_sigpipe_that_was_pending_before_alone() {
    let Some((_, runner)) = runners().into_iter().find(|(name, _)| *name == "poll") else {
        return;
    };
    let set = sigpipe_set();
    // Like a program that handles SIGPIPE (a handler that does nothing, harmless to any other
    // test of this process): the write is guarded by the mask, the path this is about.
    let old =
        handle_and_block_sigpipe(ignore_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
    // SAFETY: sends SIGPIPE to this thread, where it stays pending (blocked).
    unsafe {
        libc::pthread_kill(libc::pthread_self(), libc::SIGPIPE);
    }
    let f = exec(runner, "exec 0<&-; sleep 0.1", &vec![b'x'; 1_000_000], LONG);
    assert_eq!(f.termination, Termination::Exited(0));
    // SAFETY: as above; the zero timeout never blocks.
    let (still_pending, consumed_again) = unsafe {
        let still = polled::sigpipe_pending();
        let no_wait: libc::timespec = std::mem::zeroed();
        libc::sigtimedwait(&set, std::ptr::null_mut(), &no_wait);
        let again = polled::sigpipe_pending();
        (still, again)
    };
    restore_sigpipe(&old);
    assert!(still_pending, "the caller's pending SIGPIPE was taken");
    assert!(!consumed_again, "more than one SIGPIPE pending");
}

#[test]
fn capture_keeps_exactly_cap_without_truncation() {
    let capture = Mutex::new(Capture::default());
    read_capped(&[7u8; 10][..], 10, &capture);
    let (text, truncated) = take_output(&capture);
    assert_eq!(text.len(), 10);
    assert!(!truncated);

    let capture = Mutex::new(Capture::default());
    read_capped(&[7u8; 11][..], 10, &capture);
    let (text, truncated) = take_output(&capture);
    assert_eq!(text.len(), 10);
    assert!(truncated);
}

#[test]
fn the_force_switch_takes_true_values_only() {
    use std::ffi::OsStr;
    for value in ["1", "true", "YES", " on "] {
        assert!(forces_fallback(Some(OsStr::new(value))), "{value:?}");
    }
    for value in ["", "0", "false", "no", "off", "2"] {
        assert!(!forces_fallback(Some(OsStr::new(value))), "{value:?}");
    }
    assert!(!forces_fallback(None));
}

/// What `run` does when [`FORCE_FALLBACK_VAR`] is set: the hook is watched by the thread
/// fallback's helper threads, not by the poll loop, so the forced second run of the process
/// tests cannot silently test the poll loop again.
#[cfg(target_os = "linux")]
#[test]
fn forcing_the_fallback_runs_the_hook_on_helper_threads() {
    /// How often a `ka-hook-wait` thread of this process was seen while `work` ran.
    fn waiters_during(work: impl FnOnce() -> Finished) -> (Finished, usize) {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let monitor = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut seen = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    for task in std::fs::read_dir("/proc/self/task")
                        .into_iter()
                        .flatten()
                        .flatten()
                    {
                        let comm =
                            std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                        seen += usize::from(comm.trim() == "ka-hook-wait");
                    }
                    thread::sleep(Duration::from_millis(5));
                }
                seen
            })
        };
        let finished = work();
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        (finished, monitor.join().expect("monitor thread"))
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let hook = HookProcess {
        command: "sleep 0.3; echo done",
        cwd: dir.path(),
        env: &[],
        stdin: Arc::from(&b""[..]),
        timeout: LONG,
        cancel: None,
        deadline: None,
        clean_env: false,
    };
    let (finished, waiters) = waiters_during(|| {
        let child = spawn(&hook, None, spawn::own()).expect("spawn /bin/sh");
        run_spawned(child, &hook, Instant::now(), true, &mut Watch::off())
    });
    assert_eq!(finished.termination, Termination::Exited(0));
    assert_eq!(finished.stdout, "done\n");
    assert!(waiters > 0, "no waiter thread: the poll loop ran");
}

/// macOS's `waitid` reports a stopped child even under `WEXITED`: only exits and deaths by
/// signal end the wait.
#[test]
fn only_an_exit_or_a_death_ends_the_wait_for_the_leader() {
    use super::threaded::ended;
    assert_eq!(ended(libc::CLD_EXITED, 3), Some(Termination::Exited(3)));
    assert_eq!(
        ended(libc::CLD_KILLED, libc::SIGKILL),
        Some(Termination::Signaled(libc::SIGKILL))
    );
    assert_eq!(
        ended(libc::CLD_DUMPED, libc::SIGSEGV),
        Some(Termination::Signaled(libc::SIGSEGV))
    );
    for code in [libc::CLD_STOPPED, libc::CLD_CONTINUED, libc::CLD_TRAPPED] {
        assert_eq!(ended(code, libc::SIGSTOP), None, "si_code {code}");
    }
}

/// A program that ignores SIGPIPE (as Rust programs do) but blocks it in the thread that runs
/// the hook: the blocked SIGPIPE of a failed payload write stays pending though ignored, so the
/// poll loop must still consume it.
#[cfg(target_os = "linux")]
#[test]
fn poll_loop_consumes_its_sigpipe_where_it_is_ignored_but_blocked() {
    let Some((_, runner)) = runners().into_iter().find(|(name, _)| *name == "poll") else {
        return;
    };
    let set = sigpipe_set();
    let old = handle_and_block_sigpipe(libc::SIG_IGN);
    let f = exec(runner, "exec 0<&-; sleep 0.1", &vec![b'x'; 1_000_000], LONG);
    assert_eq!(f.termination, Termination::Exited(0));
    // SAFETY: as above; the zero timeout never blocks.
    let left = unsafe {
        let left = polled::sigpipe_pending();
        let no_wait: libc::timespec = std::mem::zeroed();
        libc::sigtimedwait(&set, std::ptr::null_mut(), &no_wait);
        left
    };
    restore_sigpipe(&old);
    assert!(!left, "the hook's SIGPIPE was left pending");
}

/// Set in the process [`spawns_hold_while_the_hosts_process_group_is_flooded_with_a_signal`]
/// runs itself in.
const STORM: &str = "KA_HOOKS_TEST_SIGNAL_STORM";
static HOST_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static HANDLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static HANDLED_ELSEWHERE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn count_winch(_: libc::c_int) {
    use std::sync::atomic::Ordering::SeqCst;
    // SAFETY: getpid has no preconditions and is async-signal-safe.
    if unsafe { libc::getpid() } != HOST_PID.load(SeqCst) {
        HANDLED_ELSEWHERE.fetch_add(1, SeqCst);
    }
    HANDLED.fetch_add(1, SeqCst);
}

/// Many threads start hooks while a thread floods the host's process group with a signal the
/// host handles: every hook runs and reports as usual (the runner retries what the signal
/// interrupts), and the host's handler never runs in a spawned child (which, before it resets
/// the handlers, shares the host's memory and is in its process group). It runs itself again
/// in a process group of its own, so that the flood reaches no other process.
#[test]
fn spawns_hold_while_the_hosts_process_group_is_flooded_with_a_signal() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    if std::env::var_os(STORM).is_none() {
        use std::os::unix::process::CommandExt;
        let name =
            "process::tests::spawns_hold_while_the_hosts_process_group_is_flooded_with_a_signal";
        let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(STORM, "1")
            .process_group(0)
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
    // SAFETY: getpid has no preconditions; the handler only touches atomics and getpid.
    unsafe {
        HOST_PID.store(libc::getpid(), SeqCst);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = count_winch as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = libc::SA_RESTART;
        assert_eq!(
            libc::sigaction(libc::SIGWINCH, &action, std::ptr::null_mut()),
            0
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flood = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            while !stop.load(SeqCst) {
                // SAFETY: kill(0, ..) signals our own process group, which only this test's
                // process is in (see above).
                unsafe { libc::kill(0, libc::SIGWINCH) };
                thread::yield_now();
            }
        })
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let spawners: Vec<_> = (0..8)
        .map(|_| {
            let dir = dir.path().to_owned();
            thread::spawn(move || {
                for _ in 0..10 {
                    let f = run(&HookProcess {
                        command: "cat; echo \" $$\"",
                        cwd: &dir,
                        env: &[],
                        stdin: Arc::from(&b"payload"[..]),
                        timeout: LONG,
                        cancel: None,
                        deadline: None,
                        clean_env: false,
                    });
                    assert_eq!(f.termination, Termination::Exited(0), "{f:?}");
                    let pid = f.pid.expect("started");
                    assert_eq!(f.stdout, format!("payload {pid}\n"), "{f:?}");
                }
            })
        })
        .collect();
    let results: Vec<_> = spawners.into_iter().map(thread::JoinHandle::join).collect();
    stop.store(true, SeqCst);
    flood.join().expect("the flooding thread");
    for result in results {
        result.expect("a spawning thread");
    }
    assert!(HANDLED.load(SeqCst) > 0, "the flood never arrived");
    assert_eq!(
        HANDLED_ELSEWHERE.load(SeqCst),
        0,
        "the host's handler ran in a spawned child"
    );
}

/// A hook goes on the watchdog's list only once it is due (a short hook costs no watchdog),
/// through the poll loop and the thread fallback alike.
#[test]
fn a_hook_goes_on_the_watchdogs_list_only_once_it_is_due() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hook = HookProcess {
        command: "sleep 0.05",
        cwd: dir.path(),
        env: &[],
        stdin: Arc::from(&b""[..]),
        timeout: LONG,
        cancel: None,
        deadline: None,
        clean_env: false,
    };
    for (after, due) in [(Duration::from_secs(3600), false), (Duration::ZERO, true)] {
        for threads_only in [false, true] {
            let started = Instant::now();
            let child = spawn(&hook, None, spawn::own()).expect("spawn /bin/sh");
            let mut watch = Watch::pending(child.id(), started + after);
            let f = run_spawned(child, &hook, started, threads_only, &mut watch);
            assert_eq!(f.termination, Termination::Exited(0), "{f:?}");
            assert_eq!(watch.is_on(), due, "due {due}, threads only {threads_only}");
        }
    }
    assert_eq!(crate::watchdog::status(), Ok(()));
}
