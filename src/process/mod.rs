//! Running one hook command as a child process: `/bin/sh -c` by absolute path, a process group
//! of its own, a timeout, capped output, and nothing left behind. One `poll` loop over the pipes
//! and a pidfd on Linux (`polled`); helper threads where there is no pidfd (`threaded`).
//! The guarantees and how they are kept: `docs/design.md`, "The runner".

pub use crate::signal::signal_name;
use std::{
    fmt,
    os::unix::process::ExitStatusExt,
    path::Path,
    process::ExitStatus,
    sync::{Arc, OnceLock},
    thread,
    time::{Duration, Instant},
};

use crate::cancel::CancelToken;
use crate::watchdog::Watch;

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
pub(crate) const SHELL: &str = "/bin/sh";

/// One hook invocation.
#[derive(Clone)]
pub struct HookProcess<'a> {
    /// Run as `sh -c <command>`.
    pub command: &'a str,
    /// Working directory; if it does not exist the result is [`Termination::SpawnFailed`].
    pub cwd: &'a Path,
    /// Added to the inherited environment (overriding variables of the same name).
    pub env: &'a [(String, String)],
    /// Inherit nothing: `env` is the whole environment.
    pub clean_env: bool,
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
            .field("clean_env", &self.clean_env)
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
    /// How the process ended.
    pub termination: Termination,
    /// Lossy UTF-8 of the first [`STDOUT_CAP`] bytes.
    pub stdout: String,
    /// More was written and discarded.
    pub stdout_truncated: bool,
    /// Lossy UTF-8 of the first [`STDERR_CAP`] bytes.
    pub stderr: String,
    /// More was written and discarded.
    pub stderr_truncated: bool,
    /// How long it ran.
    pub duration: Duration,
    /// stdout/stderr stayed open after the hook's process group was killed: some process that left the
    /// group (setsid) holds them. We stopped reading and returned anyway.
    pub output_held_open: bool,
    /// Pid of the `sh` that ran the hook, which is also its process-group id; `None` if it never started.
    pub pid: Option<u32>,
}

impl Finished {
    pub(crate) fn spawn_failed(err: String, started: Instant) -> Finished {
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
    run_confined(hook, None)
}

/// [`run`], confined by `sandbox` when given: the ruleset (built by the caller, in this
/// process) is applied in the child between its `clone` and `execve`, in the process-group
/// leader before `sh` starts, so ka itself is never restricted and no thread of ka shares the
/// hook's domain. A confinement that fails in the child fails the spawn
/// ([`Termination::SpawnFailed`]): the hook never runs unconfined by mistake.
pub fn run_confined(
    hook: &HookProcess<'_>,
    sandbox: Option<&crate::sandbox::Prepared>,
) -> Finished {
    let started = Instant::now();
    if hook.stopped(started) {
        let mut finished = Finished::spawn_failed(String::new(), started);
        finished.termination = Termination::Cancelled;
        return finished;
    }
    // Ended with this process whatever ends it (SIGKILL included): see [`crate::watchdog`].
    // Taken off the watchdog's list when this returns, after the runner ended the group.
    let own = spawn::own();
    let before = Watch::before_spawn(own);
    let child = match spawn(hook, sandbox, own) {
        Ok(child) => child,
        Err(text) => return Finished::spawn_failed(text, started),
    };
    let mut watch = before.watch(child.id(), started);
    run_spawned(child, hook, started, fallback_forced(), &mut watch)
}

/// Watch a started hook: with the poll loop where a pidfd can be had and `threads_only` is
/// false, else with the thread fallback. Either puts it on the watchdog's list when `watch`
/// is due.
fn run_spawned(
    child: HookChild,
    hook: &HookProcess<'_>,
    started: Instant,
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))] threads_only: bool,
    watch: &mut Watch,
) -> Finished {
    #[cfg(target_os = "linux")]
    if !threads_only {
        if let Some(pidfd) = polled::prepare(&child) {
            return polled::run(child, pidfd, hook, started, watch);
        }
    }
    run_threaded(child, hook, started, watch)
}

/// Set to `1` (or `true`, `yes`, `on`), this environment variable makes [`run`] take the thread
/// fallback even where the poll loop would be used. The test suite runs its process tests a
/// second time with it (`scripts/test.sh`), so that Linux exercises the path macOS takes. It is
/// read once per process, and inherited by the hooks and async supervisors started under it.
pub const FORCE_FALLBACK_VAR: &str = "KA_HOOKS_PROCESS_FALLBACK";

/// Whether [`FORCE_FALLBACK_VAR`] forces the thread fallback in this process.
pub fn fallback_forced() -> bool {
    static FORCED: OnceLock<bool> = OnceLock::new();
    *FORCED.get_or_init(|| forces_fallback(std::env::var_os(FORCE_FALLBACK_VAR).as_deref()))
}

/// The value of [`FORCE_FALLBACK_VAR`] asks for the fallback.
fn forces_fallback(value: Option<&std::ffi::OsStr>) -> bool {
    value.and_then(std::ffi::OsStr::to_str).is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

#[cfg(all(test, target_os = "linux"))]
mod alloc_guard;
mod child;
#[cfg(target_os = "linux")]
mod polled;
mod spawn;
#[cfg(target_os = "linux")]
mod vfork;

use child::HookChild;
#[cfg(all(target_os = "linux", feature = "cli"))]
pub(crate) use polled::signal_leader;
use spawn::spawn;
mod threaded;

/// A pidfd for `pid` (Linux ≥ 5.3), unless the thread fallback is forced
/// ([`fallback_forced`]): callers then take the path they take on macOS.
#[cfg(all(target_os = "linux", feature = "cli"))]
pub(crate) fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    if fallback_forced() {
        return None;
    }
    polled::pidfd_open(pid)
}

use threaded::run_threaded;

/// Signal the whole process group. Errors (ESRCH: the group is already empty) are expected and ignored.
fn kill_group(pgid: libc::pid_t, signal: libc::c_int) {
    // pgid > 0 always (it is a child's pid): never kill(-1) (every process) nor kill(0).
    if let (Some(pgid), Some(signal)) = (pid(pgid), rustix::process::Signal::from_named_raw(signal))
    {
        let _ = rustix::process::kill_process_group(pgid, signal);
    }
}

/// Signal the leader itself, by pid: it may have left its process group (`setpgid`). Only called
/// while the leader is unreaped (a zombie at worst), so its pid cannot name a stranger yet.
fn kill_leader(pid_: libc::pid_t, signal: libc::c_int) {
    if let (Some(pid), Some(signal)) = (pid(pid_), rustix::process::Signal::from_named_raw(signal))
    {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// A positive `pid_t` as a pid (`None` for 0 and below).
fn pid(raw: libc::pid_t) -> Option<rustix::process::Pid> {
    (raw > 0)
        .then(|| rustix::process::Pid::from_raw(raw))
        .flatten()
}

/// Reap a child we cannot wait for now, so it does not stay a zombie.
fn reap_in_background(mut child: HookChild) {
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
    // SAFETY: sigset_t is plain old data (all-zero bytes are valid); these calls only write
    // `set`, a sigset of this frame.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        set
    }
}

/// `pthread_sigmask(how, set)` for this thread: the mask before, or `None` if it failed.
/// Without `set` it only reads the mask.
fn thread_mask(how: libc::c_int, set: Option<&libc::sigset_t>) -> Option<libc::sigset_t> {
    let mut old = sigpipe_set();
    let set = set.map_or(std::ptr::null(), |set| set as *const libc::sigset_t);
    // SAFETY: `set` is null or points to a valid sigset; `old` is a valid sigset of this frame,
    // which pthread_sigmask only writes. Only this thread's mask changes.
    let rc = unsafe { libc::pthread_sigmask(how, set, &mut old) };
    (rc == 0).then_some(old)
}

/// `set` holds `SIGPIPE`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn has_sigpipe(set: &libc::sigset_t) -> bool {
    // SAFETY: `set` is a valid sigset; sigismember only reads it.
    unsafe { libc::sigismember(set, libc::SIGPIPE) == 1 }
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

/// The bytes as UTF-8, invalid sequences replaced (without a copy when they are valid).
fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests;
#[cfg(all(test, target_os = "linux"))]
mod vfork_tests;
