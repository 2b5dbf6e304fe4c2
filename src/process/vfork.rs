//! Linux: start a hook with ka's own vfork-style `clone`, the way glibc's and musl's
//! `posix_spawn` do, plus the one step `posix_spawn` cannot take: confining the child with
//! Landlock before `sh` starts.
//!
//! Why not `std::process::Command`: `std` uses `posix_spawn` (a `clone(CLONE_VM | CLONE_VFORK)`:
//! no page table is copied) only when it can express every step; a `pre_exec` closure, which
//! the sandbox needs, makes it `fork` the whole process instead, and the hook dispatch of a
//! large host then costs a copy of its page tables plus the copy-on-write faults after it (a
//! confined hook cost 1.6–3 × an unconfined one that way). Here the child shares our memory
//! until its `execve`, while the calling thread is suspended (`CLONE_VFORK`), and runs only
//! system calls on a stack of its own. It also builds the environment once instead of twice.
//!
//! The child, in order: every signal handler the host installed reset to the default and
//! `SIGPIPE` too (a handler of ours must never run in it: it shares our memory), an empty
//! signal mask, a process group of its own, the three pipes on 0, 1 and 2, the working
//! directory, the Landlock ruleset (`no_new_privs`, `landlock_restrict_self`), `execve`. A step
//! that fails leaves its `errno` in memory we share and ends the child with `_exit(127)`; the
//! parent reaps it and reports the error (the hook never runs, and never unconfined).

use std::{
    ffi::{CStr, CString, OsStr},
    fs::File,
    io,
    mem::MaybeUninit,
    os::{
        fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
        unix::ffi::OsStrExt,
    },
    ptr,
};

use super::{child::HookChild, HookProcess, SHELL};
use crate::sandbox::Confiner;

/// Bytes of stack for the child until its `execve`: it calls a few libc wrappers of system
/// calls and nothing else (musl's `posix_spawn` gives its child about 5 KiB).
const STACK: usize = 32 * 1024;

/// Signals 1..`NSIG` (Linux: 64 signals).
const NSIG: libc::c_int = 65;

/// Everything the child needs, made in the parent before the `clone`: the child allocates
/// nothing and takes no lock.
struct Plan {
    argv: [*const libc::c_char; 4],
    envp: *const *const libc::c_char,
    /// Null: stay in our working directory.
    cwd: *const libc::c_char,
    /// Our pipes' child ends for its fds 0, 1, 2; each ≥ 3, so no `dup2` overwrites another.
    fds: [RawFd; 3],
    /// Applies the Landlock ruleset, if any.
    confiner: Option<Confiner>,
    /// Written by the child when a step fails: its `errno` (0 while all went well).
    err: libc::c_int,
}

/// The child's stack, 16-byte aligned as every ABI wants at a call.
#[repr(C, align(16))]
struct Stack([MaybeUninit<u8>; STACK]);

/// Start `/bin/sh -c <command>` for `hook` as described in the module doc, confined by
/// `ruleset` when given.
pub(super) fn spawn(hook: &HookProcess<'_>, confiner: Option<Confiner>) -> io::Result<HookChild> {
    let command = CString::new(hook.command).map_err(|_| nul("the command"))?;
    let shell = CString::new(SHELL).map_err(|_| nul("the shell"))?;
    let env = environment(hook.env)?;
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|entry| entry.as_ptr()).collect();
    envp.push(ptr::null());
    let cwd = if super::is_current_dir(hook.cwd) {
        None
    } else {
        Some(CString::new(hook.cwd.as_os_str().as_bytes()).map_err(|_| nul("the cwd"))?)
    };
    let (stdin_child, stdin_ours) = pipe()?;
    let (stdout_ours, stdout_child) = pipe()?;
    let (stderr_ours, stderr_child) = pipe()?;
    let (stdin_child, stdout_child, stderr_child) = (
        above_stdio(stdin_child)?,
        above_stdio(stdout_child)?,
        above_stdio(stderr_child)?,
    );
    let dash_c: &CStr = c"-c";
    let mut plan = Plan {
        argv: [
            shell.as_ptr(),
            dash_c.as_ptr(),
            command.as_ptr(),
            ptr::null(),
        ],
        envp: envp.as_ptr(),
        cwd: cwd.as_ref().map_or(ptr::null(), |cwd| cwd.as_ptr()),
        fds: [
            stdin_child.as_raw_fd(),
            stdout_child.as_raw_fd(),
            stderr_child.as_raw_fd(),
        ],
        confiner,
        err: 0,
    };
    let pid = clone_child(&mut plan)?;
    // Our copies of the child's ends: closed, so EOF on stdout/stderr means the group closed them.
    drop((stdin_child, stdout_child, stderr_child));
    if plan.err != 0 {
        reap_failed(pid);
        return Err(io::Error::from_raw_os_error(plan.err));
    }
    Ok(HookChild::new(
        pid,
        File::from(stdin_ours),
        File::from(stdout_ours),
        File::from(stderr_ours),
    ))
}

/// The `clone` itself, with every signal blocked around it in this thread: a signal handled in
/// the child before it reset the handlers would run our handler on our memory.
fn clone_child(plan: &mut Plan) -> io::Result<libc::pid_t> {
    let mut stack = Stack([MaybeUninit::uninit(); STACK]);
    // SAFETY: one past the end of `stack`, which lives until this function returns; the
    // parent is suspended (CLONE_VFORK) until the child has exec'd or exited, so the stack is
    // never used by both.
    let top = unsafe { stack.0.as_mut_ptr().add(STACK) }.cast::<libc::c_void>();
    let old = block_all_signals();
    // SAFETY: `child_main` runs on `top`'s stack with `plan`, which outlives the call (the
    // parent only resumes when the child is done with it). CLONE_VM | CLONE_VFORK is what
    // posix_spawn uses; SIGCHLD makes it an ordinary child for waitpid.
    let pid = unsafe {
        libc::clone(
            child_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (plan as *mut Plan).cast::<libc::c_void>(),
        )
    };
    let err = io::Error::last_os_error();
    restore_signals(old);
    if pid < 0 {
        return Err(err);
    }
    Ok(pid)
}

/// The child: the steps of the module doc, then `execve`. Never returns.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Plan` the parent passed to `clone`; the parent is suspended while
    // this runs, so nothing else touches it.
    let plan = unsafe { &mut *arg.cast::<Plan>() };
    // SAFETY: only system calls on data the plan holds (see `prepare_and_exec`).
    plan.err = unsafe { prepare_and_exec(plan) };
    // SAFETY: _exit ends the child at once, running nothing of ours (no atexit, no flush).
    unsafe { libc::_exit(127) }
}

/// Returns the `errno` of the step that failed (`execve` returns only on failure).
///
/// # Safety
/// Only in the `clone`d child, with every pointer of `plan` valid.
unsafe fn prepare_and_exec(plan: &Plan) -> libc::c_int {
    for signal in 1..NSIG {
        let mut action: libc::sigaction = std::mem::zeroed();
        // Fails for SIGKILL, SIGSTOP and the C library's own signals: nothing to reset there.
        if libc::sigaction(signal, ptr::null(), &mut action) != 0 {
            continue;
        }
        let ignored = action.sa_sigaction == libc::SIG_IGN && signal != libc::SIGPIPE;
        if !ignored && action.sa_sigaction != libc::SIG_DFL {
            action.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &action, ptr::null_mut());
        }
    }
    let empty: u64 = 0;
    if set_mask(&empty, ptr::null_mut()) != 0 {
        return errno();
    }
    if libc::setpgid(0, 0) != 0 {
        return errno();
    }
    for (target, fd) in plan.fds.iter().enumerate() {
        // Each source is ≥ 3 and close-on-exec: the copy on 0..2 is not.
        if libc::dup2(*fd, target as libc::c_int) < 0 {
            return errno();
        }
    }
    if !plan.cwd.is_null() && libc::chdir(plan.cwd) != 0 {
        return errno();
    }
    if let Some(confiner) = plan.confiner {
        // Two system calls; its error is an `errno`, which allocates nothing.
        if let Err(err) = confiner.confine() {
            return err.raw_os_error().unwrap_or(libc::EPERM);
        }
    }
    libc::execve(plan.argv[0], plan.argv.as_ptr(), plan.envp);
    errno()
}

/// The calling thread's `errno` (in the child: the suspended parent thread's, which it shares).
fn errno() -> libc::c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `rt_sigprocmask(SIG_SETMASK)` with the kernel's 64-bit set: unlike `pthread_sigmask`, it
/// also blocks the signals the C library keeps for itself.
///
/// # Safety
/// `set` points to a `u64`; `old` is null or points to a writable `u64`.
unsafe fn set_mask(set: *const u64, old: *mut u64) -> libc::c_long {
    libc::syscall(
        libc::SYS_rt_sigprocmask,
        libc::SIG_SETMASK,
        set,
        old,
        std::mem::size_of::<u64>(),
    )
}

/// Block every signal in this thread; returns the mask to restore.
fn block_all_signals() -> u64 {
    let all: u64 = !0;
    let mut old: u64 = 0;
    // SAFETY: both point to u64s owned by this frame. It cannot fail with these arguments; if
    // it did, `old` stays 0 and the restore would unblock: the child resets handlers anyway.
    unsafe { set_mask(&all, &mut old) };
    old
}

fn restore_signals(old: u64) {
    // SAFETY: `old` is a u64 owned by this frame.
    unsafe { set_mask(&old, ptr::null_mut()) };
}

/// The inherited environment with `extra` set over it, as `KEY=value` strings. A later entry of
/// `extra` wins over an earlier one of the same name, as with `Command::env`.
fn environment(extra: &[(String, String)]) -> io::Result<Vec<CString>> {
    let mut env = Vec::with_capacity(64);
    for (key, value) in std::env::vars_os() {
        if extra.iter().any(|(name, _)| OsStr::new(name) == key) {
            continue;
        }
        env.push(entry(key.as_bytes(), value.as_bytes())?);
    }
    for (at, (key, value)) in extra.iter().enumerate() {
        if extra[at + 1..].iter().any(|(later, _)| later == key) {
            continue;
        }
        env.push(entry(key.as_bytes(), value.as_bytes())?);
    }
    Ok(env)
}

fn entry(key: &[u8], value: &[u8]) -> io::Result<CString> {
    let mut bytes = Vec::with_capacity(key.len() + value.len() + 2);
    bytes.extend_from_slice(key);
    bytes.push(b'=');
    bytes.extend_from_slice(value);
    CString::new(bytes).map_err(|_| nul("an environment variable"))
}

fn nul(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} contains a NUL byte"),
    )
}

/// `pipe2(O_CLOEXEC)`: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1; 2];
    // SAFETY: `fds` is an array of two c_ints owned by this frame; pipe2 only writes it.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned both descriptors; nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `fd` itself, or a close-on-exec copy of it at 3 or above where it is 0, 1 or 2 (a host that
/// closed its own standard streams): the child's `dup2`s must not overwrite a source.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: `fd` is open and owned here; F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned `copy`; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// Reap a child that ended with `_exit(127)` before its `execve`: it has exited already (the
/// parent resumes only then), so this does not block.
fn reap_failed(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: `status` is a c_int owned by this frame.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}
