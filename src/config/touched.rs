//! Which files a tool call touches, and the spellings of each (as written and as resolved) that
//! `paths`, `if` path rules and the protection of ka's own files test: one function for all
//! three ([`Resolver::spellings`]), so that no guard sees a file another one misses.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::resolve::walk_from;
pub use crate::resolve::{lexical, real, RealDirs};

/// Keys holding one path, in the order placeholders take them: ka's `path` (the agent's own file
/// argument after translation) first.
pub const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "notebook_path",
    "absolute_path",
    "dir_path",
    "shadowed_path",
];

/// Keys holding a list of paths (a patch's files, Gemini's `read_many_files`).
pub const PATH_LIST_KEYS: &[&str] = &["paths"];

/// Keys holding `apply_patch` patch text (ka's `patch`; Codex's own `command` and the `input` of
/// OpenAI's tool, when the text is a patch): the files its headers name are touched too.
pub const PATCH_KEYS: &[&str] = &["patch", "command", "input"];

/// What an `apply_patch` header does to the file it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchOp {
    /// `*** Add File: <path>`
    Add,
    /// `*** Update File: <path>`
    Update,
    /// `*** Delete File: <path>`
    Delete,
    /// `*** Move to: <path>` (the new name of the file updated before it)
    MoveTo,
}

const PATCH_HEADERS: [(&str, PatchOp); 4] = [
    ("*** Add File:", PatchOp::Add),
    ("*** Update File:", PatchOp::Update),
    ("*** Delete File:", PatchOp::Delete),
    ("*** Move to:", PatchOp::MoveTo),
];

/// The files `apply_patch` patch text touches, in order: each header's path. Headers are read
/// leniently (blanks around them), so no header the tool would apply is missed.
pub fn patch_files(text: &str) -> Vec<(PatchOp, &str)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            PATCH_HEADERS.iter().find_map(|(header, op)| {
                let path = line.strip_prefix(header)?.trim();
                (!path.is_empty()).then_some((*op, path))
            })
        })
        .collect()
}

/// The patch text of the arguments: `patch`, or a `command`/`input` that is a patch.
fn patch_texts(args: &Map<String, Value>) -> impl Iterator<Item = &str> {
    PATCH_KEYS.iter().filter_map(|key| {
        let text = args.get(*key)?.as_str()?;
        (*key == "patch" || text.trim_start().starts_with("*** Begin Patch")).then_some(text)
    })
}

/// The paths a tool call touches, from ka's arguments, the agent's own file argument first.
pub fn touched(arguments: Option<&Map<String, Value>>) -> Vec<&str> {
    let Some(args) = arguments else {
        return Vec::new();
    };
    let mut out: Vec<&str> = PATH_KEYS
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .collect();
    for key in PATH_LIST_KEYS {
        if let Some(Value::Array(paths)) = args.get(*key) {
            out.extend(paths.iter().filter_map(Value::as_str));
        }
    }
    let named = out.len();
    for text in patch_texts(args) {
        for (_, path) in patch_files(text) {
            // A host that resolved the patch's one file (Codex's `edit`: `path` absolute, the
            // patch's header relative) names the same file twice: keep its own spelling.
            let resolved = std::path::Path::new(path).is_relative()
                && out[..named].iter().any(|p| {
                    let p = std::path::Path::new(p);
                    p.is_absolute() && p.ends_with(path)
                });
            if !resolved {
                out.push(path);
            }
        }
    }
    let mut seen = Vec::with_capacity(out.len());
    out.retain(|p| {
        let new = !seen.contains(p);
        seen.push(*p);
        new
    });
    out
}

/// The paths the tool itself acts on: [`touched`] without a decoy the adapters kept aside
/// (`shadowed_path`). `{path}` stands for the first of these.
pub fn own(arguments: Option<&Map<String, Value>>) -> Vec<&str> {
    let decoy = arguments
        .and_then(|a| a.get("shadowed_path"))
        .and_then(Value::as_str);
    let mut out = touched(arguments);
    if let Some(decoy) = decoy {
        if out.iter().filter(|p| **p == decoy).count() == 1 && out.first() != Some(&decoy) {
            out.retain(|p| *p != decoy);
        }
    }
    out
}

/// The directories a search (`grep`, `glob`, `ls`, `read_many_files`) reads whole trees of: its
/// path arguments (the literal part of Gemini's `read_many_files` globs, `paths` and `include`),
/// or the root when it names none (a search without a directory searches the working directory).
pub fn search_dirs(tool: &str, args: Option<&Map<String, Value>>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = touched(args).into_iter().map(literal_dir).collect();
    if tool == "read_many_files" {
        if let Some(Value::Array(include)) = args.and_then(|a| a.get("include")) {
            dirs.extend(include.iter().filter_map(Value::as_str).map(literal_dir));
        }
    }
    if dirs.is_empty() {
        dirs.push(PathBuf::from("."));
    }
    dirs
}

/// The components of `pattern` before its first wildcard (`.` when it starts with one).
pub fn literal_dir(pattern: &str) -> PathBuf {
    let is_wild = |c: &str| c.contains(['*', '?', '[', ']', '{', '}']);
    let literal: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| !is_wild(&c.as_os_str().to_string_lossy()))
        .collect();
    if literal.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        literal
    }
}

/// Whether a search of the tree at `dir` can read a file under `literal` (a glob's directory
/// before its first wildcard, relative to the root or absolute): `dir` holds it, or lies inside
/// it. A search above the root reaches every relative glob.
pub fn reaches(literal: &Path, dir: &Spelling, resolver: &Resolver) -> bool {
    if literal.is_absolute() {
        return literal.starts_with(&dir.absolute) || dir.absolute.starts_with(literal);
    }
    match &dir.relative {
        Some(rel) => literal.starts_with(rel) || rel.starts_with(literal),
        None => resolver.root().starts_with(&dir.absolute),
    }
}

/// One spelling of a touched path: absolute, and relative to the root when under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spelling {
    /// The absolute, lexically normalised path.
    pub absolute: PathBuf,
    /// The path relative to the root, when it is inside.
    pub relative: Option<PathBuf>,
}

impl Spelling {
    /// The form `paths` globs match: relative to the root when under it, else absolute.
    pub fn for_globs(&self) -> &Path {
        self.relative.as_deref().unwrap_or(&self.absolute)
    }
}

/// The project root in both spellings, worked out once per dispatch.
#[derive(Debug, Clone)]
pub struct Resolver {
    root: PathBuf,
    /// The root with symlinks resolved (the root itself when it does not exist).
    real_root: PathBuf,
}

impl Resolver {
    /// A resolver of paths against `root`.
    pub fn new(root: &Path) -> Resolver {
        let root = lexical(Path::new("/"), root);
        let real_root = real(&root);
        Resolver { root, real_root }
    }

    /// The project root as given (lexically normalised).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project root with symlinks resolved.
    pub fn real_root(&self) -> &Path {
        &self.real_root
    }

    /// `written` as written and as resolved; one entry when both are the same.
    pub fn spellings(&self, written: &str) -> Vec<Spelling> {
        let raw = self.absolute(written);
        let as_written = lexical(Path::new("/"), &raw);
        let resolved = match raw.strip_prefix(&self.root) {
            // The root was resolved when this resolver was made: only the rest is looked up.
            Ok(rest) => walk_from(self.real_root.clone(), rest, 0),
            Err(_) => real(&raw),
        };
        let mut out = vec![self.spelling(as_written)];
        let resolved = self.spelling(resolved);
        if resolved != out[0] {
            out.push(resolved);
        }
        out
    }

    /// `written` made absolute: relative paths against the root, never the process's working
    /// directory; `/proc/self/cwd` (and `thread-self`) stand for the agent's working directory,
    /// which is the root, not that of this process; `~` and `~/…` for the home directory, as a
    /// tool that expands them reads them.
    fn absolute(&self, written: &str) -> PathBuf {
        if let Some(home) = home_of(written) {
            return home;
        }
        let path = Path::new(written);
        for proc_cwd in ["/proc/self/cwd", "/proc/thread-self/cwd"] {
            if let Ok(rest) = lexical(Path::new("/"), path).strip_prefix(proc_cwd) {
                return self.root.join(rest);
            }
        }
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        }
    }

    /// `absolute` (already normalised) with its path relative to the root when under it.
    pub fn spelling(&self, absolute: PathBuf) -> Spelling {
        let relative = [&self.root, &self.real_root]
            .iter()
            .find_map(|root| absolute.strip_prefix(root).ok())
            .map(Path::to_path_buf);
        Spelling { absolute, relative }
    }
}

/// `~` or `~/rest` as the path under the home directory (`$HOME`); `None` for any other path,
/// or when there is no home.
fn home_of(written: &str) -> Option<PathBuf> {
    let rest = match written.strip_prefix('~')? {
        "" => "",
        rest => rest.strip_prefix('/')?,
    };
    let home = crate::paths::home_dir()?;
    Some(if rest.is_empty() {
        home
    } else {
        home.join(rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_path_key_counts_and_ka_path_comes_first() {
        let args =
            json!({"shadowed_path": "b", "file_path": "c", "path": "a", "paths": ["d", "a"]});
        assert_eq!(touched(args.as_object()), ["a", "c", "b", "d"]);
    }

    #[test]
    fn a_patch_touches_every_file_its_headers_name() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.rs\n\
                     *** Move to: secrets/b.rs\n@@\n-y\n+z\n  *** Delete File: c  \n*** End Patch\n";
        assert_eq!(
            touched(json!({"patch": patch}).as_object()),
            ["a.txt", "b.rs", "secrets/b.rs", "c"]
        );
        // Codex's own spelling, as `ka-hooks run` may get it; a command that is no patch is none.
        assert_eq!(
            touched(json!({"command": patch}).as_object()),
            ["a.txt", "b.rs", "secrets/b.rs", "c"]
        );
        assert!(touched(json!({"command": "echo '*** Add File: x'"}).as_object()).is_empty());
    }

    #[test]
    fn real_dirs_resolve_as_real_does() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = real(dir.path());
        std::fs::create_dir_all(base.join("a/b")).expect("mkdir");
        std::fs::write(base.join("a/b/f"), "x").expect("write");
        std::os::unix::fs::symlink(base.join("a"), base.join("la")).expect("symlink");
        std::os::unix::fs::symlink("b/f", base.join("a/lf")).expect("symlink");
        std::os::unix::fs::symlink("nowhere/x", base.join("a/dangling")).expect("symlink");
        std::os::unix::fs::symlink("../../a", base.join("a/b/up")).expect("symlink");
        let mut dirs = RealDirs::default();
        for rel in [
            "a/b/f",
            "la/b/f",
            "la/lf",
            "la/dangling",
            "la/dangling/y",
            "a/b/f/not-a-dir",
            "la/missing/deeper/f",
            "missing/f",
            "a/b/up/b/f",
            "la/b/../lf",
            "la/./b//f",
        ] {
            let path = base.join(rel);
            assert_eq!(dirs.resolve(&path), real(&path), "{rel}");
        }
        assert_eq!(dirs.resolve(&base.join("la/b/f")), base.join("a/b/f"));
    }

    #[test]
    fn spellings_resolve_symlinks_and_dots() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("secrets")).expect("mkdir");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::os::unix::fs::symlink("../secrets", root.join("src/s")).expect("symlink");
        std::os::unix::fs::symlink(&root, dir.path().join("link")).expect("symlink");
        let r = Resolver::new(&dir.path().join("link"));
        let rel = |w: &str| -> Vec<PathBuf> {
            r.spellings(w)
                .into_iter()
                .map(|s| s.for_globs().to_path_buf())
                .collect()
        };
        assert!(rel("src/s/key").contains(&PathBuf::from("secrets/key")));
        assert!(rel("src/s/key").contains(&PathBuf::from("src/s/key")));
        // Below a missing directory nothing is looked up, but a `..` back out resumes it.
        assert!(rel("nothere/deeper/../../src/s/key").contains(&PathBuf::from("secrets/key")));
        assert!(rel("src/s/new/../key").contains(&PathBuf::from("secrets/key")));
        assert!(rel("./secrets//k")
            .iter()
            .all(|p| p == Path::new("secrets/k")));
        assert!(
            rel("src/s/../k").contains(&PathBuf::from("k")),
            "kernel `..`"
        );
        let real_abs = root.canonicalize().expect("real").join("secrets/k");
        assert!(rel(&real_abs.to_string_lossy()).contains(&PathBuf::from("secrets/k")));
        assert!(rel("/proc/self/cwd/secrets/k").contains(&PathBuf::from("secrets/k")));
        assert_eq!(rel("/elsewhere/x"), [PathBuf::from("/elsewhere/x")]);
        // A dangling link: writing through it creates its target.
        std::os::unix::fs::symlink("../secrets/new", root.join("src/d")).expect("symlink");
        assert!(rel("src/d").contains(&PathBuf::from("secrets/new")));
        // A loop ends.
        std::os::unix::fs::symlink("loop", root.join("loop")).expect("symlink");
        assert!(!rel("loop/x").is_empty());
    }
}
