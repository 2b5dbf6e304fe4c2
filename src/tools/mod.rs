//! The one translation table between ka's tool and argument names and those of other agents.
//!
//! Every adapter reads it in both directions: an agent's payload is turned into ka names before
//! the hooks run (`Write` + `file_path` → `write` + `path`), and a rewritten input goes back in the
//! agent's names (`path` → `file_path`), because the agent replaces its input with what it gets.
//! `ka-hooks import` and `install` use it for matchers. The README shows this table; a test
//! checks every row in both directions.
//!
//! A tool that is not in the table (MCP tools such as `mcp__github__create_issue`, tools added
//! after this table was written) keeps its name and its arguments as they are.
//!
//! Codex has no discrete write or edit tool: its edits are `apply_patch` calls, which
//! [`crate::adapter::codex`] turns into `write` / `edit` / `apply_patch` by reading the patch.

pub mod agents;

use serde_json::{Map, Value};

use crate::agent::Agent;
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

/// The row of a tool by its name in `agent`.
pub fn by_agent_name(agent: Agent, name: &str) -> Option<&'static ToolRow> {
    if tools_agents::is_listed_here(agent) {
        return tools_agents::by_agent_name(agent, name).and_then(|t| by_ka_name(t.ka));
    }
    TOOLS.iter().find(|row| row.name(agent) == Some(name))
}

/// The row of a tool by its ka name.
pub fn by_ka_name(name: &str) -> Option<&'static ToolRow> {
    TOOLS.iter().find(|row| row.ka == name)
}

/// The ka name of `agent`'s tool `name` (unchanged when the table does not know it).
pub fn ka_tool_name(agent: Agent, name: &str) -> String {
    by_agent_name(agent, name).map_or_else(|| name.to_owned(), |row| row.ka.to_owned())
}

/// `agent`'s name for ka's tool `name`: `None` when the agent has no such tool; the name itself
/// when the table does not know it.
pub fn agent_tool_name(agent: Agent, name: &str) -> Option<String> {
    match by_ka_name(name) {
        Some(row) => row.name(agent).map(str::to_owned),
        None => Some(name.to_owned()),
    }
}

/// A tool name as a person typed it (`ka-hooks run --tool`, a golden case's `tool`), read the way
/// `[[hooks]]` entries read it: ka's own name stays; any agent's spelling (`Bash`,
/// `run_shell_command`, `Write`) becomes ka's name, with the agent whose spelling it is, so the
/// arguments can be renamed too ([`args_to_ka`]). A name no agent knows but close to one is an
/// error with a did-you-mean; any other name (MCP tools, tools of one's own) stays as written.
pub fn from_agent_spelling(name: &str) -> Result<(String, Option<Agent>), String> {
    if by_ka_name(name).is_some() || name.starts_with("mcp__") {
        return Ok((name.to_owned(), None));
    }
    for agent in Agent::ALL {
        if let Some(row) = by_agent_name(agent, name) {
            return Ok((row.ka.to_owned(), Some(agent)));
        }
    }
    let lower = name.to_lowercase();
    // Nearest first; on a tie, ka's own name.
    let spellings = TOOLS.iter().flat_map(|r| {
        std::iter::once((0, r.ka)).chain(
            [r.claude, r.codex, r.gemini]
                .into_iter()
                .flatten()
                .map(|n| (1, n)),
        )
    });
    let nearest = spellings
        .map(|(rank, known)| {
            let d = crate::event::edit_distance(&lower, &known.to_lowercase());
            (d, rank, known)
        })
        .min()
        .filter(|(d, _, known)| *d <= 2.max(known.len() / 3));
    match nearest {
        Some((_, _, known)) => Err(format!(
            "unknown tool `{}` (did you mean `{known}`?); ka's names and every agent's \
             spelling are accepted (`bash`, `Bash`, `run_shell_command`, ...)",
            crate::terminal::escape(name)
        )),
        None => Ok((name.to_owned(), None)),
    }
}

/// A payload's `tool` in ka's name ([`from_agent_spelling`]), and its `arguments` renamed from
/// that agent's names when it was another agent's spelling.
pub fn payload_to_ka(payload: &mut Map<String, Value>) -> Result<(), String> {
    let Some(Value::String(given)) = payload.get("tool") else {
        return Ok(());
    };
    let given = given.clone();
    let (ka, agent) = from_agent_spelling(&given)?;
    if let (Some(agent), Some(Value::Object(args))) = (agent, payload.get("arguments")) {
        let renamed = args_to_ka(agent, &given, args);
        payload.insert("arguments".into(), Value::Object(renamed));
    }
    payload.insert("tool".into(), Value::String(ka));
    Ok(())
}

/// `agent`'s arguments for its tool `tool`, renamed to ka's names.
///
/// The agent's own key wins: a Claude `Write` input holding both `file_path` (the file Claude
/// writes) and a `path` gets ka's `path` from `file_path`, and keeps the other `path` as
/// `shadowed_path`, which path matching still looks at (`crate::config::touched`) and a
/// rewrite gives back under its own name.
pub fn args_to_ka(agent: Agent, tool: &str, args: &Map<String, Value>) -> Map<String, Value> {
    let renames = if tools_agents::is_listed_here(agent) {
        tools_agents::renames(agent, tool).to_vec()
    } else {
        pairs(
            agent,
            by_agent_name(agent, tool).map_or(&[][..], |row| row.args),
        )
    };
    let mut out = Map::new();
    for (key, value) in rename(args, &renames, |(_, theirs)| theirs, |(ka, _)| ka) {
        out.insert(key, value);
    }
    for &(ours, theirs) in &renames {
        if theirs != ours && args.contains_key(theirs) {
            if let Some(decoy) = args.get(ours) {
                // `rename` let the later of the two win; the agent's own key must.
                out.insert(shadowed(ours), decoy.clone());
                if let Some(own) = args.get(theirs) {
                    out.insert(ours.to_owned(), own.clone());
                }
            }
        }
    }
    out
}

/// ka's arguments for ka's tool `ka_tool`, renamed to `agent`'s names (a `shadowed_` key goes
/// back to the name it had).
pub fn args_from_ka(agent: Agent, ka_tool: &str, args: &Map<String, Value>) -> Map<String, Value> {
    let renames = if tools_agents::is_listed_here(agent) {
        tools_agents::renames_from_ka(agent, ka_tool).to_vec()
    } else {
        pairs(agent, by_ka_name(ka_tool).map_or(&[][..], |row| row.args))
    };
    from_ka_with(&renames, args)
}

/// ka's arguments of a call the agent made with its tool `agent_tool`, back in that tool's
/// names: where several of an agent's tools run one ka tool (Copilot's `create` and VS Code's
/// `create_file`), the call's own tool decides.
pub fn args_back(
    agent: Agent,
    agent_tool: &str,
    ka_tool: &str,
    args: &Map<String, Value>,
) -> Map<String, Value> {
    if tools_agents::is_listed_here(agent)
        && tools_agents::by_agent_name(agent, agent_tool).is_some()
    {
        return from_ka_with(tools_agents::renames(agent, agent_tool), args);
    }
    args_from_ka(agent, ka_tool, args)
}

fn from_ka_with(renames: &[Pair], args: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in rename(args, renames, |(ka, _)| ka, |(_, theirs)| theirs) {
        let back = renames
            .iter()
            .find(|(ka, theirs)| ka != theirs && key == shadowed(ka));
        match back {
            Some((ka, _)) => out.insert((*ka).to_owned(), value),
            None => out.insert(key, value),
        };
    }
    out
}

/// The renames of `rows` as `(ka, agent)` pairs.
fn pairs(agent: Agent, rows: &[ArgRow]) -> Vec<(&'static str, &'static str)> {
    rows.iter().map(|row| (row.ka, row.name(agent))).collect()
}

/// The key under which a conflicting input key `name` is kept.
fn shadowed(name: &str) -> String {
    format!("shadowed_{name}")
}

/// Renames keys `from(pair)` → `to(pair)`, keeping every other key, in the original order.
type Pair = (&'static str, &'static str);
fn rename<'a>(
    args: &'a Map<String, Value>,
    rows: &'a [Pair],
    from: impl Fn(Pair) -> &'static str + 'a,
    to: impl Fn(Pair) -> &'static str + 'a,
) -> impl Iterator<Item = (String, Value)> + 'a {
    args.iter().map(move |(key, value)| {
        let key = rows
            .iter()
            .find(|row| from(**row) == key)
            .map_or_else(|| key.clone(), |row| to(*row).to_owned());
        (key, value.clone())
    })
}

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
