//! One effective hook and where it came from: layers, sources, `on_error`.
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::filter::ToolFilter;
use super::paths_filter::{touched, PathFilter};
use super::rule::{Rule, RuleMatch, ShellCache};
use super::template::Template;
use crate::event::Event;
use serde_json::{Map, Value};

/// A configuration layer. Declaration order is precedence: later layers win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// `/etc/ka/ka.toml` (`$KA_MANAGED_DIR`): the organisation's; cannot be disabled from above.
    Managed,
    /// `$KA_CONFIG_DIR/ka.toml` (`~/.config/ka/ka.toml`): personal, always trusted.
    User,
    /// `<root>/.ka/ka.toml`: travels with the repository; trust-gated.
    Project,
    /// `<root>/.ka/ka.local.toml`: personal per project, git-ignored; trust-gated.
    Local,
}

impl Layer {
    /// The layer's name as users write it (`managed`, `user`, `project`, `local`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Layer::Managed => "managed",
            Layer::User => "user",
            Layer::Project => "project",
            Layer::Local => "local",
        }
    }

    /// Whether the layer can only load once trusted.
    pub const fn is_gated(self) -> bool {
        !matches!(self, Layer::Managed | Layer::User)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a hook entry (or one of its overrides) was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Which layer it came from.
    pub layer: Layer,
    /// The layer file, shared by every entry of it (one allocation per file, not per hook).
    pub file: Arc<Path>,
    /// 0-based index of the entry in the file's `[[hooks]]` array.
    pub index: usize,
    /// 1-based line of the entry.
    pub line: usize,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}:{} hooks[{}]",
            self.layer,
            self.file.display(),
            self.line,
            self.index
        )
    }
}

/// What a failing hook (crash, timeout, exit other than 0 and 2) means. Without `on_error`, a
/// hook on an event that can veto fails closed and every other hook fails open
/// ([`OnError::default_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail open: recorded, the event proceeds.
    Ignore,
    /// Fail closed: treated as a block whose reason names the hook and the failure.
    Block,
    /// The call needs a human: decision `ask`.
    Ask,
}

impl OnError {
    /// What a hook without `on_error` does when it fails: `block` on an event that can veto
    /// (a guard that crashed has not said yes), `ignore` on every other (an observer that
    /// crashed has nothing to stop).
    pub const fn default_for(event: Event) -> OnError {
        if event.is_pipeline() {
            OnError::Block
        } else {
            OnError::Ignore
        }
    }

    /// The value as written in `ka.toml`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OnError::Ignore => "ignore",
            OnError::Block => "block",
            OnError::Ask => "ask",
        }
    }
}

/// One effective hook, after merging all layers.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The entry's `name`, or `<event>#<n>` (n counts that event's hooks, from 1).
    pub name: String,
    /// Whether the name was written in a file (only written names merge across entries).
    pub named: bool,
    /// The event it runs on.
    pub event: Event,
    /// Its `tool` / `matcher` filter.
    pub filter: ToolFilter,
    /// The shell command, as written.
    pub command: String,
    /// How long it may run before it is killed.
    pub timeout: Duration,
    /// What a failure of the hook means.
    pub on_error: OnError,
    /// `false` when `enabled = false`: it does not run.
    pub enabled: bool,
    /// Extra environment, sorted by name.
    pub env: Vec<(String, String)>,
    /// Where the hook was first defined.
    pub source: Source,
    /// Later entries merged over it by name, in order, with the keys each one set.
    pub overrides: Vec<Override>,
    /// The project root of the hook's layer, where it runs (`None`: managed and user hooks,
    /// which run in the session's project root).
    pub root: Option<PathBuf>,
    /// `paths`: the files a call must touch (tool events). Boxed, as `rule`: both are large and
    /// rare, and a hook without them should not carry their space (10 000 hooks load in one go).
    pub paths: Option<Box<PathFilter>>,
    /// `if`: a Claude Code permission rule the call must match (tool events).
    pub rule: Option<Box<Rule>>,
    /// The command's placeholders (`{paths}`, ...), when it has any.
    pub template: Option<Template>,
    /// `async = true`: the dispatch does not wait for it (events that cannot be vetoed).
    pub is_async: bool,
    /// `enforce = false`: report what it would have done, apply nothing.
    pub enforce: bool,
    /// Shown by the host while the hook runs.
    pub status_message: Option<String>,
    /// Set on a guard of a trusted layer that changed or vanished: the hook is not run, and
    /// every call it would have matched is blocked with this reason (see `super::stale`).
    pub stale: Option<String>,
    /// What its runs may write and reach (see `docs/sandbox.md`).
    pub sandbox: crate::sandbox::Plan,
    /// The command as it runs, when a trusted layer's hook executes covered scripts: each run
    /// from its reviewed copy in the data dir (see `super::pinned`). `command` stays as written.
    pub pinned: Option<Box<super::pinned::Pinned>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
/// An entry of a later layer merged over an earlier hook of the same name.
pub struct Override {
    /// The layer file of the overriding entry.
    pub source: Source,
    /// The keys it set.
    pub keys: Vec<String>,
}

impl Hook {
    /// Whether the hook runs for a call of `tool` (tool events) or at all (other events). In a
    /// guard, `write`/`edit` stand for every tool that writes files and `read` for every tool
    /// that reads them (see `super::filter`).
    pub fn matches_tool(&self, tool: Option<&str>) -> bool {
        !self.event.is_tool_event()
            || self.filter.matches(tool)
            || (self.is_guard() && self.filter.covers_family_of(tool))
    }

    /// A hook of an event that can veto a tool call (`pre_tool_use`, `permission_request`).
    pub fn is_guard(&self) -> bool {
        self.event.is_tool_event() && self.event.is_pipeline()
    }

    /// Whether the hook runs for this call: its tool filter, `paths` and `if`, checked
    /// in-process (a hook that does not match is never spawned). `root` is the project root.
    pub(crate) fn matches_call(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &std::path::Path,
    ) -> bool {
        if !self.matches_tool(tool) {
            return false;
        }
        let root = self.root.as_deref().unwrap_or(root);
        let search = tool.filter(|t| super::filter::SEARCHES.contains(t));
        self.paths.as_ref().is_none_or(|p| match search {
            Some(search) => p.reaches_search(search, arguments, root),
            None => p.matches(&touched(arguments), root),
        }) && self
            .rule_passes(tool, arguments, root, &ShellCache::default())
            .0
    }

    /// Whether the call passes the hook's `if`. A rule that cannot be checked statically (the
    /// program is `$cmd`, a quote never closes; see `Rule::check`) passes for a
    /// guard, a hook that can veto the call, so that it runs and judges the call itself (fail
    /// closed), and not for any other hook; the second value says why it passed unchecked.
    pub(crate) fn rule_passes(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &std::path::Path,
        shell: &ShellCache,
    ) -> (bool, Option<String>) {
        let Some(rule) = &self.rule else {
            return (true, None);
        };
        match rule.check_with(tool, arguments, root, shell) {
            RuleMatch::Yes => (true, None),
            RuleMatch::No => (false, None),
            RuleMatch::Unknown(why) if self.event.is_pipeline() => (
                true,
                Some(format!(
                    "hook `{}`: `if = {:?}` could not be checked without running the shell \
                     ({}); the guard runs (fail closed)",
                    crate::terminal::escape(&self.name),
                    crate::terminal::escape(&rule.source),
                    crate::terminal::escape(&why)
                )),
            ),
            RuleMatch::Unknown(_) => (false, None),
        }
    }

    /// The command to run for this call: placeholders replaced by shell-quoted values, covered
    /// scripts run from their reviewed copies.
    pub(crate) fn command_for(
        &self,
        tool: Option<&str>,
        arguments: Option<&Map<String, Value>>,
        root: &std::path::Path,
    ) -> std::borrow::Cow<'_, str> {
        let (command, template) = match &self.pinned {
            Some(pinned) => (&pinned.command, pinned.template.as_ref()),
            None => (&self.command, self.template.as_ref()),
        };
        match template {
            None => std::borrow::Cow::Borrowed(command),
            Some(t) => {
                let paths = self.paths_for(arguments, root);
                let root = self.root.as_deref().unwrap_or(root);
                std::borrow::Cow::Owned(t.render(&paths, tool, &root.to_string_lossy()))
            }
        }
    }

    /// The paths of this call the hook is for: those its `paths` filter passes (all the call
    /// touches when it has none), as the call wrote them. `{path}`/`{paths}` stand for these,
    /// and an async run is superseded by a newer one for the same list.
    pub(crate) fn paths_for<'a>(
        &self,
        arguments: Option<&'a Map<String, Value>>,
        root: &std::path::Path,
    ) -> Vec<&'a str> {
        let all = touched(arguments);
        match &self.paths {
            None => all,
            Some(filter) => filter.select(&all, self.root.as_deref().unwrap_or(root)),
        }
    }

    /// Why this call cannot run the hook: its command names one path (`{path}`) and the call
    /// touches several (a guard's `write`/`edit` also sees a patch). A guard blocks on it rather
    /// than judge one file of several.
    pub(crate) fn cannot_render(
        &self,
        arguments: Option<&Map<String, Value>>,
        root: &std::path::Path,
    ) -> Option<String> {
        let template = self.template.as_ref()?;
        let own = super::touched::own(arguments);
        let n = template.uses_single_path().then(|| match &self.paths {
            None => own.len(),
            Some(filter) => filter
                .select(&own, self.root.as_deref().unwrap_or(root))
                .len(),
        })?;
        (n > 1).then(|| {
            format!(
                "hook `{}` names one path (`{{path}}`) but this call touches {n} files, so it \
                 cannot judge them; write `{{paths}}` in its command",
                crate::terminal::escape(&self.name)
            )
        })
    }

    /// Whether the hook comes from the managed layer (it cannot be disabled from above).
    pub fn is_managed(&self) -> bool {
        self.source.layer == Layer::Managed
    }
}

/// A hook that does not run because a later identical one replaces it.
#[derive(Debug, Clone, Serialize)]
pub struct Deduplicated {
    /// The hook's name.
    pub name: String,
    /// Where it is defined.
    pub source: Source,
    /// Name of the hook that runs instead.
    pub kept: String,
}
