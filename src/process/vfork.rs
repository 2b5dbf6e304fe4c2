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
//! The child runs with every signal blocked (the parent blocks them around the `clone`) and
//! makes raw system calls only, in order: every signal handler the host installed reset to
//! the default and `SIGPIPE` too (a handler of ours must never run in it: it shares our
//! memory), a process group of its own, the three pipes on 0, 1 and 2, the working directory,
//! the Landlock ruleset (`no_new_privs`, `landlock_restrict_self`), an empty signal mask,
//! `execve`. A step that fails leaves its `errno` in memory we share and ends the child with
//! exit status 127; the parent reaps it and reports the error (the hook never runs, and never
//! unconfined). Where the C library's `clone` is unfit, or where `CLONE_VFORK` is emulated by
//! a fork that shares no memory (qemu-user, valgrind), `std` starts the hook ([`usable`]).

use std::{
    collections::HashSet,
    ffi::{CStr, CString},
    fs::File,
    io,
    mem::MaybeUninit,
    os::{
        fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
        unix::ffi::OsStrExt,
    },
    ptr,
    sync::OnceLock,
};

use super::{child::HookChild, HookProcess, SHELL};
use crate::sandbox::Confiner;

/// Bytes of stack for the child until its `execve`: it makes raw system calls and nothing else
/// (musl's `posix_spawn` gives its child about 5 KiB), through functions the parent has called
/// already, so no lazy symbol binding (which saves the vector registers on the stack) runs in
/// the child. An overflow would write into the parent's suspended frames: the margin is wide.
const STACK: usize = 32 * 1024;

/// Signals 1..`NSIG` on the architectures this spawn is used on ([`usable`]: 64 signals, a
/// 64-bit set).
const NSIG: libc::c_long = 65;

/// Room for the kernel's `struct sigaction` on those architectures (handler, flags, restorer
/// where there is one, mask: at most 32 bytes). All zero is `SIG_DFL`, no flags, empty mask.
type KernelSigaction = [u64; 4];

/// Everything the child needs, made in the parent before the `clone`: the child allocates
/// nothing and takes no lock.
struct Plan {
    argv: [*const libc::c_char; 4],
    envp: *const *const libc::c_char,
    /// Null: stay in our working directory.
    cwd: *const libc::c_char,
    /// Our pipes' child ends for its fds 0, 1, 2; each ≥ 3, so no `dup3` overwrites another.
    fds: [RawFd; 3],
    /// Applies the Landlock ruleset, if any.
    confiner: Option<Confiner>,
    /// Written by the child when a step fails: its `errno` (0 while all went well).
    err: libc::c_int,
}

/// The child's stack, 16-byte aligned as every ABI wants at a call.
#[repr(C, align(16))]
struct Stack([MaybeUninit<u8>; STACK]);

/// This spawn can be used in this process: the C library's `clone` wrapper leaves the calling
/// thread alone. glibc before 2.25 cached the pid and tid in the thread's control block and
/// its `clone` wrote -1 there for a `CLONE_VM` child, which shares the parent thread's block:
/// `raise` and mutexes that record their owner would then break in the host. Elsewhere
/// `std`'s `Command` is used (a `fork` for a confined hook).
pub(super) fn usable() -> bool {
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(|| {
        // The architectures whose signal set is 64 bits and whose kernel `struct sigaction`
        // starts with the handler (`prepare_and_exec` relies on both). Elsewhere (MIPS has
        // 128 signals, SPARC another `rt_sigaction`) `std` starts the hooks.
        if !cfg!(all(
            target_pointer_width = "64",
            any(
                target_arch = "x86_64",
                target_arch = "aarch64",
                target_arch = "riscv64",
                target_arch = "loongarch64"
            )
        )) {
            return false;
        }
        #[cfg(target_env = "gnu")]
        // SAFETY: returns a pointer to a static NUL-terminated string ("2.36").
        let fit = glibc_clone_is_fit(
            unsafe { CStr::from_ptr(libc::gnu_get_libc_version()) }
                .to_str()
                .unwrap_or(""),
        );
        // musl's `clone` only makes the system call; another C library is not known to.
        #[cfg(not(target_env = "gnu"))]
        let fit = cfg!(target_env = "musl");
        fit && clone_shares_memory()
    })
}

/// Whether a `CLONE_VM | CLONE_VFORK` child really runs in our memory here. Where it is
/// emulated by a fork (qemu-user, valgrind) the `errno` of a failed step would be lost and a
/// hook that never started would pass for one that exited 127. Asked once per process, by a
/// child that sets a flag and exits.
pub(super) fn clone_shares_memory() -> bool {
    extern "C" fn set_flag(flag: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `flag` is the parent's c_int (below), suspended until this child exits.
        unsafe {
            ptr::write_volatile(flag.cast::<libc::c_int>(), 1);
            libc::syscall(libc::SYS_exit_group, 0 as libc::c_long);
        }
        0
    }
    let mut flag: libc::c_int = 0;
    let Ok(pid) = clone_child(set_flag, (&mut flag as *mut libc::c_int).cast()) else {
        return false;
    };
    reap_exited(pid);
    // SAFETY: `flag` is a c_int of this frame; volatile because the child wrote it.
    let flag = unsafe { ptr::read_volatile(&flag) };
    flag == 1
}

/// glibc `version` ("2.36") no longer caches the pid in the thread (2.25 and later).
#[cfg_attr(not(target_env = "gnu"), allow(dead_code))]
pub(super) fn glibc_clone_is_fit(version: &str) -> bool {
    let mut parts = version.split('.');
    let mut number = || parts.next().and_then(|p| p.parse::<u32>().ok());
    matches!((number(), number()), (Some(major), Some(minor)) if (major, minor) >= (2, 25))
}

/// Start `/bin/sh -c <command>` for `hook` as described in the module doc, confined by
/// `confiner` when given.
pub(super) fn spawn(hook: &HookProcess<'_>, confiner: Option<Confiner>) -> io::Result<HookChild> {
    let command = CString::new(hook.command).map_err(|_| nul("the command"))?;
    let shell = CString::new(SHELL).map_err(|_| nul("the shell"))?;
    let env = environment(hook.env)?;
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|entry| entry.as_ptr()).collect();
    envp.push(ptr::null());
    let cwd = if super::spawn::is_current_dir(hook.cwd) {
        None
    } else {
        Some(CString::new(hook.cwd.as_os_str().as_bytes()).map_err(|_| nul("the cwd"))?)
    };
    // All six ends above 2: the child's `dup3`s must not overwrite a source, and in a host
    // that closed its standard streams the host's own writes to 2 must not reach the hook.
    let (stdin_child, stdin_ours) = pipe()?;
    let (stdout_ours, stdout_child) = pipe()?;
    let (stderr_ours, stderr_child) = pipe()?;
    let above = crate::fd::above_stdio;
    let (stdin_child, stdout_child, stderr_child) = (
        above(stdin_child)?,
        above(stdout_child)?,
        above(stderr_child)?,
    );
    let (stdin_ours, stdout_ours, stderr_ours) =
        (above(stdin_ours)?, above(stdout_ours)?, above(stderr_ours)?);
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
    let pid = clone_child(child_main, (&mut plan as *mut Plan).cast())?;
    // Our copies of the child's ends: closed, so EOF on stdout/stderr means the group closed them.
    drop((stdin_child, stdout_child, stderr_child));
    // SAFETY: `plan.err` is a c_int of this frame; read volatile because the child wrote it.
    let err = unsafe { ptr::read_volatile(&plan.err) };
    if err != 0 {
        reap_exited(pid);
        return Err(io::Error::from_raw_os_error(err));
    }
    Ok(HookChild::new(
        pid,
        File::from(stdin_ours),
        File::from(stdout_ours),
        File::from(stderr_ours),
    ))
}

/// The `clone` itself: `main(arg)` in the child, with every signal blocked around it in this
/// thread (a signal handled in the child before it reset the handlers would run our handler on
/// our memory).
fn clone_child(
    main: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> io::Result<libc::pid_t> {
    let mut stack = Stack([MaybeUninit::uninit(); STACK]);
    // SAFETY: one past the end of `stack`, which lives until this function returns; the
    // parent is suspended (CLONE_VFORK) until the child has exec'd or exited, so the stack is
    // never used by both.
    let top = unsafe { stack.0.as_mut_ptr().add(STACK) }.cast::<libc::c_void>();
    // Bind `__errno_location` in the parent (the child's failure path calls it): a host linked
    // without `-z now` would otherwise resolve it on the child's small stack.
    let _ = errno();
    let old = block_all_signals();
    // SAFETY: `main` runs on `top`'s stack with `arg`, which the caller keeps alive across the
    // call (the parent only resumes when the child is done with it). CLONE_VM | CLONE_VFORK is
    // what posix_spawn uses; SIGCHLD makes it an ordinary child for waitpid.
    let pid = unsafe {
        libc::clone(
            main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
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
    // SAFETY: only raw system calls on data the plan holds (see `prepare_and_exec`).
    let err = unsafe { prepare_and_exec(plan) };
    // SAFETY: `plan.err` is valid (above); volatile: the parent reads it after we are gone.
    unsafe { ptr::write_volatile(&mut plan.err, if err == 0 { libc::ECHILD } else { err }) };
    // SAFETY: exit_group ends the child at once (it is its own thread group), running
    // nothing of ours and of the C library's.
    unsafe { libc::syscall(libc::SYS_exit_group, 127 as libc::c_long) };
    127
}

/// Returns the `errno` of the step that failed (`execve` returns only on failure). Raw system
/// calls throughout, never the C library's wrappers: a library that interposes them (a JVM's
/// signal chaining, a sanitizer) keeps its tables in the memory we share, and musl's
/// `sigaction` may take a lock another thread of the host holds.
///
/// # Safety
/// Only in the `clone`d child, with every pointer of `plan` valid.
unsafe fn prepare_and_exec(plan: &Plan) -> libc::c_int {
    let size = std::mem::size_of::<u64>();
    let default: KernelSigaction = [0; 4];
    for signal in 1..NSIG {
        let mut old: KernelSigaction = [0; 4];
        // A query does not fail for a valid signal; skip it if it does. The C library's own
        // signals (32, 33, ...) are reset too: their handlers would run on our memory.
        if libc::syscall(
            libc::SYS_rt_sigaction,
            signal,
            ptr::null::<u8>(),
            &mut old,
            size,
        ) != 0
        {
            continue;
        }
        // The handler is the struct's first field on these architectures.
        let handler = old[0] as libc::sighandler_t;
        let keep = handler == libc::SIG_DFL
            || (handler == libc::SIG_IGN && signal != libc::c_long::from(libc::SIGPIPE));
        if !keep {
            libc::syscall(
                libc::SYS_rt_sigaction,
                signal,
                &default,
                ptr::null_mut::<u8>(),
                size,
            );
        }
    }
    if libc::syscall(libc::SYS_setpgid, 0, 0) != 0 {
        return errno();
    }
    for (target, fd) in plan.fds.iter().enumerate() {
        // Each source is ≥ 3 and close-on-exec: the copy on 0..2 is not.
        if libc::syscall(libc::SYS_dup3, *fd, target as libc::c_long, 0) < 0 {
            return errno();
        }
    }
    if !plan.cwd.is_null() && libc::syscall(libc::SYS_chdir, plan.cwd) != 0 {
        return errno();
    }
    if let Some(confiner) = plan.confiner {
        // Three raw system calls (the last marks every descriptor above 2 close-on-exec,
        // the ruleset's too); its error is an `errno`, which allocates nothing.
        if let Err(err) = confiner.confine() {
            return err.raw_os_error().unwrap_or(libc::EPERM);
        }
    }
    // Last, as posix_spawn does: until here nothing can interrupt the child.
    let empty: u64 = 0;
    if set_mask(&empty, ptr::null_mut()) != 0 {
        return errno();
    }
    libc::syscall(
        libc::SYS_execve,
        plan.argv[0],
        plan.argv.as_ptr(),
        plan.envp,
    );
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

/// The inherited environment with `extra` set over it, as `KEY=value` strings: one entry per
/// name, the last one winning (of `extra` over the inherited, and within each), as
/// `Command::env` gives.
fn environment(extra: &[(String, String)]) -> io::Result<Vec<CString>> {
    let inherited: Vec<_> = std::env::vars_os().collect();
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(inherited.len() + extra.len());
    let mut env = Vec::with_capacity(inherited.len() + extra.len());
    let extra = extra.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes()));
    let inherited = inherited.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes()));
    for (key, value) in extra.rev().chain(inherited.rev()) {
        if seen.insert(key) {
            env.push(entry(key, value)?);
        }
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

/// Reap a child that ended before its `execve` (a failed step, or the memory check): the parent
/// resumes only once it is exiting, so this waits at most for the end of its exit.
fn reap_exited(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: `status` is a c_int owned by this frame.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}
