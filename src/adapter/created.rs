//! The settings files `ka-hooks install` created, so that `install --remove --write` can delete
//! such a file once nothing but `{}` is left in it, instead of leaving an empty file behind that
//! the user never had. A file the user had before is never deleted.
//!
//! Kept in `<data dir>/installed/`, one small file per settings file, named by the hash of its
//! path and holding the path (read back without following a symlink).

use std::path::{Path, PathBuf};

fn record(data_dir: &Path, file: &Path) -> PathBuf {
    let name = crate::trust::content_hash(file.as_os_str().as_encoded_bytes());
    data_dir.join("installed").join(name)
}

/// `install --write` created `file`: remember it (best effort: without it, a later removal only
/// leaves `{}` behind).
pub fn remember(data_dir: Option<&Path>, file: &Path) {
    let Some(dir) = data_dir else { return };
    let path = record(dir, file);
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = std::fs::write(path, file.as_os_str().as_encoded_bytes());
}

/// Whether `install` created `file` (and it was not since deleted and made again by the user:
/// the record is dropped whenever the file is found gone by [`forget`]).
pub fn created(data_dir: Option<&Path>, file: &Path) -> bool {
    let Some(dir) = data_dir else { return false };
    crate::trust::read_regular(&record(dir, file), 4096)
        .ok()
        .flatten()
        .is_some_and(|bytes| bytes == file.as_os_str().as_encoded_bytes())
}

/// Forgets that `install` created `file`.
pub fn forget(data_dir: Option<&Path>, file: &Path) {
    if let Some(dir) = data_dir {
        let _ = std::fs::remove_file(record(dir, file));
    }
}
