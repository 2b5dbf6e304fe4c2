//! Translation through the tool table, in both directions: an agent's tool and argument names
//! to ka's and back. The adapters', `ka-hooks run`'s and the golden tests' (the `cli` feature).

use serde_json::{Map, Value};

use super::agents as tools_agents;
use super::{ArgRow, ToolRow, TOOLS};
use crate::agent::Agent;

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
