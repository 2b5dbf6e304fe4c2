//! `install` and `import` for the agents whose hooks live in a hook file of their own: GitHub
//! Copilot (`.github/hooks/*.json`), Cursor (`.cursor/hooks.json`) and Antigravity
//! (`.agents/hooks.json`). Each file's layout is data ([`HookFile`]); the merge keeps every other
//! key, entry and event in its order, and `import` goes through [`super::import`]'s checks.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::import::{entry, Entry, Imported};
use super::install::{
    is_adapter_command, load_every_layer, plan, print_diff, render, write_atomically, InstallArgs,
    Planned,
};
use super::table::{HookFile, Install, Layout};
use super::{AdapterArgs, Agent};
use crate::config::LoadOptions;
use crate::event::Event;
use crate::paths;
use crate::terminal::escape;

/// Options of `ka-hooks copilot|cursor|antigravity`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HookArgs {
    #[command(flatten)]
    pub adapter: AdapterArgs,
    /// The agent's name of the event, for payloads that do not carry one (Copilot's camelCase
    /// events, every Antigravity event); `ka-hooks install` writes it.
    #[arg(long, value_name = "NAME")]
    pub event: Option<String>,
}

impl HookArgs {
    /// The adapter's options with the event name.
    pub fn adapter_args(&self) -> AdapterArgs {
        AdapterArgs {
            event: self.event.clone(),
            ..self.adapter.clone()
        }
    }
}

/// The agent's hook file, when its hooks are installed and imported here.
pub fn hook_file(agent: Agent) -> Option<&'static HookFile> {
    match agent.adapter().install() {
        Install::HookFile(file) => Some(file),
        Install::ClaudeSettings | Install::ByHand { .. } => None,
    }
}

/// Whether `agent`'s hooks are installed and imported here.
pub fn is_hookfile_agent(agent: Agent) -> bool {
    hook_file(agent).is_some()
}

/// The key of the object holding the event arrays.
fn events_key(format: &HookFile) -> &'static str {
    match format.layout {
        Layout::Hooks => "hooks",
        Layout::Named(name) => name,
    }
}

/// The hook file `install` writes.
fn target(file: &HookFile, root: &Path, user: bool) -> Result<PathBuf, String> {
    if !user {
        return Ok(root.join(file.project));
    }
    let (dir, under) = file.user;
    Ok(dir().ok_or(file.user_unknown)?.join(under))
}

/// The hook files `import` reads: Copilot's whole hooks folder (sorted), the others' one file.
pub fn files(file: &HookFile, root: &Path, user: bool) -> Result<Vec<PathBuf>, String> {
    if !file.folder {
        return Ok(vec![target(file, root, user)?]);
    }
    let dir = match target(file, root, user)?.parent() {
        Some(dir) => dir.to_path_buf(),
        None => return Ok(Vec::new()),
    };
    let mut found: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => vec![dir.join("*.json")],
    };
    found.sort();
    Ok(found)
}

/// The header written above imported entries.
pub fn header(agent: Agent) -> String {
    format!(
        "# Imported from {who} by `ka-hooks import {cmd}`. These commands were written for \
         {who}'s payload:\n# through `ka-hooks {cmd}` they get it unchanged next to ka's \
         `tool` and `arguments`; under ka\n# itself they get ka's payload only.\n",
        who = agent.display(),
        cmd = agent.command()
    )
}

// ---------------------------------------------------------------------------------------------
// import
// ---------------------------------------------------------------------------------------------

/// Reads the command entries of one hook file of `agent` (`label` names it in comments).
pub fn read_hook_file(
    agent: Agent,
    label: &str,
    text: &str,
    commands_dir: Option<&Path>,
    imported: &mut Imported,
) -> Result<(), String> {
    let shown = |s: &str| escape(s).into_owned();
    let label = shown(label);
    let root: Value =
        serde_json::from_str(text).map_err(|e| format!("{label}: not valid JSON ({e})"))?;
    let Value::Object(root) = root else {
        return Err(format!("{label}: not a JSON object"));
    };
    let Some(format) = hook_file(agent) else {
        return Err(format!("{} has no hook file", agent.display()));
    };
    let events = event_lists(format, &root, &label)?;
    for (at, name, list) in events {
        let Some(row) = agent.events().iter().find(|row| row.name == name) else {
            let why = agent
                .observed()
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("ka has no such event", |(_, why)| why);
            imported.skipped.push(format!("{label}: {at}: {why}"));
            continue;
        };
        let Some(list) = list.as_array() else {
            imported
                .skipped
                .push(format!("{label}: {at} is not an array"));
            continue;
        };
        for (i, item) in list.iter().enumerate() {
            // Claude-style groups (`{matcher, hooks: [...]}`) in Copilot's and Antigravity's
            // files; flat entries otherwise.
            let group_matcher = item.get("matcher").and_then(Value::as_str).unwrap_or("");
            let nested = item.get("hooks").and_then(Value::as_array);
            let hooks: Vec<(String, &Value)> = match nested {
                Some(hooks) => hooks
                    .iter()
                    .enumerate()
                    .map(|(j, h)| (format!("{at}[{i}].hooks[{j}]"), h))
                    .collect(),
                None => vec![(format!("{at}[{i}]"), item)],
            };
            for (origin, hook) in hooks {
                let origin = format!("{label}: {origin}");
                let matcher = hook
                    .get("matcher")
                    .and_then(Value::as_str)
                    .unwrap_or(group_matcher);
                let matcher = native_matcher(format, row.name, matcher);
                let result = as_claude_hook(format, agent, hook)
                    .map(|hook| from_dir(hook, commands_dir))
                    .and_then(|hook| entry(agent, &origin, row.event, &matcher, &hook, None))
                    .map(|e| e.map(|e| faithful(format, agent, row.name, hook, e)));
                match result {
                    Ok(Some(entry)) => imported.entries.push(entry),
                    Ok(None) => {}
                    Err(why) => imported.skipped.push(format!("{origin}: {why}")),
                }
            }
        }
    }
    Ok(())
}

/// The hook file's event arrays: (the array's path, for comments; the event's name; the array).
fn event_lists<'a>(
    format: &HookFile,
    root: &'a Map<String, Value>,
    label: &str,
) -> Result<Vec<(String, String, &'a Value)>, String> {
    let shown = |s: &str| escape(s).into_owned();
    let mut events = Vec::new();
    if let Layout::Named(_) = format.layout {
        for (name, group) in root {
            for (event, list) in group.as_object().into_iter().flatten() {
                if event != "enabled" {
                    events.push((
                        format!("{}.{}", shown(name), shown(event)),
                        event.clone(),
                        list,
                    ));
                }
            }
        }
    } else if let Some(hooks) = root.get("hooks") {
        let hooks = hooks
            .as_object()
            .ok_or_else(|| format!("{label}: `hooks` is not a JSON object"))?;
        for (event, list) in hooks {
            events.push((format!("hooks.{}", shown(event)), event.clone(), list));
        }
    }
    Ok(events)
}

/// A relative command of the user's file runs from the folder the agent runs it in
/// (`commands_dir`: Cursor runs `~/.cursor/hooks.json`'s `./hooks/x.sh` in `~/.cursor`), not in
/// the project: the command changes to that folder first.
fn from_dir(mut hook: Value, commands_dir: Option<&Path>) -> Value {
    let Some(dir) = commands_dir else {
        return hook;
    };
    if let Some(Value::String(command)) = hook.get_mut("command") {
        let quoted = format!("'{}'", dir.to_string_lossy().replace('\'', r"'\''"));
        *command = format!("cd {quoted} && {command}");
    }
    hook
}

/// The imported entry with what the source agent's entry meant besides its command: a stable
/// `name`, the agent's failure semantics as an explicit `on_error`, and the tool scope of a
/// per-tool event (Cursor's `beforeShellExecution` is `tool = "bash"`).
fn faithful(format: &HookFile, agent: Agent, event: &str, hook: &Value, mut e: Entry) -> Entry {
    let mut lines = vec![format!(
        "name = \"{}-{}-{:08x}\"",
        agent.command(),
        event,
        fnv(&e.command) as u32
    )];
    let fails_closed = match format.fail_closed_key {
        Some(key) => hook.get(key) == Some(&Value::Bool(true)),
        None => (format.fails_closed)(event),
    };
    let on_error = if fails_closed && e.event.is_pipeline() {
        "block"
    } else {
        "ignore"
    };
    let why = if on_error == "block" {
        let said = format
            .fail_closed_key
            .map(|key| format!(" (`{key}: true`)"))
            .unwrap_or_default();
        format!(
            "{} blocks the call when this hook fails{said}",
            agent.display()
        )
    } else {
        format!(
            "{} lets the action through when this hook fails",
            agent.display()
        )
    };
    lines.push(format!("on_error = \"{on_error}\" # {why}"));
    if e.matcher.is_none() {
        if let Some((_, tool)) = format.event_tools.iter().find(|(name, _)| *name == event) {
            lines.push(format!("tool = \"{tool}\""));
        }
    }
    let at = e
        .toml
        .find("[[hooks]]\n")
        .map_or(0, |at| at + "[[hooks]]\n".len());
    e.toml.insert_str(at, &(lines.join("\n") + "\n"));
    e
}

/// A stable 64-bit FNV-1a hash (names that do not shift when the user's file changes).
pub(super) fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A Copilot camelCase matcher is a regex anchored as `^(?:pattern)$` (hooks reference,
/// "Matchers"); ka's matcher is unanchored, so the anchors are written out. A plain name list
/// reads the same either way.
fn native_matcher(format: &HookFile, event: &str, matcher: &str) -> String {
    let plain = matcher
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_- ,|*".contains(c));
    let camel = event.starts_with(|c: char| c.is_ascii_lowercase());
    if format.anchored_matchers && camel && !plain && !matcher.trim().is_empty() {
        format!("^(?:{matcher})$")
    } else {
        matcher.to_owned()
    }
}

/// One entry of the agent's file in Claude Code's keys, for [`entry`]: the command (Copilot's
/// `bash`, or its cross-platform `command`), the timeout in seconds; every other key is kept
/// under its own name, so the import names it as not imported.
fn as_claude_hook(format: &HookFile, agent: Agent, hook: &Value) -> Result<Value, String> {
    let Some(object) = hook.as_object() else {
        return Err("not a JSON object".into());
    };
    let mut out = Map::new();
    for (key, value) in object {
        let key = key.as_str();
        if let Some((_, why)) = format.refused_keys.iter().find(|(k, _)| *k == key) {
            return Err((*why).to_owned());
        }
        let own_command = format.command_key != "command";
        let own_timeout = format.timeout_key != "timeout";
        if key == "matcher"
            || (own_timeout && key == "timeout" && object.contains_key(format.timeout_key))
        {
            continue;
        }
        let name = if key == format.command_key {
            "command".to_owned()
        } else if own_command && key == "command" && object.contains_key(format.command_key) {
            // The cross-platform command next to the shell one: named, not run.
            format!("{}_command", agent.command())
        } else if key == format.timeout_key {
            "timeout".to_owned()
        } else {
            key.to_owned()
        };
        out.insert(name, value.clone());
    }
    if let (Some(default), false) = (format.default_timeout, out.contains_key("timeout")) {
        out.insert("timeout".into(), Value::from(default));
    }
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------------------------
// install
// ---------------------------------------------------------------------------------------------

/// What `install` should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Install,
    Remove,
}

/// The command the agent runs for one event.
fn command_for(format: &HookFile, base: &str, event: &str) -> String {
    if format.event_flag {
        format!("{base} --event {event}")
    } else {
        base.to_owned()
    }
}

/// The command string of one of the agent's entries.
fn entry_command<'v>(format: &HookFile, hook: &'v Value) -> Option<&'v str> {
    hook.get(format.command_key)
        .or_else(|| hook.get("command"))
        .and_then(Value::as_str)
}

/// One adapter entry for `p` in the agent's format.
fn new_entry(format: &HookFile, p: &Planned, command: &str) -> Value {
    let mut hook = Map::new();
    if format.typed {
        hook.insert("type".into(), "command".into());
    }
    hook.insert(format.command_key.into(), command.into());
    hook.insert(format.timeout_key.into(), Value::from(p.timeout_secs));
    if let (Some(key), true) = (format.fail_closed_key, p.row.event.is_pipeline()) {
        hook.insert(key.into(), Value::Bool(true));
    }
    if format.grouped && p.row.event.is_tool_event() {
        let mut group = Map::new();
        group.insert("matcher".into(), "".into());
        group.insert("hooks".into(), Value::Array(vec![Value::Object(hook)]));
        return Value::Object(group);
    }
    Value::Object(hook)
}

/// The adapter's hook objects (mutable) in one event's array: flat entries and nested groups.
fn adapter_hooks<'v>(
    agent: Agent,
    format: &'v HookFile,
    list: &'v mut [Value],
) -> impl Iterator<Item = &'v mut Map<String, Value>> + 'v {
    list.iter_mut()
        .flat_map(|item| {
            if item.get("hooks").is_some_and(Value::is_array) {
                item.get_mut("hooks")
                    .and_then(Value::as_array_mut)
                    .map(|hooks| hooks.iter_mut().collect::<Vec<_>>())
                    .unwrap_or_default()
            } else {
                vec![item]
            }
        })
        .filter_map(Value::as_object_mut)
        .filter(move |hook| {
            entry_command(format, &Value::Object((*hook).clone()))
                .is_some_and(|c| is_adapter_command(c, agent))
        })
}

/// The object holding the event arrays: `hooks` (Copilot, Cursor) or the named entry
/// (Antigravity); created when missing.
fn events_object<'r>(
    format: &HookFile,
    root: &'r mut Map<String, Value>,
) -> Result<&'r mut Map<String, Value>, String> {
    if format.layout == Layout::Hooks && !root.contains_key("version") {
        root.insert("version".into(), Value::from(1));
    }
    let key = events_key(format);
    let slot = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(events) = slot else {
        return Err(format!("`{key}` is not a JSON object"));
    };
    if matches!(format.layout, Layout::Named(_)) && !events.contains_key("enabled") {
        events.insert("enabled".into(), Value::Bool(true));
    }
    Ok(events)
}

/// Merges (or removes) the adapter's entries; returns one line per change.
pub fn merge(
    agent: Agent,
    root: &mut Map<String, Value>,
    planned: &[Planned],
    base: &str,
    mode: Mode,
) -> Result<Vec<String>, String> {
    let format = hook_file(agent).ok_or_else(|| format!("{} has no hook file", agent.display()))?;
    let mut changes = Vec::new();
    if mode == Mode::Remove {
        let key = events_key(format);
        let Some(Value::Object(events)) = root.get_mut(key) else {
            return Ok(changes);
        };
        for (event, list) in events.iter_mut() {
            let Some(list) = list.as_array_mut() else {
                continue;
            };
            let before = list.len();
            list.retain_mut(|item| {
                if let Some(hooks) = item.get_mut("hooks").and_then(Value::as_array_mut) {
                    hooks.retain(|h| {
                        !entry_command(format, h).is_some_and(|c| is_adapter_command(c, agent))
                    });
                    !hooks.is_empty()
                } else {
                    !entry_command(format, item).is_some_and(|c| is_adapter_command(c, agent))
                }
            });
            if list.len() != before {
                changes.push(format!("  {}: removed the adapter's entry", escape(event)));
            }
        }
        events.retain(|_, list| !list.as_array().is_some_and(Vec::is_empty));
        if let (Layout::Named(name), true) = (format.layout, events.keys().all(|k| k == "enabled"))
        {
            root.remove(name);
        }
        return Ok(changes);
    }
    let events = events_object(format, root)?;
    for p in planned {
        let event = p.row.name;
        let list = events
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(format!("`{event}` is not an array"));
        };
        let key = format.timeout_key;
        let existing = adapter_hooks(agent, format, list).next();
        match existing {
            Some(hook) => {
                let current = hook.get(key).and_then(Value::as_f64);
                if current == Some(p.timeout_secs as f64) {
                    changes.push(format!("  {event}: already runs the adapter"));
                } else {
                    hook.insert(key.into(), Value::from(p.timeout_secs));
                    changes.push(format!("  {event}: {key} -> {}s", p.timeout_secs));
                }
            }
            None => {
                let command = command_for(format, base, event);
                list.push(new_entry(format, p, &command));
                changes.push(format!(
                    "  {event}: run `{command}` ({key} {}s)",
                    p.timeout_secs
                ));
            }
        }
    }
    Ok(changes)
}

/// `ka-hooks install copilot|cursor|antigravity`.
pub fn install(
    opts: &LoadOptions,
    args: &InstallArgs,
    mode: Mode,
    print: bool,
) -> Result<u8, String> {
    let agent = args.agent;
    let format = hook_file(agent).ok_or_else(|| format!("{} has no hook file", agent.display()))?;
    let config = load_every_layer(opts)?;
    let planned: Vec<Planned> = plan(&config, agent, args.all_events)
        .into_iter()
        .filter(|p| format.installed.contains(&p.row.name))
        .collect();
    if planned.is_empty() && mode == Mode::Install {
        println!(
            "no enabled ka hooks in any layer: nothing to register (add hooks to ka.toml, or pass \
             --all-events to register the adapter for every event)"
        );
        return Ok(0);
    }
    let root = paths::find_project_root(&opts.start_dir).unwrap_or_else(|| opts.start_dir.clone());
    let file = target(format, &root, args.user)?;
    let shown = crate::terminal::escape_path(&file);
    let (original, mut object) = read_hook_object(&file, &shown)?;
    let base = args
        .command
        .clone()
        .unwrap_or_else(|| super::own_binary::adapter_command(agent));
    let changes = merge(agent, &mut object, &planned, &base, mode)
        .map_err(|e| format!("{shown}: {e}; fix it, then run again"))?;
    let new = render(&Value::Object(object), original.as_deref())?;
    let old = original.clone().unwrap_or_default();
    if print {
        print!("{new}");
        return Ok(0);
    }
    if new == old || (mode == Mode::Remove && original.is_none()) {
        let what = if mode == Mode::Remove {
            "no adapter entries to remove in"
        } else {
            "already installed:"
        };
        println!("{what} {shown}");
        return Ok(0);
    }
    if args.write {
        write_atomically(&file, &new)?;
        let done = if original.is_none() {
            "created"
        } else {
            "updated"
        };
        println!("{done} {shown}:");
    } else {
        print_diff(&file, original.is_some(), &old, &new);
    }
    for change in &changes {
        println!("{change}");
    }
    if !args.write {
        println!("dry run: nothing written; run again with --write to apply");
    }
    if let Some(note) = format.note {
        println!("{note}");
    }
    Ok(0)
}

/// The hook file's text (`None` when it does not exist) and its JSON object (empty when it is
/// missing or blank); `shown` names it in errors.
fn read_hook_object(
    file: &Path,
    shown: &str,
) -> Result<(Option<String>, Map<String, Value>), String> {
    let original = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("failed to read {shown}: {e}")),
    };
    let object = match &original {
        Some(text) if !text.trim().is_empty() => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(format!(
                    "{shown}: not a JSON object; fix it, then run again"
                ))
            }
            Err(e) => {
                return Err(format!(
                    "{shown}: not valid JSON ({e}); fix it, then run again"
                ))
            }
        },
        _ => Map::new(),
    };
    Ok((original, object))
}

/// The ka events `install` would register for `agent` (for docs and tests).
pub fn installable(agent: Agent) -> impl Iterator<Item = (&'static str, Event)> {
    let installed = hook_file(agent).map_or(&[][..], |f| f.installed);
    agent
        .events()
        .iter()
        .filter(move |row| installed.contains(&row.name))
        .map(|row| (row.name, row.event))
}
