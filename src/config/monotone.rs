//! The monotone rule of the merge: a layer may add hooks and strengthen any hook, but it weakens
//! another layer's hook only when the person who owns that layer is the one writing.
//!
//! Trust grows managed < user < each project root, outermost first (project, then its local
//! file). Who may weaken whom (weaker is [`super::strength::weakenings`]):
//! - a file its own hooks, always;
//! - the user file a project's or local file's hooks (the user's own word about a repository);
//! - a project's `.ka/ka.local.toml` its own project's `.ka/ka.toml` hooks: it is the user's
//!   personal, git-ignored file, trust-gated like the project file, and the review says which
//!   project hook it changes and how;
//! - nobody else: never a project, local or nested layer over the user's or an outer project's
//!   hooks, and never anyone over a managed hook (those entries are ignored whole, see
//!   [`super::merge`]).
//!
//! A refused weakening leaves the original hook guarding: the entry that would weaken it is not
//! applied (nor its other keys: half an override is not what anyone wrote), every dispatch says
//! so, and `ka-hooks check` reports it as an error naming both files. De-duplication follows the
//! same rule: a copy of a hook across a boundary replaces it only when it is as strong.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::hook::{Hook, Layer, Source};
use super::merge::{probe, Below};
use super::parse::{seconds, ParsedFile};
use super::settings::Settings;
use super::strength::{guard_keys, weakenings, Weakening};

/// Who a hook belongs to, for the monotone rule: its layer and project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Owner {
    pub layer: Layer,
    pub root: Option<PathBuf>,
}

impl Owner {
    pub fn new(layer: Layer, root: Option<&Path>) -> Owner {
        Owner {
            layer,
            root: root.map(Path::to_path_buf),
        }
    }

    /// The owner of a merged hook: the layer and root of the entry that defined it.
    pub fn of(hook: &Hook) -> Owner {
        Owner::new(hook.source.layer, hook.root.as_deref())
    }

    /// Whether an entry written by `by` may make a hook of this owner weaker.
    pub fn may_be_weakened_by(&self, by: &Owner) -> bool {
        if self == by {
            return true;
        }
        match (self.layer, by.layer) {
            (Layer::Managed, _) => false,
            (Layer::Project | Layer::Local, Layer::User) => true,
            (Layer::Project, Layer::Local) => self.root == by.root,
            _ => false,
        }
    }
}

/// An entry that would have weakened another layer's hook, and was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Refusal {
    /// The hook's name.
    pub name: String,
    /// Where the hook that keeps guarding was defined.
    pub original: Source,
    /// The refused entry.
    pub at: Source,
    pub weakenings: Vec<Weakening>,
    /// The entry is an identical copy (same event, filter, command) that de-duplication would
    /// have kept instead, not an override by name.
    pub copy: bool,
}

impl Refusal {
    fn what(&self) -> String {
        let weaker: Vec<String> = self.weakenings.iter().map(ToString::to_string).collect();
        let original = format!(
            "the {} hook `{}` of {}:{}",
            self.original.layer,
            crate::terminal::escape(&self.name),
            crate::terminal::escape_path(&self.original.file),
            self.original.line
        );
        if self.copy {
            format!(
                "this entry is a copy of {original} (same event, tool filter and command) that \
                 guards less ({}); the {} hook runs, not this copy",
                weaker.join("; "),
                self.original.layer
            )
        } else {
            format!(
                "this entry overrides {original} and would weaken it ({}); a {} file cannot \
                 weaken a {} hook, so the entry is ignored and the hook keeps guarding as \
                 written there",
                weaker.join("; "),
                self.at.layer,
                self.original.layer
            )
        }
    }

    /// One line for `Config::warnings` and every dispatch.
    pub fn message(&self) -> String {
        format!(
            "{}:{}: `hooks[{}]`: {}",
            crate::terminal::escape_path(&self.at.file),
            self.at.line,
            self.at.index,
            self.what()
        )
    }

    /// The error `ka-hooks check` reports, at the refused entry.
    pub fn error(&self) -> ConfigError {
        ConfigError {
            file: self.at.file.to_path_buf(),
            line: Some(self.at.line),
            column: None,
            key: Some(format!("hooks[{}]", self.at.index)),
            message: self.what(),
            help: Some(format!(
                "remove the entry, or keep only keys that make the hook as strong or stronger; \
                 to weaken it, edit {} itself (only the user file may weaken a project's hooks, \
                 and no file a managed hook)",
                crate::terminal::escape_path(&self.original.file)
            )),
        }
    }
}

/// How the entries of one name in a gated file change a hook that the files below it define.
pub(super) struct Change {
    pub name: String,
    /// The first entry of the name in the file.
    pub at: Source,
    pub owner: Owner,
    /// The entry that made the hook below.
    pub original: Source,
    pub before: Hook,
    pub after: Hook,
    pub weakenings: Vec<Weakening>,
    /// The file may not weaken the owner's hooks and does: loading leaves the entries out.
    pub refused: bool,
}

/// Every hook of the files `below` that `file` changes by name, before and after, in the order
/// of the file's entries. Names of managed hooks are left out (such entries are ignored whole,
/// with a warning), and so are names whose hook below or merged result is not a valid hook (its
/// own error says so).
pub(super) fn changes(file: &ParsedFile, below: &Below<'_>) -> Vec<Change> {
    let by = Owner::new(file.layer, file.root.as_deref());
    let mut entries: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, (_, raw)) in file.hooks.iter().enumerate() {
        let Some(name) = raw.name.as_ref().map(|n| n.value.as_str()) else {
            continue;
        };
        if !below.contains(name) {
            continue;
        }
        match seen.get(name) {
            Some(&k) => entries[k].1.push(i),
            None => {
                seen.insert(name, entries.len());
                entries.push((name, vec![i]));
            }
        }
    }
    let settings = Settings::default();
    let mut out = Vec::new();
    for (name, same) in entries {
        let Some((owner, original, raw)) = below.owned(name) else {
            continue;
        };
        if owner.layer == Layer::Managed && file.layer != Layer::Managed {
            continue;
        }
        let mut merged = raw.clone();
        for &j in &same {
            merged.merge(file.hooks[j].1.clone());
        }
        let (Some(before), Some(after)) = (
            probe(&raw, original, &settings),
            probe(&merged, original, &settings),
        ) else {
            continue;
        };
        let weakenings = weakenings(&before, &after);
        out.push(Change {
            name: name.to_owned(),
            at: file.hooks[same[0]].0.clone(),
            refused: !weakenings.is_empty() && !owner.may_be_weakened_by(&by),
            owner,
            original: original.clone(),
            before,
            after,
            weakenings,
        });
    }
    out
}

/// The weakenings `file` would make if it loaded on top of `below`, for `check` of a file that
/// does not load (a loaded file's come from the merge itself).
pub(super) fn refusals(file: &ParsedFile, below: &Below<'_>) -> Vec<Refusal> {
    changes(file, below)
        .into_iter()
        .filter(|c| c.refused)
        .map(|c| Refusal {
            name: c.name,
            original: c.original,
            at: c.at,
            weakenings: c.weakenings,
            copy: false,
        })
        .collect()
}

impl Change {
    /// The review's lines: which hook of which file it changes, every key before and after, and
    /// what loading does about a weakening.
    pub fn review(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "hooks[{}] (line {}) changes the {} hook `{}` of {}:{}:",
            self.at.index,
            self.at.line,
            self.owner.layer,
            crate::terminal::escape(&self.name),
            crate::terminal::escape_path(&self.original.file),
            self.original.line
        )];
        let weaker = |key: &str| {
            self.weakenings
                .iter()
                .any(|w| w.key == key || (key == "tool" && w.key == "matcher"))
        };
        for ((key, before), (_, after)) in guard_keys(&self.before)
            .into_iter()
            .zip(guard_keys(&self.after))
        {
            let (before, after) = (
                crate::terminal::escape(&before).into_owned(),
                crate::terminal::escape(&after).into_owned(),
            );
            lines.push(if before == after {
                format!("  {key}: {before} (unchanged)")
            } else if weaker(key) {
                format!("  {key}: {before} -> {after} (weaker)")
            } else {
                format!("  {key}: {before} -> {after} (as strong or stronger)")
            });
        }
        if self.refused {
            lines.push(format!(
                "  REFUSED: a {} file cannot weaken a {} hook; loading ignores this entry, the \
                 hook keeps guarding as written there, and `ka-hooks check` reports it",
                self.at.layer, self.owner.layer
            ));
        } else if !self.weakenings.is_empty() {
            lines.push(format!(
                "  this weakens the {} hook: allowed, since this {} file is yours",
                self.owner.layer, self.at.layer
            ));
        }
        lines
    }
}

/// The `[hook_settings]` of a project or local file that apply to the hooks it may weaken only
/// (see [`super::settings::SCOPED_KEYS`]).
pub(super) struct Scoped {
    pub owner: Owner,
    pub file: std::sync::Arc<std::path::Path>,
    pub disable_all: bool,
    pub timeout: Option<std::time::Duration>,
}

pub(super) fn scoped_settings(files: &[ParsedFile]) -> Vec<Scoped> {
    files
        .iter()
        .filter(|f| f.layer.is_gated())
        .filter_map(|f| {
            let table = f.settings.as_ref()?;
            let disable_all = table.get("disable_all").and_then(toml::Value::as_bool) == Some(true);
            // Parsing validated it; an invalid one is already that file's error.
            // `KA_HOOKS_TIMEOUT` overrides every file's default, as it does when layered.
            let timeout = table
                .get("timeout")
                .and_then(|t| seconds(t).ok())
                .filter(|_| std::env::var_os("KA_HOOKS_TIMEOUT").is_none());
            (disable_all || timeout.is_some()).then(|| Scoped {
                owner: Owner::new(f.layer, f.root.as_deref()),
                file: std::sync::Arc::clone(&f.path),
                disable_all,
                timeout,
            })
        })
        .collect()
}

/// A project or local file's `disable_all` turns off, and its `timeout` is the default of, the
/// hooks it may weaken: its own, and a local file's its project's (the last such file's
/// `timeout` wins, as layering would have it).
pub(super) fn apply_scoped(hook: &mut Hook, own_timeout: bool, scoped: &[Scoped]) {
    let owner = Owner::of(hook);
    if !owner.layer.is_gated() {
        return;
    }
    for s in scoped.iter().filter(|s| owner.may_be_weakened_by(&s.owner)) {
        if s.disable_all {
            hook.enabled = false;
        }
        if let (false, Some(t)) = (own_timeout, s.timeout) {
            hook.timeout = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_of_the_higher_trust_layer_weakens() {
        let managed = Owner::new(Layer::Managed, None);
        let user = Owner::new(Layer::User, None);
        let outer = Owner::new(Layer::Project, Some(Path::new("/r")));
        let outer_local = Owner::new(Layer::Local, Some(Path::new("/r")));
        let inner = Owner::new(Layer::Project, Some(Path::new("/r/sub")));
        let inner_local = Owner::new(Layer::Local, Some(Path::new("/r/sub")));
        for o in [&managed, &user, &outer, &outer_local, &inner] {
            assert!(o.may_be_weakened_by(o), "{o:?}");
        }
        for by in [&user, &outer, &outer_local, &inner] {
            assert!(!managed.may_be_weakened_by(by), "{by:?}");
        }
        for by in [&outer, &outer_local, &inner, &inner_local] {
            assert!(!user.may_be_weakened_by(by), "{by:?}");
        }
        assert!(outer.may_be_weakened_by(&user));
        assert!(outer.may_be_weakened_by(&outer_local));
        assert!(!outer.may_be_weakened_by(&inner));
        assert!(!outer.may_be_weakened_by(&inner_local));
        assert!(!outer_local.may_be_weakened_by(&inner));
        assert!(inner.may_be_weakened_by(&user));
    }
}
