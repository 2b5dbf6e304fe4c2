//! The adapter table: every agent whose hooks can run `ka.toml` hooks is one module
//! implementing [`AgentAdapter`], registered once in [`ADAPTERS`] (and under its [`Agent`]
//! name in [`Agent::adapter`]). Nothing else in ka-hooks asks which agent it serves: the
//! pipeline, `install`, `import` and the CLI read what they need from the agent's entry.
//!
//! docs/adapters.md ("Adding an agent") says how to add one; [`check`] is the test every
//! entry must pass.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Answer, Call, EventRow, Rejected, Verdict};
use crate::agent::Agent;
use crate::event::Event;
use crate::outcome::HookReport;

/// One agent's contract, as the adapter pipeline reads it ([`super::respond_with`]).
pub trait AgentAdapter: Sync + std::fmt::Debug {
    /// The `ka-hooks` subcommand (`claude`).
    fn command(&self) -> &'static str;
    /// The agent's name, for messages (`Claude Code`).
    fn display(&self) -> &'static str;
    /// The agent's hook events that run ka events.
    fn events(&self) -> &'static [EventRow];
    /// The agent's hook events with no ka event of their own, with why: they run `observe`.
    fn observed(&self) -> &'static [(&'static str, &'static str)];
    /// The environment variables in which the agent names the session's project directory,
    /// most specific first.
    fn project_dir_vars(&self) -> &'static [&'static str];
    /// The environment variables the agent sets for the processes it starts (its markers; each
    /// is in `crate::paths::AGENT_MARKERS` or `crate::paths::AGENT_VALUE_MARKERS`).
    fn markers(&self) -> &'static [&'static str];
    /// Another agent that also runs this agent's registration, with the variables it sets for
    /// its hooks, all of them (GitHub Copilot runs the hooks of `.claude/settings.json`, with
    /// `COPILOT_CLI=1` and `COPILOT_PROJECT_DIR`):
    /// where that agent's own adapter is installed too, this one stands aside, so every hook
    /// runs once.
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)>;
    /// Adds Claude Code's field names (`hook_event_name`, `tool_name`, `tool_input`, ...) to the
    /// agent's payload, keeping its own; `named` is the command line's `--event`.
    fn reshape(
        &self,
        payload: &mut Map<String, Value>,
        named: Option<&str>,
    ) -> Result<(), Rejected>;
    /// The column of [`crate::tools`] whose tool and argument names a payload uses.
    fn tool_names(&self, payload: &Map<String, Value>, tool: &str) -> Agent;
    /// A tool call the agent encodes in a way of its own (Codex's `apply_patch`, Copilot's
    /// permission request for a create), read as ka's `(tool, arguments, patch)`; `None` for
    /// every other call, which the translation table reads.
    fn own_tool(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        cwd: Option<&Path>,
    ) -> Option<OwnTool>;
    /// ka's `result` and `is_error` of a finished tool call.
    fn result(&self, payload: &Map<String, Value>) -> (Value, bool);
    /// Whether the agent reads a hook's plain (non-JSON) stdout on `event` as context.
    fn stdout_is_context(&self, event: Event) -> bool;
    /// What the agent itself would show the user of the hooks' plain output and exit-2 stderr.
    fn user_texts(&self, event: Event, hooks: &[HookReport]) -> Vec<String>;
    /// Whether a hook's exit 2 blocks a compaction, and why.
    fn compaction_blocked(&self, event: Event, hooks: &[HookReport]) -> Option<String>;
    /// The verdict in the agent's own contract.
    fn answer(&self, call: &Call, verdict: Verdict) -> Answer;
    /// A block ka-hooks decides itself (an unreadable payload, `--fail-closed`).
    fn block(&self, why: &str) -> Answer;
    /// ka-hooks could not run the hooks and fails open: `message` said where the agent shows it.
    fn fail_open(&self, event: Option<Event>, message: &str) -> Answer;
    /// How `ka-hooks install <agent>` registers the adapter.
    fn install(&self) -> Install;
    /// Where `ka-hooks import <agent>` reads the agent's own hooks.
    fn import(&self) -> Import;
}

/// A tool call read by the agent's own code: ka's tool and arguments, and the patch a rewrite
/// goes back into (`None`: back through the translation table).
pub type OwnTool = (String, Map<String, Value>, Option<super::codex::Patch>);

/// How `install` registers an adapter.
#[derive(Debug, Clone, Copy)]
pub enum Install {
    /// Merged into Claude Code's settings (`.claude/settings.json`).
    ClaudeSettings,
    /// Printed for the user to add by hand: the file, and the unit of a timeout per second.
    ByHand {
        file: &'static str,
        timeout_unit: u64,
        note: &'static str,
    },
    /// Merged into a hook file of the agent's own (`super::hookfile`).
    HookFile(&'static HookFile),
}

/// Where `import` reads an agent's hooks.
#[derive(Debug, Clone, Copy)]
pub enum Import {
    /// Claude Code's settings files.
    ClaudeSettings,
    /// The agent's hook file, as `install` writes it.
    HookFile(&'static HookFile),
    /// Not offered, with why.
    Unsupported(&'static str),
}

/// The layout of an agent's own hook file (Copilot, Cursor, Antigravity).
#[derive(Debug, Clone, Copy)]
pub struct HookFile {
    /// The events `install` registers.
    pub installed: &'static [&'static str],
    /// The project's file, relative to the project root.
    pub project: &'static str,
    /// The user's file: its folder (`None`: no home) and the path under it.
    pub user: (fn() -> Option<PathBuf>, &'static str),
    /// What to set when the user's folder is unknown.
    pub user_unknown: &'static str,
    /// `import` reads every `*.json` of the file's folder (Copilot), not the one file.
    pub folder: bool,
    /// Where the event arrays are.
    pub layout: Layout,
    /// The key of an entry's command (`bash`, `command`).
    pub command_key: &'static str,
    /// The key of an entry's timeout in seconds, and the agent's default.
    pub timeout_key: &'static str,
    pub default_timeout: Option<u64>,
    /// The command names its event (`ka-hooks copilot --event preToolUse`).
    pub event_flag: bool,
    /// An entry carries `"type": "command"`.
    pub typed: bool,
    /// The key that makes a failing entry block (`failClosed`), set on the events that can be
    /// vetoed.
    pub fail_closed_key: Option<&'static str>,
    /// Tool events get Claude-style `{matcher, hooks: [..]}` groups.
    pub grouped: bool,
    /// A camelCase event's matcher is a regex anchored at both ends.
    pub anchored_matchers: bool,
    /// Keys of an entry ka cannot run, with why.
    pub refused_keys: &'static [(&'static str, &'static str)],
    /// Printed after an install.
    pub note: Option<&'static str>,
    /// Whether a hook of this event that crashes or exits non-zero makes the agent block the
    /// call (where no `fail_closed_key` says so per entry).
    pub fails_closed: fn(event: &str) -> bool,
    /// Events that run for one kind of tool, with the ka tool or group they cover.
    pub event_tools: &'static [(&'static str, &'static str)],
    /// `import --user` runs relative commands from the user's hook file's folder.
    pub user_commands_from_file_dir: bool,
}

/// Where a hook file keeps its event arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `{"version": 1, "hooks": {event: [..]}}`.
    Hooks,
    /// `{name: {"enabled": true, event: [..]}}`, the adapter's under this name.
    Named(&'static str),
}

/// The table: one entry per agent.
pub static ADAPTERS: &[&dyn AgentAdapter] = &[
    &super::claude::Claude,
    &super::codex::Codex,
    &super::gemini::Gemini,
    &super::copilot::Copilot,
    &super::cursor::Cursor,
    &super::antigravity::Antigravity,
];

impl Agent {
    /// The agent's entry of the adapter table.
    pub fn adapter(self) -> &'static dyn AgentAdapter {
        let at = match self {
            Agent::Claude => 0,
            Agent::Codex => 1,
            Agent::Gemini => 2,
            Agent::Copilot => 3,
            Agent::Cursor => 4,
            Agent::Antigravity => 5,
        };
        ADAPTERS[at]
    }

    /// The agent's hook events and the ka event each one runs.
    pub fn events(self) -> &'static [EventRow] {
        self.adapter().events()
    }

    /// The agent's hook events that have no ka event of their own, with why.
    pub fn observed(self) -> &'static [(&'static str, &'static str)] {
        self.adapter().observed()
    }
}

/// What is wrong with a table of adapters (`Ok` when nothing is): each agent has a command, a
/// name, events with unique names that run distinct ka event rows, observed events that are not
/// also run, installed events it has, and markers ka knows.
pub fn check(table: &[&dyn AgentAdapter]) -> Result<(), String> {
    let mut errors = Vec::new();
    let mut commands = std::collections::BTreeSet::new();
    for adapter in table {
        let name = adapter.command();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase()) {
            errors.push(format!("`{name}`: the command must be lowercase letters"));
        }
        if !commands.insert(name) {
            errors.push(format!("`{name}`: two entries have this command"));
        }
        if adapter.display().is_empty() {
            errors.push(format!("`{name}`: no display name"));
        }
        let events = adapter.events();
        if events.is_empty() {
            errors.push(format!("`{name}`: no events"));
        }
        for (i, row) in events.iter().enumerate() {
            if events[..i].iter().any(|r| r.name == row.name) {
                errors.push(format!("`{name}`: event `{}` is listed twice", row.name));
            }
            if adapter.observed().iter().any(|(n, _)| *n == row.name) {
                errors.push(format!("`{name}`: `{}` is run and observed", row.name));
            }
        }
        for (event, why) in adapter.observed() {
            if why.is_empty() {
                errors.push(format!("`{name}`: observed `{event}` says no why"));
            }
        }
        let installed: &[&str] = match adapter.install() {
            Install::HookFile(file) => file.installed,
            Install::ClaudeSettings | Install::ByHand { .. } => &[],
        };
        for event in installed {
            if !events.iter().any(|r| r.name == *event) {
                errors.push(format!(
                    "`{name}`: installs `{event}`, which it does not run"
                ));
            }
        }
        for marker in adapter.markers() {
            let known = crate::paths::AGENT_MARKERS.iter().any(|(v, _)| v == marker)
                || crate::paths::AGENT_VALUE_MARKERS
                    .iter()
                    .any(|(v, _, _)| v == marker);
            if !known {
                errors.push(format!("`{name}`: marker `{marker}` is not in paths"));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// The entry whose command is `name`.
pub fn by_command(name: &str) -> Option<&'static dyn AgentAdapter> {
    ADAPTERS.iter().copied().find(|a| a.command() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_passes_its_check() {
        check(ADAPTERS).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Every agent has its own entry, under its own command, and the table has no other.
    #[test]
    fn every_agent_has_its_entry() {
        assert_eq!(ADAPTERS.len(), Agent::ALL.len());
        for agent in Agent::ALL {
            assert_eq!(agent.adapter().command(), agent.command());
            let found = by_command(agent.command()).map(|a| a.command());
            assert_eq!(found, Some(agent.command()));
        }
    }
}
