//! Reading one layer file: a regular file, at most 4 MiB, UTF-8, and for a project layer, a file
//! whose real path stays inside its project.
//!
//! The bytes read here are the bytes hashed for the trust gate and the bytes parsed, so a file
//! cannot change between being judged and being used. Nothing here blocks: a FIFO or a device
//! is refused after `open` with `O_NONBLOCK`, before any read.

use std::io::Read as _;
use std::path::Path;

/// Largest layer file read: 4 MiB. Far above a hand-written file, room for a generated one
/// (40 000 one-line entries, or some 25 000 multi-line `[[hooks]]` tables; loading is linear),
/// and a bound on what a crafted file can cost each load.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// One layer file as found.
#[derive(Debug)]
pub enum Found {
    /// No such file.
    Missing,
    /// Its text and the SHA-256 of its bytes.
    Text { text: String, sha256: String },
    /// It exists but must not be loaded; the reason names the problem and its fix.
    Refused(String),
}

/// A managed or user file. It may be a symlink (dotfile managers link it), but must be a
/// regular file.
pub fn ungated(path: &Path) -> Found {
    read(path, true)
}

/// A project or local file of the project at `root` (canonical): refused when its real path
/// (through a symlinked `.ka/` or file) leaves the project, since a trust record vouches for
/// this project's file, never for another's reached through a link.
pub fn gated(root: &Path, path: &Path) -> Found {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        _ => {}
    }
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Found::Refused("is a symlink to a file that does not exist".into())
        }
        Err(e) => return Found::Refused(format!("cannot be resolved ({e})")),
    };
    if !real.starts_with(root) {
        return Found::Refused(format!(
            "is a symlink to {}, outside its project {}; ka-hooks never loads a project file \
             from elsewhere (replace the link with the file itself)",
            crate::terminal::escape_path(&real),
            crate::terminal::escape_path(root)
        ));
    }
    read(&real, false)
}

fn read(path: &Path, follow: bool) -> Found {
    let file = match crate::fd::open_read(path, !follow) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        Err(e) if out_of_descriptors(&e) => return Found::Refused(io_failure(&e)),
        Err(e) => return Found::Refused(format!("cannot be read ({e}); check the file")),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return Found::Refused(format!("cannot be read ({e})")),
    };
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Found::Refused(format!("is {what}; a layer file must be a regular file"));
    }
    // Sized from the metadata, so the file is read in one call (plus the one that sees its end).
    let expected = meta.len().min(MAX_CONFIG_BYTES) + 1;
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    if let Err(e) = file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes) {
        return Found::Refused(format!("cannot be read ({e})"));
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Found::Refused(format!(
            "is larger than {MAX_CONFIG_BYTES} bytes (4 MiB); a hook file is never that large"
        ));
    }
    let sha256 = crate::trust::content_hash(&bytes);
    match String::from_utf8(bytes) {
        Ok(text) => Found::Text { text, sha256 },
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            Found::Refused(format!(
                "is not UTF-8 text (first invalid byte on line {line}); save it as UTF-8"
            ))
        }
    }
}

/// Whether `e` says this process (or the system) has no file descriptor left: nothing is wrong
/// with the file, and nothing can be known of it.
fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Why a file could not be read, said so a person knows what happened.
pub(super) fn io_failure(e: &std::io::Error) -> String {
    if out_of_descriptors(e) {
        format!(
            "cannot be read now ({e}): ka-hooks has run out of file descriptors (the process \
             that started it holds too many open, or its limit is too low), so nothing is known \
             of the file"
        )
    } else {
        format!("cannot be read ({e})")
    }
}
