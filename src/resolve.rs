//! Paths as the kernel resolves them, looked up without following anything it would not:
//! [`lexical`] touches nothing, [`real`] walks a path a component at a time, and [`RealDirs`]
//! walks many that share folders. Below `config` and `paths`, which both resolve paths.

use std::path::{Component, Path, PathBuf};

/// `path` (absolute) with `.`, `..` and repeated separators removed without touching the file
/// system; relative paths are taken against `base`.
pub fn lexical(base: &Path, path: &Path) -> PathBuf {
    let mut clean = PathBuf::new();
    let joined;
    let path = if path.is_absolute() {
        path
    } else {
        joined = base.join(path);
        &joined
    };
    for c in path.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean
}

/// What the kernel opens for `path` (absolute): each existing component that is a symlink
/// replaced by its target, `..` applied to what it resolved to, the rest (which does not exist
/// and holds no symlink) appended lexically. A dangling symlink counts too: writing through it
/// creates its target.
pub fn real(path: &Path) -> PathBuf {
    walk(path, 0)
}

/// Symlinks followed at most this many times, as the kernel's `ELOOP` limit.
const MAX_LINKS: u32 = 40;

fn walk(path: &Path, links: u32) -> PathBuf {
    walk_from(PathBuf::from("/"), path, links)
}

/// [`walk`] of `path` taken from `out`, a directory already resolved (`path` is relative to it,
/// or absolute). Below a component that cannot be looked up (missing, not a directory, not
/// searchable) nothing can be looked up either, so its descendants are taken as written
/// without asking the kernel, until a `..` climbs back out.
pub(crate) fn walk_from(mut out: PathBuf, path: &Path, links: u32) -> PathBuf {
    let components: Vec<Component<'_>> = path.components().collect();
    // How many of `out`'s last components lie at or below one that cannot be looked up.
    let mut unreachable = 0usize;
    for (i, c) in components.iter().enumerate() {
        match c {
            Component::Prefix(_) | Component::RootDir => {
                out.push(c.as_os_str());
                unreachable = 0;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
                unreachable = unreachable.saturating_sub(1);
            }
            Component::Normal(name) => {
                let next = out.join(name);
                if unreachable > 0 {
                    unreachable += 1;
                    out = next;
                    continue;
                }
                let meta = std::fs::symlink_metadata(&next);
                let is_link = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
                if meta.is_err() {
                    unreachable = 1;
                }
                let target = is_link
                    .then(|| std::fs::read_link(&next).ok())
                    .flatten()
                    .filter(|_| links < MAX_LINKS);
                match target {
                    Some(target) => {
                        let rest: PathBuf = components[i + 1..].iter().collect();
                        return walk(&out.join(target).join(rest), links + 1);
                    }
                    None => out = next,
                }
            }
        }
    }
    out
}

/// [`real`] of many paths that share folders (ka's own files: a dozen under each root and the
/// home directory), each folder looked up once instead of once per path below it, and nothing
/// looked up below a folder that cannot be (as [`real`]).
#[derive(Debug, Default)]
pub struct RealDirs {
    /// Each path met (a folder, or a path given to [`RealDirs::resolve`]), resolved, and whether
    /// it could be looked up. A few dozen at most: a list compared byte for byte beats hashing.
    known: Vec<(PathBuf, PathBuf, bool)>,
}

impl RealDirs {
    /// What [`real`] gives for `path`; a relative path is taken from the working directory.
    pub fn resolve(&mut self, path: &Path) -> PathBuf {
        let absolute;
        let path = if path.is_absolute() {
            path
        } else {
            absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            &absolute
        };
        let plain = path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if plain {
            self.dir(path).0
        } else {
            // `..` is the kernel's, taken after the symlink before it: the whole walk.
            real(path)
        }
    }

    fn dir(&mut self, dir: &Path) -> (PathBuf, bool) {
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            return (dir.to_path_buf(), true);
        };
        if let Some((_, resolved, reachable)) = self
            .known
            .iter()
            .find(|(met, ..)| met.as_os_str() == dir.as_os_str())
        {
            return (resolved.clone(), *reachable);
        }
        let (resolved, reachable) = self.step(parent, name);
        self.known
            .push((dir.to_path_buf(), resolved.clone(), reachable));
        (resolved, reachable)
    }

    /// `name` in `parent`, resolved, and whether it could be looked up.
    fn step(&mut self, parent: &Path, name: &std::ffi::OsStr) -> (PathBuf, bool) {
        let (out, reachable) = self.dir(parent);
        let next = out.join(name);
        if !reachable {
            return (next, false);
        }
        match std::fs::symlink_metadata(&next) {
            Err(_) => (next, false),
            Ok(meta) if !meta.file_type().is_symlink() => (next, true),
            Ok(_) => (walk_from(out, Path::new(name), 0), true),
        }
    }
}
