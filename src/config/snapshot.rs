//! The last good version of each layer file that loads without review, kept in the data dir.
//!
//! The managed and user files (and a project file under a trusted root) load as they are: no
//! person reviews a change to them. Two things need what they said before:
//! - when one of them stops loading (a stray `[[hooks`, an unknown key, a directory in its
//!   place, bytes that are not UTF-8), the guards of its last good version keep blocking what
//!   they matched ([`super::broken`]);
//! - when one of them changes so that a guard is gone or weaker, the next answer says which
//!   guard, how, and in which file ([`super::weakened`]).
//!
//! Both read one snapshot per file: `layers/<key>` in the data dir, where the key is the SHA-256
//! of the layer and the file's path, and the content is the file's text as it last loaded. A
//! dispatch replaces it once it has said what changed ([`Pending::record`]): written to a fresh
//! temporary file in `layers/` (created exclusively under a random name) and renamed over the
//! old one, so two dispatches at once never leave a torn snapshot, and a crash leaves the old
//! one. Nothing here follows a symlink: `layers/` must be a real directory, and a snapshot is
//! read with `O_NOFOLLOW` (a rename replaces a link instead of writing through it).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::hook::Layer;
use super::read::MAX_CONFIG_BYTES;

const DIR: &str = "layers";

/// Where the snapshot of `layer`'s file `path` lives in `data_dir`.
fn snapshot_path(data_dir: &Path, layer: Layer, path: &Path) -> PathBuf {
    let key = crate::trust::path_key(path);
    let name = crate::trust::content_hash(format!("{layer}\0{key}").as_bytes());
    data_dir.join(DIR).join(name)
}

/// The `layers/` directory, when it is a real directory (never through a symlink).
fn real_dir(data_dir: &Path) -> Option<PathBuf> {
    let dir = data_dir.join(DIR);
    std::fs::symlink_metadata(&dir)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|_| dir)
}

/// The last good text of `layer`'s file `path`, when one is kept and readable.
pub(super) fn read(data_dir: &Path, layer: Layer, path: &Path) -> Option<String> {
    read_checked(data_dir, layer, path).ok().flatten()
}

/// [`read`], telling "none is kept" (`Ok(None)`) from "one is there but cannot be read now"
/// (`Err`, with what happened: out of file descriptors, an I/O error, a symlink in its place).
pub(super) fn read_checked(
    data_dir: &Path,
    layer: Layer,
    path: &Path,
) -> Result<Option<String>, String> {
    if real_dir(data_dir).is_none() {
        return Ok(None);
    }
    let bytes =
        match crate::trust::read_regular(&snapshot_path(data_dir, layer, path), MAX_CONFIG_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(e) => return Err(format!("cannot be read ({e})")),
        };
    Ok(String::from_utf8(bytes).ok())
}

/// Replace the snapshot of `layer`'s file `path` with `text` (`None`: the file is gone, so is
/// its snapshot).
fn write(data_dir: &Path, layer: Layer, path: &Path, text: Option<&str>) -> std::io::Result<()> {
    let dir = data_dir.join(DIR);
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(std::io::Error::other(format!(
                "{} is not a directory; remove it",
                dir.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(&dir)?,
        Err(e) => return Err(e),
    }
    let target = snapshot_path(data_dir, layer, path);
    let Some(text) = text else {
        return match std::fs::remove_file(&target) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".layer.")
        .tempfile_in(&dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// One snapshot to replace once a dispatch has said what changed.
#[derive(Debug, Clone)]
pub(super) struct Update {
    pub layer: Layer,
    pub file: PathBuf,
    /// The text that loaded; `None`: the file is gone.
    pub text: Option<String>,
}

/// The snapshots a load found out of date, written by the first dispatch of the configuration
/// (not by `list` or `check`, which answer nobody's call: what changed is said in the answer
/// of the next dispatch).
#[derive(Debug, Clone, Default)]
pub(crate) struct Pending {
    data_dir: Option<PathBuf>,
    /// Taken by the first dispatch; shared by the configuration's clones.
    updates: Arc<Mutex<Vec<Update>>>,
}

impl Pending {
    pub(super) fn new(data_dir: Option<PathBuf>, updates: Vec<Update>) -> Pending {
        Pending {
            data_dir,
            updates: Arc::new(Mutex::new(updates)),
        }
    }

    /// Write every pending snapshot (once); what failed, for the outcome's diagnostics.
    pub(crate) fn record(&self) -> Vec<String> {
        let Some(data_dir) = &self.data_dir else {
            return Vec::new();
        };
        let updates = match self.updates.lock() {
            Ok(mut updates) => std::mem::take(&mut *updates),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        updates
            .into_iter()
            .filter_map(|u| {
                write(data_dir, u.layer, &u.file, u.text.as_deref())
                    .err()
                    .map(|e| {
                        format!(
                            "failed to keep the last good version of the {} file {} in {} \
                             ({e}); if it breaks, its guards cannot fail closed",
                            u.layer,
                            crate::terminal::escape_path(&u.file),
                            crate::terminal::escape_path(&data_dir.join(DIR)),
                        )
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_round_trips_and_is_replaced_whole() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = Path::new("/home/u/.config/ka/ka.toml");
        assert_eq!(read(dir.path(), Layer::User, file), None);
        write(dir.path(), Layer::User, file, Some("a = 1\n"))?;
        assert_eq!(
            read(dir.path(), Layer::User, file).as_deref(),
            Some("a = 1\n")
        );
        assert_eq!(read(dir.path(), Layer::Managed, file), None);
        write(dir.path(), Layer::User, file, Some("b = 2\n"))?;
        assert_eq!(
            read(dir.path(), Layer::User, file).as_deref(),
            Some("b = 2\n")
        );
        write(dir.path(), Layer::User, file, None)?;
        assert_eq!(read(dir.path(), Layer::User, file), None);
        Ok(())
    }

    #[test]
    fn a_symlinked_layers_dir_or_snapshot_is_never_followed(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let elsewhere = tempfile::tempdir()?;
        let file = Path::new("/u/ka.toml");
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(DIR))?;
        assert!(write(dir.path(), Layer::User, file, Some("x")).is_err());
        assert_eq!(std::fs::read_dir(elsewhere.path())?.count(), 0);
        std::fs::remove_file(dir.path().join(DIR))?;
        std::fs::create_dir(dir.path().join(DIR))?;
        let target = elsewhere.path().join("t");
        std::fs::write(&target, "planted")?;
        std::os::unix::fs::symlink(&target, snapshot_path(dir.path(), Layer::User, file))?;
        assert_eq!(read(dir.path(), Layer::User, file), None);
        write(dir.path(), Layer::User, file, Some("mine"))?;
        assert_eq!(std::fs::read_to_string(&target)?, "planted");
        assert_eq!(read(dir.path(), Layer::User, file).as_deref(), Some("mine"));
        Ok(())
    }
}
