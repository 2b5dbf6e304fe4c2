//! The guards of a trusted layer that changed or vanished fail closed.
//!
//! When a trusted project or local file is edited (by a person, a `git pull`, or the model with
//! its own write tool) or removed, its new content never runs. Skipping the file whole, as an
//! untrusted one is, would let one appended comment switch every guard in it off. Instead, each
//! hook of the version the user reviewed (kept by `trust` in the data dir) on an event that can
//! be vetoed becomes a hook that is never spawned and blocks every call it would have matched,
//! with a reason that names the file, what happened, and what a person must do (review it).
//! The user's own file can choose `stale = "skip"` instead; a project file cannot.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::filter::ToolFilter;
use super::hook::{Hook, Layer, OnError, Source};
use super::parse::ParsedFile;
use super::DEFAULT_TIMEOUT;
use crate::event::Event;

/// What happened to the layer file, for the reason.
pub(super) struct Change<'a> {
    pub layer: Layer,
    pub file: &'a Path,
    pub root: &'a Path,
    pub removed: bool,
    /// What changed (`the file`, `.ka/hooks/guard.sh (changed)`).
    pub what: String,
}

impl Change<'_> {
    /// Why the guard `hook` blocks. It names the action a person takes, not a command: a host
    /// that embeds the library may not ship the `ka-hooks` binary (the binary's own answers add
    /// its command: see [`super::Untrusted::fix`]).
    fn reason(&self, hook: &str) -> String {
        let action = if self.removed {
            "the user must restore the file and trust the project's hooks again, or revoke \
             their trust"
        } else {
            "the user must review the project's hooks and trust them again"
        };
        format!(
            "blocked by the guard `{hook}` of {}, which {} since it was trusted ({}); until a \
             person reviews it, its guards fail closed: {action}, themselves, not through the \
             agent",
            crate::terminal::escape_path(self.file),
            if self.removed {
                "was removed"
            } else {
                "changed"
            },
            self.what,
        )
    }
}

/// The fail-closed hooks of a changed or removed layer: one per hook of the reviewed version on
/// a vetoable event; with no reviewed copy, one per vetoable event that matches every call.
pub(super) fn tombstones(reviewed: Option<ParsedFile>, change: &Change<'_>) -> Vec<Hook> {
    let source = |index, line| Source {
        layer: change.layer,
        file: Arc::from(change.file),
        index,
        line,
    };
    let root = Some(change.root.to_path_buf());
    let Some(file) = reviewed else {
        return [Event::PreToolUse, Event::UserPromptSubmit]
            .into_iter()
            .map(|event| {
                let name = format!("{} layer (reviewed copy missing)", change.layer);
                tombstone(
                    name,
                    false,
                    event,
                    ToolFilter::All,
                    source(0, 1),
                    &root,
                    change,
                )
            })
            .collect();
    };
    file.hooks
        .into_iter()
        .filter_map(|(source, raw)| {
            let event = raw.event.as_ref()?.value;
            let command = raw.command.as_ref()?;
            if !event.is_pipeline() || raw.enabled.as_ref().is_some_and(|e| !e.value) {
                return None;
            }
            let filter = raw
                .tool
                .clone()
                .or(raw.matcher.clone())
                .map_or(ToolFilter::All, |f| f.value);
            let narrowing = (raw.paths.map(|p| p.value), raw.rule.map(|r| r.value));
            let (name, named) = match raw.name {
                Some(n) => (n.value, true),
                None => (
                    format!("{event}#{} ({})", source.index + 1, command.value),
                    false,
                ),
            };
            let mut hook = tombstone(name, named, event, filter, source, &root, change);
            (hook.paths, hook.rule) = narrowing;
            Some(hook)
        })
        .collect()
}

fn tombstone(
    name: String,
    named: bool,
    event: Event,
    filter: ToolFilter,
    source: Source,
    root: &Option<PathBuf>,
    change: &Change<'_>,
) -> Hook {
    Hook {
        stale: Some(change.reason(&name)),
        command: String::new(),
        name,
        named,
        event,
        filter,
        timeout: DEFAULT_TIMEOUT,
        on_error: OnError::Block,
        enabled: true,
        env: Vec::new(),
        source,
        overrides: Vec::new(),
        root: root.clone(),
        paths: None,
        rule: None,
        template: None,
        is_async: false,
        enforce: true,
        status_message: None,
        sandbox: crate::sandbox::Plan::Unconfined,
        pinned: None,
    }
}
