//! The built-in check that runs before any hook: a tool call aimed at ka's own files needs a
//! human.
//!
//! When a trusted `.ka/ka.toml` changes, its guards fail closed ([`crate::config`]); the model's
//! next move may be to edit the file back, write `ka.local.toml`, the trust store, or the user
//! file. A `pre_tool_use` call whose path arguments (`path`, `paths`, `file_path`,
//! `notebook_path`) target any layer file, the user file, the managed dir or the data dir is
//! therefore turned into `ask`, with a reason that says why, before any hook runs. The user's
//! own file can turn this off (`protect_ka_files = false`); a project file cannot.
//!
//! This is not a sandbox: the model can still run any program through its shell tool. Together
//! with fail-closed stale layers and `trust` refusing inside a tool call, it makes an edit of
//! the hooks visible and its approval a human act.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::Config;
use crate::paths;

/// Argument names that carry a path the call writes or reads.
const PATH_ARGS: &[&str] = &["path", "file_path", "notebook_path"];

/// The reason to ask, when `arguments` of a `pre_tool_use` call aim at ka's own files.
pub fn check(
    config: &Config,
    arguments: Option<&Map<String, Value>>,
    cwd: &Path,
) -> Option<String> {
    if !config.settings.protect_ka_files {
        return None;
    }
    let args = arguments?;
    let mut targets: Vec<&str> = PATH_ARGS
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .collect();
    if let Some(Value::Array(paths)) = args.get("paths") {
        targets.extend(paths.iter().filter_map(Value::as_str));
    }
    let base = config.project_root.as_deref().unwrap_or(cwd);
    targets.into_iter().find_map(|target| {
        let path = resolve(base, target);
        protected(config, &path).then(|| {
            format!(
                "this call touches {}, one of ka's own hook files; hooks guard the agent only \
                 while their configuration is what a person reviewed, so a person must approve \
                 this change",
                crate::terminal::escape_path(&path)
            )
        })
    })
}

/// `target` made absolute against `base`, `.` and `..` removed without touching the file system,
/// then with its parent directory resolved when it exists (a symlinked directory cannot hide it).
fn resolve(base: &Path, target: &str) -> PathBuf {
    let joined = base.join(target);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    match (out.parent(), out.file_name()) {
        (Some(parent), Some(name)) => match parent.canonicalize() {
            Ok(real) => real.join(name),
            Err(_) => out,
        },
        _ => out,
    }
}

fn protected(config: &Config, path: &Path) -> bool {
    let is_layer_file = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == paths::CONFIG_FILE || n == paths::LOCAL_FILE)
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == paths::PROJECT_DIR);
    is_layer_file
        || path.file_name().is_some_and(|n| n == paths::PROJECT_DIR)
        // `protected` holds absolute, resolved paths (made so at load).
        || config
            .protected
            .iter()
            .any(|p| path == p || path.starts_with(p) && p.is_dir())
}
