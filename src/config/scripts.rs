//! The scripts a layer's hooks run from inside the project, for the trust fingerprint.
//!
//! Trusting `command = "sh .ka/hooks/guard.sh"` must mean trusting `guard.sh` as it was
//! reviewed: otherwise the model edits the script and the next call runs the new one unreviewed.
//! Every file of the project a command executes (`super::script_names`: a program run by its
//! path, a script handed to an interpreter, the makefile of `make guard`, the `package.json` of
//! `npm run guard`, the package of `python3 -m pkg`) is recorded with its SHA-256 at trust time
//! (or as absent, so creating it later counts as a change too), and re-hashed on every load.
//! The files a hook only reads or writes (`grep x notes.md`, `>> edited.log`) are not: writing
//! them changes nothing that runs. A path inside the project that is a symlink to a file outside
//! it is recorded with the target's path and content ([`script_hash`]). What this cannot see is
//! said per hook by [`HookCoverage::uncovered`]: programs from `PATH`, files outside the
//! project, what a recipe or a script goes on to run, the modules a program imports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::script_names;

use crate::trust::{content_hash, ScriptRecord};

/// Largest script hashed; a larger file is recorded by its size and metadata only.
const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// What the commands of one layer file name.
#[derive(Debug, Default, Clone)]
pub struct Coverage {
    /// Paths inside the project, with their SHA-256 now (sorted, unique).
    pub scripts: Vec<ScriptRecord>,
    /// What trust does not cover, one line each (all hooks, sorted, unique).
    pub uncovered: Vec<String>,
    /// Per hook, in file order: the files it covers and what it cannot cover.
    pub hooks: Vec<HookCoverage>,
}

/// The coverage of one hook's command.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HookCoverage {
    /// The hook as the review names it (`hooks[0] "guard"`).
    pub hook: String,
    /// Files of the project it executes that exist now (relative to the root).
    pub covers: Vec<String>,
    /// What trust cannot cover in it, and why.
    pub uncovered: Vec<String>,
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

/// The coverage of `commands` (`(hook label, command)`) run in `root` (canonical). Each
/// distinct path is resolved and hashed once, however many hooks name it (a file of 10 000 hooks
/// running one guard script reads it once).
pub fn coverage<'a>(
    root: &Path,
    commands: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Coverage {
    let mut out = Coverage::default();
    let mut hashed: HashMap<PathBuf, Option<String>> = HashMap::new();
    let mut hash = |rel: &PathBuf| -> Option<String> {
        hashed
            .entry(rel.clone())
            .or_insert_with(|| script_hash(root, &rel.to_string_lossy()))
            .clone()
    };
    for (hook, command) in commands {
        let named = script_names::named(root, command);
        let mut this = HookCoverage {
            hook: hook.to_owned(),
            uncovered: named.uncovered,
            ..HookCoverage::default()
        };
        for candidate in &named.files {
            let mut exists = false;
            for rel in &candidate.paths {
                let sha256 = hash(rel);
                if sha256.is_some() {
                    exists = true;
                    this.covers.push(rel.to_string_lossy().into_owned());
                }
                out.scripts.push(ScriptRecord {
                    path: rel.to_string_lossy().into_owned(),
                    sha256,
                });
            }
            let word = crate::terminal::escape(&candidate.word);
            if candidate.paths.is_empty() {
                this.uncovered
                    .push(format!("{word}: outside the project, not covered by trust"));
            } else if !exists && candidate.written {
                this.uncovered.push(format!(
                    "{word}: no such file in the project now (creating it untrusts the file)"
                ));
            }
        }
        if !named.from_path.is_empty() {
            this.uncovered.push(format!(
                "{}: found on PATH, outside the project",
                named.from_path.join(", ")
            ));
        }
        this.covers.sort();
        this.covers.dedup();
        // A program's own note (make, npm, python -m) already says what lies beyond.
        let noted = named.files.iter().any(|c| !c.written);
        if !this.covers.is_empty() && !noted {
            this.uncovered.push(format!(
                "what {} in turn runs, sources or imports (unless the hook's command names it \
                 too)",
                this.covers
                    .iter()
                    .map(|c| crate::terminal::escape(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        this.uncovered.dedup();
        out.uncovered.extend(this.uncovered.iter().cloned());
        out.hooks.push(this);
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
