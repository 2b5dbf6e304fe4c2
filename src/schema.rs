//! The JSON Schema of `ka.toml`'s `[[hooks]]` entries and `[hook_settings]`, for editors
//! (`ka-hooks schema`, shipped as `ka-hooks.schema.json`). The loader reads TOML by hand, so the
//! documentation structs here mirror its keys; tests check that the keys match the loader's and
//! that the shipped file is this module's output.
// Those doc comments are written for editors (plain text with `<root>`, `["a", "b"]`), not for
// rustdoc, whose HTML and link syntax they would break if written for it.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::config::OnError;
use crate::event::Event;

/// Pattern of a valid environment variable name (as the loader checks it).
const ENV_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";

/// # ka.toml (ka-hooks)
///
/// The parts of ka's config file that ka-hooks reads: `[[hooks]]` and `[hook_settings]`. Other
/// top-level keys belong to ka and are ignored here. Layers, lowest precedence first: user
/// ($KA_CONFIG_DIR/ka.toml or ~/.config/ka/ka.toml), project (<root>/.ka/ka.toml) and local
/// (<root>/.ka/ka.local.toml); project and local files run only once trusted (`ka-hooks trust`).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct KaTomlSchema {
    /// Hook entries. Hooks of all layers run user first, then project, then local, each in file
    /// order. An entry whose `name` equals an earlier hook's is merged over it key by key.
    pub hooks: Option<Vec<HookEntrySchema>>,
    /// Settings for every hook. `KA_HOOKS_TIMEOUT` and `KA_HOOKS_LOG` override them.
    pub hook_settings: Option<SettingsSchema>,
}

/// One hook: a shell command run at a fixed point of an agent session. A new hook needs `event` and
/// `command`; an entry that only names an earlier hook (`name` plus the keys it changes) overrides
/// that hook key by key.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = entry_rules)]
pub struct HookEntrySchema {
    /// Identity across layers (default "<event>#<n>"). A later entry with the same name, in this file
    /// or a later layer, is merged over this one key by key.
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// When the hook runs. Claude Code spellings (PreToolUse, Stop, ...) and `turn_end` (= stop) are
    /// accepted aliases.
    pub event: Option<EventName>,
    /// Tool calls the hook sees: a tool name or a list of names and globs ("mcp__*"), or a family:
    /// "@file_writes" (every tool that writes files), "@file_reads" (every tool that reads or
    /// searches them). In a guard, "write" and "edit" stand for every writer and "read" for every
    /// reader. Tool events (pre_tool_use, post_tool_use) only; absent: every tool. Set `tool` or
    /// `matcher`, not both.
    pub tool: Option<ToolSchema>,
    /// Alternative to `tool`, with Claude Code semantics: "*", "" or absent match every tool; only
    /// letters, digits, `_`, `-`, spaces, `,` and `|` make an exact list of names ("Edit|Write");
    /// anything else is an unanchored regex. Case-sensitive. On tool events it matches the tool;
    /// on session_start the `source` (startup|resume|clear|compact), on session_end the `reason`,
    /// on pre_compact / post_compact / setup the `trigger` (manual|auto), on notification the
    /// `notification_type`, on subagent_start / subagent_stop the `agent_type`.
    pub matcher: Option<String>,
    /// The shell command, run with `sh -c` (never a login shell) in the project root. It reads the
    /// JSON payload on stdin; exit 0 proceeds (stdout may be one JSON action object), exit 2 vetoes
    /// with stderr as the reason, anything else is a failure that `on_error` judges.
    #[schemars(length(min = 1))]
    pub command: Option<String>,
    /// Seconds (> 0, fractions allowed, at most a day) before the hook's whole process group is
    /// killed. Default: `[hook_settings] timeout`, else 60.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 86400))]
    pub timeout: Option<f64>,
    /// What a failing hook (crash, timeout, exit other than 0 and 2) means: "ignore" fails open
    /// (the failure is recorded and the event proceeds), "block" fails closed (a veto whose reason
    /// names the hook and the failure), "ask" puts the tool call to a human. Default: "block" on
    /// the events that can veto (pre_tool_use, user_prompt_submit, permission_request), "ignore"
    /// on every other.
    pub on_error: Option<OnErrorSchema>,
    /// false keeps the entry but never runs it (typically in a later layer, to turn off a hook by
    /// name).
    #[schemars(extend("default" = true))]
    pub enabled: Option<bool>,
    /// Extra environment variables for this hook (strings). Merged variable by variable when an
    /// entry overrides an earlier hook. Every hook also gets KA_EVENT, KA_PROJECT_DIR (=
    /// CLAUDE_PROJECT_DIR), KA_HOOK_NAME and, on tool events, KA_TOOL.
    #[schemars(extend("propertyNames" = { "pattern": ENV_NAME_PATTERN }))]
    pub env: Option<BTreeMap<String, String>>,
    /// Tool events only: globs relative to the project root (`*` stays in a directory, `**`
    /// crosses them; a leading `!` excludes) that a path the call touches must match. A hook
    /// whose `paths` match nothing is never spawned; a call that touches no path does not match.
    pub paths: Option<Vec<String>>,
    /// Tool events only: one Claude Code permission rule the call must match, checked before
    /// spawning: `Bash(git commit *)`, `Edit(*.ts)`, `Write(src/**)`, `WebFetch(domain:x.com)`.
    #[serde(rename = "if")]
    #[schemars(rename = "if")]
    pub if_rule: Option<String>,
    /// Events that cannot be vetoed only: true runs the hook in the background; its results
    /// arrive with the next dispatch of the session. A newer run for the same paths supersedes
    /// an older one still running.
    #[serde(rename = "async")]
    #[schemars(rename = "async", extend("default" = false))]
    pub is_async: Option<bool>,
    /// false: report-only. The hook runs and the outcome says what it would have done (block,
    /// ask, rewrite, mark as error); nothing is applied.
    #[schemars(extend("default" = true))]
    pub enforce: Option<bool>,
    /// Text the host may show while the hook runs (Claude Code's `statusMessage`).
    pub status_message: Option<String>,
    /// What the hook may write and reach (Linux, Landlock; docs/sandbox.md). Project and local
    /// hooks default to "project"; user and managed hooks run unconfined unless they set it.
    pub sandbox: Option<SandboxSchema>,
}

/// A sandbox profile, or the places a hook may write and whether it may use the network.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SandboxSchema {
    /// "project": write the project root and the temp dir, no TCP connect or bind;
    /// "read-only": write nothing, no TCP; "off": unconfined (announced on every dispatch).
    Profile(#[schemars(extend("enum" = ["project", "read-only", "off"]))] String),
    /// Reading and running programs stay allowed everywhere.
    Rules(SandboxRulesSchema),
}

/// Explicit sandbox rules.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxRulesSchema {
    /// Directories (or files) the hook may write under: absolute, `~/…`, `{root}…` (its project
    /// root) or `{tmp}…` (the temp dir). Default: none.
    pub write: Option<Vec<String>>,
    /// true allows TCP connect and bind. Default: false.
    #[schemars(extend("default" = false))]
    pub network: Option<bool>,
}

/// A tool name or glob, or a list of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ToolSchema {
    /// One tool name or glob, such as "write" or "mcp__*".
    One(#[schemars(length(min = 1))] String),
    /// Tool names, families or globs, such as ["@file_writes", "bash"].
    Many(#[schemars(length(min = 1), inner(length(min = 1)))] Vec<String>),
}

/// What a failing hook means (documented on [`HookEntrySchema::on_error`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnErrorSchema {
    // Plain comments, not doc comments: documented variants would make a `oneOf` of `const`s, and
    // editors complete the values of a plain `enum` best.
    Ignore,
    Block,
    Ask,
}

/// An event name: canonical, an alias, or a Claude Code spelling (see [`event_names`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct EventName(pub String);

impl JsonSchema for EventName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EventName".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = Schema::default();
        schema.insert("type".into(), json!("string"));
        schema.insert("enum".into(), json!(event_names()));
        schema
    }
}

impl From<OnError> for OnErrorSchema {
    // Exhaustive on purpose: a new `OnError` variant does not compile until it is documented here.
    fn from(value: OnError) -> Self {
        match value {
            OnError::Ignore => OnErrorSchema::Ignore,
            OnError::Block => OnErrorSchema::Block,
            OnError::Ask => OnErrorSchema::Ask,
        }
    }
}

/// Settings for every hook, layered like the hooks (later layers win).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsSchema {
    /// Default timeout in seconds (> 0, fractions allowed) of every hook that sets none. Without it:
    /// 60. The KA_HOOKS_TIMEOUT environment variable overrides it.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 86400))]
    pub timeout: Option<f64>,
    /// true turns every hook of every layer off (as KA_HOOKS_DISABLE=1 does).
    #[schemars(extend("default" = false))]
    pub disable_all: Option<bool>,
    /// Path of the JSONL audit log: one line per hook run and per outcome. A relative path is
    /// relative to the folder of the file that sets it. KA_HOOKS_LOG or `ka-hooks --log FILE`
    /// override it.
    pub log: Option<String>,
    /// User (or managed) layer ONLY: projects under these folders load without review. Absolute
    /// paths or `~/…`. In a project or local file this key is an error (settings of the trust
    /// gate come only from your own file).
    pub trusted_roots: Option<Vec<String>>,
    /// User (or managed) layer ONLY: what the guards of a trusted project file that changed or
    /// was removed do: "block" (default: they block every call they would have matched until a
    /// person reviews the change) or "skip".
    #[schemars(extend("enum" = ["block", "skip"], "default" = "block"))]
    pub stale: Option<String>,
    /// User (or managed) layer ONLY: false turns off the built-in check that makes a tool call
    /// aimed at ka's own files (any ka.toml, ka.local.toml, the trust store) ask a human.
    #[schemars(extend("default" = true))]
    pub protect_ka_files: Option<bool>,
    /// Managed layer ONLY: true runs the managed file's hooks and no others.
    #[schemars(extend("default" = false))]
    pub allow_managed_hooks_only: Option<bool>,
    /// How many times stop hooks (exit 2, `keep_going`, Claude's `decision: "block"` on Stop)
    /// may keep one turn going; past it the request is recorded, not applied, and a note says
    /// so. Each continuation counts one, a repeated one included: a cap of N allows exactly N.
    /// Default 8 (Claude Code's own cap; `ka-hooks install claude` raises Claude Code's to match
    /// a larger one).
    #[schemars(extend("minimum" = 0, "maximum" = 100, "default" = 8))]
    pub max_continuations: Option<u32>,
    /// User (or managed) layer ONLY: after this many denials by one guard within a turn, every
    /// further tool call that guard matches in that turn asks a human (a model retrying around
    /// a guard meets a person). 0 turns it off. Default 3.
    #[schemars(extend("minimum" = 0, "maximum" = 100, "default" = 3))]
    pub denial_backstop: Option<u32>,
    /// The default `sandbox` of this file's hooks (an entry's own `sandbox` wins).
    pub sandbox: Option<SandboxSchema>,
    /// User (or managed) layer ONLY: the sandbox of project and local hooks that declare none
    /// (default "project"); "off" runs every project hook unconfined, announced on every
    /// dispatch. A project file cannot set it.
    pub sandbox_project_hooks: Option<SandboxSchema>,
    /// User (or managed) layer ONLY: true makes a hook that would be confined but cannot be (no
    /// Landlock, or it declares "off") fail instead of running unconfined; its `on_error`
    /// decides. A project file cannot set it.
    #[schemars(extend("default" = false))]
    pub require_sandbox: Option<bool>,
}

/// Every event name the loader accepts: canonical names, `turn_end`, then Claude Code spellings.
pub fn event_names() -> Vec<String> {
    let mut names: Vec<String> = Event::valid_names()
        .split(", ")
        .map(str::to_owned)
        .collect();
    for event in Event::ALL {
        for alias in event.aliases() {
            let alias = (*alias).to_owned();
            if !names.contains(&alias) {
                names.push(alias);
            }
        }
    }
    names
}

fn tool_event_names() -> Vec<String> {
    event_names()
        .into_iter()
        .filter(|n| n.parse::<Event>().is_ok_and(Event::is_tool_event))
        .collect()
}

/// Rules across keys that the derive cannot express: a new hook needs `event` and `command` (or
/// a `name` to override an earlier hook), `tool` and `matcher` exclude each other, and both apply
/// to tool events only.
fn entry_rules(schema: &mut Schema) {
    let tool_events = tool_event_names();
    let only_on_tool_events = |key: &str| {
        json!({
            "if": { "required": ["event", key] },
            "then": { "properties": { "event": { "enum": tool_events } } }
        })
    };
    schema.insert(
        "anyOf".into(),
        json!([{ "required": ["event", "command"] }, { "required": ["name"] }]),
    );
    let matcher_events: Vec<String> = event_names()
        .into_iter()
        .filter(|n| {
            n.parse::<Event>()
                .is_ok_and(|e| e.matcher_field().is_some())
        })
        .collect();
    let matcher_rule = json!({
        "if": { "required": ["event", "matcher"] },
        "then": { "properties": { "event": { "enum": matcher_events } } }
    });
    schema.insert("not".into(), json!({ "required": ["tool", "matcher"] }));
    schema.insert(
        "allOf".into(),
        json!([only_on_tool_events("tool"), matcher_rule]),
    );
}

/// Tidy the generated schema for TOML editors: TOML has no null (drop the `null` that schemars
/// adds for `Option` fields), `format: double` is no JSON Schema format, and a description is
/// prose whose doc-comment line breaks are not meant.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("format").and_then(Value::as_str) == Some("double") {
                map.remove("format");
            }
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = text
                    .split("\n\n")
                    .map(|p| p.lines().map(str::trim).collect::<Vec<_>>().join(" "))
                    .collect::<Vec<_>>()
                    .join("\n\n");
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            if let Some(Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type").is_none_or(|t| t != "null"));
                if any.len() == 1 {
                    if let Some(Value::Object(only)) = any.pop() {
                        map.remove("anyOf");
                        for (k, v) in only {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
            map.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// The schema, as a JSON value (JSON Schema draft 7, which taplo and Even Better TOML read).
pub fn schema() -> Value {
    let mut settings = SchemaSettings::draft07();
    // No `$ref`s: in draft 7 a `$ref` hides its sibling `description`, which editors show.
    settings.inline_subschemas = true;
    let mut value = settings
        .into_generator()
        .into_root_schema_for::<KaTomlSchema>()
        .to_value();
    tidy(&mut value);
    // `$schema`, `title` and `description` first, for whoever opens the file.
    let Value::Object(mut map) = value else {
        return value;
    };
    let mut ordered = serde_json::Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = map.remove(key) {
            ordered.insert(key.to_owned(), v);
        }
    }
    ordered.extend(map);
    Value::Object(ordered)
}

/// The schema as `ka-hooks schema` prints it and `ka-hooks.schema.json` holds it.
pub fn schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::config::{HOOK_KEYS, SETTINGS_KEYS};

    const ENTRY: &str = "/properties/hooks/items/properties";
    const SETTINGS: &str = "/properties/hook_settings/properties";

    fn keys(schema: &Value, pointer: &str) -> BTreeSet<String> {
        schema
            .pointer(pointer)
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("no properties at {pointer} in {schema:#}"))
            .keys()
            .cloned()
            .collect()
    }

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    #[test]
    fn hook_entry_keys_equal_the_keys_the_loader_accepts() {
        assert_eq!(keys(&schema(), ENTRY), set(HOOK_KEYS));
    }

    #[test]
    fn settings_keys_equal_the_keys_the_loader_accepts() {
        assert_eq!(keys(&schema(), SETTINGS), set(SETTINGS_KEYS));
    }

    #[test]
    fn every_event_name_in_the_schema_parses_and_every_event_is_named() {
        let names = event_names();
        for name in &names {
            assert!(name.parse::<Event>().is_ok(), "`{name}` is not an event");
        }
        for event in Event::ALL {
            assert!(names.iter().any(|n| n == event.as_str()));
            assert!(names.iter().any(|n| n == event.claude_name()));
        }
        assert!(names.iter().any(|n| n == "turn_end"));
    }

    #[test]
    fn on_error_values_are_the_loaders() {
        let schema = schema();
        let text = schema
            .pointer("/properties/hooks/items/properties/on_error/enum")
            .map(Value::to_string)
            .unwrap_or_default();
        for value in [OnError::Ignore, OnError::Block, OnError::Ask] {
            assert!(text.contains(&format!("\"{}\"", value.as_str())), "{text}");
            let parsed: OnErrorSchema =
                serde_json::from_value(json!(value.as_str())).expect("parses");
            assert_eq!(parsed, OnErrorSchema::from(value));
        }
    }

    #[test]
    fn the_schema_allows_no_null_since_toml_has_none() {
        // Neither a `"null"` type nor a null enum value (no description says "null" either).
        assert!(!schema().to_string().contains("null"));
    }

    #[test]
    fn every_description_is_present() {
        let schema = schema();
        for def in [ENTRY, SETTINGS] {
            for (key, prop) in schema
                .pointer(def)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                assert!(
                    prop.get("description").is_some_and(Value::is_string),
                    "{def}.{key} has no description"
                );
            }
        }
    }
}
