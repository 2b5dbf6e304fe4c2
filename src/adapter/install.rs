//! `ka-hooks install`: register the adapter where the agent reads its hooks. For Claude Code it
//! merges `ka-hooks claude` into the project's (or `--user`) settings, one entry per event with
//! hooks and a timeout that covers them, keeping the rest of the file as written; without
//! `--write` it prints the diff. Codex CLI and Gemini CLI get the entries to add by hand.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::table::Install;
use super::{jsonedit, Agent, EventRow, Flavour};
use crate::config::{Config, LayerState, LoadError, LoadOptions, DEFAULT_TIMEOUT};
use crate::event::Event;
use crate::paths;

/// Added to the computed timeout: the kill grace of each hook, process startup, the adapter.
const MARGIN: Duration = Duration::from_secs(5);

/// Options of `ka-hooks install`.
#[derive(Debug, Clone, clap::Args)]
pub struct InstallArgs {
    /// The agent whose settings or hook file to write: claude, copilot, cursor, antigravity
    /// (codex and gemini print what to add by hand).
    #[arg(value_enum)]
    pub agent: Agent,
    /// Write the file; without it, print the diff and change nothing.
    #[arg(long)]
    pub write: bool,
    /// The user's settings ($CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)
    /// instead of the project's `.claude/settings.json` (for copilot, cursor, antigravity: the
    /// user's hook file; see docs/agents.md).
    #[arg(long)]
    pub user: bool,
    /// Register every event the adapter supports, not only those that have ka hooks.
    #[arg(long)]
    pub all_events: bool,
    /// The command the agent runs (default: this binary's absolute path, then the agent, e.g.
    /// `/home/me/.local/bin/ka-hooks claude`).
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
}

/// One adapter entry to register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub row: EventRow,
    /// Whole seconds.
    pub timeout_secs: u64,
    /// How many enabled ka hooks the entry runs.
    pub hooks: usize,
}

/// The entries to register for `agent`: one per event with enabled ka hooks (every event with
/// `all`), with a timeout above the slowest case of those hooks.
pub fn plan(config: &Config, agent: Agent, all: bool) -> Vec<Planned> {
    agent
        .events()
        .iter()
        .filter(|row| row.flavour == Flavour::Plain)
        .filter_map(|row| {
            let timeouts: Vec<Duration> = config
                .hooks
                .iter()
                // A failed call runs the post_tool_use hooks too (see dispatch::matching_hooks).
                .filter(|h| {
                    h.enabled
                        && (h.event == row.event
                            || (row.event == Event::PostToolUseFailure
                                && h.event == Event::PostToolUse))
                })
                .map(|h| h.timeout)
                .collect();
            // ka's built-in protection of its own files runs on PreToolUse even without a
            // pre_tool_use hook (a project with only a formatter): always registered.
            let protection = row.event == Event::PreToolUse && guards_own_files(agent);
            if timeouts.is_empty() && !all && !protection {
                return None;
            }
            let grace = Duration::from_secs(1);
            let slowest = if timeouts.is_empty() {
                DEFAULT_TIMEOUT
            } else if row.event.is_pipeline() {
                timeouts.iter().map(|t| *t + grace).sum()
            } else {
                timeouts.iter().max().copied().unwrap_or(DEFAULT_TIMEOUT) + grace
            };
            let total = slowest + MARGIN;
            Some(Planned {
                row: *row,
                timeout_secs: total.as_secs() + u64::from(total.subsec_nanos() > 0),
                hooks: timeouts.len(),
            })
        })
        .collect()
}

/// The agents whose PreToolUse entry is registered even when no ka hook is on it, so that ka's
/// built-in protection of its own files runs (GitHub Copilot's too: its `preToolUse` denies).
fn guards_own_files(agent: Agent) -> bool {
    matches!(
        agent,
        Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Copilot
    )
}

/// Claude Code events whose entry says `onFailure: "block"`: the events that can veto, where a
/// ka-hooks that is missing, crashes or times out must block (Claude Code 2.1.295 and later;
/// ignored on Stop and the other stop-like events, and for async hooks).
fn fails_closed(agent: Agent, event: Event) -> bool {
    agent == Agent::Claude
        && matches!(
            event,
            Event::PreToolUse | Event::UserPromptSubmit | Event::PermissionRequest
        )
}

/// Whether a hook command runs the `agent` adapter (`ka-hooks claude`, `/bin/ka-hooks --trust
/// claude`, `"$HOME/bin/ka-hooks" claude`, ...).
pub fn is_adapter_command(command: &str, agent: Agent) -> bool {
    let tokens: Vec<&str> = command
        .split_whitespace()
        .map(|t| t.trim_matches(|c| c == '"' || c == '\''))
        .collect();
    tokens.iter().enumerate().any(|(i, token)| {
        let is_binary = Path::new(token)
            .file_name()
            .is_some_and(|name| name == "ka-hooks");
        is_binary && tokens[i + 1..].contains(&agent.command())
    })
}

/// What merging changed in one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added {
        event: &'static str,
        timeout: u64,
    },
    Timeout {
        event: &'static str,
        from: Option<Value>,
        to: u64,
    },
    Present {
        event: &'static str,
    },
    /// `onFailure: "block"` added to the adapter's existing entry.
    FailClosed {
        event: &'static str,
    },
}

/// Merges the adapter entries into a Claude Code settings object; keys keep their order.
pub fn merge(
    settings: &mut Value,
    planned: &[Planned],
    command: &str,
    agent: Agent,
) -> Result<Vec<Change>, String> {
    let Value::Object(root) = settings else {
        return Err("the settings file is not a JSON object".into());
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err("`hooks` is not a JSON object".into());
    };
    let mut changes = Vec::new();
    for p in planned {
        let event = p.row.name;
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            return Err(format!("`hooks.{event}` is not an array"));
        };
        let existing = groups
            .iter_mut()
            .filter_map(|group| group.get_mut("hooks")?.as_array_mut())
            .flatten()
            .filter_map(Value::as_object_mut)
            .find(|hook| {
                hook.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| c == command || is_adapter_command(c, agent))
            });
        match existing {
            Some(hook) => {
                if fails_closed(agent, p.row.event) && !hook.contains_key("onFailure") {
                    hook.insert("onFailure".into(), "block".into());
                    changes.push(Change::FailClosed { event });
                }
                let current = hook.get("timeout").cloned();
                if current.as_ref().and_then(Value::as_f64) == Some(p.timeout_secs as f64) {
                    changes.push(Change::Present { event });
                } else {
                    hook.insert("timeout".into(), Value::from(p.timeout_secs));
                    changes.push(Change::Timeout {
                        event,
                        from: current,
                        to: p.timeout_secs,
                    });
                }
            }
            None => {
                groups.push(entry(p, command, 1, agent));
                changes.push(Change::Added {
                    event,
                    timeout: p.timeout_secs,
                });
            }
        }
    }
    Ok(changes)
}

/// One `{"matcher", "hooks": [{"type", "command", "timeout"}]}` group; `unit` scales seconds
/// (Gemini CLI counts milliseconds).
fn entry(p: &Planned, command: &str, unit: u64, agent: Agent) -> Value {
    let mut hook = Map::new();
    hook.insert("type".into(), "command".into());
    hook.insert("command".into(), command.into());
    hook.insert("timeout".into(), Value::from(p.timeout_secs * unit));
    if fails_closed(agent, p.row.event) {
        hook.insert("onFailure".into(), "block".into());
    }
    let mut group = Map::new();
    if p.row.event.is_tool_event() {
        group.insert("matcher".into(), "*".into());
    }
    group.insert("hooks".into(), Value::Array(vec![Value::Object(hook)]));
    Value::Object(group)
}

/// The project's Claude Code settings file.
pub fn project_settings(start_dir: &Path) -> PathBuf {
    let root = paths::find_project_root(start_dir).unwrap_or_else(|| start_dir.to_path_buf());
    root.join(".claude").join("settings.json")
}

/// The user's Claude Code settings file: `$CLAUDE_CONFIG_DIR/settings.json` (the variable
/// Claude Code itself reads), else `~/.claude/settings.json`.
pub fn user_settings() -> Option<PathBuf> {
    crate::paths::claude_config_dir().map(|dir| dir.join("settings.json"))
}

/// `ka-hooks install`; prints what it did and returns the exit code.
pub fn run(opts: &LoadOptions, args: &InstallArgs) -> Result<u8, String> {
    let config = load_every_layer(opts)?;
    let planned = plan(&config, args.agent, args.all_events);
    let command = args
        .command
        .clone()
        .unwrap_or_else(|| super::own_binary::adapter_command(args.agent));
    match args.agent.adapter().install() {
        Install::ClaudeSettings => {}
        Install::ByHand {
            file,
            timeout_unit,
            note,
        } => {
            let by_hand = ByHand {
                file,
                unit: timeout_unit,
                note,
            };
            return Ok(print_by_hand(args.agent, &by_hand, &planned, &command));
        }
        Install::HookFile(_) => {
            return super::hookfile::install(opts, args, super::hookfile::Mode::Install, false)
        }
    }
    if planned.is_empty() {
        println!(
            "no enabled ka hooks in any layer: nothing to register (add hooks to ka.toml, or pass \
             --all-events to register the adapter for every event)"
        );
        return Ok(0);
    }
    let file = if args.user {
        user_settings().ok_or(
            "no home directory: set CLAUDE_CONFIG_DIR to the folder of Claude Code's settings",
        )?
    } else {
        project_settings(&opts.start_dir)
    };
    let (original, mut settings) = read_settings_file(&file)?;
    let changes = merge(&mut settings, &planned, &command, args.agent)
        .map_err(|e| format!("{}: {e}; fix it, then run again", file.display()))?;
    // The boundary: Claude Code's sandbox keeps ka's state out of the model's shell.
    let deny =
        crate::adapter::shell_sandbox::claude_deny_write(&opts.paths, paths::home_dir().as_deref());
    let sandboxed = crate::adapter::shell_sandbox::merge_claude(&mut settings, &deny)
        .map_err(|e| format!("{}: {e}; fix it, then run again", file.display()))?;
    let events = planned
        .iter()
        .map(|p| p.row.name)
        .collect::<Vec<_>>()
        .join(", ");
    if sandboxed.is_empty() && changes.iter().all(|c| matches!(c, Change::Present { .. })) {
        println!(
            "already installed: {} runs `{command}` on {events}",
            file.display()
        );
        return Ok(0);
    }
    let old = original.clone().unwrap_or_default();
    let new = match edit_text(&old, &settings, &changes, &command, args.agent) {
        Some(text) => text,
        None => render(&settings, original.as_deref())?,
    };
    if args.write {
        write_settings(opts, &file, original.is_none(), &new)?;
    } else {
        print_diff(&file, original.is_some(), &old, &new);
    }
    print_changes(&changes, &sandboxed, &command);
    if !args.write {
        println!("dry run: nothing written; run again with --write to apply");
    }
    print_pending_trust(&config);
    Ok(0)
}

/// Writes the settings file, remembering whether ka created it, and says so.
fn write_settings(opts: &LoadOptions, file: &Path, created: bool, new: &str) -> Result<(), String> {
    write_atomically(file, new)?;
    if created {
        // Ours: `install --remove --write` deletes it again once only `{}` is left.
        super::created::remember(opts.paths.data_dir.as_deref(), file);
    } else {
        super::created::forget(opts.paths.data_dir.as_deref(), file);
    }
    let done = if created { "created" } else { "updated" };
    println!("{done} {}:", file.display());
    Ok(())
}

/// Every layer, trusted or not: reading is safe (nothing runs), and the entries must cover hooks
/// not yet trusted.
pub(super) fn load_every_layer(opts: &LoadOptions) -> Result<Config, String> {
    let read_all = LoadOptions {
        trust_once: true,
        ..opts.clone()
    };
    Config::load(&read_all).map_err(|e| match e {
        LoadError::Config(errors) => {
            format!("{errors}\nfix the configuration first (`ka-hooks check`)")
        }
    })
}

/// The settings file's text (`None` when it does not exist) and its JSON (an empty object when
/// it is missing or blank).
fn read_settings_file(file: &Path) -> Result<(Option<String>, Value), String> {
    let original = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("failed to read {}: {e}", file.display())),
    };
    let settings = match &original {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str::<Value>(text).map_err(|e| {
                format!(
                    "{}: not valid JSON ({e}); fix it, then run again",
                    file.display()
                )
            })?
        }
        _ => Value::Object(Map::new()),
    };
    Ok((original, settings))
}

/// A line for each event's change, and for each sandbox setting added.
fn print_changes(changes: &[Change], sandboxed: &[String], command: &str) {
    for change in changes {
        match change {
            Change::Added { event, timeout } => {
                println!("  {event}: run `{command}` (timeout {timeout}s)")
            }
            Change::Timeout { event, from, to } => println!(
                "  {event}: timeout {} -> {to}s",
                from.as_ref()
                    .map_or_else(|| "unset".to_owned(), ToString::to_string)
            ),
            Change::Present { event } => println!("  {event}: already runs the adapter"),
            Change::FailClosed { event } => println!(
                "  {event}: onFailure \"block\" (a missing or crashing ka-hooks blocks the call)"
            ),
        }
    }
    for change in sandboxed {
        println!("  {change}");
    }
    if !sandboxed.is_empty() {
        println!(
            "  Claude Code's sandbox: the model's Bash commands cannot write ka's config and data \
             dirs or Claude Code's settings (on Linux it needs bubblewrap and socat)"
        );
    }
}

/// A note naming the layers read only for this run (not trusted yet): their hooks will not run
/// in Claude Code.
fn print_pending_trust(config: &Config) {
    let pending: Vec<String> = config
        .layers
        .iter()
        .filter(|l| l.state == LayerState::TrustedOnce)
        .map(|l| l.file.display().to_string())
        .collect();
    if !pending.is_empty() {
        println!(
            "note: not trusted yet, so their hooks will not run in Claude Code: {}; review and \
             trust them with `ka-hooks trust`",
            pending.join(", ")
        );
    }
}

/// Which ka events `agent` has no event for, from its event table (so it stays true as the
/// table changes): hooks of those events do not run under that agent.
fn missing_events_note(agent: Agent) -> String {
    let missing: Vec<&str> = Event::ALL
        .iter()
        .filter(|e| !agent.events().iter().any(|row| row.event == **e))
        .map(|e| e.as_str())
        .collect();
    if missing.is_empty() {
        return String::new();
    }
    format!(
        "{} has no event for {}, so hooks of those events do not run there.",
        agent.display(),
        missing.join(", ")
    )
}

/// Where and how an agent's entries are added by hand.
struct ByHand {
    file: &'static str,
    unit: u64,
    note: &'static str,
}

/// Codex CLI and Gemini CLI: the entries to add by hand; exit 1.
fn print_by_hand(agent: Agent, by_hand: &ByHand, planned: &[Planned], command: &str) -> u8 {
    let (file, unit) = (by_hand.file, by_hand.unit);
    let note = format!(
        "{}{} {}",
        by_hand.note,
        missing_events_note(agent),
        sandbox_by_hand(agent)
    );
    eprintln!(
        "ka-hooks install {}: not supported: ka-hooks only merges its entries into Claude Code's \
         settings. Add these to {file} yourself (merge them with the hooks already there). {note}",
        agent.command()
    );
    let mut hooks = Map::new();
    for p in planned {
        hooks.insert(
            p.row.name.to_owned(),
            Value::Array(vec![entry(p, command, unit, agent)]),
        );
    }
    let mut root = Map::new();
    root.insert("hooks".into(), Value::Object(hooks));
    println!(
        "{}",
        serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default()
    );
    1
}

/// What turns on the agent's sandbox for its shell tool, where it has one; else that it has none.
fn sandbox_by_hand(agent: Agent) -> String {
    match agent {
        Agent::Codex => "Turn on Codex's sandbox so the model's shell cannot write ka's state: \
                         `sandbox_mode = \"workspace-write\"` in ~/.codex/config.toml, with no \
                         `[sandbox_workspace_write] writable_roots` entry holding ka's config or \
                         data dir."
            .to_owned(),
        Agent::Gemini => "Turn on Gemini CLI's sandbox so the model's shell cannot write ka's \
                          state: `\"tools\": {\"sandbox\": true}` in ~/.gemini/settings.json."
            .to_owned(),
        _ => crate::adapter::shell_sandbox::no_sandbox(agent).unwrap_or_default(),
    }
}

/// The original text with only the adapter's entries added or their timeouts changed, every
/// other byte as it was; `None` when that cannot be done (no original, or the edit would not
/// read back as the merged settings), and the whole file is rendered instead.
fn edit_text(
    text: &str,
    merged: &Value,
    changes: &[Change],
    command: &str,
    agent: Agent,
) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    let root = jsonedit::parse(text)?;
    let mut editor = jsonedit::Editor::new(text);
    match root.get("hooks") {
        None => editor.add_member(&root, "hooks", merged.get("hooks")?),
        Some(hooks) => {
            for change in changes {
                match change {
                    Change::Added { event, .. } => {
                        let groups = merged.get("hooks")?.get(*event)?;
                        match hooks.get(event) {
                            None => editor.add_member(hooks, event, groups),
                            Some(array) => editor.push(array, groups.as_array()?.last()?),
                        }
                    }
                    Change::Timeout { event, to, .. } => {
                        let hook = adapter_hook_node(text, hooks.get(event)?, command, agent)?;
                        match hook.get("timeout") {
                            Some(old) => editor.replace(old, &Value::from(*to)),
                            None => editor.add_member(hook, "timeout", &Value::from(*to)),
                        }
                    }
                    // Rendered whole instead (a key added inside an existing entry).
                    Change::FailClosed { .. } => return None,
                    Change::Present { .. } => {}
                }
            }
        }
    }
    if root.get("sandbox").is_none() {
        editor.add_member(&root, "sandbox", merged.get("sandbox")?);
    }
    let edited = editor.finish();
    let reread: Value = serde_json::from_str(&edited).ok()?;
    (&reread == merged).then_some(edited)
}

/// The adapter's hook object inside an event's array of groups.
fn adapter_hook_node<'n>(
    text: &str,
    groups: &'n jsonedit::Node,
    command: &str,
    agent: Agent,
) -> Option<&'n jsonedit::Node> {
    let jsonedit::Node::Array { items, .. } = groups else {
        return None;
    };
    items.iter().find_map(|group| {
        let jsonedit::Node::Array { items, .. } = group.get("hooks")? else {
            return None;
        };
        items.iter().find(|hook| {
            hook.get("command")
                .and_then(|c| text.get(c.span()))
                .and_then(|c| serde_json::from_str::<String>(c).ok())
                .is_some_and(|c| c == command || is_adapter_command(&c, agent))
        })
    })
}

/// The settings as text, indented like the original file (two spaces for a new one), ending
/// with a newline when the original did.
pub(crate) fn render(settings: &Value, original: Option<&str>) -> Result<String, String> {
    let indent = original
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty())
                .map(|l| {
                    l.chars()
                        .take_while(|c| *c == ' ' || *c == '\t')
                        .collect::<String>()
                })
        })
        .unwrap_or_else(|| "  ".to_owned());
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    settings
        .serialize(&mut serializer)
        .map_err(|e| format!("failed to serialise the settings: {e}"))?;
    let mut text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
    if original.is_none_or(|o| o.ends_with('\n') || o.trim().is_empty()) {
        text.push('\n');
    }
    Ok(text)
}

/// Writes through a temporary file in the same folder, keeping the old file's permissions.
pub(crate) fn write_atomically(file: &Path, text: &str) -> Result<(), String> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let tmp = dir.join(format!(
        ".{}.ka-hooks.tmp",
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, text).map_err(|e| format!("failed to write {}: {e}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, file).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("failed to replace {}: {e}", file.display())
    })
}

/// The Claude Code event names an install registers (for docs and tests).
pub fn installable(agent: Agent) -> impl Iterator<Item = (&'static str, Event)> {
    agent
        .events()
        .iter()
        .filter(|row| row.flavour == Flavour::Plain)
        .map(|row| (row.name, row.event))
}

/// The dry run's unified diff of `file` (from `/dev/null` when it does not exist yet), escaped
/// line by line: a settings file may hold control characters.
pub(crate) fn print_diff(file: &Path, existed: bool, old: &str, new: &str) {
    let label = file.display().to_string();
    let before = if existed { label.as_str() } else { "/dev/null" };
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(before, &label)
        .to_string();
    print!("{}", escape_diff(&text));
}

/// A diff escaped line by line (a settings file may hold control characters).
pub(crate) fn escape_diff(diff: &str) -> String {
    diff.lines()
        .map(|l| format!("{}\n", crate::terminal::escape(l)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapter_commands_are_recognised() {
        assert!(is_adapter_command("ka-hooks claude", Agent::Claude));
        assert!(is_adapter_command(
            "\"/home/me/bin/ka-hooks\" --trust claude",
            Agent::Claude
        ));
        assert!(!is_adapter_command("ka-hooks codex", Agent::Claude));
        assert!(!is_adapter_command("sh guard.sh claude", Agent::Claude));
        assert!(!is_adapter_command("my-ka-hooks claude", Agent::Claude));
    }
}
