//! The Linux sandbox: a Landlock ruleset built with the `landlock` crate in ka, applied in the
//! hook's child process by three system calls.

use std::io;
use std::os::fd::{OwnedFd, RawFd};

use landlock::{
    AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};

use super::probe::{Probe, NETWORK_ABI};
use super::Resolved;

/// Landlock ABI from which signals and abstract UNIX sockets are scoped.
const SCOPE_ABI: i32 = 6;

/// Devices every hook may write: discarding output (`>/dev/null`) is not a write anywhere.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// The kernel's Landlock ABI version, or why there is none.
pub(super) fn abi() -> Result<i32, String> {
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag only
    // returns the ABI version (or -1 with errno); it reads and writes no memory of ours.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if v > 0 {
        return i32::try_from(v).map_err(|_| format!("unexpected Landlock ABI {v}"));
    }
    Err(match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled (boot \
                                   with `lsm=…,landlock`)"
            .to_owned(),
        _ => "this kernel has no Landlock (before Linux 5.13, or not built in)".to_owned(),
    })
}

/// Build the ruleset of `rules` for the ABI the probe found: every write right of that ABI is
/// handled (denied unless a rule allows it), and with `network = false` TCP bind and connect.
/// Hard requirements: a right the kernel cannot enforce is an error, never silently dropped.
pub(super) fn ruleset(rules: &Resolved, probe: &Probe) -> Result<OwnedFd, String> {
    let abi = ABI::from(probe.abi);
    let write = AccessFs::from_write(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write)
        .map_err(|e| e.to_string())?;
    if !rules.network && probe.abi >= NETWORK_ABI {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| e.to_string())?;
    }
    if probe.abi >= SCOPE_ABI {
        // A confined hook signals no process outside its sandbox (ka, the agent, the user's
        // other programs) and, without the network, reaches no abstract UNIX socket outside it.
        let scopes = if rules.network {
            Scope::Signal.into()
        } else {
            Scope::Signal | Scope::AbstractUnixSocket
        };
        ruleset = ruleset.scope(scopes).map_err(|e| e.to_string())?;
    }
    let mut created = ruleset.create().map_err(|e| e.to_string())?;
    let places = rules
        .write
        .iter()
        .map(|p| p.as_path())
        .chain(DEVICES.iter().map(std::path::Path::new));
    for place in places {
        // A place that does not exist cannot be written under anyway (nor created: its parent
        // is not a rule): leaving it out never allows more.
        let Ok(fd) = PathFd::new(place) else {
            continue;
        };
        let access = if place.is_dir() {
            write
        } else {
            write & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| format!("{}: {e}", place.display()))?;
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| "Landlock gave no ruleset".to_owned())?;
    // In a host that closed its standard streams the ruleset could be descriptor 0, 1 or 2,
    // which the child replaces with the hook's pipes before it confines itself.
    crate::fd::above_stdio(fd).map_err(|e| format!("moving the ruleset above stdio: {e}"))
}

/// Confine the calling process: `no_new_privs` (required by Landlock for an unprivileged
/// process), then `landlock_restrict_self`, then every descriptor above 2 marked to close at
/// `execve`. Landlock checks a write when a file is opened: a descriptor the host left open
/// without close-on-exec (a log file a C library opened, say) would let the hook write through
/// it wherever it points. Raw system calls, async-signal-safe: called between fork (or ka's
/// vfork-style `clone`, whose child must call no interposable wrapper) and exec, once the
/// hook's pipes are on 0, 1 and 2. `close_range` with `CLOSE_RANGE_CLOEXEC` (Linux 5.11) is older than Landlock
/// (5.13); where a filter refuses it the spawn fails, closed.
pub(super) fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    let (on, unused): (libc::c_long, libc::c_long) = (1, 0);
    let no_new_privs = libc::c_long::from(libc::PR_SET_NO_NEW_PRIVS);
    // SAFETY: three system calls that take no pointers: prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    // landlock_restrict_self on a descriptor the parent holds open until the spawn returns;
    // close_range(3, ~0, CLOSE_RANGE_CLOEXEC), which marks descriptors of this process
    // close-on-exec (the child's own table: neither `fork` nor ka's `clone` shares it). Marked,
    // not closed: a spawn that reports a failed `execve` through a close-on-exec pipe (`std`'s,
    // and ka's first in a process) needs it until then.
    let failed = unsafe {
        libc::syscall(libc::SYS_prctl, no_new_privs, on, unused, unused, unused) != 0
            || libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0
            || libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) != 0
    };
    if failed {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
