//! GitHub Copilot's, Cursor's and Antigravity's payloads, given the Claude Code field names every
//! adapter reads (`hook_event_name`, `tool_name`, `tool_input`, `cwd`, `session_id`, ...). The
//! agent's own fields stay, so a script written for the agent keeps working; where the payload
//! does not name its event, the hook command's `--event` does.

use serde_json::{Map, Value};

use super::table::AgentAdapter;
use super::{Agent, Rejected};

/// Names the event of a reshaped payload: the payload's own `hook_event_name`, else the
/// command line's `--event` (`named`); both, when they disagree, or neither, is an error.
pub fn name_event(
    adapter: &dyn AgentAdapter,
    payload: &mut Map<String, Value>,
    named: Option<&str>,
) -> Result<(), Rejected> {
    match (
        payload.get("hook_event_name").and_then(Value::as_str),
        named,
    ) {
        // Two spellings of one event (Copilot's `PermissionRequest` payload for its
        // `permissionRequest` entry) are the same event.
        (Some(said), Some(named)) if said != named && !same_event(adapter, said, named) => {
            Err(Rejected::Broken(format!(
                "the payload's `hook_event_name` is `{}` but the command line says --event {}",
                crate::terminal::escape(said),
                crate::terminal::escape(named)
            )))
        }
        (Some(_), _) => Ok(()),
        (None, Some(named)) => {
            payload.insert("hook_event_name".into(), Value::String(named.to_owned()));
            Ok(())
        }
        (None, None) => Err(Rejected::Broken(format!(
            "the {} payload does not name its event: run `ka-hooks {} --event <name>` (as \
             `ka-hooks install {}` writes it)",
            adapter.display(),
            adapter.command(),
            adapter.command()
        ))),
    }
}

/// Whether `a` and `b` are spellings of one of `adapter`'s events (the same name but for the
/// case of its first letter, and the same ka event).
fn same_event(adapter: &dyn AgentAdapter, a: &str, b: &str) -> bool {
    let row = |name: &str| adapter.events().iter().find(|r| r.name == name).copied();
    let lower = |name: &str| name.to_ascii_lowercase();
    match (row(a), row(b)) {
        (Some(x), Some(y)) => x.event == y.event && lower(a) == lower(b),
        _ => false,
    }
}

/// The agent whose tool names a Copilot payload uses: Copilot's PascalCase ("VS Code
/// compatible") events report "the Claude tool name (for example, `Bash`, not `bash`)" (hooks
/// reference, "Claude-format matchers"); its camelCase events use its own.
///
/// VS Code's Local harness also reads `.github/hooks` and sends PascalCase events, but with its
/// own tool names (`create_file`, `replace_string_in_file`, `runTerminalCommand`; vscode-docs
/// `docs/agent-customization/hooks.md` @ 91e74cb2), which are Copilot rows of the table: so a
/// name is read as Claude's only when Claude Code has that tool.
///
/// Copilot CLI 1.0.102 sends its PascalCase tool events with Claude's tool names but its own
/// argument names (`Write {path, file_text}`), which are Copilot rows of the table too; so a
/// Claude name is read in Claude's argument names only when the input has one of them and none
/// of Copilot's (a rewrite then goes back in the names the call came in).
pub fn copilot_tool_names(payload: &Map<String, Value>, tool: &str) -> Agent {
    let Some(row) = super::tools::TOOLS
        .iter()
        .find(|row| row.claude == Some(tool))
    else {
        return Agent::Copilot;
    };
    let input = payload.get("tool_input").and_then(Value::as_object);
    let has = |key: &str| input.is_some_and(|i| i.contains_key(key));
    let claude_keys = row.args.iter().any(|a| a.claude != a.ka && has(a.claude));
    let copilot_keys = super::tools::agents::by_agent_name(Agent::Copilot, tool).is_some_and(|t| {
        t.args
            .iter()
            .any(|(ka, theirs)| ka != theirs && has(theirs))
    }) || (has("path")
        && row
            .args
            .iter()
            .any(|a| a.ka == "path" && a.claude != "path"));
    if claude_keys && !copilot_keys {
        Agent::Claude
    } else {
        Agent::Copilot
    }
}

/// Copies `from` to `to` when `to` is absent.
fn alias(payload: &mut Map<String, Value>, from: &str, to: &str) {
    if !payload.contains_key(to) {
        if let Some(value) = payload.get(from).cloned() {
            payload.insert(to.to_owned(), value);
        }
    }
}

/// A tool input given as a JSON string, read as the object it encodes. A string that is not a
/// JSON object stays a string, which the tool-event reader refuses (a call whose arguments
/// cannot be read is never let through by default).
fn decoded(value: Value) -> Value {
    match &value {
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => value,
        },
        _ => value,
    }
}

/// Copilot's payload with the shared names.
pub fn copilot(payload: &mut Map<String, Value>) {
    for (from, to) in [
        // VS Code's common input: `sessionId`, `hookEventName` (vscode-docs hooks.md).
        ("hookEventName", "hook_event_name"),
        // Copilot CLI 1.0.102's permissionRequest payload names its event `hookName` and its
        // arguments `toolInput`, and offers `permissionSuggestions`.
        ("hookName", "hook_event_name"),
        ("sessionId", "session_id"),
        ("toolName", "tool_name"),
        ("transcriptPath", "transcript_path"),
        ("customInstructions", "custom_instructions"),
        ("toolArgs", "tool_input"),
        ("toolInput", "tool_input"),
        ("permissionSuggestions", "permission_suggestions"),
    ] {
        alias(payload, from, to);
    }
    if let Some(input) = payload.remove("tool_input") {
        payload.insert("tool_input".into(), decoded(input));
    }
    // `toolResult {resultType, textResultForLlm}` / `tool_result {result_type,
    // text_result_for_llm}`: the text is what the model reads.
    let result = payload
        .get("toolResult")
        .or_else(|| payload.get("tool_result"))
        .cloned();
    if let (Some(result), false) = (result, payload.contains_key("tool_response")) {
        let text = result
            .get("textResultForLlm")
            .or_else(|| result.get("text_result_for_llm"))
            .cloned();
        let kind = result
            .get("resultType")
            .or_else(|| result.get("result_type"))
            .and_then(Value::as_str);
        let mut response = Map::new();
        response.insert("output".into(), text.unwrap_or(Value::Null));
        if kind.is_some_and(|k| k != "success") {
            response.insert("success".into(), Value::Bool(false));
        }
        payload.insert("tool_response".into(), Value::Object(response));
    }
}

/// Cursor's payload with the shared names.
pub fn cursor(payload: &mut Map<String, Value>) -> Result<(), Rejected> {
    let event = cursor_envelope(payload);
    let mut input = Map::new();
    let tool = match event.as_str() {
        "beforeShellExecution" | "afterShellExecution" => {
            let command = payload.get("command").cloned().ok_or_else(|| {
                Rejected::Broken(format!("Cursor's {event} payload has no `command`"))
            })?;
            input.insert("command".into(), command);
            if let Some(cwd) = payload.get("cwd") {
                input.insert("working_directory".into(), cwd.clone());
            }
            if let Some(output) = payload.get("output").cloned() {
                payload.insert("tool_response".into(), output);
            }
            "Shell".to_owned()
        }
        "beforeMCPExecution" | "afterMCPExecution" => {
            let name = payload
                .get("tool_name")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Rejected::Broken(format!("Cursor's {event} payload has no `tool_name`"))
                })?;
            let tool = format!("MCP:{name}");
            match payload.get("tool_input").cloned().map(decoded) {
                Some(Value::Object(args)) => input = args,
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(Rejected::Broken(format!(
                        "Cursor's {event} `tool_input` is not a JSON object"
                    )))
                }
            }
            if let Some(result) = payload.get("result_json").cloned() {
                payload.insert("tool_response".into(), decoded(result));
            }
            tool
        }
        "beforeReadFile" | "afterFileEdit" => {
            let path = payload.get("file_path").cloned().ok_or_else(|| {
                Rejected::Broken(format!("Cursor's {event} payload has no `file_path`"))
            })?;
            input.insert("file_path".into(), path);
            if let Some(edits) = payload.get("edits") {
                input.insert("edits".into(), edits.clone());
            }
            if event == "afterFileEdit" {
                "Write"
            } else {
                "Read"
            }
            .to_owned()
        }
        _ => {
            cursor_generic_tool(payload);
            return Ok(());
        }
    };
    // These events' own `tool_name` (MCP) and fields stay; the shared ones are the call.
    payload.insert("tool_name".into(), Value::String(tool));
    payload.insert("tool_input".into(), Value::Object(input));
    Ok(())
}

/// Cursor's envelope in the shared names: the session, the error, `cwd` (the first workspace
/// root when the event has none), `stop_hook_active` and a session start's `source`. Returns
/// the event's name.
fn cursor_envelope(payload: &mut Map<String, Value>) -> String {
    alias(payload, "conversation_id", "session_id");
    alias(payload, "error_message", "error");
    if !payload.contains_key("cwd") {
        if let Some(root) = payload
            .get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|roots| roots.first())
            .cloned()
        {
            payload.insert("cwd".into(), root);
        }
    }
    let event = payload
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // `loop_count` counts the follow-ups already sent this turn: past the first, a stop hook
    // has kept the agent going, which is what `stop_hook_active` says to the continuation count.
    if matches!(event.as_str(), "stop" | "subagentStop")
        && !payload.contains_key("stop_hook_active")
    {
        if let Some(count) = payload.get("loop_count").and_then(Value::as_u64) {
            payload.insert("stop_hook_active".into(), Value::Bool(count > 0));
        }
    }
    // Cursor's sessionStart has no `source`: it fires for a new session, with no resume.
    if event == "sessionStart" && !payload.contains_key("source") {
        payload.insert("source".into(), Value::String("startup".into()));
    }
    event
}

/// A generic tool event of Cursor: `tool_input` decoded, the call's `command` or `file_path`
/// also at the top (as the specific events carry it), `tool_output` as `tool_response`.
fn cursor_generic_tool(payload: &mut Map<String, Value>) {
    if let Some(value) = payload.remove("tool_input") {
        payload.insert("tool_input".into(), decoded(value));
    }
    // A hook written for `beforeShellExecution` or `beforeReadFile` reads the call at
    // the top (`command`, `file_path`): a generic tool event carries it there too.
    let tool = payload
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let top = match tool {
        "Shell" => Some("command"),
        "Read" | "Write" | "Delete" => Some("file_path"),
        _ => None,
    };
    if let Some(key) = top.filter(|k| !payload.contains_key(*k)) {
        if let Some(value) = payload.get("tool_input").and_then(|i| i.get(key)).cloned() {
            payload.insert(key.into(), value);
        }
    }
    if let Some(output) = payload.get("tool_output").cloned() {
        payload.insert("tool_response".into(), decoded(output));
    }
}

/// Antigravity's payload with the shared names.
pub fn antigravity(payload: &mut Map<String, Value>) {
    alias(payload, "conversationId", "session_id");
    // Antigravity says nothing of a turn already kept going: the continuation count runs until
    // the next invocation starts a turn (PreInvocation, read as `user_prompt_submit`), so that
    // `max_continuations` holds (experimental; see `antigravity`).
    if !payload.contains_key("stop_hook_active") {
        payload.insert("stop_hook_active".into(), Value::Bool(true));
    }
    alias(payload, "transcriptPath", "transcript_path");
    if let Some(call) = payload.get("toolCall").cloned() {
        if let Some(name) = call.get("name") {
            payload.insert("tool_name".into(), name.clone());
        }
        let args = call
            .get("args")
            .cloned()
            .map(decoded)
            .unwrap_or(Value::Null);
        payload.insert("tool_input".into(), args);
    }
    if !payload.contains_key("cwd") {
        if let Some(root) = payload
            .get("workspacePaths")
            .and_then(Value::as_array)
            .and_then(|roots| roots.first())
            .cloned()
        {
            payload.insert("cwd".into(), root);
        }
    }
}
