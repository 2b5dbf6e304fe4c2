//! `ka-hooks cursor`: Cursor's hook contract (`.cursor/hooks.json`): a flat snake_case answer
//! (`permission`, `user_message`, `agent_message`, `updated_input`, `followup_message`). What an
//! event cannot carry (an ask that is not enforced, a rewrite, context) blocks with why or is said
//! in `user_message`. docs/agents.md has the contract and its sources.

use serde_json::{Map, Value};

use super::claude::row;
use super::{context_is_unsupported, Agent, Answer, Call, EventRow, Flavour, Verdict};
use std::path::Path;

use super::table::{AgentAdapter, HookFile, Import, Install, Layout};
use super::Rejected;
use crate::outcome::HookReport;

use crate::action::Decision;
use crate::event::Event;

const AGENT: Agent = Agent::Cursor;

/// Cursor's entry of the adapter table.
#[derive(Debug, Clone, Copy)]
pub struct Cursor;

impl AgentAdapter for Cursor {
    fn command(&self) -> &'static str {
        "cursor"
    }
    fn display(&self) -> &'static str {
        "Cursor"
    }
    fn events(&self) -> &'static [EventRow] {
        EVENTS
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        OBSERVED
    }
    /// `CURSOR_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` (always set; cursor.com/docs/hooks,
    /// "Environment variables").
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &["CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]
    }
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &["CURSOR_AGENT", "CURSOR_EXTENSION_HOST_ROLE"]
    }
    fn reshape(
        &self,
        payload: &mut Map<String, Value>,
        named: Option<&str>,
    ) -> Result<(), Rejected> {
        super::reshape::cursor(payload)?;
        super::reshape::name_event(self, payload, named)
    }
    fn tool_names(&self, payload: &Map<String, Value>, tool: &str) -> Agent {
        let _ = (payload, tool);
        Agent::Cursor
    }
    fn own_tool(
        &self,
        _: &str,
        _: &Map<String, Value>,
        _: Option<&Path>,
    ) -> Option<super::table::OwnTool> {
        None
    }
    fn result(&self, payload: &Map<String, Value>) -> (Value, bool) {
        super::claude::result(payload)
    }
    fn stdout_is_context(&self, _: Event) -> bool {
        false
    }
    fn user_texts(&self, _: Event, _: &[HookReport]) -> Vec<String> {
        Vec::new()
    }
    fn compaction_blocked(&self, _: Event, _: &[HookReport]) -> Option<String> {
        None
    }
    fn answer(&self, call: &Call, verdict: Verdict) -> Answer {
        answer(call, verdict)
    }
    fn block(&self, why: &str) -> Answer {
        Answer::exit_two(why)
    }
    fn fail_open(&self, event: Option<Event>, message: &str) -> Answer {
        let _ = event;
        Answer {
            stderr: format!("{message}\n"),
            ..Answer::default()
        }
    }
    fn install(&self) -> Install {
        Install::HookFile(&HOOK_FILE)
    }
    fn import(&self) -> Import {
        Import::HookFile(&HOOK_FILE)
    }
}

/// Cursor's hook file (see `super::hookfile`).
pub const HOOK_FILE: HookFile = HookFile {
    installed: INSTALLED,
    project: ".cursor/hooks.json",
    user: (crate::paths::home_dir, ".cursor/hooks.json"),
    user_unknown: "no home directory: set HOME",
    folder: false,
    layout: Layout::Hooks,
    command_key: "command",
    timeout_key: "timeout",
    default_timeout: None,
    event_flag: false,
    typed: false,
    fail_closed_key: Some("failClosed"),
    grouped: false,
    anchored_matchers: false,
    refused_keys: &[],
    note: None,
    fails_closed: |_| false,
    event_tools: &[
        ("beforeShellExecution", "bash"),
        ("afterShellExecution", "bash"),
        ("beforeReadFile", "@file_reads"),
        ("afterFileEdit", "@file_writes"),
        ("beforeMCPExecution", "MCP:*"),
        ("afterMCPExecution", "MCP:*"),
    ],
    user_commands_from_file_dir: true,
};

/// Cursor's agent events that run ka events. The `before*`/`after*` events of one kind of tool
/// run `pre_tool_use` / `post_tool_use` for that tool (see [`super::reshape`]); `ka-hooks
/// install cursor` registers only the generic tool events, so that no call is judged twice.
pub const EVENTS: &[EventRow] = &[
    row("preToolUse", Event::PreToolUse, Flavour::Plain),
    row("postToolUse", Event::PostToolUse, Flavour::Plain),
    row(
        "postToolUseFailure",
        Event::PostToolUseFailure,
        Flavour::Plain,
    ),
    row(
        "beforeSubmitPrompt",
        Event::UserPromptSubmit,
        Flavour::Plain,
    ),
    row("stop", Event::Stop, Flavour::Plain),
    row("subagentStart", Event::SubagentStart, Flavour::Plain),
    row("subagentStop", Event::SubagentStop, Flavour::Plain),
    row("sessionStart", Event::SessionStart, Flavour::Plain),
    row("sessionEnd", Event::SessionEnd, Flavour::Plain),
    row("preCompact", Event::PreCompact, Flavour::Plain),
    row("beforeShellExecution", Event::PreToolUse, Flavour::Plain),
    row("beforeMCPExecution", Event::PreToolUse, Flavour::Plain),
    row("beforeReadFile", Event::PreToolUse, Flavour::Plain),
    row("afterShellExecution", Event::PostToolUse, Flavour::Plain),
    row("afterMCPExecution", Event::PostToolUse, Flavour::Plain),
    row("afterFileEdit", Event::PostToolUse, Flavour::Plain),
];

/// The events `ka-hooks install cursor` registers.
pub const INSTALLED: &[&str] = &[
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "beforeSubmitPrompt",
    "stop",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "preCompact",
];

/// Cursor's events with no ka event of their own: they run `observe`.
pub const OBSERVED: &[(&str, &str)] = &[
    (
        "afterAgentResponse",
        "ka has no event for the agent's reply text",
    ),
    (
        "afterAgentThought",
        "ka has no event for the agent's reasoning text",
    ),
    (
        "beforeTabFileRead",
        "Tab completions are not agent tool calls",
    ),
    (
        "afterTabFileEdit",
        "Tab completions are not agent tool calls",
    ),
    (
        "workspaceOpen",
        "ka has no workspace event (it answers with plugin paths)",
    ),
];

/// The answer in Cursor's contract.
pub fn answer(call: &Call, mut verdict: Verdict) -> Answer {
    let mut object = Map::new();
    let event = call.agent_event.as_str();
    match call.event {
        Event::PreToolUse => pre_tool_use(event, &mut verdict, &mut object),
        Event::PostToolUse | Event::PostToolUseFailure if event == "postToolUse" => {
            if let Some(text) = verdict.result_as_context(AGENT) {
                object.insert("additional_context".into(), text.into());
            }
        }
        Event::PostToolUse | Event::PostToolUseFailure => {
            if let Some(feedback) = verdict.feedback.take() {
                verdict.messages.push(format!(
                    "a ka hook gave feedback for the model, but Cursor's {event} hooks cannot \
                     pass it on: {feedback}"
                ));
            }
        }
        Event::UserPromptSubmit => {
            let stop = verdict.block.take().or_else(|| verdict.halt.take());
            if let Some(reason) = stop {
                object.insert("continue".into(), Value::Bool(false));
                verdict.messages.insert(0, reason);
            }
        }
        Event::Stop | Event::SubagentStop => {
            if let Some(text) = verdict.keep_going.take() {
                object.insert("followup_message".into(), text.into());
            }
        }
        Event::SessionStart => {
            if let Some(context) = verdict.context.take() {
                object.insert("additional_context".into(), context.into());
            }
        }
        Event::SubagentStart => {
            if let Some(reason) = verdict.block.take() {
                object.insert("permission".into(), "deny".into());
                verdict.messages.insert(0, reason);
            }
        }
        _ => {}
    }
    context_is_unsupported(&mut verdict, AGENT, event);
    if let Some(halt) = verdict.halt.take() {
        verdict.messages.push(format!(
            "a ka hook asked to end the turn ({halt}); Cursor's {event} hooks cannot end it"
        ));
    }
    let mut stderr = String::new();
    if let Some(message) = verdict.system_message() {
        if takes_user_message(event) {
            object.insert("user_message".into(), message.into());
        } else {
            stderr = format!("{message}\n");
        }
    }
    Answer {
        stderr,
        ..Answer::json(object)
    }
}

/// The events whose answer has a `user_message` (cursor.com/docs/hooks, "Hook events").
fn takes_user_message(event: &str) -> bool {
    matches!(
        event,
        "preToolUse"
            | "beforeShellExecution"
            | "beforeMCPExecution"
            | "beforeReadFile"
            | "beforeSubmitPrompt"
            | "subagentStart"
            | "preCompact"
    )
}

fn pre_tool_use(event: &str, verdict: &mut Verdict, object: &mut Map<String, Value>) {
    verdict.defer_is_unsupported(AGENT);
    // `ask` is enforced only on the shell and MCP events.
    let can_ask = matches!(event, "beforeShellExecution" | "beforeMCPExecution");
    if !can_ask {
        verdict.ask_becomes_block(AGENT);
    }
    if verdict.input.is_some() && verdict.block.is_none() && event != "preToolUse" {
        verdict.block = Some(format!(
            "a ka hook rewrote this call's input, but Cursor's {event} hooks cannot rewrite it \
             (register ka-hooks on preToolUse, which can); blocked rather than run the original \
             input"
        ));
        verdict.input = None;
    }
    if let Some(halt) = verdict.halt.take() {
        verdict.messages.push(format!(
            "a ka hook halted the turn ({halt}); Cursor's {event} hooks cannot end the turn, so \
             ka-hooks denied this call instead"
        ));
        verdict.block = Some(match verdict.block.take() {
            Some(block) if block != halt => format!("{halt} ({block})"),
            _ => halt,
        });
    }
    if let Some(reason) = &verdict.block {
        object.insert("permission".into(), "deny".into());
        object.insert("agent_message".into(), reason.as_str().into());
        verdict.messages.insert(0, reason.clone());
        return;
    }
    match verdict.decision {
        Some(Decision::Ask) => {
            object.insert("permission".into(), "ask".into());
            if let Some(reason) = &verdict.reason {
                object.insert("agent_message".into(), reason.as_str().into());
                verdict.messages.insert(0, reason.clone());
            }
        }
        Some(Decision::Allow) => {
            object.insert("permission".into(), "allow".into());
        }
        _ => {}
    }
    if let Some(input) = verdict.input.take() {
        object.insert("updated_input".into(), Value::Object(input));
    }
}
