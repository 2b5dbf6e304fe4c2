//! Loading the configuration: which layers exist, which may run, and the hooks they define.
//! One module per pass: discover the layers, read and judge each file (`read`, `gate`), parse,
//! merge monotonically across trust boundaries, and fail closed for stale or broken layers.
//! Failures stay in their layer. The passes: `docs/design.md`, "Loading".

mod broken;
pub(crate) mod call;
mod discover;
mod error;
mod filter;
mod gate;
pub(crate) mod hard_links;
mod hook;
mod merge;
mod monotone;
mod parse;
pub(crate) mod paths_filter;
mod pinned;
mod read;
pub(crate) mod rule;
pub(crate) mod script_names;
#[doc(hidden)] // the trust fingerprint's script list: public for the benches and property tests
pub mod scripts;
mod settings;
mod snapshot;
mod stale;
pub(crate) mod strength;
pub(crate) mod template;
mod told;
pub(crate) mod touched;
mod unparsed;
mod weakened;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use error::{ConfigError, ConfigErrors};
#[cfg(feature = "cli")]
pub(crate) use filter::regex as filter_regex;
#[cfg(feature = "cli")] // doctor's
pub(crate) use filter::MatcherKind;
pub(crate) use filter::{unknown_tool, FILE_READS};
pub use filter::{Matcher, ToolFilter, Tools};
#[cfg(feature = "cli")]
pub(crate) use gate::unknown_tools;
#[doc(hidden)] // the review's and the benches'
pub use gate::{review_files, ReviewBase, Reviewed};
pub use hook::{Deduplicated, Hook, Layer, OnError, Override, Source};
#[cfg(feature = "cli")]
pub(crate) use parse::single_bracket_table;
#[doc(hidden)] // the review's and the schema writer's
pub use parse::{describe_entries, HOOK_KEYS, SETTINGS_KEYS};
pub use read::MAX_CONFIG_BYTES;
pub use settings::{Settings, StalePolicy, DEFAULT_DENIAL_BACKSTOP};

use crate::event::Event;
use crate::paths::Paths;
use crate::trust::TrustStatus;

/// Default hook timeout when neither the hook nor `[hook_settings]` sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How a layer file fared in a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerState {
    /// Loaded (managed or user layer, or a trusted project file).
    Loaded,
    /// Loaded because `--trust` was given for this run only.
    TrustedOnce,
    /// Loaded because it lies under a user-configured trusted root.
    TrustedRoot,
    /// Skipped whole: never trusted.
    Untrusted,
    /// Edited (or a script it runs was) since it was trusted: its new content does not run, and
    /// the guards of the reviewed version fail closed.
    Stale,
    /// Deleted since it was trusted: the guards of the reviewed version fail closed.
    Removed,
    /// Skipped whole: not a regular file, too large, not UTF-8, or a link out of its project.
    Refused,
    /// Skipped whole: it has configuration errors (see `ka-hooks check`).
    Invalid,
}

/// One layer file that exists (or existed, when it was trusted).
#[derive(Debug, Clone, Serialize)]
pub struct LayerFile {
    /// Which layer.
    pub layer: Layer,
    /// Its file.
    pub file: PathBuf,
    /// The project root of a project or local layer.
    pub root: Option<PathBuf>,
    /// Whether and how it loaded.
    pub state: LayerState,
    /// SHA-256 of the content read (`None` when nothing could be read).
    pub sha256: Option<String>,
}

impl LayerFile {
    /// Whether its hooks are part of the configuration.
    pub fn loaded(&self) -> bool {
        matches!(
            self.state,
            LayerState::Loaded | LayerState::TrustedOnce | LayerState::TrustedRoot
        )
    }
}

/// A project or local layer that did not load as written, with the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Untrusted {
    /// Which layer (project or local).
    pub layer: Layer,
    /// Its file.
    pub file: PathBuf,
    /// What the trust store says of its content.
    pub status: TrustStatus,
    /// How it was handled.
    pub state: LayerState,
    /// What is wrong, when more than its status (the script that changed, why it was refused).
    pub why: Option<String>,
    /// Guards of its last trusted version that now block every call they match.
    pub guards: usize,
    /// The `ka-hooks` command line that reviews and trusts it. The text of this entry (and a
    /// stale guard's block reason) names only the action, for a host that does not ship the
    /// binary; the binary's own answers add this command ([`Untrusted::with_fix`]).
    pub fix: String,
}

impl Untrusted {
    /// The entry's text with the `ka-hooks` command that fixes it: for the binary's answers.
    pub fn with_fix(&self) -> String {
        let revoke = if self.state == LayerState::Removed {
            format!(" (or `{} --revoke`)", self.fix)
        } else {
            String::new()
        };
        format!("{self}; in your own terminal: `{}`{revoke}", self.fix)
    }
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = crate::terminal::escape_path(&self.file);
        let why = self
            .why
            .as_deref()
            .map(|w| format!(": {}", crate::terminal::escape(w)))
            .unwrap_or_default();
        match self.state {
            LayerState::Stale | LayerState::Removed => {
                write!(
                    f,
                    "the {} layer {file} was {} since it was trusted{why}; its new content does \
                     not run",
                    self.layer,
                    if self.state == LayerState::Removed {
                        "removed"
                    } else {
                        "changed"
                    },
                )?;
                if self.guards > 0 {
                    write!(
                        f,
                        ", and its {} guard(s) block every call they would have matched",
                        self.guards
                    )?;
                }
                f.write_str(if self.state == LayerState::Removed {
                    "; the user must restore it and trust it again, or revoke its trust"
                } else {
                    "; the user must review it and trust it again"
                })
            }
            LayerState::Refused | LayerState::Invalid => write!(
                f,
                "skipped the {} layer {file}{why}; its hooks did not run",
                self.layer
            ),
            _ => write!(
                f,
                "skipped the {} layer {file} ({}){why}: its hooks did not run until the user \
                 reviews and trusts it",
                self.layer, self.status
            ),
        }
    }
}

/// Where and how to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Where the user's config and data live.
    pub paths: Paths,
    /// Where to look for project roots (`--project DIR`, else the working directory).
    pub start_dir: PathBuf,
    /// `--trust`: load untrusted project layers for this run only.
    #[doc(hidden)] // the command line's `--trust`, the benches' and examples' shortcut; a host
    // trusts a project through `review`, after a person read it
    pub trust_once: bool,
}

impl Default for LoadOptions {
    /// [`LoadOptions::from_env`], from `/` when the working directory cannot be read (then no
    /// project layer is found; call `from_env` to get that error instead).
    fn default() -> LoadOptions {
        LoadOptions::from_env().unwrap_or_else(|_| LoadOptions::new(Paths::from_env(), "/"))
    }
}

impl LoadOptions {
    /// Options for the layers of `paths` and the projects around `start_dir` (the session's
    /// working directory): every project from `/` down to it that has a `.ka/`.
    ///
    /// ```
    /// use ka_hooks::{paths::Paths, LoadOptions};
    /// let options = LoadOptions::new(Paths::from_env(), "/work/repo");
    /// assert_eq!(options.start_dir, std::path::Path::new("/work/repo"));
    /// // Or with struct update syntax:
    /// let options = LoadOptions { start_dir: "/work/repo".into(), ..LoadOptions::default() };
    /// # let _ = options;
    /// ```
    pub fn new(paths: Paths, start_dir: impl Into<PathBuf>) -> LoadOptions {
        LoadOptions {
            paths,
            start_dir: start_dir.into(),
            trust_once: false,
        }
    }

    /// Options from the environment and the working directory.
    pub fn from_env() -> std::io::Result<LoadOptions> {
        Ok(LoadOptions {
            paths: Paths::from_env(),
            start_dir: std::env::current_dir()?,
            trust_once: false,
        })
    }
}

/// The loaded configuration: effective hooks in run order, and how they came to be.
///
/// Immutable once loaded and `Send + Sync`: load it once and share it as an `Arc<Config>`
/// between threads and sessions (cloning the `Arc` is the cheap way; `Clone` copies the hooks).
/// A [`crate::session::Session`] over it re-checks the loaded files before each dispatch and
/// reloads when one changed; [`Config::reload`] is the one call that loads again.
#[derive(Debug, Clone)]
pub struct Config {
    /// The innermost project root (a directory with `.ka/`, or one that had trusted files).
    pub project_root: Option<PathBuf>,
    /// Every project root, outermost first.
    pub roots: Vec<PathBuf>,
    /// Every effective hook in run order, disabled ones included (they never run).
    pub hooks: Vec<Hook>,
    /// Hooks replaced by a later identical one.
    pub deduplicated: Vec<Deduplicated>,
    /// The combined `[hook_settings]` of the layers.
    pub settings: Settings,
    /// Every layer file found, with its state.
    pub layers: Vec<LayerFile>,
    /// Project and local layers that did not load as written.
    pub untrusted: Vec<Untrusted>,
    /// What the load noticed and the user should know: an unreadable trust store, a tool name
    /// no agent has, an override of a managed hook that was ignored.
    pub warnings: Vec<String>,
    /// What weakened guards, which the user must hear: a managed or user file that does not
    /// load, a guard that an unreviewed edit removed or weakened, `stale = "skip"` keeping a
    /// changed project file's guards from failing closed. Every dispatch copies these into
    /// [`crate::Outcome::announcements`], and every adapter says them to the user.
    pub announcements: Vec<String>,
    /// Entries that would have weakened another layer's hook and were not applied (the merge is
    /// monotone: see `monotone`). Each is in `warnings` too; every dispatch tells the user.
    pub refused: Vec<String>,
    /// What `check` and `doctor` say for the record: tool names read in another agent's
    /// spelling (`Write` matches ka's `write`).
    pub notes: Vec<String>,
    /// The files and directories that hold ka's own configuration (see `crate::protect`),
    /// absolute and resolved at the first call that needs them ([`Config::protected`]).
    pub(crate) protected: std::sync::OnceLock<Vec<PathBuf>>,
    /// The files outside every project that the managed and user guards run (absolute words of
    /// their commands, as `crate::shell` reads them), resolved at the first call that needs them
    /// (see [`crate::protect`]).
    pub(crate) guard_scripts: std::sync::OnceLock<Vec<PathBuf>>,
    /// The scripts trust covers for the project layers that loaded as reviewed, with the hashes
    /// the review recorded ([`crate::session`] re-checks them before each dispatch).
    pub(crate) covered: Vec<Covered>,
    /// What this configuration was loaded with ([`Config::reload`]).
    pub(crate) options: LoadOptions,
    /// Snapshots of unreviewed layer files to replace at the first dispatch (see [`snapshot`]).
    pub(crate) pending: snapshot::Pending,
    /// The sessions told about [`Config::untrusted`] already (see `told`).
    pub(crate) told: told::Told,
    /// Indices into `hooks` of the enabled hooks of each event (by `Event::ALL` position).
    by_event: [Vec<usize>; Event::ALL.len()],
    /// The include globs of every hook's `paths`, in one set (see [`call::CallMatch`]).
    paths_index: Option<paths_filter::PathsIndex>,
    /// Whether any hook has `paths` (a call's paths are then prepared for matching).
    has_paths: bool,
}

/// One script a trust record covers: `rel` under the project `root`, with the hash recorded
/// when a person trusted the layer (`None`: it did not exist then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Covered {
    pub root: PathBuf,
    pub rel: String,
    pub sha256: Option<String>,
}

impl Covered {
    pub(crate) fn path(&self) -> PathBuf {
        self.root.join(&self.rel)
    }
}

/// What `check` found: every error of every layer (untrusted ones included: reading is safe),
/// and the configuration when there were none.
#[derive(Debug)]
pub struct CheckReport {
    /// Every error found.
    pub errors: Vec<ConfigError>,
    /// The configuration without the files in error, when the rest loads.
    pub config: Option<Config>,
}

/// Failure to load at all: a configuration error outside every layer (errors of a layer file
/// only skip that file; a bad `KA_HOOKS_*` value makes every guard block).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    /// One or more configuration files have errors.
    Config(#[from] ConfigErrors),
}

impl Config {
    /// Load all layers for a session. Project layers that did not load are in
    /// [`Config::untrusted`]; a managed or user file that does not load is in
    /// [`Config::announcements`], and the guards of its last good version fail closed. A
    /// `KA_HOOKS_*` value that does not parse is not used, and every guard blocks (announced).
    pub fn load(opts: &LoadOptions) -> Result<Config, LoadError> {
        let (config, errors) = gate::load(opts, false);
        match config {
            Some(config) if errors.is_empty() => Ok(config),
            _ => Err(ConfigErrors(errors).into()),
        }
    }

    /// Load again from the same [`LoadOptions`], as a new [`Config`]: the one call a host makes
    /// to pick up edits (a person trusted a changed project file, the user edited `ka.toml`).
    ///
    /// Policy: a reload is a fresh load, with every rule of [`Config::load`]: a project file
    /// that changed without review is stale (its new content never runs and its guards fail
    /// closed), a managed or user file that no longer loads is held by its last good version,
    /// and a guard an unreviewed edit weakened is announced. Dispatches in flight finish on the
    /// configuration they started with; share the result as a new `Arc<Config>`
    /// ([`crate::session::Session`] does this itself when a loaded file changes).
    pub fn reload(&self) -> Result<Config, LoadError> {
        Config::load(&self.options)
    }

    /// The options this configuration was loaded with.
    pub fn load_options(&self) -> &LoadOptions {
        &self.options
    }

    /// Validate every layer, trusted or not, and report all errors at once.
    pub fn check(opts: &LoadOptions) -> CheckReport {
        let (config, errors) = gate::load(opts, true);
        CheckReport {
            config: if errors.is_empty() { config } else { None },
            errors,
        }
    }

    /// The hooks that run for `event` (and `tool`, on tool events), in order, before `paths`
    /// and `if` (a dispatch checks those first; see `call::CallMatch`). Allocation-free.
    pub fn hooks_for<'a>(
        &'a self,
        event: Event,
        tool: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Hook> + 'a {
        self.enabled_hooks(event)
            .map(|(_, h)| h)
            .filter(move |h| h.matches_tool(tool))
    }

    /// The enabled hooks of `event` with their positions in [`Config::hooks`], in order.
    pub(crate) fn enabled_hooks(&self, event: Event) -> impl Iterator<Item = (usize, &Hook)> {
        self.by_event[event_slot(event)]
            .iter()
            .map(|&i| (i, &self.hooks[i]))
    }

    /// Whether any hook has a `paths` filter.
    pub(crate) fn has_paths_filters(&self) -> bool {
        self.has_paths
    }

    /// Whether any enabled hook exists for `event` at all.
    pub fn has_hooks(&self, event: Event) -> bool {
        !self.by_event[event_slot(event)].is_empty()
    }

    /// The hook named `name`.
    pub fn hook(&self, name: &str) -> Option<&Hook> {
        self.hooks.iter().find(|h| h.name == name)
    }

    /// The directory hooks run in: the project root, else `fallback` (the payload's `cwd`).
    pub fn run_dir<'a>(&'a self, fallback: &'a Path) -> &'a Path {
        self.project_root.as_deref().unwrap_or(fallback)
    }

    /// Index the enabled hooks by event. With every hook turned off, only managed hooks run.
    fn index(&mut self) {
        let mut by_event: [Vec<usize>; Event::ALL.len()] = Default::default();
        let off = self.settings.disabled.is_some();
        for (i, h) in self.hooks.iter().enumerate() {
            if h.enabled && (!off || h.is_managed()) {
                by_event[event_slot(h.event)].push(i);
            }
        }
        self.by_event = by_event;
        self.has_paths = self.hooks.iter().any(|h| h.paths.is_some());
        self.paths_index = paths_filter::PathsIndex::build(
            self.hooks
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.paths.as_deref().map(|p| (i, p))),
        );
    }
}

fn event_slot(event: Event) -> usize {
    event as usize
}

/// The `trust` command's fix for a project root.
#[doc(hidden)] // the command line's messages and its tests'
pub fn trust_command(root: &Path) -> String {
    format!("ka-hooks --project {} trust", shell_quote(root))
}

fn shell_quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
