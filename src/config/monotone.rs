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

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::hook::{Hook, Layer, Source};
use super::strength::Weakening;

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
