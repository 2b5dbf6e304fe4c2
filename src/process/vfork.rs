//! Linux: start a hook with ka's own vfork-style `clone`, as `posix_spawn` does, plus the one
//! step `posix_spawn` cannot take: confining the child with Landlock before `sh` starts. The
//! child makes raw system calls only and reports a failed step's `errno` in shared memory.
//! Where `clone` is unfit, `std` starts the hooks ([`usable`]). Why: `docs/design.md`.

use std::{
    collections::HashSet,
    ffi::{CStr, CString},
    fs::File,
    io,
    mem::MaybeUninit,
    os::{
        fd::{AsRawFd, OwnedFd, RawFd},
        unix::ffi::OsStrExt,
    },
    ptr,
    sync::{
        atomic::{AtomicU8, Ordering},
        OnceLock,
    },
};

use super::{child::HookChild, HookProcess, SHELL};
use crate::sandbox::Confiner;

/// Bytes of stack for the child until its `execve`: it makes raw system calls and nothing else
/// (musl's `posix_spawn` gives its child about 5 KiB), through functions the parent has called
/// already, so no lazy symbol binding (which saves the vector registers on the stack) runs in
/// the child. An overflow would write into the heap below it: the margin is wide.
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
    /// The calling thread's signal mask, the hook's too.
    mask: u64,
    /// Our pid: the child's parent, until we die.
    parent: libc::pid_t,
    /// The write end of the pipe a failed step is also reported on (the first spawn of a
    /// process only, see [`SHARED`]); -1 otherwise.
    report: RawFd,
    /// Set to 1 by the child first thing: it runs in our memory.
    entered: libc::c_int,
    /// Written by the child when a step fails: its `errno` (0 while all went well).
    err: libc::c_int,
}

/// Whether a `CLONE_VM | CLONE_VFORK` child runs in our memory here: not known before the
/// first spawn, then [`YES`] or [`NO`]. Where it is emulated by a fork (qemu-user, valgrind)
/// the `errno` a failed step leaves in memory is lost, and a hook that never started would
/// pass for one that exited 127: so the first spawn's child also writes it to a pipe.
static SHARED: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// The child's stack, 16-byte aligned as every ABI wants at a call.
#[repr(C, align(16))]
struct Stack([MaybeUninit<u8>; STACK]);

/// A child's stack, on the heap: as a local, its 32 KiB would be probed page by page on entry
/// (eight page faults) and push every later frame of ours as far down; the child touches a page
/// or two. Made before the `clone` and dropped after it, never in the child.
pub(super) struct ChildStack(Box<MaybeUninit<Stack>>);

impl ChildStack {
    pub(super) fn new() -> ChildStack {
        ChildStack(Box::new_uninit())
    }

    /// One past its end: where the child's first frame goes.
    fn top(&mut self) -> *mut libc::c_void {
        self.0.as_mut_ptr().wrapping_add(1).cast()
    }
}

/// This spawn can be used in this process: the C library's `clone` wrapper leaves the calling
/// thread alone, and the first spawn did not find that the child shares no memory with us
/// ([`SHARED`]). glibc before 2.25 cached the pid and tid in the thread's control block and
/// its `clone` wrote -1 there for a `CLONE_VM` child, which shares the parent thread's block:
/// `raise` and mutexes that record their owner would then break in the host. Elsewhere
/// `std`'s `Command` is used (a `fork` for a confined hook).
pub(super) fn usable() -> bool {
    clone_is_fit() && SHARED.load(Ordering::Relaxed) != NO
}

/// Whether the first spawn found that the child runs in our memory (`None` before it).
#[cfg(test)]
pub(super) fn memory_shared() -> Option<bool> {
    match SHARED.load(Ordering::Relaxed) {
        YES => Some(true),
        NO => Some(false),
        _ => None,
    }
}

/// The architecture and the C library's `clone` suit this spawn (see [`usable`]).
fn clone_is_fit() -> bool {
    static FIT: OnceLock<bool> = OnceLock::new();
    *FIT.get_or_init(|| {
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
        fit
    })
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
    spawn_with(SHELL, hook, confiner, false)
}

/// [`spawn`] with `shell` for `/bin/sh`; `unshared` (tests): take a failed step from the
/// report pipe, as where the child shares no memory with us.
pub(super) fn spawn_with(
    shell: &str,
    hook: &HookProcess<'_>,
    confiner: Option<Confiner>,
    unshared: bool,
) -> io::Result<HookChild> {
    let command = CString::new(hook.command).map_err(|_| nul("the command"))?;
    let shell = CString::new(shell).map_err(|_| nul("the shell"))?;
    let env = environment(hook.env, hook.clean_env)?;
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|entry| entry.as_ptr()).collect();
    envp.push(ptr::null());
    let cwd = if super::spawn::is_current_dir(hook.cwd) {
        None
    } else {
        Some(CString::new(hook.cwd.as_os_str().as_bytes()).map_err(|_| nul("the cwd"))?)
    };
    let (ours, theirs) = pipes()?;
    // The first spawn of a process finds out whether the child shares our memory.
    let report = if unshared || SHARED.load(Ordering::Relaxed) == UNKNOWN {
        Some(pipe()?)
    } else {
        None
    };
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
        fds: theirs.each(AsRawFd::as_raw_fd),
        confiner,
        mask: 0,
        parent: std::process::id() as libc::pid_t,
        report: report.as_ref().map_or(-1, |(_, write)| write.as_raw_fd()),
        entered: 0,
        err: 0,
    };
    let pid = clone_child(&mut plan)?;
    // Our copies of the child's ends: closed, so EOF on stdout/stderr means the group closed them.
    drop(theirs);
    // SAFETY: fields of `plan`, in this frame; read volatile because the child wrote them.
    let (entered, err) = unsafe {
        (
            ptr::read_volatile(&plan.entered),
            ptr::read_volatile(&plan.err),
        )
    };
    let err = match report {
        None => Ok(err),
        Some((read, write)) => {
            drop(write);
            SHARED.store(if entered == 1 { YES } else { NO }, Ordering::Relaxed);
            if entered == 1 && !unshared {
                Ok(err)
            } else {
                read_report(read)
            }
        }
    };
    match err {
        Ok(0) => {}
        Ok(err) => {
            reap_exited(pid);
            return Err(io::Error::from_raw_os_error(err));
        }
        Err(read_failed) => {
            // Whether the hook started cannot be known: end it.
            super::kill_leader(pid, libc::SIGKILL);
            reap_exited(pid);
            return Err(read_failed);
        }
    }
    let [stdin, stdout, stderr] = ours.0.map(File::from);
    Ok(HookChild::new(pid, stdin, stdout, stderr))
}

/// Three pipe ends, in the order stdin, stdout, stderr.
struct Ends([OwnedFd; 3]);

impl Ends {
    fn each<T>(&self, f: impl Fn(&OwnedFd) -> T) -> [T; 3] {
        [f(&self.0[0]), f(&self.0[1]), f(&self.0[2])]
    }
}

/// The three pipes: (our ends, the child's ends), all six above 2: the child's `dup3`s must
/// not overwrite a source, and in a host that closed its standard streams the host's own
/// writes to 2 must not reach the hook.
fn pipes() -> io::Result<(Ends, Ends)> {
    let above = crate::fd::above_stdio;
    let (stdin_child, stdin_ours) = pipe()?;
    let (stdout_ours, stdout_child) = pipe()?;
    let (stderr_ours, stderr_child) = pipe()?;
    let ours = Ends([above(stdin_ours)?, above(stdout_ours)?, above(stderr_ours)?]);
    let theirs = Ends([
        above(stdin_child)?,
        above(stdout_child)?,
        above(stderr_child)?,
    ]);
    Ok((ours, theirs))
}

/// What the child of the first spawn reported on its pipe: 0 once it reached `execve` (the
/// pipe closed on exec), else the `errno` of the step that failed.
fn read_report(read: OwnedFd) -> io::Result<libc::c_int> {
    let mut pipe = File::from(read);
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < buf.len() {
        match io::Read::read(&mut pipe, &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    match got {
        0 => Ok(0),
        4 => Ok(libc::c_int::from_ne_bytes(buf)),
        _ => Ok(libc::EIO),
    }
}

/// The `clone` itself, with every signal blocked around it in this thread (a signal handled in
/// the child before it reset the handlers would run our handler on our memory); the child
/// restores `plan.mask`, the mask we had, before its `execve`.
fn clone_child(plan: &mut Plan) -> io::Result<libc::pid_t> {
    // Freed after the check below, which counts what happens from the child's start on.
    let mut stack = ChildStack::new();
    plan.mask = block_all_signals();
    let pid = clone_raw(child_main, (plan as *mut Plan).cast(), &mut stack);
    restore_signals(plan.mask);
    #[cfg(test)]
    super::alloc_guard::check();
    pid
}

/// `clone(CLONE_VM | CLONE_VFORK)` running `main(arg)` on `stack`: returns once the child has
/// called `execve` or exited.
pub(super) fn clone_raw(
    main: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
    stack: &mut ChildStack,
) -> io::Result<libc::pid_t> {
    // The caller keeps `stack` until this returns; the parent is suspended (CLONE_VFORK) until
    // the child has exec'd or exited, so the stack is never used by both.
    let top = stack.top();
    // Bind `__errno_location` in the parent (the child's failure path calls it): a host linked
    // without `-z now` would otherwise resolve it on the child's small stack.
    let _ = errno();
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
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(pid)
}

/// The child: the steps of the module doc, then `execve`. Never returns.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    #[cfg(test)]
    super::alloc_guard::enter_child();
    // SAFETY: `arg` is the `Plan` the parent passed to `clone`; the parent is suspended while
    // this runs, so nothing else touches it. Its fields are written volatile: the parent reads
    // them after we are gone. `prepare_and_exec` makes only raw system calls on data the plan
    // holds. The report pipe, when there is one, is open in this child until it exits; the
    // write reads four bytes of this frame. exit_group ends the child at once (it is its own
    // thread group), running nothing of ours and of the C library's.
    unsafe {
        let plan = &mut *arg.cast::<Plan>();
        ptr::write_volatile(&mut plan.entered, 1);
        let err = prepare_and_exec(plan);
        let err = if err == 0 { libc::ECHILD } else { err };
        ptr::write_volatile(&mut plan.err, err);
        if plan.report >= 0 {
            libc::syscall(
                libc::SYS_write,
                plan.report,
                (&err as *const libc::c_int).cast::<u8>(),
                std::mem::size_of::<libc::c_int>(),
            );
        }
        libc::syscall(libc::SYS_exit_group, 127 as libc::c_long);
    }
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
    reset_handlers();
    if libc::syscall(libc::SYS_setpgid, 0, 0) != 0 {
        return errno();
    }
    // Killed when the thread that spawned it dies, whatever kills it; if that already
    // happened, we were handed to another parent: stop before the hook starts.
    let (set_pdeathsig, kill, unused): (libc::c_long, libc::c_long, libc::c_long) = (
        libc::c_long::from(libc::PR_SET_PDEATHSIG),
        libc::c_long::from(libc::SIGKILL),
        0,
    );
    if libc::syscall(libc::SYS_prctl, set_pdeathsig, kill, unused, unused, unused) != 0 {
        return errno();
    }
    if libc::syscall(libc::SYS_getppid) != libc::c_long::from(plan.parent) {
        return libc::ESRCH;
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
    if set_mask(&plan.mask, None) != 0 {
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

/// Every signal the host handles back to its default action, `SIGPIPE` too if ignored: no
/// handler of ours may run in the child, which shares our memory. The C library's own
/// signals (32, 33, ...) are reset too.
///
/// # Safety
/// Only in the `clone`d child (raw system calls on this frame's data).
unsafe fn reset_handlers() {
    let size = std::mem::size_of::<u64>();
    let default: KernelSigaction = [0; 4];
    for signal in 1..NSIG {
        let mut old: KernelSigaction = [0; 4];
        // A query does not fail for a valid signal; skip it if it does.
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
}

/// The calling thread's `errno` (in the child: the suspended parent thread's, which it shares).
fn errno() -> libc::c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `rt_sigprocmask(SIG_SETMASK)` with the kernel's 64-bit set: unlike `pthread_sigmask`, it
/// also blocks the signals the C library keeps for itself. A raw system call, so the child
/// may make it too.
fn set_mask(set: &u64, old: Option<&mut u64>) -> libc::c_long {
    let old = old.map_or(ptr::null_mut(), |old| old as *mut u64);
    // SAFETY: `set` points to a u64 and `old` is null or points to a writable u64; the kernel
    // reads and writes 8 bytes (the size given).
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            set as *const u64,
            old,
            std::mem::size_of::<u64>(),
        )
    }
}

/// Block every signal in this thread; returns the mask to restore. It cannot fail with these
/// arguments; if it did, `old` stays 0 and the restore would unblock: the child resets
/// handlers anyway.
fn block_all_signals() -> u64 {
    let mut old: u64 = 0;
    set_mask(&!0, Some(&mut old));
    old
}

fn restore_signals(old: u64) {
    set_mask(&old, None);
}

/// The inherited environment with `extra` set over it, as `KEY=value` strings: one entry per
/// name, the last one winning (of `extra` over the inherited, and within each), as
/// `Command::env` gives.
fn environment(extra: &[(String, String)], clean: bool) -> io::Result<Vec<CString>> {
    let inherited: Vec<_> = if clean {
        Vec::new()
    } else {
        std::env::vars_os().collect()
    };
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
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// Reap a child that ended before its `execve` (a failed step): the parent resumes only once
/// it is exiting, so this waits at most for the end of its exit.
pub(super) fn reap_exited(pid: libc::pid_t) {
    let Some(pid) = super::pid(pid) else { return };
    let wait = || rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
    while matches!(wait(), Err(rustix::io::Errno::INTR)) {}
}
