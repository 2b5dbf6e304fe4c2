//! Which hooks of a config run for one call: tool filter, `paths` and `if`, checked in-process
//! before anything is spawned, with the call's paths prepared once for every hook (see
//! [`CallMatch`]).

use std::path::Path;

use globset::Candidate;
use serde_json::{Map, Value};

use super::paths_filter::{passes_hits, CallPaths};
use super::rule::ShellCache;
use super::{Config, Hook};

/// A call's paths, matched once against the include globs of every hook (the config's
/// [`super::paths_filter::PathsIndex`]); each hook then needs only its excludes (for the paths it
/// included) and its `if`; the caller checks the tool filter.
pub(crate) struct CallMatch<'c> {
    tool: Option<&'c str>,
    arguments: Option<&'c Map<String, Value>>,
    call: &'c CallPaths<'c>,
    root: &'c Path,
    candidates: Vec<Candidate<'c>>,
    /// `(hook, path)`: the hooks whose include globs a path of the call matches.
    hits: Vec<(usize, usize)>,
    /// Whether `hits` comes from an index (else each filter is asked on its own).
    indexed: bool,
    /// Guards whose `if` passed because it could not be checked statically, with why.
    unchecked: std::cell::RefCell<Vec<String>>,
    /// The call's command line, read once for every hook's `Bash(…)` rule.
    shell: ShellCache,
}

impl<'c> CallMatch<'c> {
    pub fn new(
        config: &'c Config,
        tool: Option<&'c str>,
        arguments: Option<&'c Map<String, Value>>,
        call: &'c CallPaths<'c>,
        root: &'c Path,
    ) -> CallMatch<'c> {
        let candidates = call.candidates();
        let hits = config
            .paths_index
            .as_ref()
            .map(|index| index.hits(&candidates))
            .unwrap_or_default();
        let indexed = config.paths_index.is_some();
        CallMatch {
            tool,
            arguments,
            call,
            root,
            candidates,
            hits,
            indexed,
            unchecked: std::cell::RefCell::default(),
            shell: ShellCache::default(),
        }
    }

    /// Why guards ran whose `if` could not be checked statically, for the outcome's
    /// diagnostics (each once).
    pub fn take_unchecked(&self) -> Vec<String> {
        let mut notes = self.unchecked.take();
        notes.dedup();
        notes
    }

    /// Whether the hook at `i` of [`Config::hooks`] passes this call's `paths` and `if` (its tool
    /// filter is the caller's to check).
    pub fn passes(&self, i: usize, hook: &Hook) -> bool {
        let hook_root = hook.root.as_deref().unwrap_or(self.root);
        let search = self.tool.filter(|t| super::filter::SEARCHES.contains(t));
        let paths_pass = match (&hook.paths, search) {
            (None, _) => true,
            // A search reads trees: not the index's question (see `PathFilter::reaches_search`).
            (Some(filter), Some(search)) => {
                filter.reaches_search(search, self.arguments, hook_root)
            }
            // The index matched the call's paths relative to the session's root: right for
            // every hook that runs there (all but a nested project layer's).
            (Some(filter), None)
                if self.indexed && hook_root.as_os_str() == self.root.as_os_str() =>
            {
                passes_hits(filter, i, &self.hits, &self.candidates)
                    || self.call.linked && filter.matches(&self.call.written, hook_root)
            }
            // A nested layer's root (or no index): this filter alone.
            (Some(filter), None) => filter.matches(&self.call.written, hook_root),
        };
        if !paths_pass {
            return false;
        }
        let (pass, unchecked) = hook.rule_passes(self.tool, self.arguments, hook_root, &self.shell);
        if let Some(note) = unchecked.filter(|_| hook.matches_tool(self.tool)) {
            self.unchecked.borrow_mut().push(note);
        }
        pass
    }
}
