//! Hook entries, configuration layers, merge by name, provenance and validation errors.
//!
//! Three layers, lowest precedence first: user, project, local (see [`Layer`]). Each file is read
//! once; the same bytes are hashed for the trust gate and parsed, so a file cannot change between
//! being judged and being used. Every value keeps where it came from (file, line, column), so an
//! error points at the exact key and `ka-hooks list` can say what overrode what.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::value::magic::RelativePathBuf;
use figment::{Figment, Metadata, Profile, Provider};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::event::Event;
use crate::paths::{self, Paths};
use crate::trust::{TrustError, TrustStatus, TrustStore};

/// Default hook timeout when neither the hook nor `[hook_settings]` sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Why every hook is off when `KA_HOOKS_DISABLE` is set.
const DISABLED_BY_ENV: &str = "KA_HOOKS_DISABLE is set";
/// Longest timeout accepted: anything longer is certainly a typo.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// A configuration layer. Declaration order is precedence: later layers win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// `$KA_CONFIG_DIR/ka.toml` (`~/.config/ka/ka.toml`): personal, always trusted.
    User,
    /// `<root>/.ka/ka.toml`: travels with the repository; trust-gated.
    Project,
    /// `<root>/.ka/ka.local.toml`: personal per project, git-ignored; trust-gated.
    Local,
}

impl Layer {
    pub const fn as_str(self) -> &'static str {
        match self {
            Layer::User => "user",
            Layer::Project => "project",
            Layer::Local => "local",
        }
    }

    /// Whether the layer can only load once trusted.
    pub const fn is_gated(self) -> bool {
        !matches!(self, Layer::User)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a hook entry (or one of its overrides) was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub layer: Layer,
    pub file: PathBuf,
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

/// What a failing hook (crash, timeout, exit other than 0 and 2) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail open: recorded, the event proceeds.
    #[default]
    Ignore,
    /// Fail closed: treated as a block whose reason names the hook and the failure.
    Block,
    /// The call needs a human: decision `ask`.
    Ask,
}

impl OnError {
    pub const fn as_str(self) -> &'static str {
        match self {
            OnError::Ignore => "ignore",
            OnError::Block => "block",
            OnError::Ask => "ask",
        }
    }
}

/// Which tool calls a hook of a tool event sees. Compiled once at load.
#[derive(Debug, Clone)]
pub enum ToolFilter {
    /// No filter (or a matcher of `*` / `""`): every tool.
    All,
    /// `tool = [...]`: exact names or globs.
    Tools {
        patterns: Vec<String>,
        /// The patterns without glob syntax, compared as strings: the common case, and the
        /// check every tool call pays for.
        exact: Vec<String>,
        /// The real globs (`mcp__*`), when there are any.
        globs: Option<globset::GlobSet>,
    },
    /// `matcher = "..."`, Claude Code semantics: an exact name list or an unanchored regex.
    Matcher { source: String, kind: MatcherKind },
}

#[derive(Debug, Clone)]
pub enum MatcherKind {
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl ToolFilter {
    /// Whether a call of `tool` passes the filter. `None` (no tool) passes only [`ToolFilter::All`].
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (self, tool) {
            (ToolFilter::All, _) => true,
            (_, None) => false,
            (ToolFilter::Tools { exact, globs, .. }, Some(t)) => {
                exact.iter().any(|n| n == t) || globs.as_ref().is_some_and(|g| g.is_match(t))
            }
            (ToolFilter::Matcher { kind, .. }, Some(t)) => match kind {
                MatcherKind::Names(names) => names.iter().any(|n| n == t),
                MatcherKind::Regex(re) => re.is_match(t),
            },
        }
    }

    /// The filter as written, for listings and de-duplication.
    pub fn describe(&self) -> String {
        match self {
            ToolFilter::All => "*".to_owned(),
            ToolFilter::Tools { patterns, .. } => format!("tool = {patterns:?}"),
            ToolFilter::Matcher { source, .. } => format!("matcher = {source:?}"),
        }
    }
}

impl PartialEq for ToolFilter {
    fn eq(&self, other: &Self) -> bool {
        self.describe() == other.describe()
    }
}

/// One effective hook, after merging all layers.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The entry's `name`, or `<event>#<n>` (n counts that event's hooks, from 1).
    pub name: String,
    /// Whether the name was written in a file (only written names merge across entries).
    pub named: bool,
    pub event: Event,
    pub filter: ToolFilter,
    pub command: String,
    pub timeout: Duration,
    pub on_error: OnError,
    pub enabled: bool,
    /// Extra environment, sorted by name.
    pub env: Vec<(String, String)>,
    /// Where the hook was first defined.
    pub source: Source,
    /// Later entries merged over it by name, in order, with the keys each one set.
    pub overrides: Vec<Override>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Override {
    pub source: Source,
    pub keys: Vec<String>,
}

impl Hook {
    /// Whether the hook runs for a call of `tool` (tool events) or at all (other events).
    pub fn matches_tool(&self, tool: Option<&str>) -> bool {
        !self.event.is_tool_event() || self.filter.matches(tool)
    }
}

/// A hook that does not run because a later identical one replaces it.
#[derive(Debug, Clone, Serialize)]
pub struct Deduplicated {
    pub name: String,
    pub source: Source,
    /// Name of the hook that runs instead.
    pub kept: String,
}

/// `[hook_settings]` after layering and `KA_HOOKS_*` overrides.
#[derive(Debug, Clone, Default, Serialize)]
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
}

/// A configuration error, pointing at the file, line, column and key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Key path such as `hooks[2].timeout`.
    pub key: Option<String>,
    /// What is wrong, and what was expected.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        f.write_str(": ")?;
        if let Some(key) = &self.key {
            write!(f, "`{key}`: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error about a whole source (a file that cannot be read, an environment variable),
    /// with no position in it.
    fn unpositioned(
        file: impl Into<PathBuf>,
        key: Option<String>,
        message: String,
        help: Option<&str>,
    ) -> ConfigError {
        ConfigError {
            file: file.into(),
            line: None,
            column: None,
            key,
            message,
            help: help.map(str::to_owned),
        }
    }
}

/// Every error of a load, all layers at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// How a layer file fared in a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerState {
    /// Loaded (user layer, or trusted project file).
    Loaded,
    /// Loaded because `--trust` was given for this run only.
    TrustedOnce,
    /// Loaded because it lies under a user-configured trusted root.
    TrustedRoot,
    /// Skipped whole: never trusted.
    Untrusted,
    /// Skipped whole: edited since it was trusted.
    Stale,
}

/// One layer file that exists.
#[derive(Debug, Clone, Serialize)]
pub struct LayerFile {
    pub layer: Layer,
    pub file: PathBuf,
    pub state: LayerState,
    /// SHA-256 of the content read.
    pub sha256: String,
}

impl LayerFile {
    pub fn loaded(&self) -> bool {
        matches!(
            self.state,
            LayerState::Loaded | LayerState::TrustedOnce | LayerState::TrustedRoot
        )
    }
}

/// A skipped layer, with the command that trusts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Untrusted {
    pub layer: Layer,
    pub file: PathBuf,
    pub status: TrustStatus,
    /// The exact command that reviews and trusts it.
    pub fix: String,
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skipped the {} layer {} ({}): its hooks did not run; review and trust it with `{}`",
            self.layer,
            self.file.display(),
            self.status,
            self.fix
        )
    }
}

/// Where and how to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub paths: Paths,
    /// Where to look for the project root (`--project DIR`, else the working directory).
    pub start_dir: PathBuf,
    /// `--trust`: load untrusted project layers for this run only.
    pub trust_once: bool,
}

impl LoadOptions {
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
#[derive(Debug, Clone)]
pub struct Config {
    /// The project root, when a `.ka/` folder was found.
    pub project_root: Option<PathBuf>,
    /// Every effective hook in run order, disabled ones included (they never run).
    pub hooks: Vec<Hook>,
    /// Hooks replaced by a later identical one.
    pub deduplicated: Vec<Deduplicated>,
    pub settings: Settings,
    /// Every layer file found, with its state.
    pub layers: Vec<LayerFile>,
    /// Layers skipped by the trust gate.
    pub untrusted: Vec<Untrusted>,
    /// Indices into `hooks` of the enabled hooks of each event (by `Event::ALL` position).
    by_event: [Vec<usize>; 7],
}

/// What `check` found: every error of every layer (untrusted ones included: reading is safe),
/// and the configuration when there were none.
#[derive(Debug)]
pub struct CheckReport {
    pub errors: Vec<ConfigError>,
    pub config: Option<Config>,
}

/// Failure to load at all (before any configuration error could be pinned to a key).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Config(#[from] ConfigErrors),
    #[error(transparent)]
    Trust(#[from] TrustError),
}

impl Config {
    /// Load all layers for a session. Untrusted project layers are skipped (see
    /// [`Config::untrusted`]); any configuration error in a loaded layer fails the load.
    pub fn load(opts: &LoadOptions) -> Result<Config, LoadError> {
        let (config, errors) = load_inner(opts, false)?;
        match config {
            Some(config) if errors.is_empty() => Ok(config),
            _ => Err(ConfigErrors(errors).into()),
        }
    }

    /// Validate every layer, trusted or not, and report all errors at once.
    pub fn check(opts: &LoadOptions) -> Result<CheckReport, TrustError> {
        let (config, errors) = load_inner(opts, true)?;
        Ok(CheckReport {
            config: if errors.is_empty() { config } else { None },
            errors,
        })
    }

    /// The hooks that run for `event` (and `tool`, on tool events), in order.
    /// Allocation-free: this is on the hot path of every tool call.
    pub fn hooks_for<'a>(
        &'a self,
        event: Event,
        tool: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Hook> + 'a {
        self.by_event[event_slot(event)]
            .iter()
            .map(|&i| &self.hooks[i])
            .filter(move |h| h.matches_tool(tool))
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
}

fn event_slot(event: Event) -> usize {
    event as usize
}

/// The `trust` command's fix for a project root.
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

// ---------------------------------------------------------------------------------------------
// Reading one file
// ---------------------------------------------------------------------------------------------

type SpannedTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// The two parts of `ka.toml` this crate owns; every other top-level key is ka's and ignored.
#[derive(Deserialize)]
struct RawFile {
    #[serde(default)]
    hooks: Option<Vec<Spanned<SpannedTable>>>,
    #[serde(default)]
    hook_settings: Option<Spanned<SpannedTable>>,
}

/// A file's text with a line index, to turn byte spans into line:column.
struct Text<'a> {
    path: &'a Path,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Text<'a> {
    fn new(path: &'a Path, text: &'a str) -> Text<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Text {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in chars) of a byte offset.
    fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let end = offset.min(self.text.len());
        let column = self
            .text
            .get(start..end)
            .map_or(1, |s| s.chars().count() + 1);
        (line, column)
    }

    fn error(
        &self,
        span: Option<Range<usize>>,
        key: Option<String>,
        message: impl Into<String>,
        help: Option<String>,
    ) -> ConfigError {
        let (line, column) = match span {
            Some(span) => {
                let (l, c) = self.position(span.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ConfigError {
            file: self.path.to_path_buf(),
            line,
            column,
            key,
            message: message.into(),
            help,
        }
    }
}

/// A value together with where it was written.
#[derive(Debug, Clone)]
struct At<T> {
    value: T,
    line: usize,
    column: usize,
}

impl<T> At<T> {
    fn new(value: T, (line, column): (usize, usize)) -> At<T> {
        At {
            value,
            line,
            column,
        }
    }
}

/// One `[[hooks]]` entry as written, every key optional (a named entry may only override).
#[derive(Debug, Clone, Default)]
struct RawHook {
    name: Option<At<String>>,
    event: Option<At<Event>>,
    /// Compiled while parsing, once: `tool` and `matcher` are two spellings of one filter.
    tool: Option<At<ToolFilter>>,
    matcher: Option<At<ToolFilter>>,
    command: Option<At<String>>,
    timeout: Option<At<Duration>>,
    on_error: Option<At<OnError>>,
    enabled: Option<At<bool>>,
    env: Option<At<BTreeMap<String, String>>>,
}

impl RawHook {
    /// The keys this entry sets, in documentation order.
    fn keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        let mut push = |set: bool, key: &str| {
            if set {
                keys.push(key.to_owned());
            }
        };
        push(self.name.is_some(), "name");
        push(self.event.is_some(), "event");
        push(self.tool.is_some(), "tool");
        push(self.matcher.is_some(), "matcher");
        push(self.command.is_some(), "command");
        push(self.timeout.is_some(), "timeout");
        push(self.on_error.is_some(), "on_error");
        push(self.enabled.is_some(), "enabled");
        push(self.env.is_some(), "env");
        keys
    }

    /// Merge `over` key by key over `self`. `tool` and `matcher` are one filter: setting
    /// either replaces the other. `env` merges by variable.
    fn merge(&mut self, over: RawHook) {
        macro_rules! take {
            ($($field:ident),*) => {$(
                if over.$field.is_some() { self.$field = over.$field; }
            )*};
        }
        if over.tool.is_some() {
            self.matcher = None;
        }
        if over.matcher.is_some() {
            self.tool = None;
        }
        match (&mut self.env, over.env) {
            (Some(base), Some(over)) => {
                base.value.extend(over.value);
                base.line = over.line;
                base.column = over.column;
            }
            (base, over) => {
                if over.is_some() {
                    *base = over;
                }
            }
        }
        take!(name, event, tool, matcher, command, timeout, on_error, enabled);
    }
}

/// One parsed layer file.
struct ParsedFile {
    layer: Layer,
    path: PathBuf,
    hooks: Vec<(Source, RawHook)>,
    settings: Option<toml::Table>,
}

pub(crate) const HOOK_KEYS: &[&str] = &[
    "name", "event", "tool", "matcher", "command", "timeout", "on_error", "enabled", "env",
];
pub(crate) const SETTINGS_KEYS: &[&str] = &["timeout", "disable_all", "log", "trusted_roots"];

fn type_name(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a datetime",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

fn parse_file(layer: Layer, path: &Path, text: &str, errors: &mut Vec<ConfigError>) -> ParsedFile {
    let t = Text::new(path, text);
    let mut parsed = ParsedFile {
        layer,
        path: path.to_path_buf(),
        hooks: Vec::new(),
        settings: None,
    };
    let raw: RawFile = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            let message = e.message().trim().to_owned();
            errors.push(t.error(
                e.span(),
                None,
                format!("invalid TOML: {message}"),
                Some("fix the syntax at this position; `ka-hooks check` re-validates".into()),
            ));
            return parsed;
        }
    };
    if let Some(settings) = raw.hook_settings {
        parsed.settings = parse_settings(&t, layer, settings.into_inner(), errors);
    }
    for (index, entry) in raw.hooks.unwrap_or_default().into_iter().enumerate() {
        let (line, _) = t.position(entry.span().start);
        let source = Source {
            layer,
            file: path.to_path_buf(),
            index,
            line,
        };
        if let Some(hook) = parse_hook(&t, index, entry.into_inner(), errors) {
            parsed.hooks.push((source, hook));
        }
    }
    parsed
}

fn parse_settings(
    t: &Text<'_>,
    layer: Layer,
    table: SpannedTable,
    errors: &mut Vec<ConfigError>,
) -> Option<toml::Table> {
    let before = errors.len();
    let mut out = toml::Table::new();
    for (key, value) in table {
        let key_span = key.span();
        let key = key.into_inner();
        let path = format!("hook_settings.{key}");
        let span = value.span();
        let value = value.into_inner();
        let mut wrong = |expected: &str, v: &toml::Value| {
            errors.push(t.error(
                Some(span.clone()),
                Some(path.clone()),
                format!("expected {expected}, got {}", type_name(v)),
                None,
            ));
        };
        match key.as_str() {
            "timeout" => match seconds(&value) {
                Ok(_) => {}
                Err(msg) => errors.push(t.error(
                    Some(span.clone()),
                    Some(path.clone()),
                    msg,
                    Some("write a number of seconds greater than 0, such as `timeout = 30`".into()),
                )),
            },
            "disable_all" if !value.is_bool() => wrong("a boolean (`true` or `false`)", &value),
            "log" if !value.is_str() => wrong("a string (the path of the audit log)", &value),
            "trusted_roots" => {
                if layer != Layer::User {
                    errors.push(
                        t.error(
                            Some(key_span.clone()),
                            Some(path.clone()),
                            "a project file cannot widen the trust gate",
                            Some(
                                "move `trusted_roots` to your user file ($KA_CONFIG_DIR/ka.toml, \
                             ~/.config/ka/ka.toml)"
                                    .into(),
                            ),
                        ),
                    );
                } else if !value
                    .as_array()
                    .is_some_and(|a| a.iter().all(toml::Value::is_str))
                {
                    wrong("an array of directory paths", &value);
                }
            }
            "disable_all" | "log" => {}
            _ => errors.push(t.error(
                Some(key_span),
                Some(path.clone()),
                format!("unknown key `{key}`"),
                Some(suggest_key(&key, SETTINGS_KEYS)),
            )),
        }
        out.insert(key, value);
    }
    (errors.len() == before).then_some(out)
}

/// Seconds as a duration: a number > 0 and at most a day.
fn seconds(value: &toml::Value) -> Result<Duration, String> {
    let secs = match value {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        other => {
            return Err(format!(
                "expected a number of seconds, got {}",
                type_name(other)
            ))
        }
    };
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!(
            "expected a number of seconds greater than 0, got {value}"
        ));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "expected at most {MAX_TIMEOUT_SECS} seconds (a day), got {value}"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn suggest_key(key: &str, valid: &[&str]) -> String {
    let close = valid
        .iter()
        .map(|v| (crate::event::edit_distance(key, v), v))
        .min()
        .filter(|(d, v)| *d <= 2.max(v.len() / 3))
        .map(|(_, v)| *v);
    match close {
        Some(v) => format!("did you mean `{v}`? valid keys: {}", valid.join(", ")),
        None => format!("valid keys: {}", valid.join(", ")),
    }
}

fn parse_hook(
    t: &Text<'_>,
    index: usize,
    table: SpannedTable,
    errors: &mut Vec<ConfigError>,
) -> Option<RawHook> {
    let before = errors.len();
    let mut hook = RawHook::default();
    for (key, value) in table {
        let key_span = key.span();
        let key = key.into_inner();
        let path = format!("hooks[{index}].{key}");
        let span = value.span();
        let pos = t.position(span.start);
        let value = value.into_inner();
        let mut fail = |message: String, help: Option<String>| {
            errors.push(t.error(Some(span.clone()), Some(path.clone()), message, help));
        };
        let expected = |what: &str| format!("expected {what}, got {}", type_name(&value));
        match key.as_str() {
            "name" => match value.as_str() {
                Some(s) if !s.trim().is_empty() => hook.name = Some(At::new(s.to_owned(), pos)),
                Some(_) => fail(
                    "the name is empty".into(),
                    Some("remove `name` or give it a value".into()),
                ),
                None => fail(expected("a string"), None),
            },
            "event" => match value.as_str() {
                Some(s) => match s.parse::<Event>() {
                    Ok(e) => hook.event = Some(At::new(e, pos)),
                    Err(unknown) => fail(
                        format!("unknown event `{}`", unknown.given),
                        Some(match unknown.suggestion {
                            Some(s) => format!(
                                "did you mean `{s}`? valid events: {}",
                                Event::valid_names()
                            ),
                            None => format!("valid events: {}", Event::valid_names()),
                        }),
                    ),
                },
                None => fail(expected("a string (the event name)"), None),
            },
            "tool" => {
                let names: Option<Vec<String>> = match &value {
                    toml::Value::String(s) => Some(vec![s.clone()]),
                    toml::Value::Array(a) => {
                        a.iter().map(|v| v.as_str().map(str::to_owned)).collect()
                    }
                    _ => None,
                };
                match names {
                    Some(names) if names.is_empty() || names.iter().any(|n| n.is_empty()) => fail(
                        "a tool name is empty".into(),
                        Some("list tool names or globs, such as `tool = [\"write\", \"mcp__*\"]`; remove `tool` to match every tool".into()),
                    ),
                    Some(names) => match compile_tools(names) {
                        Ok(filter) => hook.tool = Some(At::new(filter, pos)),
                        Err(e) => fail(format!("invalid glob: {e}"), None),
                    },
                    None => fail(
                        expected("a tool name or an array of tool names"),
                        Some("write `tool = \"write\"` or `tool = [\"write\", \"edit\"]`".into()),
                    ),
                }
            }
            "matcher" => match value.as_str() {
                Some(s) => match compile_matcher(s) {
                    Ok(filter) => hook.matcher = Some(At::new(filter, pos)),
                    Err(e) => fail(
                        format!("invalid matcher regex: {e}"),
                        Some("write an exact list such as `Edit|Write`, or a valid regex".into()),
                    ),
                },
                None => fail(expected("a string (Claude Code matcher)"), None),
            },
            "command" => match value.as_str() {
                Some(s) if !s.trim().is_empty() => hook.command = Some(At::new(s.to_owned(), pos)),
                Some(_) => fail(
                    "the command is empty".into(),
                    Some("give the shell command to run".into()),
                ),
                None => fail(expected("a string (a shell command)"), None),
            },
            "timeout" => match seconds(&value) {
                Ok(d) => hook.timeout = Some(At::new(d, pos)),
                Err(msg) => fail(
                    msg,
                    Some("write a number of seconds greater than 0, such as `timeout = 10`".into()),
                ),
            },
            "on_error" => match value.as_str() {
                Some("ignore") => hook.on_error = Some(At::new(OnError::Ignore, pos)),
                Some("block") => hook.on_error = Some(At::new(OnError::Block, pos)),
                Some("ask") => hook.on_error = Some(At::new(OnError::Ask, pos)),
                Some(other) => fail(
                    format!("unknown on_error `{other}`"),
                    Some("use `ignore` (fail open), `block` (fail closed) or `ask`".into()),
                ),
                None => fail(expected("a string: `ignore`, `block` or `ask`"), None),
            },
            "enabled" => match value.as_bool() {
                Some(b) => hook.enabled = Some(At::new(b, pos)),
                None => fail(expected("a boolean (`true` or `false`)"), None),
            },
            "env" => match &value {
                toml::Value::Table(table) => {
                    let mut env = BTreeMap::new();
                    for (k, v) in table {
                        match v.as_str() {
                            Some(s) if valid_env_name(k) => {
                                env.insert(k.clone(), s.to_owned());
                            }
                            Some(_) => fail(
                                format!("`{k}` is not a valid environment variable name"),
                                Some(
                                    "use letters, digits and `_`, not starting with a digit".into(),
                                ),
                            ),
                            None => fail(
                                format!("`env.{k}` must be a string, got {}", type_name(v)),
                                Some(format!("quote it: `{k} = \"{v}\"`")),
                            ),
                        }
                    }
                    hook.env = Some(At::new(env, pos));
                }
                _ => fail(
                    expected("a table of strings"),
                    Some("write `env = { NAME = \"value\" }`".into()),
                ),
            },
            _ => errors.push(t.error(
                Some(key_span),
                Some(path.clone()),
                format!("unknown key `{key}`"),
                Some(suggest_key(&key, HOOK_KEYS)),
            )),
        }
    }
    if let (Some(tool), Some(_)) = (&hook.tool, &hook.matcher) {
        errors.push(ConfigError {
            file: t.path.to_path_buf(),
            line: Some(tool.line),
            column: Some(tool.column),
            key: Some(format!("hooks[{index}].tool")),
            message: "both `tool` and `matcher` are set".into(),
            help: Some(
                "keep one: `tool` (names and globs) or `matcher` (Claude Code syntax)".into(),
            ),
        });
    }
    (errors.len() == before).then_some(hook)
}

fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `tool = [...]`: names without glob syntax are compared as strings, the rest become a GlobSet.
fn compile_tools(patterns: Vec<String>) -> Result<ToolFilter, globset::Error> {
    let is_glob = |p: &str| p.contains(['*', '?', '[', ']', '{', '}', '\\']);
    let exact = patterns.iter().filter(|p| !is_glob(p)).cloned().collect();
    let mut builder = globset::GlobSetBuilder::new();
    let mut any_glob = false;
    for p in patterns.iter().filter(|p| is_glob(p)) {
        builder.add(globset::Glob::new(p)?);
        any_glob = true;
    }
    let globs = if any_glob {
        Some(builder.build()?)
    } else {
        None
    };
    Ok(ToolFilter::Tools {
        patterns,
        exact,
        globs,
    })
}

/// Claude Code matcher semantics: `*`, `""` → all; only name characters → exact list;
/// anything else → unanchored regex.
fn compile_matcher(source: &str) -> Result<ToolFilter, regex::Error> {
    let trimmed = source.trim();
    if trimmed.is_empty() || trimmed == "*" {
        return Ok(ToolFilter::All);
    }
    let kind = if source
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_- ,|".contains(c))
    {
        MatcherKind::Names(
            source
                .split(['|', ','])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    } else {
        MatcherKind::Regex(regex::Regex::new(source)?)
    };
    Ok(ToolFilter::Matcher {
        source: source.to_owned(),
        kind,
    })
}

// ---------------------------------------------------------------------------------------------
// Layering
// ---------------------------------------------------------------------------------------------

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
    #[serde(default)]
    trusted_roots: Vec<RelativePathBuf>,
}

fn layer_settings(files: &[ParsedFile], paths: &Paths, errors: &mut Vec<ConfigError>) -> Settings {
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
            if table.get("disable_all").and_then(toml::Value::as_bool) == Some(true) {
                disabled_by = Some(format!(
                    "`disable_all = true` in the {} layer {}",
                    file.layer,
                    file.path.display()
                ));
            }
            // Only the user layer may set gate settings; parse_settings already reported it.
            let mut table = table.clone();
            if file.layer != Layer::User {
                table.remove("trusted_roots");
            }
            figment = figment.merge(SettingsLayer {
                layer: file.layer,
                path: file.path.clone(),
                table,
            });
        }
    }
    figment = figment.merge(paths::settings_env());
    let mut settings = Settings::default();
    match figment.extract::<ExtractedSettings>() {
        Ok(x) => {
            if let Some(secs) = x.timeout {
                match seconds(&toml::Value::Float(secs)) {
                    Ok(d) => settings.timeout = Some(d),
                    Err(msg) => errors.push(ConfigError::unpositioned(
                        "KA_HOOKS_TIMEOUT",
                        Some("hook_settings.timeout".into()),
                        msg,
                        Some("set KA_HOOKS_TIMEOUT to a number of seconds greater than 0"),
                    )),
                }
            }
            settings.log = x.log.map(|p| p.relative());
            settings.trusted_roots = x
                .trusted_roots
                .iter()
                .map(RelativePathBuf::relative)
                .collect();
            if x.disable_all {
                settings.disabled = disabled_by;
            }
        }
        Err(e) => {
            for e in e {
                let file = e
                    .metadata
                    .as_ref()
                    .and_then(|m| m.source.as_ref())
                    .map_or_else(
                        // Only the environment provider has no file: name the variable.
                        || PathBuf::from(format!("KA_HOOKS_{}", e.path.join("_").to_uppercase())),
                        |s| PathBuf::from(s.to_string()),
                    );
                errors.push(ConfigError::unpositioned(
                    file,
                    Some(format!("hook_settings.{}", e.path.join("."))),
                    e.kind.to_string(),
                    Some("fix or unset the variable"),
                ))
            }
        }
    }
    if paths.disabled_by_env {
        settings.disabled = Some(DISABLED_BY_ENV.into());
    }
    for key in ["timeout", "log", "trusted_roots", "disable_all"] {
        if let Some(meta) = figment.find_metadata(key) {
            settings
                .provenance
                .insert(key.to_owned(), meta.name.to_string());
        }
    }
    settings
}

/// Read the layer files, apply the gate, parse, merge. With `check_all`, untrusted files are
/// parsed too (for their errors) but contribute nothing.
fn load_inner(
    opts: &LoadOptions,
    check_all: bool,
) -> Result<(Option<Config>, Vec<ConfigError>), TrustError> {
    let mut errors = Vec::new();
    let project_root = paths::find_project_root(&paths::absolute(&opts.start_dir));

    let mut candidates: Vec<(Layer, PathBuf)> = Vec::new();
    if let Some(user) = opts.paths.user_file() {
        candidates.push((Layer::User, user));
    }
    if let Some(root) = &project_root {
        let dir = root.join(paths::PROJECT_DIR);
        candidates.push((Layer::Project, dir.join(paths::CONFIG_FILE)));
        candidates.push((Layer::Local, dir.join(paths::LOCAL_FILE)));
    }

    let store = if project_root.is_some() {
        Some(TrustStore::load(opts.paths.trust_file())?)
    } else {
        None
    };

    let mut layers = Vec::new();
    let mut texts = Vec::new();
    let mut untrusted = Vec::new();
    let mut parsed = Vec::new();
    for (layer, path) in candidates {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                errors.push(ConfigError::unpositioned(
                    path,
                    None,
                    format!("failed to read: {e}"),
                    Some("check the file's permissions"),
                ));
                continue;
            }
        };
        let sha256 = crate::trust::content_hash(&bytes);
        let state = match (layer.is_gated(), &store) {
            (false, _) => LayerState::Loaded,
            (true, Some(store)) => match store.status(&path, &bytes) {
                TrustStatus::Trusted => LayerState::Loaded,
                TrustStatus::Untrusted => LayerState::Untrusted,
                TrustStatus::Stale => LayerState::Stale,
            },
            (true, None) => LayerState::Untrusted,
        };
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                errors.push(ConfigError::unpositioned(
                    path,
                    None,
                    format!("not UTF-8 text: {e}"),
                    Some("save the file as UTF-8"),
                ));
                continue;
            }
        };
        let gate_open = state == LayerState::Loaded;
        if gate_open || check_all {
            let file = parse_file(layer, &path, &text, &mut errors);
            if gate_open {
                parsed.push(file);
            }
        }
        layers.push(LayerFile {
            layer,
            file: path,
            state,
            sha256,
        });
        // Kept so a gate opened below parses exactly the bytes that were hashed.
        texts.push(text);
    }

    // The user's own file decides the gate: trusted roots, then `--trust`.
    let trusted_roots = user_trusted_roots(&parsed);
    for (info, text) in layers.iter_mut().zip(&texts) {
        if info.loaded() {
            continue;
        }
        let under_trusted_root = project_root
            .as_ref()
            .is_some_and(|root| trusted_roots.iter().any(|r| root.starts_with(r)));
        info.state = if under_trusted_root {
            LayerState::TrustedRoot
        } else if opts.trust_once {
            LayerState::TrustedOnce
        } else {
            untrusted.push(Untrusted {
                layer: info.layer,
                file: info.file.clone(),
                status: if info.state == LayerState::Stale {
                    TrustStatus::Stale
                } else {
                    TrustStatus::Untrusted
                },
                fix: project_root
                    .as_deref()
                    .map(trust_command)
                    .unwrap_or_else(|| "ka-hooks trust".into()),
            });
            continue;
        };
        // In check mode this file's errors were already collected above.
        let mut scratch = Vec::new();
        let sink = if check_all { &mut scratch } else { &mut errors };
        parsed.push(parse_file(info.layer, &info.file, text, sink));
    }
    parsed.sort_by_key(|f| f.layer);

    let settings = layer_settings(&parsed, &opts.paths, &mut errors);
    let (hooks, deduplicated) = merge_hooks(parsed, &settings, &mut errors);
    if !errors.is_empty() {
        // Report in reading order: layer by layer, top to bottom (errors are found in phases).
        let file_rank = |e: &ConfigError| {
            layers
                .iter()
                .position(|l| l.file == e.file)
                .unwrap_or(usize::MAX)
        };
        errors.sort_by_key(|e| (file_rank(e), e.line, e.column));
        return Ok((None, errors));
    }
    let mut by_event: [Vec<usize>; 7] = Default::default();
    if settings.disabled.is_none() {
        for (i, h) in hooks.iter().enumerate() {
            if h.enabled {
                by_event[event_slot(h.event)].push(i);
            }
        }
    }
    Ok((
        Some(Config {
            project_root,
            hooks,
            deduplicated,
            settings,
            layers,
            untrusted,
            by_event,
        }),
        errors,
    ))
}

/// `trusted_roots` of the user layer, absolute (relative ones are relative to the user file).
fn user_trusted_roots(parsed: &[ParsedFile]) -> Vec<PathBuf> {
    let Some(user) = parsed.iter().find(|f| f.layer == Layer::User) else {
        return Vec::new();
    };
    let base = user.path.parent().unwrap_or(Path::new("/"));
    user.settings
        .as_ref()
        .and_then(|s| s.get("trusted_roots"))
        .and_then(toml::Value::as_array)
        .map(|roots| {
            roots
                .iter()
                .filter_map(toml::Value::as_str)
                .map(|r| paths::absolute(&base.join(r)))
                .collect()
        })
        .unwrap_or_default()
}

/// Merge entries by name in run order, validate the merged hooks, compile filters, dedupe.
fn merge_hooks(
    files: Vec<ParsedFile>,
    settings: &Settings,
    errors: &mut Vec<ConfigError>,
) -> (Vec<Hook>, Vec<Deduplicated>) {
    struct Merged {
        raw: RawHook,
        source: Source,
        overrides: Vec<Override>,
    }
    let mut merged: Vec<Merged> = Vec::new();
    for file in files {
        for (source, raw) in file.hooks {
            let name = raw.name.as_ref().map(|n| n.value.clone());
            let earlier = name.as_ref().and_then(|name| {
                merged
                    .iter_mut()
                    .find(|m| m.raw.name.as_ref().is_some_and(|n| &n.value == name))
            });
            match earlier {
                Some(m) => {
                    let keys = raw.keys().into_iter().filter(|k| k != "name").collect();
                    m.overrides.push(Override { source, keys });
                    m.raw.merge(raw);
                }
                None => merged.push(Merged {
                    raw,
                    source,
                    overrides: Vec::new(),
                }),
            }
        }
    }

    let mut hooks: Vec<Hook> = Vec::new();
    let mut counts = [0usize; 7];
    for m in merged {
        let Merged {
            raw,
            source,
            overrides,
        } = m;
        let err =
            |key: &str, at: Option<(usize, usize)>, message: String, help: &str| ConfigError {
                file: source.file.clone(),
                line: Some(at.map_or(source.line, |a| a.0)),
                column: at.map(|a| a.1),
                key: Some(format!("hooks[{}].{key}", source.index)),
                message,
                help: Some(help.to_owned()),
            };
        let named = raw.name.as_ref().map(|n| n.value.clone());
        let Some(event) = raw.event.as_ref().map(|e| e.value) else {
            errors.push(err(
                "event",
                None,
                match &named {
                    Some(n) => {
                        format!("hook `{n}` has no `event`, and no earlier hook is named `{n}`")
                    }
                    None => "missing `event`".into(),
                },
                &format!(
                    "add `event = \"pre_tool_use\"` (valid events: {})",
                    Event::valid_names()
                ),
            ));
            continue;
        };
        let Some(command) = raw.command.as_ref().map(|c| c.value.clone()) else {
            errors.push(err(
                "command",
                None,
                match &named {
                    Some(n) => {
                        format!("hook `{n}` has no `command`, and no earlier hook is named `{n}`")
                    }
                    None => "missing `command`".into(),
                },
                "add the shell command to run, such as `command = \"examples/hooks/guard.sh\"`",
            ));
            continue;
        };
        let filter = if let Some(tool) = &raw.tool {
            if !event.is_tool_event() {
                errors.push(err(
                    "tool",
                    Some((tool.line, tool.column)),
                    format!("`tool` only applies to pre_tool_use and post_tool_use, not {event}"),
                    "remove `tool`, or change the event to a tool event",
                ));
                continue;
            }
            tool.value.clone()
        } else if let Some(matcher) = &raw.matcher {
            if !event.is_tool_event() {
                errors.push(err(
                    "matcher",
                    Some((matcher.line, matcher.column)),
                    format!(
                        "`matcher` only applies to pre_tool_use and post_tool_use, not {event}"
                    ),
                    "remove `matcher`, or change the event to a tool event",
                ));
                continue;
            }
            matcher.value.clone()
        } else {
            ToolFilter::All
        };
        counts[event_slot(event)] += 1;
        hooks.push(Hook {
            name: named
                .clone()
                .unwrap_or_else(|| format!("{event}#{}", counts[event_slot(event)])),
            named: named.is_some(),
            event,
            filter,
            command,
            timeout: raw
                .timeout
                .map(|t| t.value)
                .or(settings.timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
            on_error: raw.on_error.map(|o| o.value).unwrap_or_default(),
            enabled: raw.enabled.is_none_or(|e| e.value),
            env: raw
                .env
                .map(|e| e.value.into_iter().collect())
                .unwrap_or_default(),
            source,
            overrides,
        });
    }

    // Identical enabled handlers run once; the later one (its settings and place) wins.
    let mut deduplicated = Vec::new();
    let mut i = 0;
    while i < hooks.len() {
        let dup_of = hooks[i].enabled.then(|| {
            hooks[i + 1..].iter().position(|later| {
                later.enabled
                    && later.event == hooks[i].event
                    && later.command == hooks[i].command
                    && later.filter == hooks[i].filter
            })
        });
        match dup_of.flatten() {
            Some(offset) => {
                let removed = hooks.remove(i);
                deduplicated.push(Deduplicated {
                    kept: hooks[i + offset].name.clone(),
                    name: removed.name,
                    source: removed.source,
                });
            }
            None => i += 1,
        }
    }
    (hooks, deduplicated)
}

/// One line per `[[hooks]]` entry of a file, for the trust review: what it would run.
pub fn describe_entries(
    layer: Layer,
    file: &Path,
    text: &str,
    errors: &mut Vec<ConfigError>,
) -> Vec<String> {
    let parsed = parse_file(layer, file, text, errors);
    let mut lines: Vec<String> = parsed
        .hooks
        .iter()
        .map(|(source, raw)| {
            let mut line = format!("hooks[{}] (line {})", source.index, source.line);
            if let Some(name) = &raw.name {
                line.push_str(&format!(" name={:?}", name.value));
            }
            if let Some(event) = &raw.event {
                line.push_str(&format!(" event={}", event.value));
            }
            for filter in [&raw.tool, &raw.matcher].into_iter().flatten() {
                line.push_str(&format!(" {}", filter.value.describe().replace(" = ", "=")));
            }
            if let Some(enabled) = &raw.enabled {
                line.push_str(&format!(" enabled={}", enabled.value));
            }
            if let Some(env) = &raw.env {
                line.push_str(&format!(" env={:?}", env.value));
            }
            match &raw.command {
                Some(command) => line.push_str(&format!("\n             runs: {}", command.value)),
                None => line.push_str(" (overrides settings only)"),
            }
            line
        })
        .collect();
    if let Some(settings) = &parsed.settings {
        if !settings.is_empty() {
            lines.push(
                format!("[hook_settings] {settings}")
                    .trim_end()
                    .replace('\n', "; "),
            );
        }
    }
    lines
}
