//! The translation table's rows for the agents whose tools are named per agent rather than after
//! Claude Code's: GitHub Copilot, Cursor and Antigravity. [`crate::tools`] reads them as it reads
//! the others; docs/agents.md lists the rows and where they come from.

use crate::agent::Agent;

/// One tool of one agent: its name, the ka tool, and the arguments whose name differs from ka's
/// (`(ka, agent)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentTool {
    pub agent: Agent,
    pub name: &'static str,
    pub ka: &'static str,
    pub args: &'static [(&'static str, &'static str)],
}

const fn tool(
    agent: Agent,
    name: &'static str,
    ka: &'static str,
    args: &'static [(&'static str, &'static str)],
) -> AgentTool {
    AgentTool {
        agent,
        name,
        ka,
        args,
    }
}

const CO: Agent = Agent::Copilot;
const CU: Agent = Agent::Cursor;
const AG: Agent = Agent::Antigravity;

/// A Claude-style file path (Cursor's file tools).
const FILE_PATH: &[(&str, &str)] = &[("path", "file_path")];

/// The rows. Where two names of one agent run one ka tool (Copilot's `bash` and `powershell`),
/// the first is the name a rewrite or a matcher translates back to.
pub const AGENT_TOOLS: &[AgentTool] = &[
    // GitHub Copilot CLI and cloud agent.
    tool(CO, "bash", "bash", &[]),
    tool(CO, "powershell", "bash", &[]),
    tool(CO, "view", "read", &[]),
    tool(CO, "create", "write", &[("content", "file_text")]),
    tool(CO, "edit", "edit", &[]),
    tool(CO, "str_replace_editor", "edit", &[]),
    tool(CO, "apply_patch", "apply_patch", &[]),
    tool(CO, "grep", "grep", &[]),
    tool(CO, "rg", "grep", &[]),
    tool(CO, "glob", "glob", &[]),
    tool(CO, "web_fetch", "web_fetch", &[]),
    tool(CO, "web_search", "web_search", &[]),
    tool(CO, "update_todo", "todo_write", &[]),
    tool(CO, "task", "task", &[]),
    // Copilot CLI 1.0.102's PascalCase events: Claude's tool names, Copilot's argument names
    // (`Write {path, file_text}`), measured driving it headless (see `reshape::copilot_tool_names`).
    tool(CO, "Bash", "bash", &[]),
    tool(CO, "Read", "read", &[]),
    tool(CO, "Write", "write", &[("content", "file_text")]),
    tool(CO, "Edit", "edit", &[]),
    tool(CO, "Grep", "grep", &[]),
    tool(CO, "Glob", "glob", &[]),
    tool(CO, "WebFetch", "web_fetch", &[]),
    tool(CO, "WebSearch", "web_search", &[]),
    tool(CO, "TodoWrite", "todo_write", &[]),
    // VS Code's agent tools, sent by its Local harness to the same `.github/hooks` entries
    // (vscode-docs `docs/agent-customization/hooks.md` @ 91e74cb2: "`editFiles`,
    // `runTerminalCommand`, `create_file`, `replace_string_in_file`", arguments camelCase
    // such as `filePath`).
    tool(CO, "create_file", "write", &[("path", "filePath")]),
    tool(
        CO,
        "replace_string_in_file",
        "edit",
        &[("path", "filePath")],
    ),
    tool(CO, "editFiles", "edit", &[]),
    tool(CO, "runTerminalCommand", "bash", &[]),
    // Cursor.
    tool(CU, "Shell", "bash", &[("cwd", "working_directory")]),
    tool(CU, "Read", "read", FILE_PATH),
    tool(CU, "Write", "write", FILE_PATH),
    tool(CU, "Delete", "delete", FILE_PATH),
    tool(CU, "Grep", "grep", &[]),
    tool(CU, "Task", "task", &[]),
    // Antigravity (experimental: names measured by third parties).
    tool(
        AG,
        "run_command",
        "bash",
        &[("command", "CommandLine"), ("cwd", "Cwd")],
    ),
    tool(
        AG,
        "write_to_file",
        "write",
        &[("path", "TargetFile"), ("content", "CodeContent")],
    ),
    tool(
        AG,
        "replace_file_content",
        "edit",
        &[("path", "TargetFile")],
    ),
    tool(
        AG,
        "multi_replace_file_content",
        "multi_edit",
        &[("path", "TargetFile")],
    ),
    tool(AG, "view_file", "read", &[("path", "AbsolutePath")]),
    tool(AG, "list_dir", "ls", &[("path", "DirectoryPath")]),
    tool(AG, "grep_search", "grep", &[("path", "SearchPath")]),
    tool(AG, "read_url_content", "web_fetch", &[("url", "Url")]),
    tool(AG, "search_web", "web_search", &[]),
];

/// `agent`'s row for its tool `name`.
#[cfg(feature = "cli")]
pub fn by_agent_name(agent: Agent, name: &str) -> Option<&'static AgentTool> {
    AGENT_TOOLS
        .iter()
        .find(|t| t.agent == agent && t.name == name)
}

/// `agent`'s (first) row for ka's tool `ka`.
#[cfg(feature = "cli")]
pub fn by_ka_name(agent: Agent, ka: &str) -> Option<&'static AgentTool> {
    AGENT_TOOLS.iter().find(|t| t.agent == agent && t.ka == ka)
}

/// Every agent's name of ka's tool `ka` in this table (for filters that accept any spelling).
pub fn names_of(ka: &str) -> impl Iterator<Item = &'static str> + '_ {
    AGENT_TOOLS
        .iter()
        .filter(move |t| t.ka == ka)
        .map(|t| t.name)
}

/// Whether an agent's tools are in this table rather than in [`crate::tools::TOOLS`].
#[cfg(feature = "cli")]
pub const fn is_listed_here(agent: Agent) -> bool {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Gemini => false,
        Agent::Copilot | Agent::Cursor | Agent::Antigravity => true,
    }
}

/// The renames of `agent`'s tool `name` as `(ka, agent)` pairs (none for a tool not listed).
#[cfg(feature = "cli")]
pub fn renames(agent: Agent, name: &str) -> &'static [(&'static str, &'static str)] {
    by_agent_name(agent, name).map_or(&[], |t| t.args)
}

/// The renames of ka's tool `ka` in `agent`.
#[cfg(feature = "cli")]
pub fn renames_from_ka(agent: Agent, ka: &str) -> &'static [(&'static str, &'static str)] {
    by_ka_name(agent, ka).map_or(&[], |t| t.args)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each agent names each tool once; each ka tool of a row is a tool ka knows.
    #[test]
    fn names_are_unique_per_agent_and_map_to_known_ka_tools() {
        for (i, a) in AGENT_TOOLS.iter().enumerate() {
            for b in &AGENT_TOOLS[i + 1..] {
                assert!(
                    !(a.agent == b.agent && a.name == b.name),
                    "{:?} {} twice",
                    a.agent,
                    a.name
                );
            }
            assert!(
                crate::tools::by_ka_name(a.ka).is_some(),
                "{:?} {} runs ka tool {}, which the table does not know",
                a.agent,
                a.name,
                a.ka
            );
        }
    }
}
