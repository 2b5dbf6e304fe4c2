//! `[hook_settings]` of every layer, layered by figment with `KA_HOOKS_*` overrides; the
//! settings of the gate itself, read from the managed and user files only.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use figment::value::magic::RelativePathBuf;
use figment::{Figment, Metadata, Profile, Provider};
use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::hook::Layer;
use super::parse::{seconds, ParsedFile, GATE_KEYS, USER_ONLY_KEYS};
use crate::paths::{self, Paths};

/// `denial_backstop` when no user or managed file sets it (see [the denial backstop](crate#the-denial-backstop)).
pub const DEFAULT_DENIAL_BACKSTOP: u32 = 3;

/// `[hook_settings]` keys that, in a project or local file, apply to the hooks that file may
/// weaken only (see [`super::monotone`]), never to the user's, managed or an outer project's.
pub(super) const SCOPED_KEYS: [&str; 2] = ["disable_all", "timeout"];

/// Why every hook is off when `KA_HOOKS_DISABLE` is set.
const DISABLED_BY_ENV: &str = "KA_HOOKS_DISABLE is set";

/// What the guards of a trusted project file that changed or vanished do (`stale` in the user
/// file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StalePolicy {
    /// They block every call they would have matched (the default).
    #[default]
    Block,
    /// They are skipped, like every other hook of the file.
    Skip,
}
#[derive(Debug, Clone, Serialize)]
/// The combined `[hook_settings]` of the loaded layers.
pub struct Settings {
    /// Default timeout of hooks that set none.
    pub timeout: Option<Duration>,
    /// Why every hook is off, when something turned them all off.
    pub disabled: Option<String>,
    /// Path of the JSONL audit log.
    pub log: Option<PathBuf>,
    /// User-layer only: directories whose projects are trusted without review.
    pub trusted_roots: Vec<PathBuf>,
    /// Where each set key came from (`timeout` → `project /repo/.ka/ka.toml`).
    pub provenance: BTreeMap<String, String>,
    /// User or managed only: what the guards of a changed or removed project file do.
    pub stale: StalePolicy,
    /// User or managed only: turn a tool call aimed at ka's own files into `ask`
    /// (`crate::protect`); on unless set to `false`.
    pub protect_ka_files: bool,
    /// Managed only: run managed hooks and no others.
    pub managed_only: bool,
    /// How many times stop hooks may keep one turn going (counted per turn by the library: **Sessions** on the
    /// [front page](crate)).
    pub max_continuations: u32,
    /// User or managed only: denials by one guard in a turn after which every call it matches
    /// asks a human (see [the denial backstop](crate#the-denial-backstop)); 0 is off.
    pub denial_backstop: u32,
    /// User or managed only: `sandbox_project_hooks` and `require_sandbox` (see
    /// `docs/sandbox.md`).
    #[doc(hidden)] // the runner's: its type is the sandbox module's, private to the crate
    pub sandbox: crate::sandbox::Policy,
}

/// `max_continuations` when no layer sets it: Claude Code's cap of consecutive Stop-hook blocks.
pub const DEFAULT_MAX_CONTINUATIONS: u32 = 8;

/// Figment provider for one layer's `[hook_settings]`, named after its file so provenance reads
/// `project /repo/.ka/ka.toml`, and built from the bytes already read (no second read).
struct SettingsLayer {
    layer: Layer,
    path: PathBuf,
    table: toml::Table,
}

impl Provider for SettingsLayer {
    fn metadata(&self) -> Metadata {
        Metadata::named(format!("{} {}", self.layer, self.path.display()))
            .source(figment::Source::File(self.path.clone()))
    }

    fn data(&self) -> Result<figment::value::Map<Profile, figment::value::Dict>, figment::Error> {
        figment::providers::Serialized::defaults(&self.table).data()
    }
}

#[derive(Deserialize)]
struct ExtractedSettings {
    timeout: Option<f64>,
    #[serde(default)]
    disable_all: bool,
    log: Option<RelativePathBuf>,
    max_continuations: Option<u32>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            timeout: None,
            disabled: None,
            log: None,
            trusted_roots: Vec::new(),
            provenance: BTreeMap::new(),
            stale: StalePolicy::Block,
            protect_ka_files: true,
            managed_only: false,
            max_continuations: DEFAULT_MAX_CONTINUATIONS,
            denial_backstop: DEFAULT_DENIAL_BACKSTOP,
            sandbox: crate::sandbox::Policy::default(),
        }
    }
}

/// Layer `timeout`, `log` and `disable_all` of every loaded file with figment; the gate's own
/// settings come from [`Gate`], never from a project file, and a project or local file's
/// `timeout` and `disable_all` apply to its own project's hooks only ([`SCOPED_KEYS`]).
pub(super) fn layer_settings(
    files: &[ParsedFile],
    paths: &Paths,
    gate: &Gate,
    errors: &mut Vec<ConfigError>,
) -> Settings {
    let mut settings = layer_shared(files, paths, errors);
    settings.trusted_roots.clone_from(&gate.trusted_roots);
    settings.stale = gate.stale;
    settings.protect_ka_files = gate.protect_ka_files;
    settings.managed_only = gate.managed_only;
    settings.denial_backstop = gate.denial_backstop;
    settings.sandbox = gate.sandbox.clone();
    settings
}

fn layer_shared(files: &[ParsedFile], paths: &Paths, errors: &mut Vec<ConfigError>) -> Settings {
    // Nothing to layer: skip figment (and its scan of the environment). Every `ka-hooks run`
    // pays for this load, and most configurations have no `[hook_settings]` at all.
    if files.iter().all(|f| f.settings.is_none()) && !paths::settings_env_is_set() {
        return Settings {
            disabled: paths.disabled_by_env.then(|| DISABLED_BY_ENV.to_owned()),
            ..Settings::default()
        };
    }
    let mut figment = Figment::new();
    let mut disabled_by = None;
    for file in files {
        if let Some(table) = &file.settings {
            // A project or local file's `disable_all` and `timeout` are scoped to the hooks it
            // may weaken (its own project's), by the merge: the merge is monotone.
            let scoped = file.layer.is_gated();
            if !scoped && table.get("disable_all").and_then(toml::Value::as_bool) == Some(true) {
                disabled_by = Some(format!(
                    "`disable_all = true` in the {} layer {}",
                    file.layer,
                    file.path.display()
                ));
            }
            // The gate's settings are read by `Gate` from the user and managed files only.
            let mut table = table.clone();
            for key in GATE_KEYS.iter().chain(["allow_managed_hooks_only"].iter()) {
                table.remove(*key);
            }
            if scoped {
                // `log` and `max_continuations` are the user's (a project file that sets them
                // does not load; see `parse::USER_ONLY_KEYS`).
                for key in SCOPED_KEYS.iter().chain(USER_ONLY_KEYS) {
                    table.remove(*key);
                }
            }
            figment = figment.merge(SettingsLayer {
                layer: file.layer,
                path: file.path.to_path_buf(),
                table,
            });
        }
    }
    let files_only = figment.clone();
    let figment = figment.merge(paths::settings_env());
    let mut settings = Settings::default();
    let extracted = match figment.extract::<ExtractedSettings>() {
        Ok(x) => Some(x),
        Err(e) => {
            errors.extend(e.into_iter().map(|e| figment_error(&e)));
            // The files' own values still hold: a bad variable switches nothing off.
            files_only.extract::<ExtractedSettings>().ok()
        }
    };
    if let Some(x) = extracted {
        if let Some(secs) = x.timeout {
            match seconds(&toml::Value::Float(secs)) {
                Ok(d) => settings.timeout = Some(d),
                Err(msg) => errors.push(env_error("timeout", msg)),
            }
        }
        settings.log = x.log.map(|p| p.relative());
        if let Some(max) = x.max_continuations {
            settings.max_continuations = max;
        }
        if x.disable_all {
            settings.disabled = disabled_by;
        }
    }
    if paths.disabled_by_env {
        settings.disabled = Some(DISABLED_BY_ENV.into());
    }
    for key in ["timeout", "log", "disable_all", "max_continuations"] {
        if let Some(meta) = figment.find_metadata(key) {
            settings
                .provenance
                .insert(key.to_owned(), meta.name.to_string());
        }
    }
    settings
}

/// A figment error: one of a file names it, one of the environment names the variable and its
/// value.
fn figment_error(e: &figment::Error) -> ConfigError {
    // `RelativePathBuf` adds a segment of its own (`___figment_relative_path`).
    let path: Vec<&str> = e
        .path
        .iter()
        .map(String::as_str)
        .filter(|s| !s.starts_with("___figment"))
        .collect();
    let key = path.join(".");
    match e.metadata.as_ref().and_then(|m| m.source.as_ref()) {
        Some(source) => ConfigError::unpositioned(
            PathBuf::from(source.to_string()),
            Some(format!("hook_settings.{key}")),
            e.kind.to_string(),
            Some("fix the value"),
        ),
        None => env_error(&path.join("_"), e.kind.to_string()),
    }
}

/// An error of the `KA_HOOKS_*` variable that overrides `key`, naming it and its value.
fn env_error(key: &str, why: String) -> ConfigError {
    let var = format!("KA_HOOKS_{}", key.to_uppercase());
    let value = paths::settings_env_value(&var).unwrap_or_default();
    let help = match key {
        "timeout" => format!(
            "set {var} to a number of seconds greater than 0 (such as `10`; no unit), or unset it"
        ),
        _ => format!("set {var} to a path (such as `/tmp/ka-audit.jsonl`), or unset it"),
    };
    ConfigError {
        help: Some(help),
        ..ConfigError::unpositioned(
            var.clone(),
            Some(format!("hook_settings.{key}")),
            format!(
                "the environment variable {var}={} does not parse: {why}",
                crate::terminal::escape(&format!("{value:?}"))
            ),
            None,
        )
    }
}

/// The settings of the trust gate, from the managed and user files (the managed file wins).
#[derive(Debug, Clone, Default)]
pub(super) struct Gate {
    pub trusted_roots: Vec<PathBuf>,
    pub stale: StalePolicy,
    pub protect_ka_files: bool,
    pub managed_only: bool,
    pub denial_backstop: u32,
    pub sandbox: crate::sandbox::Policy,
}

impl Gate {
    /// Read from the parsed managed and user files.
    pub fn from_files(ungated: &[ParsedFile]) -> Gate {
        let mut gate = Gate {
            protect_ka_files: true,
            denial_backstop: DEFAULT_DENIAL_BACKSTOP,
            ..Gate::default()
        };
        for file in ungated {
            let Some(settings) = &file.settings else {
                continue;
            };
            if let Some(roots) = settings
                .get("trusted_roots")
                .and_then(toml::Value::as_array)
            {
                gate.trusted_roots.extend(
                    roots
                        .iter()
                        .filter_map(toml::Value::as_str)
                        .filter_map(expand_root),
                );
            }
            match settings.get("stale").and_then(toml::Value::as_str) {
                Some("skip") => gate.stale = StalePolicy::Skip,
                Some("block") => gate.stale = StalePolicy::Block,
                _ => {}
            }
            if let Some(protect) = settings
                .get("protect_ka_files")
                .and_then(toml::Value::as_bool)
            {
                gate.protect_ka_files = protect;
            }
            if let Some(n) = backstop_setting(settings) {
                gate.denial_backstop = n;
            }
            sandbox_settings(file, &mut gate.sandbox);
            if file.layer == Layer::Managed {
                gate.managed_only = settings
                    .get("allow_managed_hooks_only")
                    .and_then(toml::Value::as_bool)
                    .unwrap_or(false);
            }
        }
        // The managed file has the last word on the gate, whatever the user file says.
        if let Some(managed) = ungated.iter().find(|f| f.layer == Layer::Managed) {
            let get = |k: &str| managed.settings.as_ref().and_then(|s| s.get(k));
            if let Some(v) = get("stale").and_then(toml::Value::as_str) {
                gate.stale = if v == "skip" {
                    StalePolicy::Skip
                } else {
                    StalePolicy::Block
                };
            }
            if let Some(v) = get("protect_ka_files").and_then(toml::Value::as_bool) {
                gate.protect_ka_files = v;
            }
            if let Some(n) = managed.settings.as_ref().and_then(backstop_setting) {
                gate.denial_backstop = n;
            }
            sandbox_settings(managed, &mut gate.sandbox);
        }
        gate
    }
}

/// `denial_backstop`, when it is a valid count (the parser reports any other value).
fn backstop_setting(settings: &toml::Table) -> Option<u32> {
    settings
        .get("denial_backstop")
        .and_then(toml::Value::as_integer)
        .filter(|n| (0..=super::parse::DENIAL_BACKSTOP_LIMIT).contains(n))
        .and_then(|n| u32::try_from(n).ok())
}

/// A `trusted_roots` entry as a canonical directory: `~` expands to the home directory;
/// relative entries were already refused by the parser.
fn expand_root(root: &str) -> Option<PathBuf> {
    let path = match root.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            paths::home_dir()?.join(rest.trim_start_matches('/'))
        }
        _ if root.starts_with('/') => PathBuf::from(root),
        _ => return None,
    };
    Some(paths::absolute(&path))
}

/// `sandbox_project_hooks` and `require_sandbox` of a user or managed file, over `policy`.
fn sandbox_settings(file: &ParsedFile, policy: &mut crate::sandbox::Policy) {
    let Some(settings) = &file.settings else {
        return;
    };
    if let Some(declared) = settings
        .get("sandbox_project_hooks")
        .and_then(|v| crate::sandbox::Declared::from_toml(v).ok())
    {
        policy.project_hooks = Some(declared);
        policy.project_hooks_from =
            Some(format!("the {} file {}", file.layer, file.path.display()));
    }
    if let Some(require) = settings
        .get("require_sandbox")
        .and_then(toml::Value::as_bool)
    {
        policy.require = require;
    }
}
