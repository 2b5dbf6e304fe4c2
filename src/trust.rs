//! The trust store (`trust.json` in the data dir): which project files the user has reviewed,
//! and exactly what. A record binds the project root, the layer file's path in it, and the
//! SHA-256 of the file and of the scripts it runs, so an edit untrusts the layer; the reviewed
//! bytes are kept so a changed file's guards can fail closed. Updates are locked and atomic.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Largest store read: far above any real one, and a bound on what a crafted file can cost.
const MAX_STORE_BYTES: u64 = 64 << 20;
/// Largest reviewed file kept (the config files themselves are limited to 4 MiB).
const MAX_REVIEWED_BYTES: u64 = 8 << 20;

/// Whether a project file may load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustStatus {
    /// Trusted with exactly this content (file and covered scripts).
    Trusted,
    /// Never trusted (or revoked).
    Untrusted,
    /// Trusted once, but the file or a script it runs changed since.
    Stale,
    /// Trusted once, but the file is gone.
    Removed,
}

impl fmt::Display for TrustStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrustStatus::Trusted => "trusted",
            TrustStatus::Untrusted => "untrusted",
            TrustStatus::Stale => "changed since it was trusted",
            TrustStatus::Removed => "removed since it was trusted",
        })
    }
}

/// What was reviewed of one layer file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// SHA-256 of the file's bytes (also the name of its reviewed copy).
    pub sha256: String,
    /// Every file of the project the file's hooks execute, with its SHA-256 then (`None`: no
    /// such file then; creating it later untrusts the layer too).
    #[serde(default)]
    pub scripts: Vec<ScriptRecord>,
    /// Seconds since the Unix epoch.
    pub trusted_at: u64,
    /// The project root's identity when it was trusted (see [`root_identity`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
}

/// One file a hook command executes, relative to the project root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ScriptRecord {
    /// The path, relative to the project root.
    pub path: String,
    /// The SHA-256 of its content; `None` when it did not exist.
    pub sha256: Option<String>,
}

impl TrustRecord {
    /// A record of `content` and `scripts`, trusted now.
    pub fn new(content: &[u8], scripts: Vec<ScriptRecord>) -> TrustRecord {
        let trusted_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        TrustRecord {
            sha256: content_hash(content),
            scripts,
            trusted_at,
            root_id: None,
        }
    }
}

/// The identity of the directory `root`, `device:inode:birth` (the birth time where the file
/// system keeps one): it survives a rename (`mv` within one file system), which the path does
/// not, and the birth time tells a renamed directory from a new one that reused the inode.
pub fn root_identity(root: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(root).ok()?;
    let born = meta
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    meta.is_dir()
        .then(|| format!("{}:{}:{born}", meta.dev(), meta.ino()))
}

/// The path a store key names (the inverse of [`path_key`]).
fn key_path(key: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    match key.strip_prefix("hex:") {
        None => Some(PathBuf::from(key)),
        Some(hex) => {
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
        }
    }
}

/// The store file. Version 1 (records by absolute path only) is read as empty: such records did
/// not bind the project, and every project is reviewed again once.
#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    version: u32,
    /// Project root key → layer file (relative to the root) → record.
    #[serde(default)]
    projects: BTreeMap<String, BTreeMap<String, TrustRecord>>,
}

const STORE_VERSION: u32 = 2;

/// Failure to read or write the trust store.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("no data directory: set KA_DATA_DIR to where ka-hooks may keep its trust store")]
    /// There is no data directory to keep the store in.
    NoDataDir,
    #[error("failed to read the trust store {}: {source}", path.display())]
    /// The store could not be read.
    Read {
        /// The store's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    #[error("the trust store {} is corrupt ({why}); delete it and trust your projects again", path.display())]
    /// The store is not what ka-hooks writes.
    Corrupt {
        /// The store's file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    #[error("failed to write the trust store {}: {source}", path.display())]
    /// The store could not be written.
    Write {
        /// The store's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The trust store, loaded in memory.
#[derive(Debug, Default)]
pub struct TrustStore {
    projects: BTreeMap<String, BTreeMap<String, TrustRecord>>,
}

/// Hex SHA-256 of `content`.
pub fn content_hash(content: &[u8]) -> String {
    hex(&Sha256::digest(content))
}

/// Lower-case hex of `bytes` (trust keys, content hashes, the background runner's directories).
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    out
}

/// The store's key of a path. A UTF-8 absolute path is itself (readable in `trust.json`); any
/// other path is `hex:` and its bytes, which no absolute path starts with, so two paths never
/// share a key (a lossy conversion would merge every non-UTF-8 name into one).
pub fn path_key(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    match path.to_str() {
        Some(s) if s.starts_with('/') => s.to_owned(),
        _ => format!("hex:{}", hex(path.as_os_str().as_bytes())),
    }
}

impl TrustStore {
    /// Load the store at `path` (`None`: no data dir, nothing is trusted). A missing file is empty.
    /// Never panics on a crafted file: anything that is not a store is [`TrustError::Corrupt`].
    pub fn load(path: Option<&Path>) -> Result<TrustStore, TrustError> {
        let Some(path) = path else {
            return Ok(TrustStore::default());
        };
        let bytes = match read_regular(path, MAX_STORE_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(TrustStore::default()),
            Err(source) => {
                return Err(TrustError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let corrupt = |why: String| TrustError::Corrupt {
            path: path.to_path_buf(),
            why,
        };
        // serde reads a struct from an array too; a store is an object.
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(corrupt("not a JSON object".into()));
        }
        let file: StoreFile = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        let projects = if file.version == STORE_VERSION {
            file.projects
        } else {
            BTreeMap::new()
        };
        Ok(TrustStore { projects })
    }

    /// The record of the layer file `file` (relative to `root`, such as `.ka/ka.toml`).
    pub fn record(&self, root: &Path, file: &str) -> Option<&TrustRecord> {
        self.projects.get(&path_key(root))?.get(file)
    }

    /// Every record of the project at `root`, by layer file.
    pub fn records(&self, root: &Path) -> impl Iterator<Item = (&str, &TrustRecord)> {
        self.projects
            .get(&path_key(root))
            .into_iter()
            .flat_map(|files| files.iter().map(|(f, r)| (f.as_str(), r)))
    }

    /// The record of `file` kept for another path that this project was moved or renamed from,
    /// with that path: the record whose root had the same identity ([`root_identity`]: a
    /// rename), else one whose root is gone and whose file had the same content `sha256` (a
    /// move across file systems). A copy of a project that still exists is a new project.
    pub fn moved_from(
        &self,
        root: &Path,
        file: &str,
        sha256: &str,
    ) -> Option<(PathBuf, &TrustRecord)> {
        let here = path_key(root);
        let identity = root_identity(root);
        let others = || {
            self.projects
                .iter()
                .filter(|(key, _)| **key != here)
                .filter_map(|(key, files)| Some((key_path(key)?, files.get(file)?)))
        };
        let renamed = others().find(|(_, rec)| rec.root_id.is_some() && rec.root_id == identity);
        renamed.or_else(|| others().find(|(old, rec)| rec.sha256 == sha256 && !old.exists()))
    }

    /// Record `record` for `file` of `root` (in memory; see [`TrustStore::update`]), with the
    /// root's identity.
    pub fn allow(&mut self, root: &Path, file: &str, mut record: TrustRecord) {
        if record.root_id.is_none() {
            record.root_id = root_identity(root);
        }
        self.projects
            .entry(path_key(root))
            .or_default()
            .insert(file.to_owned(), record);
    }

    /// Forget `file` of `root`; returns the record that was removed.
    pub fn revoke(&mut self, root: &Path, file: &str) -> Option<TrustRecord> {
        let key = path_key(root);
        let files = self.projects.get_mut(&key)?;
        let removed = files.remove(file);
        if files.is_empty() {
            self.projects.remove(&key);
        }
        removed
    }

    /// Read-modify-write the store at `path` under an exclusive lock, so concurrent runs never
    /// lose each other's changes: `change` sees the store as it is on disk now. The new store is
    /// written only when `change` returns `true`.
    pub fn update<R>(
        path: Option<&Path>,
        change: impl FnOnce(&mut TrustStore) -> (bool, R),
    ) -> Result<R, TrustError> {
        let path = path.ok_or(TrustError::NoDataDir)?;
        let write_err = |source| TrustError::Write {
            path: path.to_path_buf(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let lock = open_nofollow(&dir.join("trust.lock")).map_err(write_err)?;
        lock.lock().map_err(write_err)?;
        // A store that cannot be read is not overwritten: the user decides what to do with it.
        let mut store = TrustStore::load(Some(path))?;
        let (changed, result) = change(&mut store);
        if changed {
            store.save(path).map_err(write_err)?;
        }
        drop(lock);
        Ok(result)
    }

    /// Write to a fresh temporary file beside the store (created exclusively under a random
    /// name) and rename it over the store.
    fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let body = serde_json::to_vec_pretty(&StoreFile {
            version: STORE_VERSION,
            projects: self.projects.clone(),
        })
        .map_err(std::io::Error::other)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".trust.json.")
            .tempfile_in(dir)?;
        tmp.write_all(&body)?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Keep the reviewed bytes of a file under `data_dir/reviewed/<sha256>`: a private directory
/// (made `0700`), a file written whole (`0600`) and renamed into place. Trusted hooks run
/// covered scripts from these copies (see `config::pinned`).
pub fn keep_reviewed(data_dir: &Path, content: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    let dir = data_dir.join("reviewed");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    let target = dir.join(content_hash(content));
    if reviewed(data_dir, &content_hash(content)).is_some() {
        return Ok(());
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".reviewed.")
        .tempfile_in(&dir)?;
    tmp.write_all(content)?;
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// The reviewed bytes whose SHA-256 is `sha256`, when they are kept and intact.
pub fn reviewed(data_dir: &Path, sha256: &str) -> Option<Vec<u8>> {
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = read_regular(&data_dir.join("reviewed").join(sha256), MAX_REVIEWED_BYTES)
        .ok()
        .flatten()?;
    (content_hash(&bytes) == sha256).then_some(bytes)
}

/// Open `path` to read and write (a lock file), making it when missing, without following a
/// symlink at its last component (never through an existing name's link) and without blocking
/// on a FIFO. Reading alone is [`crate::fd::open_read`].
pub(crate) fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// The bytes of the regular file `path` (`None` when it does not exist), at most `limit` bytes;
/// a symlink, FIFO, device or directory is an error.
pub(crate) fn read_regular(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = match crate::fd::open_read(path, true) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(std::io::Error::other(
                "is a symlink; it is not followed here",
            ))
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("is not a regular file"));
    }
    if meta.len() > limit {
        return Err(std::io::Error::other(format!(
            "is larger than {} bytes",
            limit
        )));
    }
    // Sized from the metadata: one read, and the one that sees the end.
    let expected = meta.len().min(limit) + 1;
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "is larger than {} bytes",
            limit
        )));
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_then_revoke_round_trips_through_the_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store_path = dir.path().join("data/trust.json");
        let root = Path::new("/repo");
        TrustStore::update(Some(&store_path), |s| {
            s.allow(root, ".ka/ka.toml", TrustRecord::new(b"a = 1", Vec::new()));
            (true, ())
        })?;
        let store = TrustStore::load(Some(&store_path))?;
        let rec = store.record(root, ".ka/ka.toml").ok_or("no record")?;
        assert_eq!(rec.sha256, content_hash(b"a = 1"));
        assert!(store.record(Path::new("/other"), ".ka/ka.toml").is_none());
        let removed = TrustStore::update(Some(&store_path), |s| {
            let r = s.revoke(root, ".ka/ka.toml");
            (r.is_some(), r.is_some())
        })?;
        assert!(removed);
        assert!(TrustStore::load(Some(&store_path))?
            .record(root, ".ka/ka.toml")
            .is_none());
        Ok(())
    }

    #[test]
    fn corrupt_and_crafted_stores_are_errors_not_panics() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let store_path = dir.path().join("trust.json");
        for crafted in [
            "{not json",
            "",
            "[]",
            "{\"version\":2,\"projects\":{\"/r\":{\"x\":{\"sha256\":7}}}}",
        ] {
            std::fs::write(&store_path, crafted)?;
            let err = TrustStore::load(Some(&store_path))
                .err()
                .ok_or("no error")?;
            assert!(err.to_string().contains("corrupt"), "{err}");
        }
        Ok(())
    }

    #[test]
    fn a_renamed_root_is_found_by_identity_and_a_moved_one_by_content(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (old, new) = (dir.path().join("old"), dir.path().join("new"));
        std::fs::create_dir(&old)?;
        let mut store = TrustStore::default();
        store.allow(&old, ".ka/ka.toml", TrustRecord::new(b"a = 1", Vec::new()));
        std::fs::rename(&old, &new)?;
        let (from, _) = store
            .moved_from(&new, ".ka/ka.toml", "other content")
            .ok_or("renamed")?;
        assert_eq!(from, old);
        assert!(store.moved_from(&new, ".ka/ka.local.toml", "x").is_none());
        // Another directory with the same content: a move only while the old root is gone.
        let copy = dir.path().join("copy");
        std::fs::create_dir(&copy)?;
        let sha = content_hash(b"a = 1");
        assert!(store.moved_from(&copy, ".ka/ka.toml", &sha).is_some());
        std::fs::create_dir(&old)?;
        assert!(store.moved_from(&copy, ".ka/ka.toml", &sha).is_none());
        Ok(())
    }

    #[test]
    fn store_keys_name_their_paths_again() {
        use std::os::unix::ffi::OsStrExt;
        for path in [
            Path::new("/a/b"),
            Path::new(std::ffi::OsStr::from_bytes(b"/a/\xff")),
        ] {
            assert_eq!(key_path(&path_key(path)).as_deref(), Some(path));
        }
    }

    #[test]
    fn non_utf8_paths_never_share_a_key() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let a = Path::new(OsStr::from_bytes(b"/repo/\xff"));
        let b = Path::new(OsStr::from_bytes(b"/repo/\xfe"));
        assert_ne!(path_key(a), path_key(b));
        assert_eq!(path_key(Path::new("/repo")), "/repo");
        assert_ne!(path_key(Path::new("hex:2f")), path_key(Path::new("/")));
    }

    #[test]
    fn reviewed_copies_are_checked_against_their_name() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        keep_reviewed(dir.path(), b"hooks")?;
        let sha = content_hash(b"hooks");
        assert_eq!(reviewed(dir.path(), &sha).as_deref(), Some(&b"hooks"[..]));
        std::fs::write(dir.path().join("reviewed").join(&sha), b"tampered")?;
        assert_eq!(reviewed(dir.path(), &sha), None);
        assert_eq!(reviewed(dir.path(), "../../etc/passwd"), None);
        Ok(())
    }

    #[test]
    fn a_symlinked_or_special_store_is_refused() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let target = dir.path().join("elsewhere.json");
        std::fs::write(&target, "{}")?;
        let link = dir.path().join("trust.json");
        std::os::unix::fs::symlink(&target, &link)?;
        assert!(TrustStore::load(Some(&link)).is_err());
        assert!(TrustStore::load(Some(Path::new("/dev/zero"))).is_err());
        Ok(())
    }
}
