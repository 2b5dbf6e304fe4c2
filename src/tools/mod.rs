//! The one translation table between ka's tool and argument names and those of other agents,
//! read in both directions: an agent's payload becomes ka's names before the hooks run, and a
//! rewritten input goes back in the agent's names, because the agent replaces its input with it.
//! A tool not in the table (MCP tools, newer tools) keeps its name and arguments.

pub mod agents;
#[cfg(feature = "cli")]
mod translate;

#[cfg(feature = "cli")]
pub use translate::*;

#[cfg(feature = "cli")]
use crate::agent::Agent;
#[cfg(feature = "cli")]
use agents as tools_agents;

/// One tool under each agent's name (`None`: the agent has no such tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolRow {
    pub ka: &'static str,
    pub claude: Option<&'static str>,
    pub codex: Option<&'static str>,
    pub gemini: Option<&'static str>,
    /// Arguments whose name differs in some agent. Any other argument keeps its name.
    pub args: &'static [ArgRow],
}

/// One argument under each agent's name (the ka name again where it is the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgRow {
    pub ka: &'static str,
    pub claude: &'static str,
    pub codex: &'static str,
    pub gemini: &'static str,
}

#[cfg(feature = "cli")]
impl ToolRow {
    /// The tool's name in `agent`.
    pub fn name(&self, agent: Agent) -> Option<&'static str> {
        match agent {
            Agent::Claude => self.claude,
            Agent::Codex => self.codex,
            Agent::Gemini => self.gemini,
            Agent::Copilot | Agent::Cursor | Agent::Antigravity => {
                tools_agents::by_ka_name(agent, self.ka).map(|t| t.name)
            }
        }
    }
}

#[cfg(feature = "cli")]
impl ArgRow {
    /// The argument's name in `agent`.
    pub const fn name(&self, agent: Agent) -> &'static str {
        match agent {
            Agent::Claude => self.claude,
            Agent::Codex => self.codex,
            Agent::Gemini => self.gemini,
            // Their arguments are in [`tools_agents`].
            Agent::Copilot | Agent::Cursor | Agent::Antigravity => self.ka,
        }
    }
}

const fn arg(
    ka: &'static str,
    claude: &'static str,
    codex: &'static str,
    gemini: &'static str,
) -> ArgRow {
    ArgRow {
        ka,
        claude,
        codex,
        gemini,
    }
}

/// A file path: Claude and Gemini say `file_path`.
const FILE_PATH: ArgRow = arg("path", "file_path", "path", "file_path");
/// A directory to search or list: Gemini says `dir_path`.
const DIR_PATH: ArgRow = arg("path", "path", "path", "dir_path");

/// The table. Sources: Claude Code's hooks reference (tool names and `tool_input` fields),
/// Codex's hook payloads (`Bash` with `{"command"}`, `apply_patch` with the patch as
/// `command`), Gemini CLI's tool names (`packages/core/src/tools/tool-names.ts`).
pub const TOOLS: &[ToolRow] = &[
    ToolRow {
        ka: "write",
        claude: Some("Write"),
        codex: None,
        gemini: Some("write_file"),
        args: &[FILE_PATH],
    },
    ToolRow {
        ka: "edit",
        claude: Some("Edit"),
        codex: None,
        gemini: Some("replace"),
        args: &[FILE_PATH],
    },
    ToolRow {
        ka: "multi_edit",
        claude: Some("MultiEdit"),
        codex: None,
        gemini: None,
        args: &[FILE_PATH],
    },
    ToolRow {
        ka: "read",
        claude: Some("Read"),
        codex: None,
        gemini: Some("read_file"),
        args: &[FILE_PATH],
    },
    ToolRow {
        ka: "bash",
        claude: Some("Bash"),
        codex: Some("Bash"),
        gemini: Some("run_shell_command"),
        args: &[],
    },
    ToolRow {
        ka: "glob",
        claude: Some("Glob"),
        codex: None,
        gemini: Some("glob"),
        args: &[DIR_PATH],
    },
    ToolRow {
        ka: "grep",
        claude: Some("Grep"),
        codex: None,
        gemini: Some("grep_search"),
        args: &[DIR_PATH],
    },
    ToolRow {
        ka: "ls",
        claude: Some("LS"),
        codex: None,
        gemini: Some("list_directory"),
        args: &[DIR_PATH],
    },
    ToolRow {
        ka: "web_fetch",
        claude: Some("WebFetch"),
        codex: None,
        gemini: Some("web_fetch"),
        args: &[],
    },
    ToolRow {
        ka: "web_search",
        claude: Some("WebSearch"),
        codex: None,
        gemini: Some("google_web_search"),
        args: &[],
    },
    ToolRow {
        ka: "notebook_edit",
        claude: Some("NotebookEdit"),
        codex: None,
        gemini: None,
        args: &[arg("path", "notebook_path", "path", "path")],
    },
    ToolRow {
        ka: "todo_write",
        claude: Some("TodoWrite"),
        codex: None,
        gemini: Some("write_todos"),
        args: &[],
    },
    ToolRow {
        ka: "agent",
        claude: Some("Agent"),
        codex: None,
        gemini: None,
        args: &[],
    },
    ToolRow {
        ka: "task",
        claude: Some("Task"),
        codex: None,
        gemini: None,
        args: &[],
    },
    // Cursor's `Delete` (tools_agents): a file writer, so path guards see it.
    ToolRow {
        ka: "delete",
        claude: None,
        codex: None,
        gemini: None,
        args: &[],
    },
    ToolRow {
        ka: "apply_patch",
        claude: None,
        codex: Some("apply_patch"),
        gemini: None,
        args: &[arg("patch", "patch", "command", "patch")],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_per_agent_and_in_ka() {
        for (i, a) in TOOLS.iter().enumerate() {
            for b in &TOOLS[i + 1..] {
                assert_ne!(a.ka, b.ka, "ka name {} twice", a.ka);
                for agent in Agent::ALL {
                    if let (Some(x), Some(y)) = (a.name(agent), b.name(agent)) {
                        assert_ne!(x, y, "{agent:?} name {x} twice");
                    }
                }
            }
        }
    }

    #[test]
    fn unknown_tools_and_arguments_pass_through() {
        assert_eq!(
            ka_tool_name(Agent::Claude, "mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        let args = json!({"title": "x", "file_path": "a"});
        let args = args.as_object().cloned().unwrap_or_default();
        assert_eq!(args_to_ka(Agent::Claude, "mcp__x__y", &args), args);
        assert_eq!(args_from_ka(Agent::Claude, "mcp__x__y", &args), args);
    }

    /// The agent's own key is ka's `path`, in either order; the other is kept and goes back.
    #[test]
    fn the_agents_own_key_wins_over_a_decoy() {
        for input in [
            json!({"file_path": "secrets/k", "path": "README.md", "content": "x"}),
            json!({"path": "README.md", "file_path": "secrets/k", "content": "x"}),
        ] {
            let input = input.as_object().cloned().unwrap_or_default();
            let ka = args_to_ka(Agent::Claude, "Write", &input);
            assert_eq!(ka["path"], "secrets/k");
            assert_eq!(ka["shadowed_path"], "README.md");
            let back = args_from_ka(Agent::Claude, "write", &ka);
            assert_eq!(back.get("file_path"), input.get("file_path"));
            assert_eq!(back.get("path"), input.get("path"));
            assert_eq!(back.len(), input.len());
        }
    }
}
