//! The scripts a layer's hooks run from inside the project, for the trust fingerprint.
//!
//! Trusting `command = "sh .ka/hooks/guard.sh"` must mean trusting `guard.sh` as it was
//! reviewed: otherwise the model edits the script and the next call runs the new one unreviewed.
//! Every word of every command that could name a file inside the project is recorded with its
//! SHA-256 at trust time (or as absent, so creating it later counts as a change too), and
//! re-hashed on every load. A path inside the project that is a symlink to a file outside it is
//! recorded with the target's path and content ([`script_hash`]). What this cannot see is said
//! by [`Coverage::uncovered`]: programs on `PATH`, files outside the project, and whatever a
//! script itself goes on to run.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::trust::{content_hash, ScriptRecord};

/// Largest script hashed; a larger file is recorded by its size and metadata only.
const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// What the commands of one layer file name.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Paths inside the project, with their SHA-256 now (sorted, unique).
    pub scripts: Vec<ScriptRecord>,
    /// What trust does not cover, one line each (`cargo: a program on PATH`).
    pub uncovered: Vec<String>,
}

/// The words of `command` that may name files: split like `sh` would split simple words, at
/// operators, with `$KA_PROJECT_DIR` / `$CLAUDE_PROJECT_DIR` read as the project root.
fn words(command: &str) -> Vec<String> {
    let mut text = command.to_owned();
    for var in ["KA_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
        for form in [
            format!("\"${{{var}}}\""),
            format!("\"${var}\""),
            format!("${{{var}}}"),
            format!("${var}"),
        ] {
            text = text.replace(&form, ".");
        }
    }
    let spaced: String = text
        .chars()
        .flat_map(|c| {
            if ";&|()<>`\n".contains(c) {
                vec![' ', c, ' ']
            } else {
                vec![c]
            }
        })
        .collect();
    let split = shell_words::split(&spaced)
        .unwrap_or_else(|_| spaced.split_whitespace().map(str::to_owned).collect());
    split
        .into_iter()
        .map(|w| match w.split_once('=') {
            // `VAR=path cmd` and `--config=path`: the value may be a file.
            Some((name, value)) if !name.is_empty() && !name.contains('/') => value.to_owned(),
            _ => w,
        })
        .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.contains('$'))
        .filter(|w| !w.chars().all(|c| ";&|()<>`\n".contains(c)))
        .collect()
}

/// `path` relative to `root` without touching the file system, when it stays inside `root`.
fn inside(root: &Path, word: &str) -> Option<PathBuf> {
    let path = Path::new(word);
    let rel = if path.is_absolute() {
        path.strip_prefix(root).ok()?.to_path_buf()
    } else {
        path.to_path_buf()
    };
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// SHA-256 of the file at `rel` under `root` now: `None` when there is no regular file there.
/// A path that resolves (through a symlink) outside the project records where it leads and the
/// content there, `outside:<target>:<sha256>`: the review showed that file's content, so
/// re-pointing the link or editing its target makes the layer stale.
pub fn script_hash(root: &Path, rel: &str) -> Option<String> {
    let path = root.join(rel);
    let real = path.canonicalize().ok()?;
    let meta = std::fs::metadata(&real).ok();
    let content = meta
        .as_ref()
        .filter(|meta| meta.is_file())
        .and_then(|meta| file_hash(&real, meta));
    if !real.starts_with(root) {
        return Some(match content {
            Some(content) => format!("outside:{}:{content}", real.display()),
            None => format!("outside:{}", real.display()),
        });
    }
    content
}

/// SHA-256 of the regular file `real`; a file over [`MAX_SCRIPT_BYTES`] by its size and metadata.
fn file_hash(real: &Path, meta: &std::fs::Metadata) -> Option<String> {
    if meta.len() > MAX_SCRIPT_BYTES {
        use std::os::unix::fs::MetadataExt;
        return Some(format!(
            "large:{}:{}:{}",
            meta.len(),
            meta.mtime(),
            meta.ino()
        ));
    }
    std::fs::read(real).ok().map(|b| content_hash(&b))
}

/// Whether a word that names no file now looks like it was meant to name one.
fn looks_like_a_file(word: &str) -> bool {
    word.contains('/')
        || [
            ".sh", ".bash", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".php",
        ]
        .iter()
        .any(|ext| word.ends_with(ext))
}

/// The coverage of `commands` run in `root` (canonical). Each distinct path is resolved and
/// hashed once, however many hooks name it (a file of 10 000 hooks running one guard script
/// reads it once).
pub fn coverage<'a>(root: &Path, commands: impl IntoIterator<Item = &'a str>) -> Coverage {
    let mut out = Coverage::default();
    let mut hashed: HashMap<String, Option<String>> = HashMap::new();
    for command in commands {
        for word in words(command) {
            match inside(root, &word) {
                Some(rel) => {
                    let rel = rel.to_string_lossy().into_owned();
                    let sha256 = match hashed.get(&rel) {
                        Some(known) => known.clone(),
                        None => {
                            let now = script_hash(root, &rel);
                            hashed.insert(rel.clone(), now.clone());
                            now
                        }
                    };
                    if sha256.is_none() && looks_like_a_file(&word) {
                        out.uncovered.push(format!(
                            "{}: no such file in the project now (creating it untrusts the file)",
                            crate::terminal::escape(&word)
                        ));
                    }
                    out.scripts.push(ScriptRecord { path: rel, sha256 });
                }
                None if looks_like_a_file(&word) => out.uncovered.push(format!(
                    "{}: outside the project, not covered by trust",
                    crate::terminal::escape(&word)
                )),
                None => {}
            }
        }
    }
    out.scripts.sort();
    out.scripts.dedup();
    out.uncovered.sort();
    out.uncovered.dedup();
    out
}

/// The first recorded script that differs now, as `path (changed|created|removed)`.
pub fn first_change(root: &Path, recorded: &[ScriptRecord]) -> Option<String> {
    recorded.iter().find_map(|s| {
        let now = script_hash(root, &s.path);
        (now != s.sha256).then(|| {
            let what = match (&s.sha256, &now) {
                (None, Some(_)) => "created",
                (Some(_), None) => "removed",
                _ => "changed",
            };
            format!("{} ({what})", crate::terminal::escape(&s.path))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_find_scripts_behind_interpreters_operators_and_variables() {
        let w = words("sh .ka/hooks/guard.sh && python3 \"$CLAUDE_PROJECT_DIR\"/tools/check.py|./fmt.sh --x=y");
        assert!(w.contains(&".ka/hooks/guard.sh".to_owned()), "{w:?}");
        assert!(w.contains(&"./tools/check.py".to_owned()), "{w:?}");
        assert!(w.contains(&"./fmt.sh".to_owned()), "{w:?}");
        assert!(w.contains(&"y".to_owned()), "{w:?}");
        assert!(!w.iter().any(|x| x.starts_with('-')), "{w:?}");
    }

    #[test]
    fn paths_that_leave_the_root_are_not_inside() {
        let root = Path::new("/repo");
        assert_eq!(inside(root, "./a/../b.sh"), Some(PathBuf::from("b.sh")));
        assert_eq!(inside(root, "../x.sh"), None);
        assert_eq!(inside(root, "/repo/s/x.sh"), Some(PathBuf::from("s/x.sh")));
        assert_eq!(inside(root, "/etc/x.sh"), None);
    }
}
