//! Running one hook command as a child process (SPEC §4).
//!
//! [`run`] starts `sh -c <command>` (never a login shell, so profile noise cannot reach stdout) in the
//! given directory, with extra environment variables and the payload on stdin, and guarantees:
//!
//! - **It cannot wedge.** `run` returns within `timeout` + 1 s in every case: on timeout the hook's
//!   process group gets `SIGTERM`, then `SIGKILL` after [`KILL_GRACE`]; a process that escaped the group
//!   (`setsid`) and keeps stdout/stderr open is abandoned after a short drain
//!   ([`Finished::output_held_open`]); a hook that never reads stdin cannot block the payload writer.
//! - **Nothing of the hook survives.** The hook runs in its own process group (id = its pid). When the
//!   leader ends, for whatever reason, the whole group is killed before the leader is reaped, so
//!   background children (`sleep 1000 &`) die with it. The leader stays unreaped until then, so its pid
//!   (and thus the group id) cannot be reused and the group kill cannot hit a stranger. Only processes
//!   that deliberately leave the group (`setsid`, `setpgid`) are out of reach.
//! - **Exit is noticed at once.** A waiter thread blocks in `waitid(WNOWAIT)` (no polling); the caller
//!   waits on a channel with the timeout.
//! - **Bounded memory, no blocked writers.** stdout and stderr are read concurrently, each kept up to its
//!   cap ([`STDOUT_CAP`], [`STDERR_CAP`]); the rest is read and discarded, and truncation is reported.
//!   Invalid UTF-8 is replaced.
//! - **Failures are values.** A spawn failure (missing `cwd`, no `sh`) is [`Termination::SpawnFailed`];
//!   nothing here panics on a runtime error, and a broken stdin pipe is not an error.
//!
//! Threads per hook: a waiter, two output readers and a stdin writer. Readers and the writer are
//! detached, never joined unboundedly: one may outlive `run` only while an escaped process holds its pipe.
//!
//! Requirement on the embedding process: `SIGCHLD` must not be ignored (`SIG_IGN`) and nobody else may
//! reap our children (`waitpid(-1)`); otherwise the exit status is lost (reported as `SpawnFailed` with
//! "lost track of the hook process"), though the timeout still bounds `run`.

use std::{
    fmt,
    io::{self, Read, Write},
    os::unix::process::{CommandExt, ExitStatusExt},
    path::Path,
    process::{Child, Command, ExitStatus, Stdio},
    sync::{
        mpsc::{self, Receiver, RecvTimeoutError, Sender},
        Arc, Mutex, MutexGuard,
    },
    thread,
    time::{Duration, Instant},
};

/// Bytes of stdout kept; the rest is read and discarded.
pub const STDOUT_CAP: usize = 1024 * 1024;
/// Bytes of stderr kept; the rest is read and discarded.
pub const STDERR_CAP: usize = 64 * 1024;
/// Time between `SIGTERM` and `SIGKILL` when a hook times out.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

/// How long to wait for EOF on stdout/stderr once the group is dead. Only a process outside the group
/// can still hold the pipes then, so EOF normally comes at once.
const OUTPUT_DRAIN: Duration = Duration::from_millis(100);
/// How long to wait for the leader to die after `SIGKILL` (it only takes longer when stuck in the
/// kernel, e.g. uninterruptible I/O; it is then reaped in the background).
const REAP_WAIT: Duration = Duration::from_millis(200);
/// Read size of the output readers.
const CHUNK: usize = 64 * 1024;

/// One hook invocation.
#[derive(Clone)]
pub struct HookProcess<'a> {
    /// Run as `sh -c <command>`.
    pub command: &'a str,
    /// Working directory; if it does not exist the result is [`Termination::SpawnFailed`].
    pub cwd: &'a Path,
    /// Added to the inherited environment (overriding variables of the same name).
    pub env: &'a [(String, String)],
    /// The payload written on stdin (shared between concurrent hooks).
    pub stdin: Arc<[u8]>,
    /// After this the process group is terminated and the result is [`Termination::TimedOut`].
    pub timeout: Duration,
}

impl fmt::Debug for HookProcess<'_> {
    // The payload can be megabytes: show its size only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookProcess")
            .field("command", &self.command)
            .field("cwd", &self.cwd)
            .field("env", &self.env)
            .field("stdin_len", &self.stdin.len())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// How the hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Termination {
    /// Normal exit with this code.
    Exited(i32),
    /// Killed by this signal (not by us).
    Signaled(i32),
    /// We killed it after `timeout`.
    TimedOut,
    /// Could not start `sh` (or the cwd is missing): the io error text.
    SpawnFailed(String),
}

impl Termination {
    /// The exit code of a normal exit.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Termination::Exited(code) => Some(*code),
            _ => None,
        }
    }

    /// The signal that killed the hook (not a timeout kill of ours).
    pub fn signal(&self) -> Option<i32> {
        match self {
            Termination::Signaled(sig) => Some(*sig),
            _ => None,
        }
    }

    /// Short text: `exit 3`, `killed by SIGKILL`, `timed out`, `failed to start: ...`.
    pub fn describe(&self) -> String {
        match self {
            Termination::Exited(code) => format!("exit {code}"),
            Termination::Signaled(sig) => match signal_name(*sig) {
                Some(name) => format!("killed by {name}"),
                None => format!("killed by signal {sig}"),
            },
            Termination::TimedOut => "timed out".to_owned(),
            Termination::SpawnFailed(err) => format!("failed to start: {err}"),
        }
    }

    /// Like [`describe`](Self::describe), naming the limit of a timeout: `timed out after 10s`.
    pub fn describe_with_timeout(&self, timeout: Duration) -> String {
        match self {
            Termination::TimedOut => format!("timed out after {}", format_duration(timeout)),
            other => other.describe(),
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The conventional name of a common signal (`SIGKILL`), if it is one.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

/// `10s`, `1.5s`, `250ms`.
fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{}s", d.as_secs())
    } else if d.as_secs() == 0 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct Finished {
    pub termination: Termination,
    /// Lossy UTF-8 of the first [`STDOUT_CAP`] bytes.
    pub stdout: String,
    /// More was written and discarded.
    pub stdout_truncated: bool,
    /// Lossy UTF-8 of the first [`STDERR_CAP`] bytes.
    pub stderr: String,
    pub stderr_truncated: bool,
    pub duration: Duration,
    /// stdout/stderr stayed open after the hook's process group was killed: some process that left the
    /// group (setsid) holds them. We stopped reading and returned anyway.
    pub output_held_open: bool,
    /// Pid of the `sh` that ran the hook, which is also its process-group id; `None` if it never started.
    pub pid: Option<u32>,
}

impl Finished {
    fn spawn_failed(err: String, started: Instant) -> Finished {
        Finished {
            termination: Termination::SpawnFailed(err),
            stdout: String::new(),
            stdout_truncated: false,
            stderr: String::new(),
            stderr_truncated: false,
            duration: started.elapsed(),
            output_held_open: false,
            pid: None,
        }
    }
}

/// Run one hook to completion (or timeout) and collect its output. Never panics, never blocks longer
/// than `timeout` + 1 s, never leaves a process of the hook's group behind (see the module doc).
pub fn run(hook: &HookProcess<'_>) -> Finished {
    let started = Instant::now();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(hook.command)
        .current_dir(hook.cwd)
        .envs(hook.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            // The io error alone ("No such file or directory") does not say whether `sh` or the
            // directory is missing.
            let text = if hook.cwd.is_dir() {
                err.to_string()
            } else {
                format!("{err} (cwd {})", hook.cwd.display())
            };
            return Finished::spawn_failed(text, started);
        }
    };
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
    let mut exited = match exit_rx.recv_timeout(hook.timeout) {
        Ok(report) => Some(report),
        Err(RecvTimeoutError::Timeout) => {
            timed_out = true;
            kill_group(pgid, libc::SIGTERM);
            exit_rx.recv_timeout(KILL_GRACE).ok()
        }
        // The waiter cannot vanish without reporting; treat it like a leader we lost track of.
        Err(RecvTimeoutError::Disconnected) => None,
    };
    // Always, even after a normal exit: no background child of the hook may outlive it. The leader is
    // not reaped yet, so `pgid` still names this group.
    kill_group(pgid, libc::SIGKILL);
    if exited.is_none() {
        exited = exit_rx.recv_timeout(REAP_WAIT).ok();
    }

    let status = match exited {
        // The leader is a zombie: `wait` reaps it at once.
        Some(Ok(from_siginfo)) => Some(child.wait().map_err(|e| (e, from_siginfo))),
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
    let termination = if timed_out {
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
    };

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

/// What the waiter reports when the leader has ended (not yet reaped): the status as far as `waitid`
/// decoded it (a fallback should `wait` fail), or the `waitid` error.
type ExitReport = io::Result<Option<Termination>>;

/// Start the waiter, the output readers and the stdin writer. Returns how many readers run.
fn start_threads(
    child: &mut Child,
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
fn wait_exit(pid: libc::pid_t) -> ExitReport {
    loop {
        // SAFETY: siginfo_t is plain old data for which all-zero bytes are a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t that outlives the call; waitid only writes it.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            // SAFETY: waitid succeeded for WEXITED, so `info` describes a child state change and
            // its si_status field is the one that is set.
            let status = unsafe { info.si_status() };
            return Ok(match info.si_code {
                libc::CLD_EXITED => Some(Termination::Exited(status)),
                libc::CLD_KILLED | libc::CLD_DUMPED => Some(Termination::Signaled(status)),
                _ => None,
            });
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Signal the whole process group. Errors (ESRCH: the group is already empty) are expected and ignored.
fn kill_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid addresses the process group.
    // pgid > 0 always (it is a child's pid), so this can never become kill(-1) (every process).
    if pgid > 0 {
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Reap a child we cannot wait for now, so it does not stay a zombie.
fn reap_in_background(mut child: Child) {
    // If even this thread cannot start, the child stays a zombie until we exit: nothing better to do.
    let _ = thread::Builder::new()
        .name("ka-hook-reap".to_owned())
        .spawn(move || {
            let _ = child.wait();
        });
}

fn termination_of(status: ExitStatus) -> Termination {
    match (status.code(), status.signal()) {
        (Some(code), _) => Termination::Exited(code),
        (None, Some(sig)) => Termination::Signaled(sig),
        // `wait` only reports exits and deaths by signal; keep a value rather than panic.
        (None, None) => Termination::SpawnFailed(format!("unexpected wait status {status}")),
    }
}

/// SIGPIPE is thread-directed for the writing thread; blocked, it stays pending on this short-lived
/// thread and vanishes with it, and `write` returns EPIPE instead. This matters when the library is
/// embedded in a program that did not set SIGPIPE to ignored (Rust binaries do).
fn block_sigpipe_in_this_thread() {
    // SAFETY: sigset_t is plain old data; all-zero bytes are valid and sigemptyset initializes it anyway.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t owned by this frame; these calls only touch it and this
    // thread's signal mask. Failure would only leave SIGPIPE unblocked, as before.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Output captured so far, shared with `run` so that partial output is available when a reader must
/// be abandoned.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    truncated: bool,
    /// `run` took the bytes: the reader only drains from now on.
    abandoned: bool,
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
fn read_capped(mut pipe: impl Read, cap: usize, capture: &Mutex<Capture>) {
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
        let keep = n.min(cap.saturating_sub(capture.bytes.len()));
        capture.bytes.extend_from_slice(&buf[..keep]);
        if keep < n {
            capture.truncated = true;
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
fn take_output(capture: &Mutex<Capture>) -> (String, bool) {
    let mut capture = lock(capture);
    capture.abandoned = true;
    let bytes = std::mem::take(&mut capture.bytes);
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
    (text, capture.truncated)
}

#[cfg(test)]
mod tests {
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
}
