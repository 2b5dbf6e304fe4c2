//! The supervisor's side of a detached async hook (`ka-hooks __async-hook`): it runs the job
//! the dispatch handed over, under the supersede lock, and keeps the result. Only the binary
//! runs it (the `cli` feature); the module doc of [`super::detached`] says how.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::detached::Envelope;
use super::mailbox::{open_lock, Mailbox};

/// `ka-hooks __async-hook`.
pub(super) fn supervise() -> u8 {
    // Failing (already a group leader) changes nothing.
    let _ = rustix::process::setsid();
    // Spawned as `/proc/self/exe`, it would show up in `ps` as `exe`.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::set_name(c"ka-hooks-async");
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return 1;
    }
    let Ok(Envelope { job, data_dir }) = serde_json::from_slice::<Envelope>(&input) else {
        return 1;
    };
    crate::interrupt::install();
    let cancel = crate::interrupt::token().unwrap_or_default();
    let mailbox = data_dir.as_deref().map(Mailbox::new);
    let session = job.session.clone();
    let lock = mailbox
        .as_ref()
        .and_then(|m| Lock::take(m, &job.key()).ok());
    let delivered = match &lock {
        Some(lock) if lock.superseded() => {
            job.failed("superseded by a newer run for the same paths before it started".into())
        }
        _ => {
            let _watching = cancel.watch();
            job.execute(&cancel, || lock.as_ref().is_some_and(Lock::superseded))
        }
    };
    if let Some(m) = &mailbox {
        let mut delivered = delivered;
        if lock.as_ref().is_some_and(Lock::superseded) {
            delivered.superseded = true;
        }
        let _ = m.put(session.as_deref(), &delivered);
    }
    drop(lock);
    0
}

/// The supersede lock of one key, held for the run.
struct Lock {
    file: File,
    next: PathBuf,
}

impl Lock {
    /// Take the lock of `key`, ending the run that holds it.
    fn take(mailbox: &Mailbox, key: &str) -> Result<Lock, String> {
        let dir = mailbox.running_dir()?;
        let path = dir.join(format!("{key}.lock"));
        let next = dir.join(format!("{key}.next"));
        let mut file = open_lock(&path)?;
        write_pid(&next)?;
        if file.try_lock().is_err() {
            end_holder(&mut file);
            file.lock()
                .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        }
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = write!(file, "{}", std::process::id());
        Ok(Lock { file, next })
    }

    /// Whether a newer run of the same key has claimed it.
    fn superseded(&self) -> bool {
        std::fs::read_to_string(&self.next)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Record this process as the newest run of its key (atomically: a reader sees a whole pid).
fn write_pid(next: &Path) -> Result<(), String> {
    let dir = next.parent().unwrap_or(Path::new("/"));
    let mut tmp = tempfile::Builder::new()
        .prefix(".next-")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    write!(tmp, "{}", std::process::id()).map_err(|e| e.to_string())?;
    tmp.persist(next)
        .map_err(|e| format!("cannot write {}: {e}", next.display()))?;
    Ok(())
}

/// SIGTERM to the supervisor holding `file`'s lock: through a pidfd opened before checking that
/// the lock is still held, so a pid recycled after the holder exited is never signalled.
///
/// Without a pidfd (macOS, Linux before 5.3, or the thread fallback forced,
/// [`crate::process::FORCE_FALLBACK_VAR`]) the holder is signalled by pid right after the same
/// check. That leaves a window of two system calls in which the holder would have to exit and
/// its pid be handed to a new process; pids are handed out in sequence, so the whole pid space
/// would have to wrap around in between.
fn end_holder(file: &mut File) {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = Read::by_ref(file).take(32).read_to_string(&mut text);
    let Some(pid) = text.trim().parse::<libc::pid_t>().ok().filter(|p| *p > 1) else {
        return;
    };
    #[cfg(target_os = "linux")]
    let pidfd = pid.try_into().ok().and_then(crate::process::pidfd_open);
    if file.try_lock().is_ok() {
        // The holder is gone; the lock is ours already. (It is released and taken again by
        // the caller's blocking `lock`, which then returns at once.)
        let _ = file.unlock();
        return;
    }
    #[cfg(target_os = "linux")]
    if let Some(pidfd) = pidfd {
        crate::process::signal_leader(&pidfd, libc::SIGTERM);
        return;
    }
    // pid > 1 addresses one process.
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
}
