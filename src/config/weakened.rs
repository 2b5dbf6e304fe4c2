//! Every change that weakens a guard is announced.
//!
//! The managed and user files, and a project file under a trusted root, load without review: an
//! edit to them (by a person, or by the model with its shell tool) takes effect at once. When
//! such an edit removes a guard or makes one weaker (disabled, `enforce = false`, another event,
//! a narrower filter, a weaker `on_error`, ...), the next answer says which guard changed, how,
//! and in which file, so the user hears it at least once.
//!
//! The load compares the file with its snapshot (the text that last loaded, see
//! [`super::snapshot`]). Only when they differ does it merge the layers a second time with the
//! snapshot in the file's place, and compare the guards of that merge with the hooks of this
//! one, by name (an unnamed hook by its event and command). The first dispatch of the
//! configuration then replaces the snapshot, so the change is said once.

use std::collections::HashMap;
use std::path::PathBuf;

use super::broken::is_guard;
use super::error::ConfigError;
use super::hook::{Hook, Layer};
use super::merge::merge_hooks;
use super::parse::{parse_file, ParsedFile};
use super::settings::Settings;
use super::strength::weakenings;

/// A layer file that loads without review and differs from its snapshot.
#[derive(Debug, Clone)]
pub(super) struct Changed {
    pub layer: Layer,
    pub file: PathBuf,
    pub root: Option<PathBuf>,
    /// The snapshot's text.
    pub before: String,
    /// Whether the file is gone.
    pub removed: bool,
}

/// Each changed file with the hooks the layers made before it changed.
pub(super) fn befores(
    changed: Vec<Changed>,
    files: &[ParsedFile],
    settings: &Settings,
) -> Vec<(Changed, Vec<Hook>)> {
    changed
        .into_iter()
        .map(|c| {
            let hooks = before(files, &c, settings);
            (c, hooks)
        })
        .collect()
}

/// The hooks the layers made with `changed`'s snapshot in place of the file as it is now
/// (`files` as loaded, before merging).
fn before(files: &[ParsedFile], changed: &Changed, settings: &Settings) -> Vec<Hook> {
    let mut old = parse_file(
        changed.layer,
        &changed.file,
        &changed.before,
        &mut Vec::new(),
    );
    old.root.clone_from(&changed.root);
    let mut files = files.to_vec();
    match files
        .iter()
        .position(|f| f.layer == changed.layer && *f.path == *changed.file)
    {
        Some(i) => files[i] = old,
        None => {
            // The file is gone: its snapshot goes where it was (managed, then user, then the
            // project layers).
            let at = files
                .iter()
                .position(|f| f.layer > changed.layer)
                .unwrap_or(files.len());
            files.insert(at, old);
        }
    }
    let (mut errors, mut warnings): (Vec<ConfigError>, Vec<String>) = (Vec::new(), Vec::new());
    merge_hooks(files, settings, &mut errors, &mut warnings).hooks
}

/// What a guard is known by across two loads: its name, or its event and command.
fn identity(hook: &Hook) -> (bool, String, String) {
    if hook.named {
        (true, hook.name.clone(), String::new())
    } else {
        (false, hook.event.as_str().to_owned(), hook.command.clone())
    }
}

/// One line per guard of `before` that `after` no longer has, or has weaker, blaming `changed`.
pub(super) fn announce(before: &[Hook], after: &[Hook], changed: &Changed) -> Vec<String> {
    let now: HashMap<_, &Hook> = after.iter().map(|h| (identity(h), h)).collect();
    let file = crate::terminal::escape_path(&changed.file);
    let how = if changed.removed {
        "was deleted"
    } else {
        "changed"
    };
    before
        .iter()
        .filter(|h| is_guard(h))
        .filter_map(|old| {
            let name = crate::terminal::escape(&old.name);
            let what = match now.get(&identity(old)) {
                None => "is gone".to_owned(),
                Some(new) if !new.enabled => "is disabled (`enabled = false`)".to_owned(),
                Some(new) => {
                    let weaker = weakenings(old, new);
                    if weaker.is_empty() {
                        return None;
                    }
                    // `Weakening`'s text escapes what came from the file.
                    let list: Vec<String> = weaker.iter().map(ToString::to_string).collect();
                    format!("is weaker ({})", list.join("; "))
                }
            };
            Some(format!(
                "the guard `{name}` {what}: the {} file {file} {how} since the last dispatch; if \
                 you did not make this change, restore the file",
                changed.layer
            ))
        })
        .collect()
}
