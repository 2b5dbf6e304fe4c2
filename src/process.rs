//! Running one hook command as a child process (SPEC §4).
//!
//! [`run`] starts `/bin/sh -c <command>` (by absolute path, so no `sh` planted earlier in `PATH` can take
//! over, and never a login shell, so profile noise cannot reach stdout) in the given directory, with
//! extra environment variables and the payload on stdin, and guarantees:
//!
//! - **It cannot wedge.** `run` returns within `timeout` + 1 s in every case: on timeout the hook's
//!   process group gets `SIGTERM`, then `SIGKILL` after [`KILL_GRACE`]; a process that escaped the group
//!   (`setsid`) and keeps stdout/stderr open is abandoned after a short drain
//!   ([`Finished::output_held_open`]); a hook that never reads stdin cannot block the payload writer.
//! - **Nothing of the hook survives.** The hook runs in its own process group (id = its pid). When the
//!   leader ends, for whatever reason, the whole group is killed before the leader is reaped, so
//!   background children (`sleep 1000 &`) die with it. The leader stays unreaped until then, so its pid
//!   (and thus the group id) cannot be reused and the group kill cannot hit a stranger. A leader
//!   that leaves its group itself (`setpgid`) is still signalled at timeout, through its pidfd (or,
//!   unreaped, its pid), and so is the group it came from. Only other processes that deliberately
//!   leave the group (`setsid`, `setpgid`) are out of reach.
//! - **Exit is noticed at once**, without polling on a timer (see the two mechanisms below).
//! - **Bounded memory, no blocked writers.** stdout and stderr are read concurrently, each kept up to its
//!   cap ([`STDOUT_CAP`], [`STDERR_CAP`]); the rest is read and discarded, and truncation is reported.
//!   Invalid UTF-8 is replaced.
//! - **Failures are values.** A spawn failure (missing `cwd`, no `/bin/sh`) is
//!   [`Termination::SpawnFailed`]; nothing here panics on a runtime error, and a broken stdin pipe is
//!   not an error.
//!
//! ## How: one `poll(2)` loop, no helper threads (Linux ≥ 5.3)
//!
//! A thread costs about as much as the rest of a trivial hook, so the normal path starts none. The
//! calling thread opens a pidfd for the child (`pidfd_open`: it becomes readable when the child has
//! exited, without reaping it), makes its ends of the three pipes non-blocking, and runs one `poll`
//! loop over: stdin (`POLLOUT` while payload remains; closed when all is written or the hook stopped
//! reading), stdout and stderr (`POLLIN`, read into the capped buffers until EOF), and the pidfd. The
//! poll timeout is the time left until the current deadline (the hook's timeout, then the kill grace,
//! ...), so the loop only ever blocks, never spins. When the pidfd fires, the group is killed, then the
//! leader (a zombie until then) is reaped, then output is drained until EOF or for at most 100 ms.
//! `SIGPIPE` from writing to a hook that stopped reading is blocked in this thread around each write and
//! the pending signal consumed, so an embedding program that did not ignore `SIGPIPE` never sees it.
//!
//! ## Fallback: helper threads
//!
//! Where `pidfd_open` is unavailable (older kernels, seccomp filters, other Unixes), the same guarantees
//! come from four threads per hook: a waiter blocked in `waitid(WNOWAIT)`, two output readers and a
//! stdin writer; the caller waits on a channel with the timeout. Readers and the writer are detached,
//! never joined unboundedly: one may outlive `run` only while an escaped process holds its pipe.
//!
//! Requirement on the embedding process: `SIGCHLD` must not be ignored (`SIG_IGN`) and nobody else may
//! reap our children (`waitpid(-1)`); otherwise the exit status is lost (reported as `SpawnFailed` with
//! "lost track of the hook process"), though the timeout still bounds `run`.

use crate::cancel::CancelToken;

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
/// Read size of the output readers (the default pipe capacity).
const CHUNK: usize = 64 * 1024;
/// The shell every hook runs in, by absolute path: a `PATH` search costs failed `execve`s and would let
/// an `sh` planted earlier in `PATH` take over.
const SHELL: &str = "/bin/sh";

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
    /// Once this is cancelled (or before the hook starts), the process group is terminated the
    /// same way and the result is [`Termination::Cancelled`].
    pub cancel: Option<&'a CancelToken>,
    /// The dispatch's deadline: reaching it is a cancellation, not a timeout of this hook.
    pub deadline: Option<Instant>,
}

impl HookProcess<'_> {
    /// Cancelled, or past the dispatch's deadline, at `now`.
    fn stopped(&self, now: Instant) -> bool {
        self.cancel.is_some_and(CancelToken::is_cancelled)
            || self.deadline.is_some_and(|deadline| now >= deadline)
    }
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
            .field("cancel", &self.cancel)
            .field("deadline", &self.deadline)
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
    /// We killed it (or never started it) because the dispatch was cancelled or reached its
    /// deadline.
    Cancelled,
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
            Termination::Cancelled => "cancelled".to_owned(),
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
    if hook.stopped(started) {
        let mut finished = Finished::spawn_failed(String::new(), started);
        finished.termination = Termination::Cancelled;
        return finished;
    }
    let child = match spawn(hook) {
        Ok(child) => child,
        Err(text) => return Finished::spawn_failed(text, started),
    };
    #[cfg(target_os = "linux")]
    if let Some(pidfd) = polled::prepare(&child) {
        return polled::run(child, pidfd, hook, started);
    }
    run_threaded(child, hook, started)
}

/// Start `/bin/sh -c <command>` in its own process group with all three standard streams piped. The
/// error is the text for [`Termination::SpawnFailed`].
fn spawn(hook: &HookProcess<'_>) -> Result<Child, String> {
    let mut command = Command::new(SHELL);
    command
        .arg("-c")
        .arg(hook.command)
        .current_dir(hook.cwd)
        .envs(hook.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command.spawn().map_err(|err| {
        // The io error alone ("No such file or directory") does not say whether the shell or the
        // directory is missing.
        if !hook.cwd.is_dir() {
            format!("{err} (cwd {})", hook.cwd.display())
        } else if !Path::new(SHELL).exists() {
            format!("{err} ({SHELL} not found)")
        } else {
            err.to_string()
        }
    })
}

/// The normal path: one `poll(2)` loop in the calling thread, no helper threads (see the module doc).
#[cfg(target_os = "linux")]
mod polled {
    use std::{
        io::{self, Read, Write},
        os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
        process::{Child, ChildStdin, ExitStatus},
        time::Instant,
    };

    use super::{
        kill_group, lossy, reap_in_background, sigpipe_set, termination_of, Capture, Finished,
        HookProcess, Termination, CHUNK, KILL_GRACE, OUTPUT_DRAIN, REAP_WAIT, STDERR_CAP,
        STDOUT_CAP,
    };
    use crate::cancel::CHECK_EVERY_MS;

    /// Open a pidfd for `child` and make our ends of its pipes non-blocking. `None`, with nothing
    /// changed, if that is impossible (no `pidfd_open` before Linux 5.3, or a seccomp filter): the
    /// caller then falls back to threads, which need blocking pipes.
    pub(super) fn prepare(child: &Child) -> Option<OwnedFd> {
        let pidfd = pidfd_open(child.id())?;
        let fds = [
            child.stdin.as_ref().map(AsRawFd::as_raw_fd),
            child.stdout.as_ref().map(AsRawFd::as_raw_fd),
            child.stderr.as_ref().map(AsRawFd::as_raw_fd),
        ];
        let mut changed: [Option<(RawFd, libc::c_int)>; 3] = [None; 3];
        for (slot, fd) in changed.iter_mut().zip(fds.into_iter().flatten()) {
            match set_nonblocking(fd) {
                Some(old_flags) => *slot = Some((fd, old_flags)),
                None => {
                    for &(fd, old_flags) in changed.iter().flatten() {
                        // SAFETY: `fd` is one of the child's pipes, open for the whole call; F_SETFL
                        // only changes its status flags.
                        unsafe { libc::fcntl(fd, libc::F_SETFL, old_flags) };
                    }
                    return None;
                }
            }
        }
        Some(pidfd)
    }

    /// `pidfd_open(2)`: a descriptor that becomes readable when the process has exited, without
    /// reaping it. Close-on-exec is always set on it.
    pub(super) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
        let pid = libc::pid_t::try_from(pid).ok()?;
        let no_flags: libc::c_long = 0;
        // SAFETY: pidfd_open(pid, flags) takes no pointers; it returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::c_long::from(pid), no_flags) };
        let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        // SAFETY: the kernel just returned `fd`; nothing else owns it.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Set `O_NONBLOCK` on our end of a pipe (the child's end is a separate open file, unaffected).
    /// Returns the previous status flags.
    fn set_nonblocking(fd: RawFd) -> Option<libc::c_int> {
        // SAFETY: `fd` is an open pipe owned by the caller's `Child`; F_GETFL/F_SETFL only read and
        // change its status flags.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            (flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) >= 0)
                .then_some(flags)
        }
    }

    /// Where the loop is. Each phase ends at a deadline; what happens then is in [`run`].
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Phase {
        /// Until the hook's timeout.
        Running,
        /// Timed out and sent `SIGTERM`: `SIGKILL` after `KILL_GRACE`.
        Terminating,
        /// Sent `SIGKILL`: the leader gets `REAP_WAIT` to die.
        Killed,
        /// The leader is gone (or given up): reading the rest of stdout and stderr, for at most
        /// `OUTPUT_DRAIN`.
        Draining,
    }

    /// What became of the group leader (the `sh`).
    enum Leader {
        Alive,
        /// Reaped with this status, or `wait` failed (someone else reaped it).
        Reaped(io::Result<ExitStatus>),
        /// Not dead `REAP_WAIT` after `SIGKILL` (stuck in the kernel), or we could not watch it: it
        /// is reaped in the background.
        Abandoned,
    }

    /// Run the spawned hook to the end in one `poll` loop over its stdin, stdout, stderr and `pidfd`.
    pub(super) fn run(
        mut child: Child,
        pidfd: OwnedFd,
        hook: &HookProcess<'_>,
        started: Instant,
    ) -> Finished {
        let pid = child.id();
        // Pids are positive `pid_t`s; `Child::id` just widened one to u32.
        let pgid = pid as libc::pid_t;
        let payload: &[u8] = &hook.stdin;
        let mut stdin = Input {
            pipe: child.stdin.take(),
            written: 0,
        };
        let mut stdout = Output::new(child.stdout.take(), STDOUT_CAP);
        let mut stderr = Output::new(child.stderr.take(), STDERR_CAP);
        let mut buf = vec![0u8; CHUNK];

        let mut phase = Phase::Running;
        // `None` only for a timeout too long to represent: no deadline then. The dispatch's
        // deadline, when sooner, ends the running phase too (as a cancellation).
        let mut deadline = match (Instant::now().checked_add(hook.timeout), hook.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let cancel_fd = hook.cancel.and_then(|token| token.fd());
        // A token without its pipe is looked at on a short timer instead.
        let check_cancel = hook.cancel.is_some() && cancel_fd.is_none();
        let mut leader = Leader::Alive;
        let mut timed_out = false;
        let mut cancelled = false;
        let mut poll_failed = None;

        // The pipe is empty and non-blocking: the first write needs no poll.
        stdin.pump(payload);
        loop {
            if phase == Phase::Draining && stdout.pipe.is_none() && stderr.pipe.is_none() {
                break;
            }
            let watch_exit = matches!(leader, Leader::Alive);
            let running = phase == Phase::Running;
            let mut fds = [
                poll_entry(stdin.pipe.as_ref(), libc::POLLOUT),
                poll_entry(stdout.pipe.as_ref(), libc::POLLIN),
                poll_entry(stderr.pipe.as_ref(), libc::POLLIN),
                poll_entry(watch_exit.then_some(&pidfd), libc::POLLIN),
                libc::pollfd {
                    fd: cancel_fd.filter(|_| running).unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let mut timeout = poll_timeout(deadline);
            if running && check_cancel {
                timeout = if timeout < 0 {
                    CHECK_EVERY_MS
                } else {
                    timeout.min(CHECK_EVERY_MS)
                };
            }
            // SAFETY: `fds` is a valid array of `fds.len()` pollfds that outlives the call; poll only
            // writes their `revents`, and ignores entries with a negative fd.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if ready < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // Only ENOMEM is possible with these arguments. Give up on the hook rather than spin.
                poll_failed = Some(err);
                break;
            }
            // One read per readable pipe per round: a hook writing without end cannot starve the other
            // descriptors or the deadline.
            if fds[1].revents != 0 {
                stdout.pump(&mut buf);
            }
            if fds[2].revents != 0 {
                stderr.pump(&mut buf);
            }
            // POLLOUT, or POLLERR once the hook closed its end: the write then fails with EPIPE.
            if fds[0].revents != 0 {
                stdin.pump(payload);
            }
            let now = Instant::now();
            if fds[3].revents != 0 {
                // The leader has exited but is not reaped: it is a zombie that keeps its pid, and thus
                // the group id, ours. Kill what is left of the group (background children) first,
                // then reap.
                kill_group(pgid, libc::SIGKILL);
                leader = match child.try_wait() {
                    Ok(Some(status)) => Leader::Reaped(Ok(status)),
                    Err(err) => Leader::Reaped(Err(err)),
                    // The pidfd only fires once the process has exited, and the exit is waitable
                    // from then on; never block on it anyway.
                    Ok(None) => Leader::Abandoned,
                };
                stdin.pipe = None;
                phase = Phase::Draining;
                deadline = Some(now + OUTPUT_DRAIN);
            } else if running && (fds[4].revents != 0 || hook.stopped(now)) {
                // Cancelled, or the dispatch's deadline: end it the way a timeout does.
                cancelled = true;
                kill_group(pgid, libc::SIGTERM);
                signal_leader(&pidfd, libc::SIGTERM);
                phase = Phase::Terminating;
                deadline = Some(now + KILL_GRACE);
            } else if deadline.is_some_and(|deadline| now >= deadline) {
                match phase {
                    Phase::Running => {
                        timed_out = true;
                        kill_group(pgid, libc::SIGTERM);
                        signal_leader(&pidfd, libc::SIGTERM);
                        phase = Phase::Terminating;
                        deadline = Some(now + KILL_GRACE);
                    }
                    Phase::Terminating => {
                        kill_group(pgid, libc::SIGKILL);
                        signal_leader(&pidfd, libc::SIGKILL);
                        phase = Phase::Killed;
                        deadline = Some(now + REAP_WAIT);
                    }
                    Phase::Killed => {
                        // Stuck in the kernel even after SIGKILL: do not wait for it.
                        leader = Leader::Abandoned;
                        stdin.pipe = None;
                        phase = Phase::Draining;
                        deadline = Some(now + OUTPUT_DRAIN);
                    }
                    // Some process outside the group (setsid) holds stdout or stderr: stop reading.
                    Phase::Draining => break,
                }
            }
        }

        if matches!(leader, Leader::Alive) {
            // Only after a poll failure: leave nothing of the hook running.
            kill_group(pgid, libc::SIGKILL);
            signal_leader(&pidfd, libc::SIGKILL);
            leader = Leader::Abandoned;
        }
        let termination = if let Some(err) = poll_failed {
            Termination::SpawnFailed(format!("could not watch the hook process: {err}"))
        } else if cancelled {
            Termination::Cancelled
        } else if timed_out {
            Termination::TimedOut
        } else {
            match &leader {
                Leader::Reaped(Ok(status)) => termination_of(*status),
                Leader::Reaped(Err(err)) => {
                    Termination::SpawnFailed(format!("lost track of the hook process: {err}"))
                }
                Leader::Alive | Leader::Abandoned => {
                    Termination::SpawnFailed("lost track of the hook process".to_owned())
                }
            }
        };
        if matches!(leader, Leader::Abandoned) {
            reap_in_background(child);
        }
        let output_held_open =
            phase == Phase::Draining && (stdout.pipe.is_some() || stderr.pipe.is_some());
        // Dropping the pipes closes our ends: a process that escaped the group gets EPIPE from now on.
        let (stdout, stdout_truncated) = stdout.take();
        let (stderr, stderr_truncated) = stderr.take();
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

    /// Signal the leader itself through its pidfd: it may have left its process group
    /// (`setpgid`), out of reach of [`kill_group`]. The pidfd names exactly this process, even if
    /// it is already a zombie, so this can never hit a stranger. Errors (ESRCH: it has exited)
    /// are expected and ignored.
    fn signal_leader(pidfd: &OwnedFd, signal: libc::c_int) {
        let no_flags: libc::c_uint = 0;
        // SAFETY: pidfd_send_signal(pidfd, sig, info, flags) with a null siginfo sends `signal` as
        // kill(2) would; `pidfd` is open for the call.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                pidfd.as_raw_fd(),
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                no_flags,
            );
        }
    }

    fn poll_entry(fd: Option<&impl AsRawFd>, events: libc::c_short) -> libc::pollfd {
        libc::pollfd {
            fd: fd.map_or(-1, AsRawFd::as_raw_fd),
            events,
            revents: 0,
        }
    }

    /// Milliseconds until `deadline` for `poll`, -1 (no limit) without one.
    fn poll_timeout(deadline: Option<Instant>) -> libc::c_int {
        let Some(deadline) = deadline else {
            return -1;
        };
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up: waking before the deadline would only lead to a zero-timeout poll, a spin.
        libc::c_int::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(libc::c_int::MAX)
    }

    /// Our end of the hook's stdin and how much of the payload went in.
    struct Input {
        pipe: Option<ChildStdin>,
        written: usize,
    }

    impl Input {
        /// Write as much of the rest of `payload` as the pipe takes now. Close the pipe (the hook
        /// sees EOF) once all is written, or as soon as the hook stopped reading: EPIPE is expected,
        /// not an error. Bounded by the payload size: each write fills free pipe space or fails.
        fn pump(&mut self, payload: &[u8]) {
            let Some(pipe) = &mut self.pipe else {
                return;
            };
            while let Some(rest) = payload.get(self.written..).filter(|rest| !rest.is_empty()) {
                match write_without_sigpipe(pipe, rest) {
                    Ok(n) if n > 0 => self.written += n,
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                    // EPIPE (the hook exited or closed stdin), or anything unexpected: stop writing.
                    _ => break,
                }
            }
            self.pipe = None;
        }
    }

    /// `write`, keeping `SIGPIPE` away from the process. Writing to a pipe whose reader is gone raises
    /// `SIGPIPE` in the writing thread, and its default action kills the whole process. Rust programs
    /// ignore it, but this library may be embedded in one that does not, and pipes have no
    /// `MSG_NOSIGNAL`. So: block `SIGPIPE` in this thread, write, and if the write failed with EPIPE,
    /// consume the `SIGPIPE` it left pending (with a zero-timeout `sigtimedwait`) before restoring the
    /// old mask. A `SIGPIPE` that was already pending before the write is not ours: it stays (the
    /// kernel merges ours into it).
    fn write_without_sigpipe(pipe: &mut ChildStdin, data: &[u8]) -> io::Result<usize> {
        let sigpipe = sigpipe_set();
        // SAFETY: sigset_t is plain old data for which all-zero bytes are a valid value.
        let mut old_mask: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both sets are valid sigset_t owned by this frame; this changes only this thread's
        // signal mask. It cannot fail with these arguments; if it did, the write would go unguarded.
        let blocked =
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &sigpipe, &mut old_mask) } == 0;
        let was_pending = blocked && sigpipe_pending();
        let result = loop {
            match pipe.write(data) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        if blocked {
            let broken = matches!(&result, Err(err) if err.kind() == io::ErrorKind::BrokenPipe);
            if broken && !was_pending {
                consume_sigpipe(&sigpipe);
            }
            // SAFETY: restores the mask saved above; `old_mask` is a valid sigset_t.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old_mask, std::ptr::null_mut()) };
        }
        result
    }

    /// `SIGPIPE` is pending for this thread or the process.
    pub(super) fn sigpipe_pending() -> bool {
        // SAFETY: sigset_t is plain old data for which all-zero bytes are a valid value.
        let mut pending: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `pending` is a valid, writable sigset_t owned by this frame.
        unsafe {
            libc::sigpending(&mut pending) == 0 && libc::sigismember(&pending, libc::SIGPIPE) == 1
        }
    }

    /// Take a pending (blocked) `SIGPIPE` without waiting, so it is never delivered.
    fn consume_sigpipe(sigpipe: &libc::sigset_t) {
        // SAFETY: timespec is plain old data; all-zero bytes are a zero timeout.
        let no_wait: libc::timespec = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `sigpipe` and `no_wait` are valid for the call; the siginfo pointer may be null.
            let rc = unsafe { libc::sigtimedwait(sigpipe, std::ptr::null_mut(), &no_wait) };
            // EAGAIN: none pending; EINTR: a handled signal came in between, try again.
            if rc >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
    }

    /// Our end of stdout or stderr and what was kept of it.
    struct Output<R> {
        pipe: Option<R>,
        capture: Capture,
        cap: usize,
    }

    impl<R: Read> Output<R> {
        fn new(pipe: Option<R>, cap: usize) -> Self {
            Output {
                pipe,
                capture: Capture::default(),
                cap,
            }
        }

        /// One read (poll said readable): keep what fits under the cap, discard the rest; close the
        /// pipe at EOF (or on an unexpected error).
        fn pump(&mut self, buf: &mut [u8]) {
            let Some(pipe) = &mut self.pipe else {
                return;
            };
            let read = loop {
                match pipe.read(buf) {
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            match read {
                Ok(0) => self.pipe = None,
                Ok(n) => {
                    self.capture.keep(&buf[..n], self.cap);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => self.pipe = None,
            }
        }

        /// The kept bytes as lossy UTF-8, and whether more was discarded. Closes the pipe.
        fn take(self) -> (String, bool) {
            (lossy(self.capture.bytes), self.capture.truncated)
        }
    }
}

/// The fallback when no pidfd can be had: a waiter thread, two reader threads and a writer thread.
fn run_threaded(mut child: Child, hook: &HookProcess<'_>, started: Instant) -> Finished {
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
    let mut exited = match wait_or_stop(&exit_rx, hook, started) {
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
    let termination = if cancelled {
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
/// the dispatch's deadline at least every [`CHECK_EVERY_MS`](crate::cancel::CHECK_EVERY_MS).
fn wait_or_stop(
    exit_rx: &Receiver<ExitReport>,
    hook: &HookProcess<'_>,
    started: Instant,
) -> Waited {
    let timeout_at = started.checked_add(hook.timeout);
    let slice = Duration::from_millis(crate::cancel::CHECK_EVERY_MS.unsigned_abs().into());
    loop {
        let now = Instant::now();
        if hook.stopped(now) {
            return Waited::Stopped;
        }
        let left = timeout_at.map_or(slice, |at| at.saturating_duration_since(now));
        if left.is_zero() {
            return Waited::TimedOut;
        }
        let wait = if hook.cancel.is_some() || hook.deadline.is_some() {
            left.min(slice)
        } else {
            left
        };
        match exit_rx.recv_timeout(wait) {
            Ok(report) => return Waited::Exited(report),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Waited::Lost,
        }
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

/// Signal the leader itself, by pid: it may have left its process group (`setpgid`). Only called
/// while the leader is unreaped (a zombie at worst), so its pid cannot name a stranger yet.
fn kill_leader(pid: libc::pid_t, signal: libc::c_int) {
    if pid > 0 {
        // SAFETY: kill has no memory-safety preconditions; pid > 0 addresses one process.
        unsafe {
            libc::kill(pid, signal);
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

/// The signal set holding only `SIGPIPE`.
fn sigpipe_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain old data; all-zero bytes are valid and sigemptyset initializes it anyway.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t owned by this frame; these calls only write it.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
    }
    set
}

/// SIGPIPE is thread-directed for the writing thread; blocked, it stays pending on this short-lived
/// thread and vanishes with it, and `write` returns EPIPE instead. This matters when the library is
/// embedded in a program that did not set SIGPIPE to ignored (Rust binaries do).
fn block_sigpipe_in_this_thread() {
    let set = sigpipe_set();
    // SAFETY: `set` is a valid sigset_t owned by this frame; this only changes this thread's signal
    // mask. Failure would only leave SIGPIPE unblocked, as before.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Output captured so far. In the thread fallback it is shared with `run` so that partial output is
/// available when a reader must be abandoned.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    truncated: bool,
    /// `run` took the bytes: the reader only drains from now on (thread fallback only).
    abandoned: bool,
}

impl Capture {
    /// Keep what still fits under `cap`; mark the output truncated if that is not all of `data`.
    /// Returns false once the capture is full: the rest can be discarded unseen.
    fn keep(&mut self, data: &[u8], cap: usize) -> bool {
        let keep = data.len().min(cap.saturating_sub(self.bytes.len()));
        self.bytes.extend_from_slice(&data[..keep]);
        if keep < data.len() {
            self.truncated = true;
        }
        keep == data.len()
    }
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
fn take_output(capture: &Mutex<Capture>) -> (String, bool) {
    let mut capture = lock(capture);
    capture.abandoned = true;
    let bytes = std::mem::take(&mut capture.bytes);
    (lossy(bytes), capture.truncated)
}

/// The bytes as UTF-8, invalid sequences replaced (without a copy when they are valid).
fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
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

    type Runner = fn(Child, &HookProcess<'_>, Instant) -> Finished;

    /// The poll loop (where the kernel has `pidfd_open`) and the thread fallback, to run the same
    /// scenarios through both.
    fn runners() -> Vec<(&'static str, Runner)> {
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut runners: Vec<(&'static str, Runner)> = vec![("threads", run_threaded)];
        #[cfg(target_os = "linux")]
        {
            fn run_polled(child: Child, hook: &HookProcess<'_>, started: Instant) -> Finished {
                match polled::prepare(&child) {
                    Some(pidfd) => polled::run(child, pidfd, hook, started),
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
        };
        let started = Instant::now();
        let child = spawn(&hook).expect("spawn /bin/sh");
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
        };
        let started = Instant::now();
        let child = spawn(&hook).expect("spawn /bin/sh");
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

    /// The poll loop consumes the SIGPIPE its own failed write raised, but must not take one that
    /// was already pending (blocked) in the thread before: that one belongs to the embedding program.
    #[cfg(target_os = "linux")]
    #[test]
    fn poll_loop_leaves_a_sigpipe_that_was_pending_before_alone() {
        let Some((_, runner)) = runners().into_iter().find(|(name, _)| *name == "poll") else {
            return;
        };
        let set = sigpipe_set();
        // SAFETY: sigset_t values owned by this frame; this only changes this thread's mask and
        // sends SIGPIPE to this thread, where it stays pending (blocked).
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
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
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            (still, again)
        };
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
}
