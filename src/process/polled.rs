//! The normal path: one `poll(2)` loop in the calling thread, no helper threads (see the
//! module doc of [`super`]).

use std::{
    fs::File,
    io::{self, Read, Write},
    ops::ControlFlow,
    os::fd::{AsRawFd, OwnedFd, RawFd},
    process::ExitStatus,
    time::Instant,
};

use super::{
    child::HookChild, has_sigpipe, kill_group, lossy, reap_in_background, sigpipe_set,
    termination_of, thread_mask, Capture, Finished, HookProcess, Termination, CHUNK, KILL_GRACE,
    OUTPUT_DRAIN, REAP_WAIT, STDERR_CAP, STDOUT_CAP,
};
use crate::cancel::CHECK_EVERY_MS;
use crate::watchdog::Watch;
use rustix::fs::OFlags;

/// Open a pidfd for `child` and make our ends of its pipes non-blocking. `None`, with nothing
/// changed, if that is impossible (no `pidfd_open` before Linux 5.3, or a seccomp filter): the
/// caller then falls back to threads, which need blocking pipes.
pub(super) fn prepare(child: &HookChild) -> Option<OwnedFd> {
    let pidfd = pidfd_open(child.id())?;
    let pipes = [&child.stdin, &child.stdout, &child.stderr];
    for (done, pipe) in pipes.iter().enumerate() {
        let Some(pipe) = pipe else { continue };
        // Both spawns make the pipes with `pipe2(O_CLOEXEC)`, which sets no status flag
        // (close-on-exec is a descriptor flag): `O_NONBLOCK` is the only one, and none the
        // way back. The child's end is a separate open file, unaffected.
        if rustix::fs::fcntl_setfl(pipe, OFlags::NONBLOCK).is_err() {
            for pipe in pipes[..done].iter().copied().flatten() {
                let _ = rustix::fs::fcntl_setfl(pipe, OFlags::empty());
            }
            return None;
        }
    }
    Some(pidfd)
}

/// `pidfd_open(2)`: a descriptor that becomes readable when the process has exited, without
/// reaping it. Close-on-exec is always set on it.
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(libc::pid_t::try_from(pid).ok()?)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
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
    mut child: HookChild,
    pidfd: OwnedFd,
    hook: &HookProcess<'_>,
    started: Instant,
    watch: &mut Watch,
) -> Finished {
    let pid = child.id();
    // Pids are positive `pid_t`s; `Child::id` just widened one to u32.
    let pgid = pid as libc::pid_t;
    let payload: &[u8] = &hook.stdin;
    let stdin = Input {
        pipe: child.stdin.take(),
        written: 0,
    };
    let stdout = Output::new(child.stdout.take(), STDOUT_CAP);
    let stderr = Output::new(child.stderr.take(), STDERR_CAP);
    let buf = ReadBuf::new();

    let phase = Phase::Running;
    // `None` only for a timeout too long to represent: no deadline then. The dispatch's
    // deadline, when sooner, ends the running phase too (as a cancellation).
    let deadline = match (Instant::now().checked_add(hook.timeout), hook.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let cancel_fd = hook.cancel.and_then(|token| token.fd());
    // A token without its pipe is looked at on a short timer instead.
    let check_cancel = hook.cancel.is_some() && cancel_fd.is_none();
    let mut run = Run {
        child,
        pidfd,
        hook,
        watch,
        pgid,
        payload,
        stdin,
        stdout,
        stderr,
        buf,
        phase,
        deadline,
        cancel_fd,
        check_cancel,
        leader: Leader::Alive,
        timed_out: false,
        cancelled: false,
        poll_failed: None,
    };

    // The pipe is empty and non-blocking: the first write needs no poll.
    run.stdin.pump(payload);
    run.poll_loop();
    run.finish(pid, started)
}

/// The state of [`run`]'s loop: the hook, our ends of its pipes, and where the loop is.
struct Run<'a, 'h> {
    child: HookChild,
    pidfd: OwnedFd,
    hook: &'a HookProcess<'h>,
    watch: &'a mut Watch,
    /// The hook's process group: the leader's pid.
    pgid: libc::pid_t,
    payload: &'a [u8],
    stdin: Input,
    stdout: Output<File>,
    stderr: Output<File>,
    buf: ReadBuf,
    phase: Phase,
    deadline: Option<Instant>,
    cancel_fd: Option<RawFd>,
    check_cancel: bool,
    leader: Leader,
    timed_out: bool,
    cancelled: bool,
    poll_failed: Option<io::Error>,
}

impl Run<'_, '_> {
    /// Poll until the output is drained (or given up on), or `poll` fails.
    fn poll_loop(&mut self) {
        loop {
            if self.phase == Phase::Draining
                && self.stdout.pipe.is_none()
                && self.stderr.pipe.is_none()
            {
                break;
            }
            let watch_exit = matches!(self.leader, Leader::Alive);
            let running = self.phase == Phase::Running;
            let mut fds = self.poll_fds(watch_exit, running);
            let timeout = self.poll_timeout(watch_exit, running);
            // SAFETY: `fds` is a valid array of `fds.len()` pollfds that outlives the call; poll only
            // writes their `revents`, and ignores entries with a negative fd.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if ready < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // Only ENOMEM is possible with these arguments. Give up on the hook rather than spin.
                self.poll_failed = Some(err);
                break;
            }
            self.pump(&fds);
            let now = Instant::now();
            if watch_exit {
                self.watch.update(now);
            }
            if self.react(&fds, now, running).is_break() {
                break;
            }
        }
    }

    /// What to poll: stdin, stdout, stderr, the leader's exit (while it is alive) and the
    /// cancellation pipe (while running). A closed one is a negative fd, which poll ignores.
    fn poll_fds(&self, watch_exit: bool, running: bool) -> [libc::pollfd; 5] {
        [
            poll_entry(self.stdin.pipe.as_ref(), libc::POLLOUT),
            poll_entry(self.stdout.pipe.as_ref(), libc::POLLIN),
            poll_entry(self.stderr.pipe.as_ref(), libc::POLLIN),
            poll_entry(watch_exit.then_some(&self.pidfd), libc::POLLIN),
            libc::pollfd {
                fd: self.cancel_fd.filter(|_| running).unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ]
    }

    /// How long to poll: until the phase's deadline or the watchdog's next look, whichever is
    /// sooner, and no longer than the cancellation timer while running.
    fn poll_timeout(&self, watch_exit: bool, running: bool) -> libc::c_int {
        let due = self.watch.due().filter(|_| watch_exit);
        let mut timeout = poll_timeout(match (self.deadline, due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        });
        if running && self.check_cancel {
            timeout = if timeout < 0 {
                CHECK_EVERY_MS
            } else {
                timeout.min(CHECK_EVERY_MS)
            };
        }
        timeout
    }

    /// Move the data of the pipes `poll` found ready.
    fn pump(&mut self, fds: &[libc::pollfd; 5]) {
        // One read per readable pipe per round: a hook writing without end cannot starve the other
        // descriptors or the deadline.
        if fds[1].revents != 0 {
            self.stdout.pump(&mut self.buf);
        }
        if fds[2].revents != 0 {
            self.stderr.pump(&mut self.buf);
        }
        // POLLOUT, or POLLERR once the hook closed its end: the write then fails with EPIPE.
        if fds[0].revents != 0 {
            self.stdin.pump(self.payload);
        }
    }

    /// Act on the leader's exit, a cancellation, or the phase's deadline; `Break` to stop the
    /// loop.
    fn react(&mut self, fds: &[libc::pollfd; 5], now: Instant, running: bool) -> ControlFlow<()> {
        if fds[3].revents != 0 {
            // The leader has exited but is not reaped: it is a zombie that keeps its pid, and thus
            // the group id, ours. Kill what is left of the group (background children) first,
            // then reap.
            kill_group(self.pgid, libc::SIGKILL);
            self.leader = match self.child.try_wait() {
                Ok(Some(status)) => Leader::Reaped(Ok(status)),
                Err(err) => Leader::Reaped(Err(err)),
                // The pidfd only fires once the process has exited, and the exit is waitable
                // from then on; never block on it anyway.
                Ok(None) => Leader::Abandoned,
            };
            self.stdin.pipe = None;
            self.phase = Phase::Draining;
            self.deadline = Some(now + OUTPUT_DRAIN);
        } else if running && (fds[4].revents != 0 || self.hook.stopped(now)) {
            // Cancelled, or the dispatch's deadline: end it the way a timeout does.
            self.cancelled = true;
            kill_group(self.pgid, libc::SIGTERM);
            signal_leader(&self.pidfd, libc::SIGTERM);
            self.phase = Phase::Terminating;
            self.deadline = Some(now + KILL_GRACE);
        } else if self.deadline.is_some_and(|deadline| now >= deadline) {
            return self.on_deadline(now);
        }
        ControlFlow::Continue(())
    }

    /// The phase's deadline passed: on to the next phase; `Break` when draining is over.
    fn on_deadline(&mut self, now: Instant) -> ControlFlow<()> {
        match self.phase {
            Phase::Running => {
                self.timed_out = true;
                kill_group(self.pgid, libc::SIGTERM);
                signal_leader(&self.pidfd, libc::SIGTERM);
                self.phase = Phase::Terminating;
                self.deadline = Some(now + KILL_GRACE);
            }
            Phase::Terminating => {
                kill_group(self.pgid, libc::SIGKILL);
                signal_leader(&self.pidfd, libc::SIGKILL);
                self.phase = Phase::Killed;
                self.deadline = Some(now + REAP_WAIT);
            }
            Phase::Killed => {
                // Stuck in the kernel even after SIGKILL: do not wait for it.
                self.leader = Leader::Abandoned;
                self.stdin.pipe = None;
                self.phase = Phase::Draining;
                self.deadline = Some(now + OUTPUT_DRAIN);
            }
            // Some process outside the group (setsid) holds stdout or stderr: stop reading.
            Phase::Draining => return ControlFlow::Break(()),
        }
        ControlFlow::Continue(())
    }

    /// After the loop: leave nothing of the hook running, say how it ended, and hand over its
    /// output.
    fn finish(self, pid: u32, started: Instant) -> Finished {
        let Run {
            child,
            pidfd,
            pgid,
            stdout,
            stderr,
            phase,
            mut leader,
            timed_out,
            cancelled,
            poll_failed,
            ..
        } = self;
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
}

/// Signal the leader itself through its pidfd: it may have left its process group
/// (`setpgid`), out of reach of [`kill_group`]. The pidfd names exactly this process, even if
/// it is already a zombie, so this can never hit a stranger. Errors (ESRCH: it has exited)
/// are expected and ignored.
pub(crate) fn signal_leader(pidfd: &OwnedFd, signal: libc::c_int) {
    if let Some(signal) = rustix::process::Signal::from_named_raw(signal) {
        let _ = rustix::process::pidfd_send_signal(pidfd, signal);
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
    pipe: Option<File>,
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
fn write_without_sigpipe(pipe: &mut File, data: &[u8]) -> io::Result<usize> {
    if sigpipe_ignored_and_unblocked() {
        // The usual case (Rust programs ignore it): nothing to keep away or to consume, and two
        // system calls instead of four.
        return loop {
            match pipe.write(data) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
    }
    let sigpipe = sigpipe_set();
    // It cannot fail with these arguments; if it did, the write would go unguarded.
    let old_mask = thread_mask(libc::SIG_BLOCK, Some(&sigpipe));
    let was_pending = old_mask.is_some() && sigpipe_pending();
    let result = loop {
        match pipe.write(data) {
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    if let Some(old_mask) = old_mask {
        let broken = matches!(&result, Err(err) if err.kind() == io::ErrorKind::BrokenPipe);
        if broken && !was_pending {
            consume_sigpipe(&sigpipe);
        }
        thread_mask(libc::SIG_SETMASK, Some(&old_mask));
    }
    result
}

/// The process ignores `SIGPIPE` (`SIG_IGN`) and this thread does not block it: a write to a
/// pipe whose reader is gone then fails with EPIPE and the signal is discarded. (Blocked, an
/// ignored signal is still left pending, for the mask dance below to consume.) A program that
/// changes the disposition while a hook's payload is being written races with this check.
fn sigpipe_ignored_and_unblocked() -> bool {
    // SAFETY: sigaction is plain old data (all-zero bytes are valid); with a null new action,
    // sigaction only writes the current one into `old`.
    let ignored = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    };
    ignored && thread_mask(libc::SIG_BLOCK, None).is_some_and(|mask| !has_sigpipe(&mask))
}

/// `SIGPIPE` is pending for this thread or the process.
pub(super) fn sigpipe_pending() -> bool {
    let mut pending = sigpipe_set();
    // SAFETY: `pending` is a valid sigset of this frame, which sigpending only writes.
    let read = unsafe { libc::sigpending(&mut pending) } == 0;
    read && has_sigpipe(&pending)
}

/// Take a pending (blocked) `SIGPIPE` without waiting, so it is never delivered.
fn consume_sigpipe(sigpipe: &libc::sigset_t) {
    let no_wait = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    loop {
        // SAFETY: `sigpipe` and `no_wait` are valid for the call; the siginfo pointer may be null.
        let rc = unsafe { libc::sigtimedwait(sigpipe, std::ptr::null_mut(), &no_wait) };
        // EAGAIN: none pending; EINTR: a handled signal came in between, try again.
        if rc >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Bytes of the first reads, on the stack.
const SMALL_READ: usize = 4 * 1024;

/// The buffer the output pipes are read into: [`SMALL_READ`] bytes on the stack until a read fills
/// them, then [`CHUNK`] bytes on the heap. Most hooks write little or nothing, and zeroing 64 KB up
/// front (faulting in 16 fresh pages) cost more than the rest of the output handling.
struct ReadBuf {
    small: [u8; SMALL_READ],
    big: Vec<u8>,
}

impl ReadBuf {
    fn new() -> Self {
        ReadBuf {
            small: [0; SMALL_READ],
            big: Vec::new(),
        }
    }

    /// Where the next read goes.
    fn space(&mut self) -> &mut [u8] {
        if self.big.is_empty() {
            &mut self.small
        } else {
            &mut self.big
        }
    }

    /// A read of `n` bytes went into [`space`](Self::space): a full small buffer means the hook
    /// writes more, so read in whole pipe-sized chunks from now on.
    fn filled(&mut self, n: usize) {
        if self.big.is_empty() && n == SMALL_READ {
            self.big = vec![0; CHUNK];
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
    fn pump(&mut self, buf: &mut ReadBuf) {
        let Some(pipe) = &mut self.pipe else {
            return;
        };
        let space = buf.space();
        let read = loop {
            match pipe.read(space) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match read {
            Ok(0) => self.pipe = None,
            Ok(n) => {
                self.capture.keep(&space[..n], self.cap);
                buf.filled(n);
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
