//! `ka-hooks gemini`: Gemini CLI's hook contract: Claude-like payloads under Gemini's own event
//! names, answered with exit 2 or `decision`, `hookSpecificOutput`, `continue` and
//! `systemMessage`. A hook cannot ask, pre-approve or mark a result as an error there, so those
//! become a block or are said; a rewrite is sent as the whole input. See docs/adapters.md.

use serde_json::{Map, Value};

use std::path::Path;

use super::claude::row;
use super::table::{AgentAdapter, Import, Install};
use super::{
    context_is_unsupported, fail_open_with_system_message, plain, specific, with_system_message,
    Agent, Answer, Call, EventRow, Flavour, Rejected, Verdict,
};
use crate::event::Event;
use crate::outcome::HookReport;

/// Gemini CLI's entry of the adapter table.
#[derive(Debug, Clone, Copy)]
pub struct Gemini;

impl AgentAdapter for Gemini {
    fn command(&self) -> &'static str {
        "gemini"
    }
    fn display(&self) -> &'static str {
        "Gemini CLI"
    }
    fn events(&self) -> &'static [EventRow] {
        EVENTS
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        OBSERVED
    }
    /// `GEMINI_PROJECT_DIR` ("Project root directory"; `docs/hooks/index.md`, "Environment
    /// variables") and `CLAUDE_PROJECT_DIR` as an alias.
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]
    }
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &["GEMINI_CLI"]
    }
    /// Gemini's payload has Claude Code's field names.
    fn reshape(&self, _: &mut Map<String, Value>, _: Option<&str>) -> Result<(), Rejected> {
        Ok(())
    }
    fn tool_names(&self, _: &Map<String, Value>, _: &str) -> Agent {
        Agent::Gemini
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
        result(payload)
    }
    fn stdout_is_context(&self, _: Event) -> bool {
        false
    }
    fn user_texts(&self, _: Event, hooks: &[HookReport]) -> Vec<String> {
        plain::gemini_user_texts(hooks)
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
    fn fail_open(&self, _: Option<Event>, message: &str) -> Answer {
        fail_open_with_system_message(message)
    }
    fn install(&self) -> Install {
        Install::ByHand {
            file: ".gemini/settings.json (or ~/.gemini/settings.json)",
            timeout_unit: 1000,
            note: "Gemini CLI counts hook timeouts in milliseconds. Gemini CLI reads a \
                   project's .gemini/settings.json, hooks included, only in a trusted folder: \
                   trust the project when `gemini` asks (or in `/permissions`); `ka-hooks \
                   doctor` shows whether it is trusted. ",
        }
    }
    fn import(&self) -> Import {
        Import::Unsupported("Gemini CLI's settings are not read")
    }
}

/// Gemini CLI's events that run ka events (`docs/hooks/reference.md`).
pub const EVENTS: &[EventRow] = &[
    row("BeforeTool", Event::PreToolUse, Flavour::Plain),
    row("AfterTool", Event::PostToolUse, Flavour::Plain),
    row("BeforeAgent", Event::UserPromptSubmit, Flavour::Plain),
    row("AfterAgent", Event::Stop, Flavour::Plain),
    row("SessionStart", Event::SessionStart, Flavour::Plain),
    row("SessionEnd", Event::SessionEnd, Flavour::Plain),
    row("PreCompress", Event::PreCompact, Flavour::Plain),
    row("Notification", Event::Notification, Flavour::Plain),
];

/// Gemini CLI's events with no ka event of their own: they run `observe` (the hooks see the
/// event, the answer leaves Gemini's model request, response and tool config alone).
pub const OBSERVED: &[(&str, &str)] = &[
    (
        "BeforeModel",
        "ka has no model-request events: the hook would rewrite Gemini's raw LLM request",
    ),
    (
        "AfterModel",
        "ka has no model-request events: the hook would rewrite Gemini's raw LLM response",
    ),
    (
        "BeforeToolSelection",
        "ka has no tool-selection event: the hook would edit Gemini's tool config",
    ),
];

/// ka's `result` and `is_error` from Gemini's `tool_response` (`llmContent`, `error`).
pub(super) fn result(original: &Map<String, Value>) -> (Value, bool) {
    let response = original
        .get("tool_response")
        .cloned()
        .unwrap_or(Value::Null);
    let failed = response
        .get("error")
        .is_some_and(|e| !e.is_null() && e != &Value::Bool(false));
    let result = response
        .get("llmContent")
        .cloned()
        .unwrap_or_else(|| response.clone());
    (result, failed)
}

/// The answer in Gemini CLI's contract.
pub fn answer(call: &Call, mut verdict: Verdict) -> Answer {
    let mut object = Map::new();
    let mut hso = specific(&call.agent_event);
    match call.event {
        Event::PreToolUse => {
            verdict.ask_becomes_block(Agent::Gemini);
            verdict.defer_is_unsupported(Agent::Gemini);
            // A hook's `allow` is dropped without a word: Gemini CLI's own answer for a hook
            // that lets a call through is `decision: "allow"` (`hookRunner.ts`,
            // `convertPlainTextToHookOutput`), and its confirmation rules still apply, as they
            // do for a ka `allow` (pre-approved, "still subject to host policy").
            if verdict.block.is_none() {
                verdict.decision = None;
            }
            // A block is `decision: "deny"` on exit 0, Gemini's documented form: exit 2 also
            // blocks, but shows the user "Hook(s) [ka-hooks gemini] failed … Press F12" for a
            // deliberate block (Gemini CLI 0.61, conformance suite).
            if let Some(reason) = &verdict.block {
                object.insert("decision".into(), "deny".into());
                object.insert("reason".into(), reason.as_str().into());
            } else if let Some(input) = &verdict.input {
                hso.insert("tool_input".into(), Value::Object(input.clone()));
            }
        }
        Event::PostToolUse => {
            if verdict.mark_error {
                verdict.messages.push(
                    "a ka hook marked this tool result as an error; Gemini CLI hooks cannot \
                     mark a result as an error, so the hook's message was appended to it instead"
                        .into(),
                );
            }
            let feedback = verdict.feedback.clone().or_else(|| {
                verdict
                    .mark_error
                    .then(|| "a ka hook marked this tool result as an error".to_owned())
            });
            // AfterTool's `additionalContext` is appended to the result the model reads: it
            // carries feedback and context alike.
            let text: Vec<String> = feedback.into_iter().chain(verdict.context.take()).collect();
            if !text.is_empty() {
                hso.insert("additionalContext".into(), text.join("\n").into());
            }
        }
        Event::UserPromptSubmit => {
            if let Some(reason) = &verdict.block {
                object.insert("decision".into(), "deny".into());
                object.insert("reason".into(), reason.as_str().into());
            }
        }
        // AfterAgent: `decision: "deny"` rejects the response and `reason` is sent to the agent
        // as a new prompt (`docs/hooks/reference.md`, "AfterAgent").
        Event::Stop => {
            if let Some(text) = &verdict.keep_going {
                object.insert("decision".into(), "deny".into());
                object.insert("reason".into(), text.as_str().into());
            }
        }
        _ => {}
    }
    // BeforeAgent and SessionStart take `additionalContext` for the model (reference.md).
    if matches!(call.event, Event::UserPromptSubmit | Event::SessionStart) {
        if let Some(context) = verdict.context.take() {
            hso.insert("additionalContext".into(), context.into());
        }
    } else {
        context_is_unsupported(&mut verdict, Agent::Gemini, &call.agent_event);
    }
    if hso.len() > 1 {
        object.insert("hookSpecificOutput".into(), Value::Object(hso));
    }
    with_system_message(&mut object, &verdict);
    Answer::json(object)
}
