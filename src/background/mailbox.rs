//! Results of detached runs, kept in `<data dir>/async/results/<session hash>/` until the next
//! dispatch of their session takes them.
//!
//! The data dir is the model's to write too, so nothing here follows a symlink: each directory
//! is checked to be a real directory, files are opened with `O_NOFOLLOW | O_NONBLOCK`, only
//! regular files of at most [`MAX_FILE_BYTES`] are read, and a file that does not parse is
//! reported and removed. A forged result can at most add text to a later outcome's context or
//! notes: delivered results never block, ask or rewrite anything.

use std::fs::{self, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
#[cfg(feature = "cli")]
use std::{
    fs::File,
    io::Write,
    os::unix::fs::DirBuilderExt,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use sha2::{Digest, Sha256};

use super::Delivered;
use crate::trust::hex;

/// Most results one dispatch takes; the rest wait for the next.
pub(crate) const MAX_PER_DISPATCH: usize = 32;
/// Largest result file read (notes and feedback are capped well below this).
const MAX_FILE_BYTES: u64 = 1 << 20;
#[cfg(feature = "cli")]
/// Results older than this are dropped (their session never dispatched again).
const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

pub(crate) struct Mailbox {
    /// `<data dir>/async`.
    root: PathBuf,
}

impl Mailbox {
    pub fn new(data_dir: &Path) -> Mailbox {
        Mailbox {
            root: data_dir.join("async"),
        }
    }

    fn session_dir(&self, session: Option<&str>) -> PathBuf {
        let digest = Sha256::digest(session.unwrap_or("").as_bytes());
        self.root.join("results").join(hex(&digest[..16]))
    }

    #[cfg(feature = "cli")]
    /// `<data dir>/async/running`, created: supersede locks.
    pub fn running_dir(&self) -> Result<PathBuf, String> {
        let dir = self.root.join("running");
        private_dir(&self.root)?;
        private_dir(&dir)?;
        Ok(dir)
    }

    #[cfg(feature = "cli")]
    /// Keep `delivered` for the next dispatch of its session; also drops expired results.
    pub fn put(&self, session: Option<&str>, delivered: &Delivered) -> Result<(), String> {
        let dir = self.session_dir(session);
        private_dir(&self.root)?;
        private_dir(&self.root.join("results"))?;
        private_dir(&dir)?;
        let bytes = serde_json::to_vec(delivered).map_err(|e| e.to_string())?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // Zero-padded, so names sort in the order the runs ended.
        let name = format!("{nanos:024}-{}.json", std::process::id());
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&dir)
            .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
        tmp.write_all(&bytes)
            .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
        tmp.persist_noclobber(dir.join(&name))
            .map_err(|e| format!("cannot write {}: {e}", dir.join(&name).display()))?;
        self.prune();
        Ok(())
    }

    /// Take the results waiting for `session`, oldest first. What cannot be read is said in
    /// `problems` (and removed).
    pub fn collect(&self, session: Option<&str>, problems: &mut Vec<String>) -> Vec<Delivered> {
        let dir = self.session_dir(session);
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        if !is_real_dir(&dir) {
            problems.push(format!(
                "async results: {} is not a directory (a symlink?); nothing was read from it",
                dir.display()
            ));
            return Vec::new();
        }
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .collect();
        names.sort();
        names.truncate(MAX_PER_DISPATCH);
        let mut out = Vec::new();
        for name in names {
            // Claim it first: of two dispatches of one session, exactly one delivers it.
            let path = dir.join(&name);
            let taken = dir.join(format!(".taken-{}-{name}", std::process::id()));
            if fs::rename(&path, &taken).is_err() {
                continue;
            }
            match read_result(&taken) {
                Ok(d) => out.push(d),
                Err(why) => problems.push(format!(
                    "async result {}: {why}; it was dropped",
                    path.display()
                )),
            }
            let _ = fs::remove_file(&taken);
        }
        out
    }

    #[cfg(feature = "cli")]
    /// Drop results older than [`MAX_AGE`], and session dirs left empty.
    fn prune(&self) {
        let now = SystemTime::now();
        let Ok(sessions) = fs::read_dir(self.root.join("results")) else {
            return;
        };
        for session in sessions.filter_map(Result::ok) {
            let dir = session.path();
            if !is_real_dir(&dir) {
                continue;
            }
            let Ok(files) = fs::read_dir(&dir) else {
                continue;
            };
            for file in files.filter_map(Result::ok) {
                let old = file
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age > MAX_AGE);
                if old {
                    let _ = fs::remove_file(file.path());
                }
            }
            let _ = fs::remove_dir(&dir); // only succeeds when empty
        }
    }
}

/// Read one result file without following a symlink or blocking on a FIFO.
fn read_result(path: &Path) -> Result<Delivered, String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| format!("cannot open: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("not a result: {e}"))
}

#[cfg(feature = "cli")]
/// Create `dir` (mode 0700) if needed; it must then be a real directory, not a symlink to one.
pub(crate) fn private_dir(dir: &Path) -> Result<(), String> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if is_real_dir(dir) {
                Ok(())
            } else {
                Err(format!(
                    "{} is not a directory (a symlink is never followed here)",
                    dir.display()
                ))
            }
        }
        Err(e) => Err(format!("cannot create {}: {e}", dir.display())),
    }
}

fn is_real_dir(dir: &Path) -> bool {
    fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
}

#[cfg(feature = "cli")]
/// Open (create) a lock file in a private dir without following a symlink.
pub(crate) fn open_lock(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}
