//! The fallback when no pidfd can be had: a waiter thread, two reader threads and a writer
//! thread per hook (see the module doc of [`super`]).

use std::{
    io::{self, Read, Write},
    sync::{
        mpsc::{self, Receiver, RecvTimeoutError, Sender},
        Arc, Mutex, MutexGuard,
    },
    thread,
    time::{Duration, Instant},
};

use super::{
    child::HookChild, kill_group, kill_leader, lossy, reap_in_background, sigpipe_set,
    termination_of, Capture, Finished, HookProcess, Termination, CHUNK, KILL_GRACE, OUTPUT_DRAIN,
    REAP_WAIT, STDERR_CAP, STDOUT_CAP,
};
use crate::watchdog::Watch;

/// The fallback when no pidfd can be had: a waiter thread, two reader threads and a writer thread.
pub(super) fn run_threaded(
    mut child: HookChild,
    hook: &HookProcess<'_>,
    started: Instant,
    watch: &mut Watch,
) -> Finished {
    let pid = child.id();
    // Pids are positive `pid_t`s; `Child::id` just widened one to u32.
    let pgid = pid as libc::pid_t;

    let stdout = Arc::new(Mutex::new(Capture::default()));
    let stderr = Arc::new(Mutex::new(Capture::default()));
    let (done_tx, done_rx) = mpsc::channel();
    let (exit_tx, exit_rx) = mpsc::channel();
    let readers = match start_threads(
        &mut child,
        pgid,
        &hook.stdin,
        (&stdout, &stderr),
        done_tx,
        exit_tx,
    ) {
        Ok(readers) => readers,
        Err(err) => {
            // Threads already started end by themselves once the group is dead and the pipes close.
            kill_group(pgid, libc::SIGKILL);
            reap_in_background(child);
            let mut finished =
                Finished::spawn_failed(format!("could not start a thread: {err}"), started);
            finished.pid = Some(pid);
            return finished;
        }
    };

    let mut timed_out = false;
    let mut cancelled = false;
    let mut exited = match wait_or_stop(&exit_rx, hook, started, watch) {
        Waited::Exited(report) => Some(report),
        waited @ (Waited::TimedOut | Waited::Stopped) => {
            timed_out = matches!(waited, Waited::TimedOut);
            cancelled = matches!(waited, Waited::Stopped);
            kill_group(pgid, libc::SIGTERM);
            kill_leader(pgid, libc::SIGTERM);
            exit_rx.recv_timeout(KILL_GRACE).ok()
        }
        // The waiter cannot vanish without reporting; treat it like a leader we lost track of.
        Waited::Lost => None,
    };
    // Always, even after a normal exit: no background child of the hook may outlive it. The leader is
    // not reaped yet, so `pgid` still names this group.
    kill_group(pgid, libc::SIGKILL);
    if exited.is_none() {
        // Still running: it may have left its group.
        kill_leader(pgid, libc::SIGKILL);
        exited = exit_rx.recv_timeout(REAP_WAIT).ok();
    }

    let termination = reap_and_judge(child, exited, timed_out, cancelled);

    let output_held_open = !await_readers(&done_rx, readers, OUTPUT_DRAIN);
    let (stdout, stdout_truncated) = take_output(&stdout);
    let (stderr, stderr_truncated) = take_output(&stderr);
    Finished {
        termination,
        stdout,
        stdout_truncated,
        stderr,
        stderr_truncated,
        duration: started.elapsed(),
        output_held_open,
        pid: Some(pid),
    }
}

/// Reaps the leader (or leaves it to a background reaper when it is stuck or lost) and says how
/// the hook ended: cancelled or timed out first, else its exit as `exited` reported it.
fn reap_and_judge(
    mut child: HookChild,
    exited: Option<ExitReport>,
    timed_out: bool,
    cancelled: bool,
) -> Termination {
    let status = match exited {
        // The leader is a zombie: `wait` reaps it at once.
        Some(Ok(from_siginfo)) => Some(child.wait().map_err(|e| (e, Some(from_siginfo)))),
        Some(Err(err)) => {
            // waitid failed (our child was reaped elsewhere?): no status, and `wait` might block.
            reap_in_background(child);
            Some(Err((err, None)))
        }
        None => {
            // Stuck in the kernel even after SIGKILL (or the waiter died): do not block on it.
            reap_in_background(child);
            None
        }
    };
    if cancelled {
        Termination::Cancelled
    } else if timed_out {
        Termination::TimedOut
    } else {
        match status {
            Some(Ok(status)) => termination_of(status),
            Some(Err((_, Some(from_siginfo)))) => from_siginfo,
            Some(Err((err, None))) => {
                Termination::SpawnFailed(format!("lost track of the hook process: {err}"))
            }
            None => Termination::SpawnFailed("lost track of the hook process".to_owned()),
        }
    }
}

/// How waiting for the leader in the thread fallback ended.
enum Waited {
    Exited(ExitReport),
    TimedOut,
    /// Cancelled, or the dispatch's deadline.
    Stopped,
    /// The waiter thread is gone.
    Lost,
}

/// Wait for the leader's exit report until the hook's timeout, looking at the cancel token and
/// the dispatch's deadline at least every [`CHECK_EVERY_MS`](crate::cancel::CHECK_EVERY_MS),
/// and putting the hook on the watchdog's list when `watch` is due.
fn wait_or_stop(
    exit_rx: &Receiver<ExitReport>,
    hook: &HookProcess<'_>,
    started: Instant,
    watch: &mut Watch,
) -> Waited {
    let timeout_at = started.checked_add(hook.timeout);
    let slice = Duration::from_millis(crate::cancel::CHECK_EVERY_MS.unsigned_abs().into());
    loop {
        let now = Instant::now();
        watch.update(now);
        if hook.stopped(now) {
            return Waited::Stopped;
        }
        let left = timeout_at.map_or(slice, |at| at.saturating_duration_since(now));
        if left.is_zero() {
            return Waited::TimedOut;
        }
        let mut wait = if hook.cancel.is_some() || hook.deadline.is_some() {
            left.min(slice)
        } else {
            left
        };
        if let Some(due) = watch.due() {
            wait = wait.min(due.saturating_duration_since(now));
        }
        match exit_rx.recv_timeout(wait) {
            Ok(report) => return Waited::Exited(report),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Waited::Lost,
        }
    }
}

/// What the waiter reports when the leader has ended (not yet reaped): the status as far as `waitid`
/// decoded it (a fallback should `wait` fail), or the `waitid` error.
type ExitReport = io::Result<Termination>;

/// Start the waiter, the output readers and the stdin writer. Returns how many readers run.
fn start_threads(
    child: &mut HookChild,
    pid: libc::pid_t,
    payload: &Arc<[u8]>,
    (stdout, stderr): (&Arc<Mutex<Capture>>, &Arc<Mutex<Capture>>),
    done_tx: Sender<()>,
    exit_tx: Sender<ExitReport>,
) -> io::Result<usize> {
    thread::Builder::new()
        .name("ka-hook-wait".to_owned())
        .spawn(move || {
            // The receiver may be gone (run gave up); nothing left to tell then.
            let _ = exit_tx.send(wait_exit(pid));
        })?;

    let mut readers = 0;
    if let Some(pipe) = child.stdout.take() {
        spawn_reader("ka-hook-stdout", pipe, STDOUT_CAP, stdout, &done_tx)?;
        readers += 1;
    }
    if let Some(pipe) = child.stderr.take() {
        spawn_reader("ka-hook-stderr", pipe, STDERR_CAP, stderr, &done_tx)?;
        readers += 1;
    }

    if let Some(mut pipe) = child.stdin.take() {
        let payload = Arc::clone(payload);
        thread::Builder::new()
            .name("ka-hook-stdin".to_owned())
            .spawn(move || {
                block_sigpipe_in_this_thread();
                // A hook may exit or close stdin without reading: EPIPE is expected, not an error.
                let _ = pipe.write_all(&payload);
                // Dropping `pipe` closes it: the hook sees EOF.
            })?;
    }
    Ok(readers)
}

/// Block until the process `pid` has ended, without reaping it (`WNOWAIT`), so its pid and process
/// group id stay reserved until we have killed the rest of the group.
///
/// macOS's `waitid` also returns for a child that was only stopped (`CLD_STOPPED`), `WEXITED`
/// notwithstanding (Go issue golang/go#19314, which made Go stop using `waitid` there;
/// swiftlang/swift-subprocess#371 saw it again on macOS 26): such a report is no exit, and is
/// asked again after [`STOPPED_RECHECK`] (with `WNOWAIT` it repeats at once while the child stays
/// stopped). A stopped hook thus runs into its timeout, whose `SIGKILL` ends it, as on Linux.
fn wait_exit(pid: libc::pid_t) -> ExitReport {
    use rustix::process::{WaitId, WaitIdOptions};
    let pid = super::pid(pid).ok_or_else(|| io::Error::from_raw_os_error(libc::ECHILD))?;
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), options) {
            Ok(Some(info)) => {
                let status = info.exit_status().or(info.terminating_signal());
                match ended(info.raw_code(), status.unwrap_or(0)) {
                    Some(termination) => return Ok(termination),
                    None => thread::sleep(STOPPED_RECHECK),
                }
            }
            // Only with WNOHANG, which is not asked for.
            Ok(None) => thread::sleep(STOPPED_RECHECK),
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// Pause before asking `waitid` again after a report that was no exit (see [`wait_exit`]).
const STOPPED_RECHECK: Duration = Duration::from_millis(20);

/// What a `waitid` report with `si_code` and `si_status` says: `None` if the child has not ended
/// (stopped, continued or trapped), else its termination as far as `waitid` decodes it (macOS
/// leaves `si_status` 0 for a death by signal, dotnet/corefx#29370, which is why `run` prefers
/// the status `wait` reports).
pub(super) fn ended(si_code: libc::c_int, si_status: libc::c_int) -> Option<Termination> {
    match si_code {
        libc::CLD_EXITED => Some(Termination::Exited(si_status)),
        libc::CLD_KILLED | libc::CLD_DUMPED => Some(Termination::Signaled(si_status)),
        _ => None,
    }
}

/// SIGPIPE is thread-directed for the writing thread; blocked, it stays pending on this short-lived
/// thread and vanishes with it, and `write` returns EPIPE instead. This matters when the library is
/// embedded in a program that did not set SIGPIPE to ignored (Rust binaries do).
fn block_sigpipe_in_this_thread() {
    // Failure would only leave SIGPIPE unblocked, as before.
    super::thread_mask(libc::SIG_BLOCK, Some(&sigpipe_set()));
}

fn lock(capture: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    // A reader cannot panic while holding the lock, but a poisoned buffer is still good data.
    capture
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn spawn_reader(
    name: &str,
    pipe: impl Read + Send + 'static,
    cap: usize,
    capture: &Arc<Mutex<Capture>>,
    done_tx: &Sender<()>,
) -> io::Result<()> {
    let capture = Arc::clone(capture);
    let done_tx = done_tx.clone();
    thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            read_capped(pipe, cap, &capture);
            let _ = done_tx.send(());
        })?;
    Ok(())
}

/// Read `pipe` to EOF, keeping the first `cap` bytes in `capture` and discarding the rest, so the writer
/// never blocks on a full pipe.
pub(super) fn read_capped(mut pipe: impl Read, cap: usize, capture: &Mutex<Capture>) {
    let mut buf = vec![0u8; CHUNK];
    // Once full (or abandoned) we never need the lock again.
    let mut discarding = false;
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if discarding {
            continue;
        }
        let mut capture = lock(capture);
        if capture.abandoned {
            discarding = true;
            continue;
        }
        if !capture.keep(&buf[..n], cap) {
            discarding = true;
        }
    }
}

/// Wait until `readers` readers have reached EOF, at most `limit`. True if all did.
fn await_readers(done_rx: &Receiver<()>, readers: usize, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    for _ in 0..readers {
        match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => return false,
            // Every reader has ended (a reader that died without reporting still closed its pipe end).
            Err(RecvTimeoutError::Disconnected) => return true,
        }
    }
    true
}

/// Take the captured bytes (the reader, if still running, only drains from now on) as lossy UTF-8.
pub(super) fn take_output(capture: &Mutex<Capture>) -> (String, bool) {
    let mut capture = lock(capture);
    capture.abandoned = true;
    let bytes = std::mem::take(&mut capture.bytes);
    (lossy(bytes), capture.truncated)
}
