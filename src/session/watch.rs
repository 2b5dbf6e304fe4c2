//! The re-check before each dispatch of a [`super::Session`]: are the layer files that loaded,
//! and the scripts trust covers for them, still what the load read, and are a managed and a
//! user file that were missing still missing?
//!
//! Each file is first compared by `stat` (device, inode, size, modification and change times,
//! mode; of the path and of what it resolves to), which costs two system calls and no read. Only
//! a file whose `stat` moved is hashed again and compared with the hash the load recorded (for a
//! layer file, the SHA-256 of the bytes read; for a covered script, the hash in its trust
//! record, worked out by [`crate::config::scripts::script_hash`] as the gate does). The first
//! check hashes every file, so a change between the load and the session's first dispatch is
//! seen too.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::config::{scripts, Config};

/// What the watched files looked like when last found unchanged.
pub(crate) struct Watch {
    files: Vec<Watched>,
}

struct Watched {
    path: PathBuf,
    what: What,
    /// `None` until the first check (then every file is hashed once).
    stamp: Option<Stamp>,
}

enum What {
    /// A layer file that loaded, with the SHA-256 of the bytes the load read.
    Layer { sha256: Option<String> },
    /// A script a trust record covers, as `scripts::script_hash` records it.
    Script {
        root: PathBuf,
        rel: String,
        sha256: Option<String>,
    },
    /// A managed or user layer file that did not exist at the load: creating it is a change.
    Absent,
}

/// `stat` of the path itself and of what it resolves to (`None`: missing).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    link: Option<[i64; 8]>,
    target: Option<[i64; 8]>,
}

fn stat_key(meta: &std::fs::Metadata) -> [i64; 8] {
    // Wrapping casts: only equality matters.
    [
        meta.dev() as i64,
        meta.ino() as i64,
        meta.size() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        i64::from(meta.mode()),
    ]
}

fn stamp(path: &Path) -> Stamp {
    let link = std::fs::symlink_metadata(path).ok();
    // Not a symlink: its target is itself (one `stat` instead of two per file and dispatch).
    let target = match &link {
        Some(meta) if !meta.file_type().is_symlink() => Some(stat_key(meta)),
        _ => std::fs::metadata(path).ok().map(|m| stat_key(&m)),
    };
    Stamp {
        link: link.map(|m| stat_key(&m)),
        target,
    }
}

impl Watch {
    /// The files of `config` to watch: every layer file that loaded, and every covered script.
    pub(crate) fn of(config: &Config) -> Watch {
        let layers = config
            .layers
            .iter()
            .filter(|l| l.loaded())
            .map(|l| Watched {
                path: l.file.clone(),
                what: What::Layer {
                    sha256: l.sha256.clone(),
                },
                stamp: None,
            });
        let scripts = config.covered.iter().map(|c| Watched {
            path: c.path(),
            what: What::Script {
                root: c.root.clone(),
                rel: c.rel.clone(),
                sha256: c.sha256.clone(),
            },
            stamp: None,
        });
        let paths = &config.options.paths;
        let absent = [paths.managed_file(), paths.user_file()]
            .into_iter()
            .flatten()
            .filter(|f| !config.layers.iter().any(|l| l.file == *f) && !f.exists())
            .map(|path| Watched {
                path,
                what: What::Absent,
                stamp: None,
            });
        Watch {
            files: layers.chain(scripts).chain(absent).collect(),
        }
    }

    /// The first watched file whose content is no longer what the load read (`None`: all
    /// unchanged). A file whose `stat` moved but whose content did not is stamped anew.
    pub(crate) fn changed(&mut self) -> Option<PathBuf> {
        for file in &mut self.files {
            let now = stamp(&file.path);
            if file.stamp.as_ref() == Some(&now) {
                continue;
            }
            let same = match &file.what {
                What::Layer { sha256 } => {
                    let read = std::fs::read(&file.path).ok();
                    read.map(|bytes| crate::trust::content_hash(&bytes)) == *sha256
                }
                What::Script { root, rel, sha256 } => scripts::script_hash(root, rel) == *sha256,
                What::Absent => now.link.is_none() && now.target.is_none(),
            };
            // A file swapped for another (a new inode behind the same name) is judged by a
            // fresh load too, whatever its content: the load decides about links.
            let swapped = file
                .stamp
                .as_ref()
                .is_some_and(|old| old.link.map(|l| l[1]) != now.link.map(|l| l[1]));
            if !same || swapped {
                return Some(file.path.clone());
            }
            file.stamp = Some(now);
        }
        None
    }
}
