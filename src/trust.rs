//! The trust store: which project files the user has reviewed, by path and SHA-256 of content.
//!
//! Project and local layers can run arbitrary commands, so they load only once the user has
//! trusted their exact content. Editing a file makes it [`TrustStatus::Stale`]: it must be
//! reviewed again. The store is a small JSON file in the data dir, rewritten atomically.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Whether a project file may load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustStatus {
    /// Trusted with exactly this content.
    Trusted,
    /// Never trusted (or revoked).
    Untrusted,
    /// Trusted once, but the content changed since.
    Stale,
}

impl fmt::Display for TrustStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrustStatus::Trusted => "trusted",
            TrustStatus::Untrusted => "untrusted",
            TrustStatus::Stale => "changed since it was trusted",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    pub sha256: String,
    /// Seconds since the Unix epoch.
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    files: BTreeMap<String, TrustRecord>,
}

/// Failure to read or write the trust store.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("no data directory: set KA_DATA_DIR to where ka-hooks may keep its trust store")]
    NoDataDir,
    #[error("failed to read the trust store {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the trust store {} is corrupt ({source}); delete it and trust your projects again", path.display())]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("failed to write the trust store {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The trust store, loaded in memory.
#[derive(Debug)]
pub struct TrustStore {
    path: Option<PathBuf>,
    files: BTreeMap<String, TrustRecord>,
}

/// Hex SHA-256 of a file's content.
pub fn content_hash(content: &[u8]) -> String {
    let digest = Sha256::digest(content);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        use fmt::Write as _;
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

impl TrustStore {
    /// Load the store at `path` (`None`: no data dir, nothing is trusted). A missing file is empty.
    pub fn load(path: Option<PathBuf>) -> Result<TrustStore, TrustError> {
        let Some(path) = path else {
            return Ok(TrustStore {
                path: None,
                files: BTreeMap::new(),
            });
        };
        let files = match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice::<StoreFile>(&bytes)
                    .map_err(|source| TrustError::Corrupt {
                        path: path.clone(),
                        source,
                    })?
                    .files
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(TrustError::Read { path, source }),
        };
        Ok(TrustStore {
            path: Some(path),
            files,
        })
    }

    /// The status of `file` whose current content is `content`.
    pub fn status(&self, file: &Path, content: &[u8]) -> TrustStatus {
        match self.files.get(&key(file)) {
            None => TrustStatus::Untrusted,
            Some(rec) if rec.sha256 == content_hash(content) => TrustStatus::Trusted,
            Some(_) => TrustStatus::Stale,
        }
    }

    /// The record of `file`, if any.
    pub fn record(&self, file: &Path) -> Option<&TrustRecord> {
        self.files.get(&key(file))
    }

    /// Trust `file` with exactly `content`, and save.
    pub fn allow(&mut self, file: &Path, content: &[u8]) -> Result<(), TrustError> {
        let trusted_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.files.insert(
            key(file),
            TrustRecord {
                sha256: content_hash(content),
                trusted_at,
            },
        );
        self.save()
    }

    /// Forget `file`; returns whether it was recorded. Saves when something changed.
    pub fn revoke(&mut self, file: &Path) -> Result<bool, TrustError> {
        let removed = self.files.remove(&key(file)).is_some();
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    /// Write to a temp file beside the store and rename over it, so a crash never leaves a
    /// half-written store (which would silently distrust, or fail, every project).
    fn save(&self) -> Result<(), TrustError> {
        let path = self.path.as_ref().ok_or(TrustError::NoDataDir)?;
        let write_err = |source| TrustError::Write {
            path: path.clone(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let body = serde_json::to_vec_pretty(&StoreFile {
            files: self.files.clone(),
        })
        .map_err(|e| write_err(std::io::Error::other(e)))?;
        let tmp = dir.join(format!(".trust.json.{}.tmp", std::process::id()));
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&body)?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map_err(write_err)
    }
}

fn key(file: &Path) -> String {
    crate::paths::absolute(file).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_then_edit_is_stale_and_revoke_untrusts() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("ka.toml");
        std::fs::write(&file, "a = 1")?;
        let store_path = dir.path().join("data/trust.json");
        let mut store = TrustStore::load(Some(store_path.clone()))?;
        assert_eq!(store.status(&file, b"a = 1"), TrustStatus::Untrusted);
        store.allow(&file, b"a = 1")?;
        let store = TrustStore::load(Some(store_path.clone()))?;
        assert_eq!(store.status(&file, b"a = 1"), TrustStatus::Trusted);
        assert_eq!(store.status(&file, b"a = 2"), TrustStatus::Stale);
        let mut store = store;
        assert!(store.revoke(&file)?);
        let store = TrustStore::load(Some(store_path))?;
        assert_eq!(store.status(&file, b"a = 1"), TrustStatus::Untrusted);
        Ok(())
    }

    #[test]
    fn corrupt_store_is_a_clear_error() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store_path = dir.path().join("trust.json");
        std::fs::write(&store_path, "{not json")?;
        let err = TrustStore::load(Some(store_path)).unwrap_err();
        assert!(err.to_string().contains("corrupt"), "{err}");
        Ok(())
    }
}
