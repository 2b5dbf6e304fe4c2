//! Which layer files exist: managed, user, then the project and local files of every project
//! root from the outermost down to the working directory.

use std::path::{Path, PathBuf};

use super::hook::Layer;
use crate::paths::{self, Paths};
use crate::trust::TrustStore;

/// A project or local layer file, relative to its root as the trust store keys it.
pub const GATED_FILES: [(Layer, &str); 2] = [
    (Layer::Project, ".ka/ka.toml"),
    (Layer::Local, ".ka/ka.local.toml"),
];

/// The managed and user files, in precedence order.
pub fn ungated(paths: &Paths) -> Vec<(Layer, PathBuf)> {
    let mut out = Vec::new();
    if let Some(managed) = paths.managed_file() {
        out.push((Layer::Managed, managed));
    }
    if let Some(user) = paths.user_file() {
        out.push((Layer::User, user));
    }
    out
}

/// Every directory from `/` down to `start` (canonical) that holds a `.ka/` entry, or that the
/// trust store has records for (its `.ka/` was deleted or renamed: its guards must still fail
/// closed). Outermost first.
pub fn roots(start: &Path, store: &TrustStore) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = start
        .ancestors()
        .filter(|dir| {
            std::fs::symlink_metadata(dir.join(paths::PROJECT_DIR)).is_ok()
                || store.records(dir).next().is_some()
        })
        .map(Path::to_path_buf)
        .collect();
    roots.reverse();
    roots
}
