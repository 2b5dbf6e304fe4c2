//! Confined spawns: one long-lived thread per ruleset, which confines itself once and then
//! spawns every hook of that ruleset.
//!
//! Landlock applies to the thread that calls `landlock_restrict_self` and to what it starts
//! afterwards, never to other threads, and it cannot be undone. ka itself must never be
//! restricted, so a hook cannot be confined from the thread that dispatches it. The ways to do
//! it, measured against an unconfined one-hook dispatch (`benches/hooks.rs`, `sandbox_one`, on
//! a 2-core machine):
//!
//! - in the child between fork and exec (`pre_exec`): std must then fork the whole process
//!   instead of using `posix_spawn`: 1.48 ×;
//! - a fresh thread per hook that builds the ruleset, confines itself, spawns and ends:
//!   1.11–1.23 ×, a third of it building the ruleset and the rest starting and joining a thread
//!   whose wake-up after the spawn waits behind the new `sh` on the same CPU;
//! - this: a thread per distinct ruleset, kept (at most [`MAX_SPAWNERS`], the least recently
//!   used one ends first), to which a spawn is handed over a channel. The ruleset is built once
//!   per thread; the rest of the hook (its pipes, its timeout, reaping) stays with the caller.
//!
//! A ruleset is keyed by what it was built from: the writable places with the device and inode
//! each had then, and whether TCP is allowed. A place that was replaced (a new inode behind the
//! same name) makes a new key, so a confined hook is never given what the old inode was given.
//! A process that forked starts afresh: the threads of its parent do not exist in it.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};

use super::probe::Probe;
use super::Resolved;

/// Distinct rulesets that keep a spawning thread. Each is one idle thread blocked on a channel;
/// a process sees few (one per hook `sandbox` setting and project root).
pub(super) const MAX_SPAWNERS: usize = 16;

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

/// A spawn handed to a spawning thread, and where its answer goes.
type Job = (Command, mpsc::SyncSender<io::Result<Child>>);

struct Spawners {
    /// The process they were started in (after a `fork` they are gone).
    pid: u32,
    /// Least recently used first.
    threads: Vec<(Key, mpsc::Sender<Job>)>,
}

static SPAWNERS: Mutex<Spawners> = Mutex::new(Spawners {
    pid: 0,
    threads: Vec::new(),
});

/// Spawn `command` confined by `rules`: on the thread of that ruleset, started (and the
/// ruleset built) when there is none yet. An error means the hook did not start; nothing here
/// ever starts it unconfined.
pub(super) fn spawn(rules: &Resolved, probe: &Probe, command: Command) -> io::Result<Child> {
    let key = Key::of(rules);
    let sender = spawner(key, rules, probe)?;
    let (reply, answer) = mpsc::sync_channel(1);
    let gone = || io::Error::other("sandbox: the confined spawning thread is gone");
    sender.send((command, reply)).map_err(|_| gone())?;
    answer.recv().map_err(|_| gone())?
}

/// The channel to the spawning thread of `key`, started if needed.
fn spawner(key: Key, rules: &Resolved, probe: &Probe) -> io::Result<mpsc::Sender<Job>> {
    let mut spawners = SPAWNERS.lock().unwrap_or_else(PoisonError::into_inner);
    if spawners.pid != std::process::id() {
        spawners.pid = std::process::id();
        spawners.threads.clear();
    }
    if let Some(at) = spawners.threads.iter().position(|(k, _)| *k == key) {
        let entry = spawners.threads.remove(at);
        let sender = entry.1.clone();
        spawners.threads.push(entry);
        return Ok(sender);
    }
    let ruleset = super::landlock::ruleset(rules, probe)
        .map_err(|e| io::Error::other(format!("sandbox: could not build the ruleset: {e}")))?;
    let sender = start(ruleset)?;
    if spawners.threads.len() >= MAX_SPAWNERS {
        // Dropping its sender ends the thread once it has answered what it was given.
        spawners.threads.remove(0);
    }
    spawners.threads.push((key, sender.clone()));
    Ok(sender)
}

/// Start a thread that confines itself with `ruleset` and then serves spawns until its sender
/// is dropped. Returns once it is confined, or with why it could not be (then it has ended).
fn start(ruleset: OwnedFd) -> io::Result<mpsc::Sender<Job>> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let (ready, confined) = mpsc::sync_channel::<io::Result<()>>(1);
    std::thread::Builder::new()
        .name("ka-hook-sandbox".to_owned())
        .spawn(move || {
            let result = super::landlock::restrict_self(std::os::fd::AsRawFd::as_raw_fd(&ruleset));
            drop(ruleset);
            let ok = result.is_ok();
            let _ = ready.send(result);
            if !ok {
                return;
            }
            for (mut command, reply) in queue {
                let _ = reply.send(command.spawn());
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
