//! Hooks die with their host, even when the host is killed by SIGKILL: a small `/bin/sh` watchdog
//! waits for this process's end on a pipe and kills the process groups on its unnamed list. It
//! is started only once a hook outlives `WATCH_AFTER` where the own spawn's parent-death signal
//! covers the first milliseconds. How and its limits: `docs/design.md`, "The watchdog".

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a hook whose leader dies with its spawning thread runs before its group goes on
/// the list (and the watchdog is started, if it is not running yet).
pub(crate) const WATCH_AFTER: Duration = Duration::from_millis(5);

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
    let flags = rustix::fs::MemfdFlags::CLOEXEC;
    rustix::fs::memfd_create(c"ka-hooks-watchdog", flags)
        .ok()
        .map(File::from)
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

/// This process's watchdog if it runs already; never starts one.
fn running() -> Option<Arc<Watchdog>> {
    let slot = WATCHDOG.lock().unwrap_or_else(PoisonError::into_inner);
    match slot.as_ref() {
        Some(Ok(w)) if w.pid == std::process::id() => Some(Arc::clone(w)),
        _ => None,
    }
}

/// One hook's process group and the watchdog: on its list, or to be put there once the hook has
/// run for [`WATCH_AFTER`] (see the module doc). Taken off on drop.
pub(crate) struct Watch(State);

enum State {
    /// Never on the list (no watchdog could be started, or a test).
    Off,
    /// To be put on the list at this instant.
    Pending { pgid: u32, at: Instant },
    /// On the list until dropped.
    On { _registered: Registered },
}

/// What [`Watch::before_spawn`] found: the watchdog, if the spawn must wait for it or it runs.
pub(crate) struct Before {
    watchdog: Option<Arc<Watchdog>>,
    dies_with_thread: bool,
}

impl Watch {
    /// Before a spawn: `dies_with_thread` says whether the hook's leader gets a parent-death
    /// signal. Without one the watchdog is started now, so that the group goes on its list the
    /// moment its pid is known.
    pub(crate) fn before_spawn(dies_with_thread: bool) -> Before {
        Before {
            watchdog: if dies_with_thread { running() } else { get() },
            dies_with_thread,
        }
    }

    /// A hook that is on no list.
    #[cfg(test)]
    pub(crate) fn off() -> Watch {
        Watch(State::Off)
    }

    /// The group `pgid`, to be put on the list at `at`.
    #[cfg(test)]
    pub(crate) fn pending(pgid: u32, at: Instant) -> Watch {
        Watch(State::Pending { pgid, at })
    }

    /// Whether the group was put on the list (or that was tried, without a watchdog).
    #[cfg(test)]
    pub(crate) fn is_on(&self) -> bool {
        matches!(self.0, State::On { .. })
    }

    /// When [`update`](Self::update) has work to do, if ever.
    pub(crate) fn due(&self) -> Option<Instant> {
        match self.0 {
            State::Pending { at, .. } => Some(at),
            _ => None,
        }
    }

    /// Put the group on the list if it is due at `now`, starting the watchdog if need be.
    pub(crate) fn update(&mut self, now: Instant) {
        if let State::Pending { pgid, at } = self.0 {
            if now >= at {
                self.0 = State::On {
                    _registered: register(get(), pgid),
                };
            }
        }
    }
}

impl Before {
    /// The watch of the hook just started with process group `pgid` at `started`.
    pub(crate) fn watch(self, pgid: u32, started: Instant) -> Watch {
        Watch(match self.watchdog {
            Some(watchdog) => State::On {
                _registered: register(Some(watchdog), pgid),
            },
            None if self.dies_with_thread => State::Pending {
                pgid,
                at: started + WATCH_AFTER,
            },
            None => State::Off,
        })
    }
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
