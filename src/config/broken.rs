//! A managed or user file that does not load fails closed in its own scope.
//!
//! One bad byte in the user file (`printf '[[hooks\n' >> ~/.config/ka/ka.toml`, which the model
//! can run with its shell tool), an unknown key, a directory in its place, or bytes that are not
//! UTF-8 used to fail the whole load, and the adapters then failed open: no guard ran, the
//! managed and project guards included. Now such a file is reported (file, line, what to fix)
//! and skipped, the other layers load and run, and the file's *last good version* (the snapshot
//! of [`super::snapshot`]) stands in for it the way the reviewed copy of a changed project file
//! does ([`super::stale`]): it is loaded and merged like the file itself, so its gate settings
//! (`trusted_roots`) and the overrides other layers write over its hooks still hold, and then
//! each of its guards (an enabled, enforcing hook on an event that can be vetoed) becomes a hook
//! that is never spawned and blocks every call it would have matched, with a reason that names
//! the broken file, the first error's line and the fix. Its other hooks do not run. With no last
//! good version (the file never loaded on this machine, or no data dir), the answer says so.
//!
//! `ka-hooks check` still reports the file's errors and exits 1.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::ConfigError;
use super::filter::ToolFilter;
use super::hook::{Hook, Layer, OnError, Source};
use super::DEFAULT_TIMEOUT;
use crate::event::Event;

/// A managed or user file that did not load.
#[derive(Debug, Clone)]
pub(super) struct Ghost {
    pub layer: Layer,
    pub file: PathBuf,
    /// The first error, as `line N: what; fix`.
    pub first: String,
    pub errors: usize,
    /// Whether its last good version stands in for it.
    pub kept: bool,
    /// Why no last good version stands in, when none does.
    pub why_not: Option<&'static str>,
    /// Its last good version is kept but cannot be read now (out of file descriptors, an I/O
    /// error): what happened. Its guards are unknown, so every call a guard could veto blocks.
    pub unreadable: Option<String>,
}

impl Ghost {
    pub fn new(layer: Layer, file: &Path, errors: &[ConfigError]) -> Ghost {
        Ghost {
            layer,
            file: file.to_path_buf(),
            first: errors.first().map(describe).unwrap_or_default(),
            errors: errors.len(),
            kept: false,
            why_not: None,
            unreadable: None,
        }
    }

    fn owns(&self, hook: &Hook) -> bool {
        self.kept && hook.source.layer == self.layer && *hook.source.file == *self.file
    }

    fn reason(&self, hook: &str) -> String {
        format!(
            "blocked by the guard `{}` of the {} file {}, which does not load ({}); until it is \
             fixed, the guards of its last good version block every call they would have \
             matched. Fix the file in your own terminal; `ka-hooks check` lists every error",
            crate::terminal::escape(hook),
            self.layer,
            crate::terminal::escape_path(&self.file),
            crate::terminal::escape(&self.first),
        )
    }

    /// Why every call a guard could veto is blocked, when neither the file nor its last good
    /// version can be read.
    fn unknown_reason(&self, why: &str) -> String {
        format!(
            "blocked: the {} file {} does not load ({}), and its last good version {}; which \
             guards it holds cannot be known, so every call a guard could veto is blocked until \
             ka-hooks can read them",
            self.layer,
            crate::terminal::escape_path(&self.file),
            crate::terminal::escape(&self.first),
            crate::terminal::escape(why),
        )
    }

    /// What the user must hear on every dispatch while the file is broken.
    fn announcement(&self, guards: usize) -> String {
        if let Some(why) = &self.unreadable {
            return self.unknown_reason(why);
        }
        let head = format!(
            "the {} file {} does not load ({} error(s), the first: {}); the other layers run",
            self.layer,
            crate::terminal::escape_path(&self.file),
            self.errors,
            crate::terminal::escape(&self.first),
        );
        if self.kept {
            format!(
                "{head}, none of this file's hooks run as written, and the {guards} guard(s) of \
                 its last good version block every call they would have matched until it is \
                 fixed; `ka-hooks check` lists every error"
            )
        } else {
            format!(
                "{head}, but none of this file's hooks run and none of its guards hold: {}. Fix \
                 it now; `ka-hooks check` lists every error",
                self.why_not
                    .unwrap_or("no last good version of it is kept on this machine")
            )
        }
    }
}

/// `line N: what was wrong; how to fix it`, on one line.
fn describe(e: &ConfigError) -> String {
    let mut out = String::new();
    if let Some(line) = e.line {
        out.push_str(&format!("line {line}"));
        if let Some(col) = e.column {
            out.push_str(&format!(", column {col}"));
        }
        out.push_str(": ");
    }
    if let Some(key) = &e.key {
        out.push_str(&format!("`{key}`: "));
    }
    out.push_str(e.message.trim());
    if let Some(help) = &e.help {
        out.push_str("; ");
        out.push_str(help.trim());
    }
    out.replace('\n', " ")
}

/// A hook that guards: it can veto its event, and is enabled and enforcing (the same events as
/// the fail-closed guards of [`super::stale`]).
pub(super) fn is_guard(hook: &Hook) -> bool {
    hook.enabled && hook.enforce && hook.event.is_pipeline() && hook.stale.is_none()
}

/// Turn the merged hooks of every broken file's last good version into fail-closed guards (its
/// other hooks are dropped), first in run order; returns what the user must hear.
pub(super) fn hold(hooks: &mut Vec<Hook>, ghosts: &[Ghost]) -> Vec<String> {
    if ghosts.is_empty() {
        return Vec::new();
    }
    let mut counts = vec![0usize; ghosts.len()];
    let mut held = Vec::new();
    let mut rest = Vec::with_capacity(hooks.len());
    for hook in hooks.drain(..) {
        let Some(g) = ghosts.iter().position(|g| g.owns(&hook)) else {
            rest.push(hook);
            continue;
        };
        if is_guard(&hook) {
            counts[g] += 1;
            held.push(fail_closed(hook, &ghosts[g]));
        }
    }
    for ghost in ghosts {
        if let Some(why) = &ghost.unreadable {
            held.extend(unknown_guards(ghost, &ghost.unknown_reason(why)));
        }
    }
    held.append(&mut rest);
    *hooks = held;
    ghosts
        .iter()
        .zip(counts)
        .map(|(g, n)| g.announcement(n))
        .collect()
}

fn fail_closed(hook: Hook, ghost: &Ghost) -> Hook {
    let reason = ghost.reason(&hook.name);
    close(hook, reason)
}

/// For a file whose guards cannot be known: one hook per event that can veto, matching every
/// call, never spawned, blocking with `reason`.
fn unknown_guards<'g>(ghost: &'g Ghost, reason: &'g str) -> impl Iterator<Item = Hook> + 'g {
    Event::ALL
        .into_iter()
        .filter(|e| e.is_pipeline())
        .map(move |event| Hook {
            name: format!("{}-file-unreadable", ghost.layer),
            named: true,
            event,
            filter: ToolFilter::All,
            command: String::new(),
            timeout: DEFAULT_TIMEOUT,
            on_error: OnError::Block,
            enabled: true,
            env: Vec::new(),
            source: Source {
                layer: ghost.layer,
                file: Arc::from(ghost.file.as_path()),
                index: 0,
                line: 0,
            },
            overrides: Vec::new(),
            root: None,
            paths: None,
            rule: None,
            template: None,
            is_async: false,
            enforce: true,
            status_message: None,
            stale: Some(reason.to_owned()),
            sandbox: crate::sandbox::Plan::Unconfined,
            pinned: None,
        })
}

/// `hook`, never spawned, blocking every call it would have matched with `reason`.
pub(super) fn close(mut hook: Hook, reason: String) -> Hook {
    hook.stale = Some(reason);
    hook.command = String::new();
    hook.template = None;
    hook.env = Vec::new();
    hook.on_error = OnError::Block;
    hook.is_async = false;
    hook
}
