//! Starting `/bin/sh -c <command>` in a process group of its own with all three standard
//! streams piped, confined by a Landlock ruleset when given.
//!
//! Two ways, one result ([`HookChild`]): on Linux ka's own vfork-style `clone`
//! ([`super::vfork`]), which confines the child before `sh` without copying the host's page
//! tables; elsewhere (macOS) `std::process::Command` (`posix_spawn`; no Landlock there). Linux
//! takes the `std` way too whenever the thread fallback is forced
//! ([`super::FORCE_FALLBACK_VAR`]), so that the test suite's second run of the process tests
//! covers the whole macOS path, spawn included.

use std::{
    os::unix::process::CommandExt,
    path::Path,
    process::{Command, Stdio},
};

use super::{child::HookChild, HookProcess, SHELL};
use crate::sandbox::Prepared;

/// Whether [`spawn`] takes ka's own spawn here, whose hook leader dies with the thread that
/// spawned it (its parent-death signal).
pub(super) fn own() -> bool {
    #[cfg(target_os = "linux")]
    {
        !super::fallback_forced() && super::vfork::usable()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Start the hook, with ka's own spawn if `own` (from [`own`]). The error is the text for
/// [`super::Termination::SpawnFailed`].
pub(super) fn spawn(
    hook: &HookProcess<'_>,
    sandbox: Option<&Prepared>,
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))] own: bool,
) -> Result<HookChild, String> {
    #[cfg(target_os = "linux")]
    let spawned = if own {
        super::vfork::spawn(hook, sandbox.map(Prepared::confiner))
    } else {
        spawn_std(hook, sandbox)
    };
    #[cfg(not(target_os = "linux"))]
    let spawned = spawn_std(hook, sandbox);
    spawned.map_err(|err| {
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

/// The portable way: `std::process::Command`.
pub(super) fn spawn_std(
    hook: &HookProcess<'_>,
    sandbox: Option<&Prepared>,
) -> std::io::Result<HookChild> {
    spawn_std_with(SHELL, hook, sandbox)
}

/// [`spawn_std`] with `shell` for `/bin/sh`.
pub(super) fn spawn_std_with(
    shell: &str,
    hook: &HookProcess<'_>,
    sandbox: Option<&Prepared>,
) -> std::io::Result<HookChild> {
    let mut command = Command::new(shell);
    if hook.clean_env {
        command.env_clear();
    }
    command
        .arg("-c")
        .arg(hook.command)
        .envs(hook.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // std spawns with posix_spawn (no copy of our page tables) only when posix_spawn can do every
    // step; a working directory needs `posix_spawn_file_actions_addchdir_np`, which std looks up at
    // run time and does not find everywhere (glibc before 2.29, for one): it forks then. This path
    // serves macOS, and Linux only where ka's own spawn cannot be used or the fallback is forced. A
    // hook that runs in our own working directory (the usual case) needs no chdir. Nothing in ka-hooks
    // changes its working directory, so it cannot change before the spawn (a host that embeds the
    // library and changes its own while a dispatch runs races with this, as it does with every
    // relative path it hands over).
    if !is_current_dir(hook.cwd) {
        command.current_dir(hook.cwd);
    }
    if let Some(sandbox) = sandbox {
        // In the child between fork and exec, never in a thread of this process: Landlock
        // confines the calling thread, and a hook can signal, or with ptrace rights write the
        // memory of, any thread in its own domain. A thread of ka's confined to spawn it (kept,
        // or a fresh one that had not yet ended) let a hook SIGKILL the whole host and write its
        // memory (`process_vm_writev` on the thread's id). Done in the child, the hook gets a
        // domain of its own, which no thread of ka and no other hook shares. std forks the
        // whole process for a `pre_exec` (Linux takes this way only when the fallback is
        // forced; macOS has no Landlock).
        let confiner = sandbox.confiner();
        // SAFETY: the closure runs in the forked child before exec (after std put the pipes on
        // 0, 1 and 2) and only makes three system calls (`prctl`, `landlock_restrict_self`,
        // `close_range`), which are async-signal-safe; it allocates
        // nothing and touches no lock. The ruleset descriptor it names stays open in this
        // process until `spawn` returns.
        unsafe {
            command.pre_exec(move || confiner.confine());
        }
    }
    command.spawn().map(HookChild::from_std)
}

/// `dir` is, by path, the working directory of this process (a directory that exists then).
pub(super) fn is_current_dir(dir: &Path) -> bool {
    dir.is_absolute() && std::env::current_dir().is_ok_and(|cwd| cwd == dir)
}
