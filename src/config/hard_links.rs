//! A file is its device and inode, not its name. A regular file with more than one hard link
//! (`src/hard` linked to `secrets/key`) is every one of its names: the built-in protection and
//! `paths` filters look for its other names, but only for such a file, and only in the folders
//! they care about (the protected files, a glob's directory before its first wildcard).
//!
//! The search lists at most [`LINK_SEARCH_LIMIT`] directory entries and 16 levels, never
//! following a symlink; past that it gives up, and the caller counts the file as matching, since
//! another name cannot be ruled out.

use std::path::{Path, PathBuf};

/// How many directory entries a search for another name of a hard-linked file may look at.
pub(crate) const LINK_SEARCH_LIMIT: usize = 20_000;

/// Device and inode of a file that has other names (a regular file with two or more links).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

/// `path`'s identity when it is a regular file with more than one hard link (symlinks in
/// `path` are followed, as the tool that opens it follows them); `None` for anything else.
#[cfg(unix)]
pub(crate) fn linked(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.nlink() >= 2).then(|| FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

#[cfg(not(unix))]
pub(crate) fn linked(_: &Path) -> Option<FileId> {
    None
}

/// What a search found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// These names of the file (possibly none) are all there is under the searched path.
    Names(Vec<PathBuf>),
    /// The budget ran out before the search ended: another name may exist.
    GaveUp,
}

/// Every name of the file `id` at or below `path`, symlinks not followed, sharing `budget`
/// (directory entries) with the caller's other searches.
pub(crate) fn names_under(path: &Path, id: FileId, budget: &mut usize) -> Found {
    let mut names = Vec::new();
    if search(path, id, budget, 0, &mut names) {
        Found::Names(names)
    } else {
        Found::GaveUp
    }
}

/// `false` when the budget or the depth ran out.
#[cfg(unix)]
fn search(
    path: &Path,
    id: FileId,
    budget: &mut usize,
    depth: usize,
    out: &mut Vec<PathBuf>,
) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return true;
    };
    if meta.is_file() {
        if (meta.dev(), meta.ino()) == (id.dev, id.ino) {
            out.push(path.to_path_buf());
        }
        return true;
    }
    if !meta.is_dir() {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return true;
    };
    for entry in entries.flatten() {
        if *budget == 0 || depth > 16 {
            return false;
        }
        *budget -= 1;
        if !search(&entry.path(), id, budget, depth + 1, out) {
            return false;
        }
    }
    true
}

#[cfg(not(unix))]
fn search(_: &Path, _: FileId, _: &mut usize, _: usize, _: &mut Vec<PathBuf>) -> bool {
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn every_name_of_a_linked_file_is_found_and_a_plain_file_has_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("secrets/deep")).expect("mkdir");
        std::fs::write(d.join("secrets/deep/key"), "k").expect("write");
        std::fs::hard_link(d.join("secrets/deep/key"), d.join("hard")).expect("link");
        std::fs::write(d.join("plain"), "p").expect("write");
        assert_eq!(linked(&d.join("plain")), None);
        let id = linked(&d.join("hard")).expect("linked");
        let mut budget = LINK_SEARCH_LIMIT;
        assert_eq!(
            names_under(&d.join("secrets"), id, &mut budget),
            Found::Names(vec![d.join("secrets/deep/key")])
        );
        let mut none = 1;
        assert_eq!(names_under(d, id, &mut none), Found::GaveUp);
    }
}
