//! The built-in check that runs before any hook: a tool call aimed at ka's own files needs a
//! human.
//!
//! When a trusted `.ka/ka.toml` changes, its guards fail closed ([`crate::config`]); the model's
//! next move may be to edit the file back, write `ka.local.toml`, the trust store, or the user
//! file, or the script a user guard runs. A `pre_tool_use` call whose path arguments (every key of
//! [`crate::config::touched::PATH_KEYS`], `paths`), as written or as resolved, target any layer
//! file, the user's config dir, the managed dir, the data dir, or a file outside the projects that
//! a managed or user guard runs (`sh /opt/guards/x.sh`) is therefore turned into `ask`, with a
//! reason that says why, before any hook runs. The user's own file can turn this off
//! (`protect_ka_files = false`); a project file cannot.
//!
//! This is not a sandbox: the model can still run any program through its shell tool. Together
//! with fail-closed stale layers and `trust` refusing inside a tool call, it makes an edit of
//! the hooks visible and its approval a human act.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::hard_links::{self, Found};
use crate::config::touched::{touched, Resolver};
use crate::config::{script_names, Config, Layer};
use crate::paths;

/// The reason to ask, when `arguments` of a `pre_tool_use` call aim at ka's own files.
///
/// Every path argument counts ([`touched`]), in both of its spellings (as written and as the
/// kernel resolves it, [`Resolver::spellings`]): a file of the project that is a symlink to the
/// user file is the user file.
pub fn check(
    config: &Config,
    arguments: Option<&Map<String, Value>>,
    cwd: &Path,
) -> Option<String> {
    if !config.settings.protect_ka_files {
        return None;
    }
    let targets = touched(arguments);
    if targets.is_empty() {
        return None;
    }
    // Resolved at every call: a `Session` keeps its `Config`, and the model's shell may have
    // swapped the working directory for a symlink since the last one.
    let resolver = Resolver::new(config.project_root.as_deref().unwrap_or(cwd));
    targets.into_iter().find_map(|target| {
        let spellings = resolver.spellings(target);
        let hit = match spellings.iter().find(|s| protected(config, &s.absolute)) {
            Some(hit) => hit.absolute.clone(),
            None => hard_link_to_protected(config, &spellings.first()?.absolute)?,
        };
        Some(format!(
            "this call touches {}, one of ka's own hook files; hooks guard the agent only \
             while their configuration is what a person reviewed, so a person must approve \
             this change",
            crate::terminal::escape_path(&hit)
        ))
    })
}

/// A file is its device and inode, not its name: when `path` is a regular file with more than
/// one hard link, the protected file it is another name of (`src/hard` linked to the user's
/// `ka.toml`). Only such a file costs a look through the protected files and folders
/// ([`hard_links`]); when that search gives up, it counts as protected, since it cannot be ruled
/// out.
fn hard_link_to_protected(config: &Config, path: &Path) -> Option<PathBuf> {
    let id = hard_links::linked(path)?;
    let mut budget = hard_links::LINK_SEARCH_LIMIT;
    for root in config.protected().iter().chain(guard_scripts(config)) {
        match hard_links::names_under(root, id, &mut budget) {
            Found::Names(names) => {
                if let Some(name) = names.into_iter().next() {
                    return Some(name);
                }
            }
            Found::GaveUp => return Some(path.to_path_buf()),
        }
    }
    None
}

/// The files outside every project that the managed and user guards run: the absolute words of
/// their commands that name a file (`sh /opt/guards/no-secrets.sh`), each as written and as
/// resolved. Emptying one switches its guard off as surely as editing `ka.toml`, and no trust
/// record covers it. Read once per `Config`, at the first call with a path.
fn guard_scripts(config: &Config) -> &[PathBuf] {
    config.guard_scripts.get_or_init(|| {
        let mut out = Vec::new();
        let outside = config
            .hooks
            .iter()
            .filter(|h| matches!(h.source.layer, Layer::User | Layer::Managed))
            .filter(|h| h.event.is_pipeline());
        for hook in outside {
            let named = script_names::named(Path::new("/"), &hook.command);
            for candidate in named.files {
                if !Path::new(&candidate.word).is_absolute() {
                    continue;
                }
                for rel in candidate.paths {
                    let path = Path::new("/").join(rel);
                    if path.is_file() {
                        out.extend(std::fs::canonicalize(&path).ok());
                        out.push(path);
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    })
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
        // `protected()` is absolute and resolved (at the first call that needs it).
        || config
            .protected()
            .iter()
            .any(|p| path == p || path.starts_with(p) && p.is_dir())
        || guard_scripts(config).iter().any(|p| path == p)
}
