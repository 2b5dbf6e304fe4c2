//! Hooks die with their host, even when the host is killed by SIGKILL or ends with
//! `process::exit` while a hook runs.
//!
//! Every hook runs in a process group of its own ([`crate::process`]), so a host that dies leaves
//! it reparented to init, running with no timeout. On the first hook it starts, a process starts
//! one **watchdog**: a small `/bin/sh` script in a process group of its own (so the host's Ctrl-C
//! does not end it first) that ignores SIGINT, SIGHUP, SIGTERM and SIGQUIT and does nothing but
//! wait in one `read` of its stdin: the read end of a pipe whose write end only this process
//! holds (close-on-exec, so no hook inherits it) and never writes. When this process dies,
//! however it dies, the kernel closes the write end, the `read` returns end-of-file, and the
//! watchdog sends SIGKILL to every process group on its **list**, then exits.
//!
//! The list is a file with no name: created and unlinked at once in the temp directory
//! (`tempfile::tempfile`; on Linux, where that cannot be written, a `memfd`), shared with the
//! watchdog as its stdout (opened for reading and writing; the script reads it with `<&1`). It
//! holds one slot of 12 bytes per hook running now: a hook's group is written into a free
//! slot right after its spawn returns and blanked once the runner has ended the group (so a recycled pgid is never killed). Each is one
//! `pwrite` into the page cache; the watchdog is not woken by either, so a hook costs it
//! nothing. (It used to be told each start and end over its stdin, a line `sh` reads a byte at
//! a time: a wake-up of a second process for every hook, measured at 4–7 % of a one-hook
//! dispatch on a 2-core machine; `benches/README.md`.) Having no name, the list cannot be found
//! by path, only through `/proc/<host>/fd` or `/proc/<watchdog>/fd`: a process of the same user
//! that is not confined could write it there, but it could as well signal those groups itself;
//! a confined hook cannot (Landlock refuses what crosses its domain, [`crate::sandbox`]). The
//! script kills only what reads as a number above 1.
//!
//! The watchdog is plain POSIX (`sh`, `read`, `kill -s KILL -- -<pgid>`), so macOS gets exactly the
//! same guarantee: no `prctl(PR_SET_PDEATHSIG)` is needed (Linux-only, and it fires on the death
//! of the spawning *thread*, not the process). A process that deliberately leaves its hook's
//! process group (`setsid`) escapes it, as it escapes every other kill of the runner.
//!
//! The registration is one `pwrite` right after the spawn returns (the watchdog itself is up
//! before the spawn); a SIGKILL of the host inside that window of microseconds leaves that one
//! hook unregistered. On Linux ka's own spawn (`process::vfork`) could close it, its child
//! writing its own slot before `execve`; that is not done yet.
//!
//! When the watchdog cannot be started (no `/bin/sh`, out of processes; elsewhere than Linux,
//! no writable temp directory), hooks still run, under every other guarantee of the runner;
//! [`status`] says why, so a host can report it.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

/// The shell, by absolute path (as every hook's): no `PATH` search a planted `sh` could win.
const SHELL: &str = "/bin/sh";

/// Bytes per slot of the list: a process-group id right-aligned in 11 columns and a newline, or
/// 11 spaces and a newline for a free slot (`read` strips the blanks).
const SLOT: usize = 12;

/// A free slot.
const BLANK: &str = "           \n";

/// The watchdog's program: wait for end-of-file on stdin, then kill every group on the list.
const SCRIPT: &str = r#"trap '' INT HUP TERM QUIT PIPE
while read -r _; do :; done
while read -r p; do
  case $p in ''|*[!0-9]*) continue ;; esac
  [ "$p" -gt 1 ] 2>/dev/null && kill -s KILL -- "-$p" 2>/dev/null
done <&1
"#;

/// What this process keeps of its watchdog.
pub(crate) struct Watchdog {
    /// The process it watches.
    pid: u32,
    /// The list and which of its slots are taken.
    list: Mutex<List>,
    /// The write end of the watchdog's stdin: held, never written, closed by the kernel when
    /// this process dies.
    _alive: ChildStdin,
}

struct List {
    file: File,
    taken: Vec<bool>,
}

/// This process's watchdog (`Err`: why there is none); `None` until the first hook.
static WATCHDOG: Mutex<Option<Result<Arc<Watchdog>, String>>> = Mutex::new(None);

/// The watchdog of this process, started if it has none. A process forked from one that had a
/// watchdog (without exec) has none of its own: what it inherited watches its parent, and the
/// list is shared with it. It starts its own, and closes its copies of the parent's pipe end and
/// list, so that the parent's death is still seen.
fn current() -> Result<Arc<Watchdog>, String> {
    let mut slot = WATCHDOG.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    match slot.as_ref() {
        Some(Ok(w)) if w.pid == pid => return Ok(Arc::clone(w)),
        Some(Err(why)) => return Err(why.clone()),
        _ => {}
    }
    let started = start().map(Arc::new);
    *slot = Some(started.clone());
    started
}

/// The list: an unnamed file in the temp directory, else (Linux) an anonymous memory file, so
/// that a temp directory that cannot be written does not cost the watchdog.
fn list_file() -> Result<File, String> {
    tempfile::tempfile().or_else(|e| {
        anonymous_file().ok_or_else(|| {
            format!("cannot create the hook watchdog's list in the temp directory: {e}")
        })
    })
}

/// `memfd_create(2)`: a file in memory with no name anywhere (Linux ≥ 3.17).
#[cfg(target_os = "linux")]
fn anonymous_file() -> Option<File> {
    use std::os::fd::FromRawFd;
    let name = c"ka-hooks-watchdog";
    // SAFETY: memfd_create reads the NUL-terminated name and takes flags; it returns a new
    // descriptor (close-on-exec with MFD_CLOEXEC) or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_memfd_create,
            name.as_ptr(),
            libc::c_long::from(libc::MFD_CLOEXEC),
        )
    };
    let fd = std::os::fd::RawFd::try_from(fd)
        .ok()
        .filter(|fd| *fd >= 0)?;
    // SAFETY: the kernel just returned `fd`; nothing else owns it.
    Some(unsafe { File::from_raw_fd(fd) })
}

#[cfg(not(target_os = "linux"))]
fn anonymous_file() -> Option<File> {
    None
}

fn start() -> Result<Watchdog, String> {
    let file = list_file()?;
    let theirs = file
        .try_clone()
        .map_err(|e| format!("cannot share the hook watchdog's list: {e}"))?;
    let mut child = Command::new(SHELL)
        .arg("-c")
        .arg(SCRIPT)
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(theirs))
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the hook watchdog ({SHELL}): {e}"))?;
    // It lives as long as this process; init reaps it after we are gone.
    let alive = child
        .stdin
        .take()
        .ok_or_else(|| "the hook watchdog has no stdin".to_owned())?;
    Ok(Watchdog {
        pid: std::process::id(),
        list: Mutex::new(List {
            file,
            taken: Vec::new(),
        }),
        _alive: alive,
    })
}

/// This process's watchdog, started on first use (`None`: it could not be; see [`status`]).
pub(crate) fn get() -> Option<Arc<Watchdog>> {
    current().ok()
}

/// Whether this process has a watchdog (`Err`: why not). Starts it if no hook did yet.
pub fn status() -> Result<(), Unavailable> {
    current()
        .map(|_| ())
        .map_err(|reason| Unavailable { reason })
}

/// Why this process has no watchdog (no `/bin/sh`, no writable temp directory, out of
/// processes): its hooks run under every other guarantee of the runner, but a hook running when
/// the host is killed outlives it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unavailable {
    reason: String,
}

impl Unavailable {
    /// Why, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// A process group on the watchdog's list; taken off on drop, which must come after the
/// runner ended the group (so a recycled pgid is never killed).
pub(crate) struct Registered(Option<(Arc<Watchdog>, usize)>);

/// Put the process group `pgid` (a hook's leader's pid) on the list of `watchdog` (from [`get`]).
pub(crate) fn register(watchdog: Option<Arc<Watchdog>>, pgid: u32) -> Registered {
    let slot = watchdog.and_then(|w| {
        let mut list = w.list.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = match list.taken.iter().position(|taken| !taken) {
            Some(free) => free,
            None => {
                list.taken.push(false);
                list.taken.len() - 1
            }
        };
        // A list that cannot be written (a full disk) cannot be helped: the hook runs under
        // every other guarantee of the runner.
        let written = list.write(slot, &format!("{pgid:>11}\n"));
        if written {
            list.taken[slot] = true;
        }
        drop(list);
        written.then_some((w, slot))
    });
    Registered(slot)
}

impl List {
    /// Write `line` (exactly [`SLOT`] bytes) into `slot`; false when it could not be written.
    fn write(&self, slot: usize, line: &str) -> bool {
        debug_assert_eq!(line.len(), SLOT);
        let offset = (slot * SLOT) as u64;
        self.file.write_all_at(line.as_bytes(), offset).is_ok()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some((w, slot)) = &self.0 {
            let slot = *slot;
            let mut list = w.list.lock().unwrap_or_else(PoisonError::into_inner);
            // A slot that cannot be blanked (an I/O error on a page written a moment ago) keeps
            // the dead group's id: if the pid is recycled as a group leader, the watchdog kills
            // that group when this process dies. Nothing better can be done about it here.
            list.write(slot, BLANK);
            list.taken[slot] = false;
        }
    }
}
