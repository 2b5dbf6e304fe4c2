//! `ka-hooks import claude`: turn Claude Code's hooks into `[[hooks]]` entries, each under a
//! comment naming its origin and what could not be carried over. Events and matchers become ka's
//! (through the translation table), each entry's TOML is read back and must be the same hook, and
//! `--write` only appends. docs/adapters.md says what becomes of each key.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::install::{is_adapter_command, user_settings};
use super::table::{HookFile, Import};
use super::{tools, Agent, Flavour};
use crate::config::{LoadOptions, OnError};
use crate::event::Event;
use crate::paths;
use crate::terminal::escape_path;

/// Options of `ka-hooks import`.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The agent whose hooks to import (the agents whose entry of the adapter table has an
    /// import source: Codex and Gemini CLI settings are not read).
    #[arg(value_parser = importable())]
    pub agent: Agent,
    /// Read this settings file (repeatable) instead of the project's `.claude/settings.json`
    /// and `.claude/settings.local.json`.
    #[arg(long, value_name = "FILE")]
    pub from: Vec<PathBuf>,
    /// Read the user's Claude Code settings and write to the user's ka.toml.
    #[arg(long)]
    pub user: bool,
    /// Append the entries to `.ka/ka.toml` (the user's ka.toml with --user) instead of printing.
    #[arg(long)]
    pub write: bool,
}

/// The agents `import` offers, by command.
fn importable() -> impl clap::builder::TypedValueParser<Value = Agent> {
    let offered = Agent::ALL
        .into_iter()
        .filter(|a| !matches!(a.adapter().import(), Import::Unsupported(_)))
        .map(Agent::command);
    clap::builder::TypedValueParser::try_map(
        clap::builder::PossibleValuesParser::new(offered),
        |name: String| {
            Agent::ALL
                .into_iter()
                .find(|a| a.command() == name)
                .ok_or("no such agent")
        },
    )
}

/// What an import found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// The `[[hooks]]` entries, each with its origin comment.
    pub entries: Vec<Entry>,
    /// What was not imported, and why.
    pub skipped: Vec<String>,
}

/// One imported hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub event: Event,
    /// The ka matcher (`None`: every tool, or not a tool event).
    pub matcher: Option<String>,
    pub command: String,
    /// The TOML text: comment lines, then the `[[hooks]]` table.
    pub toml: String,
}

/// Reads the hooks of one Claude Code settings file (`label` names it in comments).
pub fn read_settings(label: &str, text: &str, imported: &mut Imported) -> Result<(), String> {
    // Everything of the file that reaches a comment or a message is shown safely.
    let label = shown(label);
    let settings: Value =
        serde_json::from_str(text).map_err(|e| format!("{label}: not valid JSON ({e})"))?;
    let Some(hooks) = settings.get("hooks") else {
        return Ok(());
    };
    let hooks = hooks
        .as_object()
        .ok_or_else(|| format!("{label}: `hooks` is not a JSON object"))?;
    for (event_name, groups) in hooks {
        let shown_event = shown(event_name);
        let Some(groups) = groups.as_array() else {
            imported
                .skipped
                .push(format!("{label}: hooks.{shown_event} is not an array"));
            continue;
        };
        let Some((event, forced)) = import_event(&label, event_name, groups, imported) else {
            continue;
        };
        for (gi, group) in groups.iter().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str).unwrap_or("");
            let Some(list) = group.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            for (hi, hook) in list.iter().enumerate() {
                let origin = format!("{label}: hooks.{shown_event}[{gi}].hooks[{hi}]");
                let (matcher, said) = match &forced {
                    Some(forced) => {
                        let said =
                            (!matcher.trim().is_empty() && matcher.trim() != "*").then(|| {
                                format!(
                                    "Claude Code matcher \"{}\" not imported: ka runs {shown_event} as \
                                 `{event}`, matched on `{}`",
                                    shown(matcher),
                                    event.matcher_field().unwrap_or("nothing")
                                )
                            });
                        (forced.as_str(), said)
                    }
                    None => (matcher, None),
                };
                match entry(Agent::Claude, &origin, event, matcher, hook, said) {
                    Ok(Some(entry)) => imported.entries.push(named(entry, event_name, matcher)),
                    Ok(None) => {}
                    Err(why) => imported.skipped.push(format!("{origin}: {why}")),
                }
            }
        }
    }
    Ok(())
}

/// The ka event a Claude Code event's hooks are imported as, and the matcher it forces: an event
/// ka has no event for is imported as `observe`, selected by the agent's event name (the adapter
/// runs such events as `observe`); StopFailure as `stop` with `matcher = "error"` (the adapter
/// runs it as `stop` with `stop: "error"`). `None` for WorktreeCreate, whose hooks are skipped.
fn import_event(
    label: &str,
    event_name: &str,
    groups: &[Value],
    imported: &mut Imported,
) -> Option<(Event, Option<String>)> {
    let shown_event = shown(event_name);
    let event = Agent::Claude
        .events()
        .iter()
        .find(|row| row.name == event_name && row.flavour == Flavour::Plain)
        .map(|row| row.event);
    Some(match event {
        Some(event) => (event, None),
        None if event_name == "WorktreeCreate" => {
            let count: usize = groups
                .iter()
                .filter_map(|g| g.get("hooks")?.as_array().map(Vec::len))
                .sum();
            if count > 0 {
                imported.skipped.push(format!(
                    "{label}: {count} hook(s) of {shown_event}: a WorktreeCreate hook creates \
                     the worktree and prints its path, and ka hooks cannot answer with a \
                     path (keep it in Claude Code's settings)"
                ));
            }
            return None;
        }
        None if event_name == "StopFailure" => (Event::Stop, Some("error".to_owned())),
        None => (
            Event::Observe,
            Some(format!("^{}$", regex_escape(event_name))),
        ),
    })
}

/// `entry` with a `name` of its own, from where it came (Claude's event and matcher) and its
/// command: a default name (`pre_tool_use#2`) counts the hooks of every layer, so it would shift
/// when the user's file gains or loses a hook, and name nothing in any file.
fn named(mut entry: Entry, claude_event: &str, matcher: &str) -> Entry {
    let event: String = claude_event
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let hash = super::hookfile::fnv(&format!("{matcher}\n{}", entry.command)) as u32;
    let line = format!("name = \"claude-{event}-{hash:08x}\"\n");
    let at = entry
        .toml
        .find("[[hooks]]\n")
        .map_or(0, |at| at + "[[hooks]]\n".len());
    entry.toml.insert_str(at, &line);
    entry
}

/// `name` with regex metacharacters escaped (event names are plain words, but an unknown one
/// is data from a settings file).
fn regex_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_punctuation() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A hook entry's `cwd` and `env` (GitHub Copilot's and Antigravity's entries have them) in
/// ka's terms: the command changes to `cwd` first, and fails when it cannot (relative to the
/// project root, where ka runs it, as the agent takes it relative to the repository root); a literal `env` value becomes
/// ka's `env`, and one that expands variables (`$HOME/bin`), as the agent expands it, an
/// `export` before the command, with only `$NAME` and `${NAME}` left to the shell.
fn with_cwd_and_env(
    command: &str,
    hook: &Value,
) -> Result<(String, Vec<(String, String)>), String> {
    let mut prefix = String::new();
    if let Some(cwd) = hook.get("cwd") {
        let cwd = cwd.as_str().ok_or("`cwd` is not a string")?;
        if !cwd.is_empty() && cwd != "." {
            prefix.push_str(&format!("cd {} || exit; ", sh_single(cwd)));
        }
    }
    let mut env = Vec::new();
    if let Some(vars) = hook.get("env") {
        let vars = vars.as_object().ok_or("`env` is not a JSON object")?;
        for (name, value) in vars {
            let value = value
                .as_str()
                .ok_or_else(|| format!("env `{}` is not a string", shown(name)))?;
            let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(format!("env `{}` is not a variable name", shown(name)));
            }
            if value.contains('$') {
                prefix.push_str(&format!("export {name}={}; ", sh_expanding(value)));
            } else {
                env.push((name.clone(), value.to_owned()));
            }
        }
    }
    Ok((format!("{prefix}{command}"), env))
}

/// `text` as one single-quoted shell word.
fn sh_single(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` as one double-quoted shell word in which `$NAME` and `${NAME}` expand and nothing else
/// does (no command substitution, no backquotes).
fn sh_expanding(text: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' if chars
                .peek()
                .is_some_and(|n| *n == '{' || n.is_ascii_alphabetic() || *n == '_') =>
            {
                out.push('$')
            }
            '$' | '"' | '\\' | '`' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Hook keys of Claude Code the entry reads; any other is named in the comment.
const READ_KEYS: &[&str] = &[
    "type",
    "command",
    "cwd",
    "env",
    "timeout",
    "statusMessage",
    "async",
    "if",
    "onFailure",
    "failClosed",
];

/// The longest timeout ka accepts, in seconds (a day): a longer one would make the file an error.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Claude Code's timeout of a `command` hook that sets none: 600 seconds (hooks reference,
/// <https://code.claude.com/docs/en/hooks>, "Hook configuration": command hooks 600 s, `prompt`
/// 30 s, `agent` 60 s). ka's default is 60, so an imported hook without one gets Claude's,
/// written out.
pub const CLAUDE_DEFAULT_TIMEOUT_SECS: u64 = 600;

/// The command of a `command` hook; `None` for the adapter's own entry. Another `type` has no
/// ka equivalent.
fn command_of(agent: Agent, hook: &Value) -> Result<Option<&str>, String> {
    let kind = hook
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("command");
    if kind != "command" {
        return Err(format!(
            "a `{}` hook has no ka equivalent (ka runs commands; Claude Code's `prompt` and \
             `agent` hooks ask a model, `http` hooks post to a URL)",
            shown(kind)
        ));
    }
    let command = hook
        .get("command")
        .and_then(Value::as_str)
        .ok_or("no `command` string")?;
    Ok((!is_adapter_command(command, agent)).then_some(command))
}

/// The comment naming the hook's keys ka has no equivalent for, if it has any.
fn unread_keys(hook: &Value) -> Option<String> {
    let extra: Vec<String> = hook
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !READ_KEYS.contains(&k.as_str()))
        .map(|(k, v)| format!("{} = {}", shown(k), shown(&v.to_string())))
        .collect();
    (!extra.is_empty()).then(|| format!("not imported (no ka equivalent): {}", extra.join(", ")))
}

/// One `[[hooks]]` entry from one command hook of `agent`, given in Claude Code's keys
/// (`command`, `timeout`, `statusMessage`, `async`, `if`; any other key is named in the
/// comment). `None` for the adapter's own entry.
pub(crate) fn entry(
    agent: Agent,
    origin: &str,
    event: Event,
    matcher: &str,
    hook: &Value,
    said: Option<String>,
) -> Result<Option<Entry>, String> {
    let Some(command) = command_of(agent, hook)? else {
        return Ok(None);
    };
    let (command, env) = with_cwd_and_env(command, hook)?;
    let command = command.as_str();
    // `origin` is already shown safely (see `read_settings`).
    let mut comments = vec![format!("imported from {origin}")];
    comments.extend(said);
    let mut lines = vec![
        "[[hooks]]".to_owned(),
        format!("event = {}", quote(event.as_str())?),
    ];
    let ka_matcher = import_matcher(agent, event, matcher, &mut comments)?;
    if let Some(m) = &ka_matcher {
        lines.push(format!("matcher = {}", quote(m)?));
    }
    lines.push(format!("command = {}", quote(command)?));
    if !env.is_empty() {
        let pairs: Result<Vec<String>, String> = env
            .iter()
            .map(|(k, v)| Ok(format!("{} = {}", quote(k)?, quote(v)?)))
            .collect();
        lines.push(format!("env = {{ {} }}", pairs?.join(", ")));
    }
    import_timeout(agent, hook, &mut lines, &mut comments);
    import_on_error(agent, event, hook, &mut lines, &mut comments);
    import_keys(event, hook, &mut lines, &mut comments)?;
    comments.extend(unread_keys(hook));
    let mut toml = String::new();
    for comment in comments {
        toml.push_str("# ");
        toml.push_str(&comment);
        toml.push('\n');
    }
    for line in lines {
        toml.push_str(&line);
        toml.push('\n');
    }
    let entry = Entry {
        event,
        matcher: ka_matcher,
        command: command.to_owned(),
        toml,
    };
    entry.verify()?;
    Ok(Some(entry))
}

/// The ka matcher of a Claude matcher: tool names translated on tool events, kept as written on
/// the events whose matcher selects a source, trigger or type (`startup`, `auto`), and said
/// to be dropped on events that take none (Claude ignores it there too).
fn import_matcher(
    agent: Agent,
    event: Event,
    matcher: &str,
    comments: &mut Vec<String>,
) -> Result<Option<String>, String> {
    let who = agent.display();
    if event.is_tool_event() {
        return Ok(match translate_matcher_as(agent, matcher)? {
            Matcher::All => None,
            Matcher::Names(names) => {
                let names = names.join("|");
                if names != matcher {
                    comments.push(format!("{who} matcher \"{}\"", shown(matcher)));
                }
                Some(names)
            }
            Matcher::Regex(regex) => {
                if regex != matcher {
                    comments.push(format!(
                        "{who} matcher \"{}\" (a regex), with the ka names of the tools it matches",
                        shown(matcher)
                    ));
                }
                Some(regex)
            }
        });
    }
    let trimmed = matcher.trim();
    if trimmed.is_empty() || trimmed == "*" {
        return Ok(None);
    }
    match event.matcher_field() {
        Some(field) => {
            crate::config::filter_regex(matcher).map_err(|_| {
                format!(
                    "matcher \"{}\" is not a regex ka can read; translate it by hand",
                    shown(matcher)
                )
            })?;
            comments.push(format!("the matcher selects the payload's `{field}`"));
            Ok(Some(matcher.to_owned()))
        }
        None => {
            comments.push(format!(
                "{who} matcher \"{}\" dropped: {event} has nothing to match ({who} ignores it too)",
                shown(matcher)
            ));
            Ok(None)
        }
    }
}

/// `timeout`, copied; Claude's default written out when the hook sets none.
fn import_timeout(agent: Agent, hook: &Value, lines: &mut Vec<String>, comments: &mut Vec<String>) {
    match hook.get("timeout") {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|t| t > 0.0 && t <= MAX_TIMEOUT_SECS) => {
            let value = match n.as_i64() {
                Some(int) => toml::Value::Integer(int),
                None => toml::Value::Float(n.as_f64().unwrap_or(MAX_TIMEOUT_SECS)),
            };
            lines.push(format!("timeout = {value}"));
        }
        Some(other) => comments.push(format!(
            "timeout {} not copied: not a number of seconds above 0 and at most a day",
            shown(&other.to_string())
        )),
        None => match default_timeout(agent) {
            None => comments.push(format!(
                "timeout: none set, and {}'s default is not documented; ka's (60 s) applies",
                agent.display()
            )),
            Some(secs) => {
                comments.push(format!(
                    "timeout: {}'s default for a command hook ({secs} s; ka's is 60)",
                    agent.display()
                ));
                lines.push(format!("timeout = {secs}"));
            }
        },
    }
}

/// The timeout, in seconds, the agent gives a command hook that sets none.
fn default_timeout(agent: Agent) -> Option<u64> {
    match agent.adapter().import() {
        Import::ClaudeSettings => Some(CLAUDE_DEFAULT_TIMEOUT_SECS),
        Import::HookFile(file) => file.default_timeout,
        Import::Unsupported(_) => None,
    }
}

/// What the source agent does when the hook fails (crashes, exits other than 0 and 2), kept:
/// `on_error` is written out where ka's default for the event would differ, or where the hook
/// said it (`onFailure`, `failClosed`).
/// - Claude Code: a non-blocking error, the action proceeds, unless `onFailure: "block"`
///   (hooks reference, "Exit code output"; changelog 2.1.295).
/// - Copilot: a crash of a `preToolUse` hook denies the call; on other events it is logged and
///   skipped (hooks reference, "Exit codes").
/// - Cursor: fails open unless `failClosed: true` (hooks docs, per-entry options).
/// - Antigravity: a `PreToolUse` answer without a decision is a denial; other events go on.
fn import_on_error(
    agent: Agent,
    event: Event,
    hook: &Value,
    lines: &mut Vec<String>,
    comments: &mut Vec<String>,
) {
    let flag = |key: &str, yes: &Value| hook.get(key).is_some_and(|v| v == yes);
    let (source, why) = match agent {
        Agent::Claude if flag("onFailure", &Value::from("block")) => {
            (OnError::Block, "Claude Code's `onFailure: \"block\"`")
        }
        Agent::Claude => (
            OnError::Ignore,
            "Claude Code lets the action through when a hook fails (any exit but 0 and 2)",
        ),
        // The hook-file agents' entries get their `on_error` from `hookfile::faithful`, with
        // the same semantics (Copilot: a failed `preToolUse` hook denies; Cursor: only with
        // `failClosed: true`; Antigravity: a `PreToolUse` hook without a decision denies).
        Agent::Copilot | Agent::Cursor | Agent::Antigravity => return,
        // Not import sources (`import` refuses them first); keep ka's default.
        Agent::Codex | Agent::Gemini => return,
    };
    let stated = hook.get("onFailure").is_some() || hook.get("failClosed").is_some();
    if stated || source != OnError::default_for(event) {
        comments.push(format!("on_error: {why}"));
        lines.push(format!("on_error = \"{}\"", source.as_str()));
    }
}

/// `statusMessage` → `status_message`, `if` → `if` (the same permission-rule syntax), `async` →
/// `async = true`, where ka takes them; otherwise a comment says why each was dropped.
fn import_keys(
    event: Event,
    hook: &Value,
    lines: &mut Vec<String>,
    comments: &mut Vec<String>,
) -> Result<(), String> {
    match hook.get("statusMessage") {
        Some(Value::String(text)) => lines.push(format!("status_message = {}", quote(text)?)),
        Some(other) => comments.push(format!(
            "statusMessage {} dropped: not a string",
            shown(&other.to_string())
        )),
        None => {}
    }
    match hook.get("if") {
        Some(Value::String(rule)) if event.is_tool_event() => {
            match crate::config::rule::Rule::parse(rule) {
                Ok(_) => lines.push(format!("if = {}", quote(rule)?)),
                Err(why) => comments.push(format!(
                    "if \"{}\" dropped: ka cannot read it ({})",
                    shown(rule),
                    shown(&why)
                )),
            }
        }
        Some(other) => comments.push(format!(
            "if {} dropped: ka's `if` is a string rule on tool events only",
            shown(&other.to_string())
        )),
        None => {}
    }
    match hook.get("async") {
        Some(Value::Bool(true)) if !event.is_pipeline() => lines.push("async = true".to_owned()),
        Some(Value::Bool(true)) => comments.push(format!(
            "async = true dropped: {event} waits for its hooks' verdict in ka"
        )),
        Some(Value::Bool(false)) | None => {}
        Some(other) => comments.push(format!(
            "async {} dropped: not a bool",
            shown(&other.to_string())
        )),
    }
    Ok(())
}

impl Entry {
    /// The entry's TOML, read back, is one `[[hooks]]` table with exactly this event, matcher
    /// and command: whatever the imported JSON held, it cannot add, drop or change an entry.
    fn verify(&self) -> Result<(), String> {
        let refuse = |why: &str| {
            Err(format!(
                "refused: its TOML would not read back as the same hook ({why}); translate it \
                 by hand"
            ))
        };
        let table = match self.toml.parse::<toml::Table>() {
            Ok(table) => table,
            Err(_) => return refuse("not valid TOML"),
        };
        let hooks = table.get("hooks").and_then(toml::Value::as_array);
        let (Some([hook]), 1) = (hooks.map(Vec::as_slice), table.len()) else {
            return refuse("not exactly one [[hooks]] table");
        };
        let text = |key: &str| hook.get(key).and_then(toml::Value::as_str);
        if text("event") != Some(self.event.as_str())
            || text("matcher") != self.matcher.as_deref()
            || text("command") != Some(self.command.as_str())
        {
            return refuse("a value changed");
        }
        Ok(())
    }
}

/// A Claude matcher in ka's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    All,
    /// Exact ka tool names.
    Names(Vec<String>),
    /// A regex over ka tool names.
    Regex(String),
}

/// Translates a Claude Code matcher to the names the adapter hands to ka hooks.
pub fn translate_matcher(matcher: &str) -> Result<Matcher, String> {
    translate_matcher_as(Agent::Claude, matcher)
}

/// Translates a matcher written in `agent`'s tool names to ka's names.
pub fn translate_matcher_as(agent: Agent, matcher: &str) -> Result<Matcher, String> {
    let trimmed = matcher.trim();
    if trimmed.is_empty() || trimmed == "*" {
        return Ok(Matcher::All);
    }
    if matcher
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_- ,|".contains(c))
    {
        let names = matcher
            .split(['|', ','])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|name| tools::ka_tool_name(agent, name))
            .collect();
        return Ok(Matcher::Names(names));
    }
    let regex = crate::config::filter_regex(matcher).map_err(|e| {
        format!(
            "matcher \"{}\" is not a regex ka can read ({}); translate it by hand",
            shown(matcher),
            shown(e.to_string().lines().last().unwrap_or("invalid"))
        )
    })?;
    let matched: Vec<&str> = tools::TOOLS
        .iter()
        .filter(|row| {
            row.name(agent)
                .is_some_and(|name| regex.is_match(name.as_bytes()))
        })
        .map(|row| row.ka)
        .collect();
    if matched.is_empty() {
        return Ok(Matcher::Regex(matcher.to_owned()));
    }
    Ok(Matcher::Regex(format!(
        "^(?:{})$|{matcher}",
        matched.join("|")
    )))
}

/// A TOML string literal for `text`, on one line, written by the `toml` crate. Text holding a
/// control or bidirectional character (which the crate would write raw, or over several lines
/// that read like entries of their own) is written as a basic string with escapes (`\n`, `\u001B`), and
/// read back with the `toml` crate to prove it is the same text.
fn quote(text: &str) -> Result<String, String> {
    let plain = !text.chars().any(|c| c.is_control() || shown_differs(c));
    let literal = if plain {
        toml::Value::String(text.to_owned()).to_string()
    } else {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() || shown_differs(c) => {
                    let _ = write!(out, "\\u{:04X}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    let back = format!("v = {literal}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("v").and_then(toml::Value::as_str).map(str::to_owned));
    if literal.contains('\n') || back.as_deref() != Some(text) {
        return Err(format!(
            "\"{}\" cannot be written as a one-line TOML string; translate it by hand",
            shown(text)
        ));
    }
    Ok(literal)
}

/// Whether the terminal escape shows `c` other than as itself (bidi controls, U+FEFF).
fn shown_differs(c: char) -> bool {
    let mut buf = [0; 4];
    matches!(
        crate::terminal::escape(c.encode_utf8(&mut buf)),
        std::borrow::Cow::Owned(_)
    )
}

/// Text from the imported JSON, safe in a TOML comment and on a terminal: every control and
/// bidirectional character is written visibly (`\n`, `\x1b`, `\u{202e}`).
fn shown(text: &str) -> String {
    crate::terminal::escape(text).into_owned()
}

/// The header written above imported entries.
pub const HEADER: &str = "\
# Imported from Claude Code by `ka-hooks import claude`. These commands were written for Claude
# Code's payload: through `ka-hooks claude` they get it unchanged (`tool_name`, `tool_input`, ...)
# next to ka's `tool` and `arguments`; under ka itself they get ka's payload only.
";

/// `ka-hooks import`; prints or appends, returns the exit code.
pub fn run(opts: &LoadOptions, args: &ImportArgs) -> Result<u8, String> {
    let hookfile = match args.agent.adapter().import() {
        Import::Unsupported(why) => {
            eprintln!(
                "ka-hooks import {}: not supported: {why}",
                args.agent.command()
            );
            return Ok(1);
        }
        Import::ClaudeSettings => None,
        Import::HookFile(file) => Some(file),
    };
    let root = paths::find_project_root(&opts.start_dir).unwrap_or_else(|| opts.start_dir.clone());
    let mut imported = Imported::default();
    let read = read_sources(args, hookfile, &root, &mut imported)?;
    let target = if args.user {
        opts.paths
            .user_file()
            .ok_or("no config directory: set KA_CONFIG_DIR")?
    } else {
        root.join(paths::PROJECT_DIR).join(paths::CONFIG_FILE)
    };
    let already = if args.write {
        drop_present(&mut imported.entries, &target)
    } else {
        0
    };
    for skipped in &imported.skipped {
        eprintln!("skipped {skipped}");
    }
    if imported.entries.is_empty() {
        let why = if already > 0 {
            format!(
                "all {already} hook(s) are already in {}",
                escape_path(&target)
            )
        } else {
            "no command hooks".to_owned()
        };
        println!("nothing to import from {}: {why}", read.join(", "));
        return Ok(0);
    }
    let mut text = if hookfile.is_some() {
        super::hookfile::header(args.agent)
    } else {
        String::from(HEADER)
    };
    for entry in &imported.entries {
        text.push('\n');
        text.push_str(&entry.toml);
    }
    if !args.write {
        print!("{text}");
        eprintln!(
            "{} hook(s); nothing written: run again with --write to append them to {}",
            imported.entries.len(),
            escape_path(&target)
        );
        return Ok(0);
    }
    append(&target, &text)?;
    println!(
        "appended {} hook(s) to {}{}",
        imported.entries.len(),
        escape_path(&target),
        if already > 0 {
            format!(" ({already} already there)")
        } else {
            String::new()
        }
    );
    if !args.user {
        println!(
            "the file changed, so it is untrusted until reviewed: run `{}`",
            shown(&crate::config::trust_command(&root))
        );
    }
    Ok(0)
}

/// Reads the hooks of every source (`--from`, else the agent's hook files or Claude Code's
/// settings files) into `imported`; the labels of the files read. A default source that does
/// not exist is passed over; none at all is an error.
fn read_sources(
    args: &ImportArgs,
    hookfile: Option<&'static HookFile>,
    root: &Path,
    imported: &mut Imported,
) -> Result<Vec<String>, String> {
    let (sources, explicit) = if !args.from.is_empty() {
        (args.from.clone(), true)
    } else if let Some(file) = hookfile {
        (super::hookfile::files(file, root, args.user)?, false)
    } else if args.user {
        (user_settings().into_iter().collect(), false)
    } else {
        let dir = root.join(".claude");
        (
            vec![dir.join("settings.json"), dir.join("settings.local.json")],
            false,
        )
    };
    let mut read = Vec::new();
    for file in &sources {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => continue,
            Err(e) => return Err(format!("failed to read {}: {e}", escape_path(file))),
        };
        let label = escape_path(&paths::absolute(file));
        if hookfile.is_some() {
            let commands_dir = hookfile
                .filter(|f| args.user && f.user_commands_from_file_dir)
                .and_then(|_| paths::absolute(file).parent().map(Path::to_path_buf));
            super::hookfile::read_hook_file(
                args.agent,
                &label,
                &text,
                commands_dir.as_deref(),
                imported,
            )?;
        } else {
            read_settings(&label, &text, imported)?;
        }
        read.push(label);
    }
    if read.is_empty() {
        let looked = sources
            .iter()
            .map(|p| escape_path(p))
            .collect::<Vec<_>>()
            .join(", ");
        let what = if hookfile.is_some() {
            format!("{} hook file", args.agent.display())
        } else {
            "Claude Code settings".to_owned()
        };
        return Err(format!(
            "no {what} found (looked for {looked}); name one with --from FILE"
        ));
    }
    Ok(read)
}

/// Drops the entries whose (event, command) the target file already has; how many.
fn drop_present(entries: &mut Vec<Entry>, target: &Path) -> usize {
    let present = existing_hooks(target);
    let before = entries.len();
    entries.retain(|e| !present.contains(&(e.event.as_str().to_owned(), e.command.clone())));
    before - entries.len()
}

/// (event, command) of the hooks a ka.toml already has.
fn existing_hooks(file: &Path) -> BTreeSet<(String, String)> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return BTreeSet::new();
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return BTreeSet::new();
    };
    table
        .get("hooks")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|hook| {
            let event = hook.get("event")?.as_str()?.parse::<Event>().ok()?;
            let command = hook.get("command")?.as_str()?;
            Some((event.as_str().to_owned(), command.to_owned()))
        })
        .collect()
}

/// Appends `text` to `file` (created with its folder when missing), after a blank line.
fn append(file: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    }
    let existing = std::fs::read_to_string(file).unwrap_or_default();
    let separator = match existing.as_str() {
        "" => "",
        s if s.ends_with("\n\n") => "",
        s if s.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(|e| format!("failed to open {}: {e}", file.display()))?;
    f.write_all(format!("{separator}{text}").as_bytes())
        .map_err(|e| format!("failed to write {}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_lists_become_ka_names() {
        assert_eq!(
            translate_matcher("Write|Edit"),
            Ok(Matcher::Names(vec!["write".into(), "edit".into()]))
        );
        assert_eq!(translate_matcher("*"), Ok(Matcher::All));
        assert_eq!(translate_matcher(""), Ok(Matcher::All));
    }

    #[test]
    fn regexes_keep_their_pattern_and_gain_ka_names() {
        assert_eq!(
            translate_matcher("Notebook.*"),
            Ok(Matcher::Regex("^(?:notebook_edit)$|Notebook.*".into()))
        );
        assert_eq!(
            translate_matcher("mcp__github__.*"),
            Ok(Matcher::Regex("mcp__github__.*".into()))
        );
        assert!(translate_matcher("(?=x)").is_err());
    }
}
