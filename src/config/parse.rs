//! One layer file's text into entries, with `file:line:column` errors for every problem.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

mod hook_keys;
mod settings_keys;

use super::error::{ConfigError, Text};
use super::filter::ToolFilter;
use super::hook::{Layer, OnError, Source};
use super::paths_filter::PathFilter;
use super::rule::Rule;
use crate::event::Event;

/// Longest timeout accepted: anything longer is certainly a typo.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

type SpannedTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;
/// The two parts of `ka.toml` this crate owns; every other top-level key is ka's and ignored.
#[derive(Deserialize)]
struct RawFile {
    #[serde(default)]
    hooks: Option<Vec<Spanned<SpannedTable>>>,
    #[serde(default)]
    hook_settings: Option<Spanned<SpannedTable>>,
}
#[derive(Debug, Clone)]
pub(super) struct At<T> {
    pub value: T,
    pub line: usize,
    pub column: usize,
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
pub(super) struct RawHook {
    pub name: Option<At<String>>,
    pub event: Option<At<Event>>,
    /// Compiled while parsing, once: `tool` and `matcher` are two spellings of one filter.
    pub tool: Option<At<ToolFilter>>,
    pub matcher: Option<At<ToolFilter>>,
    pub command: Option<At<String>>,
    pub timeout: Option<At<Duration>>,
    pub on_error: Option<At<OnError>>,
    pub enabled: Option<At<bool>>,
    pub env: Option<At<BTreeMap<String, String>>>,
    /// Boxed, as `rule`: both are large and rare, and every entry (and hook) carries the space.
    pub paths: Option<At<Box<PathFilter>>>,
    pub rule: Option<At<Box<Rule>>>,
    pub is_async: Option<At<bool>>,
    pub enforce: Option<At<bool>>,
    pub status_message: Option<At<String>>,
    /// `sandbox`: what the hook may write and reach (see [`crate::sandbox`]).
    pub sandbox: Option<At<crate::sandbox::Declared>>,
}

impl RawHook {
    /// The keys this entry sets, in documentation order.
    pub fn keys(&self) -> Vec<String> {
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
        push(self.paths.is_some(), "paths");
        push(self.rule.is_some(), "if");
        push(self.is_async.is_some(), "async");
        push(self.enforce.is_some(), "enforce");
        push(self.status_message.is_some(), "status_message");
        push(self.sandbox.is_some(), "sandbox");
        keys
    }

    /// Merge `over` key by key over `self`. `tool` and `matcher` are one filter: setting
    /// either replaces the other. `env` merges by variable.
    pub fn merge(&mut self, over: RawHook) {
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
        take!(
            name,
            event,
            tool,
            matcher,
            command,
            timeout,
            on_error,
            enabled,
            paths,
            rule,
            is_async,
            enforce,
            status_message,
            sandbox
        );
    }
}

/// One parsed layer file.
#[derive(Clone)]
pub(super) struct ParsedFile {
    pub layer: Layer,
    /// The file's path, which every entry's [`Source`] shares.
    pub path: Arc<Path>,
    /// The project root of a project or local file: its hooks run there.
    pub root: Option<PathBuf>,
    pub hooks: Vec<(Source, RawHook)>,
    pub settings: Option<toml::Table>,
}

impl ParsedFile {
    fn empty(layer: Layer, path: &Path) -> ParsedFile {
        ParsedFile {
            layer,
            path: Arc::from(path),
            root: None,
            hooks: Vec::new(),
            settings: None,
        }
    }

    /// `[hook_settings] sandbox`: the default of this file's hooks (already validated).
    pub fn sandbox_default(&self) -> Option<crate::sandbox::Declared> {
        self.settings
            .as_ref()
            .and_then(|s| s.get("sandbox"))
            .and_then(|v| crate::sandbox::Declared::from_toml(v).ok())
    }

    /// Move entry `i` out, leaving an empty one (no keys, line 0) in its place.
    pub fn take(&mut self, i: usize) -> (Source, RawHook) {
        let empty = Source {
            layer: self.layer,
            file: Arc::clone(&self.path),
            index: i,
            line: 0,
        };
        let (source, raw) = &mut self.hooks[i];
        (std::mem::replace(source, empty), std::mem::take(raw))
    }
}

/// The keys a `[[hooks]]` entry takes.
pub const HOOK_KEYS: &[&str] = &[
    "name",
    "event",
    "tool",
    "matcher",
    "paths",
    "if",
    "command",
    "timeout",
    "on_error",
    "enabled",
    "enforce",
    "async",
    "status_message",
    "env",
    "sandbox",
];
/// The keys `[hook_settings]` takes.
pub const SETTINGS_KEYS: &[&str] = &[
    "timeout",
    "disable_all",
    "log",
    "max_continuations",
    "trusted_roots",
    "stale",
    "protect_ka_files",
    "allow_managed_hooks_only",
    "denial_backstop",
    "sandbox",
    "sandbox_project_hooks",
    "require_sandbox",
];
/// The largest `denial_backstop` accepted: past it, the backstop would never meet a person.
pub const DENIAL_BACKSTOP_LIMIT: i64 = 100;
/// The largest `max_continuations` accepted: a loop guard must stay a guard.
pub const MAX_CONTINUATIONS_LIMIT: i64 = 100;
/// Settings of the gate itself: only the user's own file (or the managed one) may set them.
pub(super) const GATE_KEYS: &[&str] = &[
    "trusted_roots",
    "stale",
    "protect_ka_files",
    "denial_backstop",
    "sandbox_project_hooks",
    "require_sandbox",
];

/// `[hook_settings]` keys that act beyond the project that sets them: only the user's own file
/// (or the managed one) may set them. `log` is where ka-hooks itself (unconfined) appends;
/// `max_continuations` caps the stop hooks of every layer, the user's included.
pub(super) const USER_ONLY_KEYS: &[&str] = &["log", "max_continuations"];

/// How to write a `sandbox` key.
const SANDBOX_HELP: &str = "write a profile (`sandbox = \"project\"`, `\"read-only\"`, `\"off\"`) or \
                            `sandbox = { write = [\"{root}\", \"~/.cache/tool\"], network = false }`";

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

/// The filters a file compiled so far, by what was written: a file that repeats
/// `matcher = "Edit|Write"` or `tool = "mcp__*"` on every hook compiles each once (a compiled
/// regex or glob set is shared, not copied, by a clone).
#[derive(Default)]
struct Compiled {
    tools: HashMap<Vec<String>, ToolFilter>,
    matchers: HashMap<String, ToolFilter>,
}

/// The span of a `[name]` header line (one bracket) in `text`, when there is one: written where
/// `[[name]]`, an array of tables, was meant.
pub(crate) fn single_bracket_table(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let header = format!("[{name}]");
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let bare = trimmed.split('#').next().unwrap_or("").trim();
        if bare == header {
            let start = offset + (line.len() - line.trim_start().len());
            return Some(start..start + header.len());
        }
        offset += line.len();
    }
    None
}

pub(super) fn parse_file(
    layer: Layer,
    path: &Path,
    text: &str,
    errors: &mut Vec<ConfigError>,
) -> ParsedFile {
    let t = Text::new(path, text);
    let mut parsed = ParsedFile::empty(layer, path);
    let raw: RawFile = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            let message = e.message().trim().to_owned();
            // `[hooks]` for `[[hooks]]`: serde's "expected a sequence" names neither.
            if let Some(span) = single_bracket_table(text, "hooks") {
                errors.push(
                    t.error(
                        Some(span),
                        None,
                        format!(
                            "invalid TOML: {message}: `[hooks]` is one table, not a list of hooks"
                        ),
                        Some(
                            "write `[[hooks]]` (two brackets): each hook is one `[[hooks]]` entry"
                                .into(),
                        ),
                    ),
                );
                return parsed;
            }
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
        parsed.settings = parse_settings(&t, parsed.layer, settings.into_inner(), errors);
    }
    let entries = raw.hooks.unwrap_or_default();
    // Sized once: an entry is large, and growing by doubling copies them all again and again.
    parsed.hooks.reserve_exact(entries.len());
    let mut compiled = Compiled::default();
    parse_entries(&t, entries, &mut compiled, &mut parsed, errors);
    parsed
}

/// `[[hooks]]` entries into `parsed.hooks`, numbered by their position in the file (an entry
/// with errors keeps its number).
fn parse_entries(
    t: &Text<'_>,
    entries: Vec<Spanned<SpannedTable>>,
    compiled: &mut Compiled,
    parsed: &mut ParsedFile,
    errors: &mut Vec<ConfigError>,
) {
    for (index, entry) in entries.into_iter().enumerate() {
        let (line, _) = t.position(entry.span().start);
        let source = Source {
            layer: parsed.layer,
            file: Arc::clone(&parsed.path),
            index,
            line,
        };
        if let Some(hook) = parse_hook(t, index, entry.into_inner(), compiled, errors) {
            parsed.hooks.push((source, hook));
        }
    }
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
        let span = value.span();
        let value = value.into_inner();
        for problem in settings_keys::problems(layer, &key, &value) {
            let at = if problem.on_key { &key_span } else { &span };
            errors.push(t.error(
                Some(at.clone()),
                Some(format!("hook_settings.{key}")),
                problem.message,
                problem.help,
            ));
        }
        out.insert(key, value);
    }
    (errors.len() == before).then_some(out)
}

/// Seconds as a duration: a number > 0 and at most a day.
pub(super) fn seconds(value: &toml::Value) -> Result<Duration, String> {
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

/// `read`'s value into `slot`, at `pos`; or its failure.
fn set<T>(
    slot: &mut Option<At<T>>,
    read: Result<T, hook_keys::Fail>,
    pos: (usize, usize),
    fail: &mut impl FnMut(hook_keys::Fail),
) {
    match read {
        Ok(value) => *slot = Some(At::new(value, pos)),
        Err(why) => fail(why),
    }
}

fn parse_hook(
    t: &Text<'_>,
    index: usize,
    table: SpannedTable,
    compiled: &mut Compiled,
    errors: &mut Vec<ConfigError>,
) -> Option<RawHook> {
    let before = errors.len();
    let mut hook = RawHook::default();
    for (key, value) in table {
        let key_span = key.span();
        let key = key.into_inner();
        // Only an error names the key path: most keys have none, so it is built on demand.
        let path = || format!("hooks[{index}].{key}");
        let span = value.span();
        let pos = t.position(span.start);
        let value = value.into_inner();
        let mut fail = |(message, help): hook_keys::Fail| {
            errors.push(t.error(Some(span.clone()), Some(path()), message, help));
        };
        let v = &value;
        match key.as_str() {
            "name" => set(&mut hook.name, hook_keys::name(v), pos, &mut fail),
            "event" => set(&mut hook.event, hook_keys::event(v), pos, &mut fail),
            "tool" => set(&mut hook.tool, hook_keys::tool(v, compiled), pos, &mut fail),
            "matcher" => set(
                &mut hook.matcher,
                hook_keys::matcher(v, compiled),
                pos,
                &mut fail,
            ),
            "command" => set(&mut hook.command, hook_keys::command(v), pos, &mut fail),
            "timeout" => set(&mut hook.timeout, hook_keys::timeout(v), pos, &mut fail),
            "on_error" => set(&mut hook.on_error, hook_keys::on_error(v), pos, &mut fail),
            "enabled" => set(&mut hook.enabled, hook_keys::boolean(v), pos, &mut fail),
            "paths" => set(&mut hook.paths, hook_keys::paths(v), pos, &mut fail),
            "if" => set(&mut hook.rule, hook_keys::rule(v), pos, &mut fail),
            "async" => set(&mut hook.is_async, hook_keys::boolean(v), pos, &mut fail),
            "enforce" => set(&mut hook.enforce, hook_keys::boolean(v), pos, &mut fail),
            "status_message" => set(
                &mut hook.status_message,
                hook_keys::status_message(v),
                pos,
                &mut fail,
            ),
            "sandbox" => set(&mut hook.sandbox, hook_keys::sandbox(v), pos, &mut fail),
            "env" => match hook_keys::env(v) {
                Ok(env) => hook.env = Some(At::new(env, pos)),
                Err(fails) => fails.into_iter().for_each(&mut fail),
            },
            _ => errors.push(t.error(
                Some(key_span),
                Some(path()),
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

/// One line per `[[hooks]]` entry of a file, for the trust review: what it would run.
pub fn describe_entries(
    layer: Layer,
    file: &Path,
    text: &str,
    errors: &mut Vec<ConfigError>,
) -> Vec<String> {
    let parsed = parse_file(layer, file, text, errors);
    let file_sandbox = parsed.sandbox_default();
    let mut lines: Vec<String> = parsed
        .hooks
        .iter()
        .map(|(source, raw)| describe_entry(layer, source, raw, file_sandbox.as_ref()))
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

/// The review's line of one entry: its keys, then the command it runs.
fn describe_entry(
    layer: Layer,
    source: &Source,
    raw: &RawHook,
    file_sandbox: Option<&crate::sandbox::Declared>,
) -> String {
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
    // Every key that decides what a guard guards (a review that hides
    // `enforce = false` or a narrowing `paths` hides a switched-off guard).
    if let Some(enforce) = &raw.enforce {
        line.push_str(&format!(" enforce={}", enforce.value));
    }
    if let Some(paths) = &raw.paths {
        line.push_str(&format!(" paths={:?}", paths.value.patterns));
    }
    if let Some(rule) = &raw.rule {
        line.push_str(&format!(" if={:?}", rule.value.source));
    }
    if let Some(on_error) = &raw.on_error {
        line.push_str(&format!(" on_error={}", on_error.value.as_str()));
    }
    if let Some(timeout) = &raw.timeout {
        line.push_str(&format!(" timeout={}s", timeout.value.as_secs_f64()));
    }
    if let Some(is_async) = &raw.is_async {
        line.push_str(&format!(" async={}", is_async.value));
    }
    line.push_str(&describe_sandbox(layer, raw, file_sandbox));
    match &raw.command {
        Some(command) => line.push_str(&format!(
            "\n             runs: {}",
            crate::terminal::escape(&command.value)
        )),
        None => line.push_str(" (no command: changes the hook of this name)"),
    }
    line
}

/// What the hook may write and reach: a project hook that declares nothing runs with the
/// file's default, else the `project` profile.
fn describe_sandbox(
    layer: Layer,
    raw: &RawHook,
    file_sandbox: Option<&crate::sandbox::Declared>,
) -> String {
    match (&raw.sandbox, file_sandbox) {
        (Some(declared), _) => format!(" sandbox={}", declared.value.describe()),
        (None, Some(default)) => format!(" sandbox={} (file default)", default.describe()),
        (None, None) if layer.is_gated() => format!(
            " sandbox={} (default)",
            crate::sandbox::Rules::profile("project")
                .map(|r| r.describe())
                .unwrap_or_default()
        ),
        (None, None) => String::new(),
    }
}
