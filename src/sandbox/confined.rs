//! Confined runs: threads that took on a ruleset once and then run every hook of that ruleset,
//! start to end.
//!
//! Landlock applies to the thread that calls `landlock_restrict_self` and to what it starts
//! afterwards, never to other threads, and it cannot be undone. ka itself must never be
//! restricted, so a hook cannot be confined from the thread that dispatches it. The ways to do
//! it, measured against an unconfined one-hook dispatch (`benches/hooks.rs`, on a 2-core
//! machine):
//!
//! - in the child between fork and exec (`pre_exec`): std must then fork the whole process
//!   instead of using `posix_spawn`: 1.48 ×;
//! - a fresh thread per hook that builds the ruleset, confines itself, spawns and ends:
//!   1.11–1.23 ×; a third of it building the ruleset, the rest starting and joining a thread
//!   whose wake-up after the spawn waits behind the new `sh` on a CPU;
//! - a thread kept per ruleset that only spawns, the dispatching thread running the rest:
//!   1.05–1.10 ×; the hand-back of the child still waits behind the `sh`;
//! - this: threads kept per ruleset that run the whole hook (spawn, payload, output, reaping,
//!   the timeout) and hand back only the result, once the `sh` has ended.
//!
//! Each ruleset keeps up to [`IDLE_PER_RULESET`] idle threads (more are started while more of
//! its hooks run at once, and end afterwards), and at most [`MAX_RULESETS`] rulesets are kept
//! (the least recently used goes first, its threads ending when idle). A ruleset is keyed by
//! what it was built from: the writable places with the device and inode each had then, and
//! whether TCP is allowed. A place that was replaced (a new inode behind the same name) makes a
//! new key, so a confined hook is never given what the old inode was given. A process that
//! forked starts afresh: the threads of its parent do not exist in it.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex, PoisonError};

use super::probe::Probe;
use super::Resolved;

/// Rulesets kept. A process sees few: one per hook `sandbox` setting and project root.
pub(super) const MAX_RULESETS: usize = 16;
/// Idle threads kept per ruleset (each blocked on a channel).
pub(super) const IDLE_PER_RULESET: usize = 4;

/// What a ruleset was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    /// Each writable place, with its device and inode when it exists.
    write: Vec<(PathBuf, Option<(u64, u64)>)>,
    network: bool,
}

impl Key {
    fn of(rules: &Resolved) -> Key {
        let write = rules
            .write
            .iter()
            .map(|place| {
                let id = std::fs::metadata(place).ok().map(|m| (m.dev(), m.ino()));
                (place.clone(), id)
            })
            .collect();
        Key {
            write,
            network: rules.network,
        }
    }
}

/// A hook run handed to a thread of its ruleset.
pub(super) type Job = Box<dyn FnOnce() + Send>;

/// The threads of one ruleset.
struct Ruleset {
    key: Key,
    /// To confine the threads started later.
    fd: Arc<OwnedFd>,
    /// Threads waiting for a job, each by its channel.
    idle: Vec<mpsc::Sender<Job>>,
}

struct Rulesets {
    /// The process they were started in (after a `fork` they are gone).
    pid: u32,
    /// Least recently used first.
    kept: Vec<Ruleset>,
}

static RULESETS: Mutex<Rulesets> = Mutex::new(Rulesets {
    pid: 0,
    kept: Vec::new(),
});

fn rulesets() -> std::sync::MutexGuard<'static, Rulesets> {
    let mut rulesets = RULESETS.lock().unwrap_or_else(PoisonError::into_inner);
    if rulesets.pid != std::process::id() {
        rulesets.pid = std::process::id();
        rulesets.kept.clear();
    }
    rulesets
}

/// Run `job` on a thread confined by `rules` (started, and the ruleset built, when none is
/// idle). An error means `job` was not run; nothing here ever runs it unconfined.
pub(super) fn run(rules: &Resolved, probe: &Probe, job: Job) -> io::Result<()> {
    let key = Key::of(rules);
    let (worker, fd) = {
        let mut rulesets = rulesets();
        let at = match rulesets.kept.iter().position(|r| r.key == key) {
            Some(at) => at,
            None => {
                let fd = super::landlock::ruleset(rules, probe).map_err(|e| {
                    io::Error::other(format!("sandbox: could not build the ruleset: {e}"))
                })?;
                if rulesets.kept.len() >= MAX_RULESETS {
                    // Its idle threads end as their channels close; busy ones after their job.
                    rulesets.kept.remove(0);
                }
                rulesets.kept.push(Ruleset {
                    key: key.clone(),
                    fd: Arc::new(fd),
                    idle: Vec::new(),
                });
                rulesets.kept.len() - 1
            }
        };
        let mut ruleset = rulesets.kept.remove(at);
        let worker = ruleset.idle.pop();
        let fd = Arc::clone(&ruleset.fd);
        rulesets.kept.push(ruleset);
        (worker, fd)
    };
    let worker = match worker {
        Some(worker) => worker,
        None => start(&fd)?,
    };
    let back = worker.clone();
    let job: Job = Box::new(move || {
        job();
        give_back(&key, back);
    });
    worker
        .send(job)
        .map_err(|_| io::Error::other("sandbox: the confined thread is gone"))
}

/// A thread of the ruleset `key` is idle again: keep it, unless enough are kept already or the
/// ruleset is no longer (then its channel closes and it ends).
fn give_back(key: &Key, worker: mpsc::Sender<Job>) {
    let mut rulesets = rulesets();
    if let Some(ruleset) = rulesets.kept.iter_mut().find(|r| r.key == *key) {
        if ruleset.idle.len() < IDLE_PER_RULESET {
            ruleset.idle.push(worker);
        }
    }
}

/// Start a thread that confines itself with `ruleset` and then runs jobs until its channel
/// closes. Returns once it is confined, or with why it could not be (then it has ended).
fn start(ruleset: &Arc<OwnedFd>) -> io::Result<mpsc::Sender<Job>> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let (ready, confined) = mpsc::sync_channel::<io::Result<()>>(1);
    let fd = Arc::clone(ruleset);
    std::thread::Builder::new()
        .name("ka-hook-sandbox".to_owned())
        .spawn(move || {
            let result = super::landlock::restrict_self(fd.as_raw_fd());
            drop(fd);
            let ok = result.is_ok();
            let _ = ready.send(result);
            if !ok {
                return;
            }
            for job in queue {
                job();
            }
        })?;
    match confined.recv() {
        Ok(Ok(())) => Ok(jobs),
        Ok(Err(e)) => Err(io::Error::new(
            e.kind(),
            format!("sandbox: cannot confine: {e}"),
        )),
        Err(_) => Err(io::Error::other(
            "sandbox: the confining thread ended early",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_place_is_another_ruleset() {
        let dir = tempfile::tempdir().expect("tempdir");
        let place = dir.path().join("cache");
        std::fs::create_dir(&place).expect("mkdir");
        let rules = Resolved {
            write: vec![place.clone()],
            network: false,
        };
        let before = Key::of(&rules);
        assert_eq!(before, Key::of(&rules), "the same place, the same key");
        // Keep the old directory alive under another name so its inode cannot be reused.
        std::fs::rename(&place, dir.path().join("old")).expect("rename");
        std::fs::create_dir(&place).expect("mkdir again");
        assert_ne!(before, Key::of(&rules), "a new inode behind the same name");
        let open = Resolved {
            network: true,
            ..rules.clone()
        };
        assert_ne!(Key::of(&rules), Key::of(&open));
    }
}
