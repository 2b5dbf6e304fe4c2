//! `ka-hooks antigravity`: Google Antigravity's (`agy`) hook contract. **Experimental**: no
//! primary reference is published, so this follows what third parties measured on `agy` 1.1–1.2
//! (docs/agents.md names them). The payload names no event, so the hook command carries it
//! (`--event PreToolUse`); where the contract cannot carry a verdict, the adapter blocks or says so.

use serde_json::{Map, Value};

use super::claude::row;
use super::{context_is_unsupported, Agent, Answer, Call, EventRow, Flavour, Verdict};
use std::path::Path;

use super::table::{AgentAdapter, HookFile, Import, Install, Layout};
use super::Rejected;
use crate::outcome::HookReport;

use crate::action::Decision;
use crate::event::Event;

const AGENT: Agent = Agent::Antigravity;

/// Antigravity's entry of the adapter table.
#[derive(Debug, Clone, Copy)]
pub struct Antigravity;

impl AgentAdapter for Antigravity {
    fn command(&self) -> &'static str {
        "antigravity"
    }
    fn display(&self) -> &'static str {
        "Antigravity"
    }
    fn events(&self) -> &'static [EventRow] {
        EVENTS
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        OBSERVED
    }
    /// Antigravity names none; its payload's `workspacePaths` (read as `cwd`, see
    /// [`super::reshape`]) is the workspace, not a directory the model moved to.
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &[]
    }
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &["ANTIGRAVITY_AGENT"]
    }
    fn reshape(
        &self,
        payload: &mut Map<String, Value>,
        named: Option<&str>,
    ) -> Result<(), Rejected> {
        super::reshape::antigravity(payload);
        super::reshape::name_event(self, payload, named)
    }
    fn tool_names(&self, payload: &Map<String, Value>, tool: &str) -> Agent {
        let _ = (payload, tool);
        Agent::Antigravity
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
        deny(why)
    }
    fn fail_open(&self, event: Option<Event>, message: &str) -> Answer {
        // Antigravity has no `systemMessage`, and denies a tool call whose answer has no
        // decision, so failing open there says `allow`.
        let mut object = Map::new();
        if event == Some(Event::PreToolUse) {
            object.insert("decision".into(), "allow".into());
        }
        Answer {
            stderr: format!("{message}\n"),
            ..Answer::json(object)
        }
    }
    fn install(&self) -> Install {
        Install::HookFile(&HOOK_FILE)
    }
    fn import(&self) -> Import {
        Import::HookFile(&HOOK_FILE)
    }
}

/// Antigravity's hook file (see `super::hookfile`).
pub const HOOK_FILE: HookFile = HookFile {
    installed: INSTALLED,
    project: ".agents/hooks.json",
    user: (crate::paths::home_dir, ".gemini/config/hooks.json"),
    user_unknown: "no home directory: set HOME",
    folder: false,
    layout: Layout::Named("ka-hooks"),
    command_key: "command",
    timeout_key: "timeout",
    default_timeout: None,
    event_flag: true,
    typed: true,
    fail_closed_key: None,
    grouped: true,
    anchored_matchers: false,
    refused_keys: &[],
    note: Some(
        "note: Antigravity's hook contract is experimental (no published reference); see \
         docs/agents.md",
    ),
    fails_closed: |event| event == "PreToolUse",
    event_tools: &[],
    user_commands_from_file_dir: false,
};

/// Antigravity's events that run ka events.
pub const EVENTS: &[EventRow] = &[
    row("PreToolUse", Event::PreToolUse, Flavour::Plain),
    row("PostToolUse", Event::PostToolUse, Flavour::Plain),
    row("PreInvocation", Event::UserPromptSubmit, Flavour::Plain),
    row("PostInvocation", Event::Stop, Flavour::Plain),
];

/// The events `ka-hooks install antigravity` registers.
pub const INSTALLED: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PreInvocation",
    "PostInvocation",
];

/// Antigravity's events with no ka event of their own: they run `observe`.
pub const OBSERVED: &[(&str, &str)] = &[(
    "Stop",
    "how a Stop hook keeps Antigravity going is not confirmed; ka-hooks runs `stop` on \
     PostInvocation, whose `force_continue` is",
)];

/// `{"decision": "deny", "reason": why}`: a refusal in Antigravity's contract, which reads
/// decisions from stdout with exit 0.
pub fn deny(why: &str) -> Answer {
    let mut object = Map::new();
    object.insert("decision".into(), "deny".into());
    object.insert("reason".into(), why.into());
    Answer {
        stderr: format!("{why}\n"),
        ..Answer::json(object)
    }
}

/// The answer in Antigravity's contract.
pub fn answer(call: &Call, mut verdict: Verdict) -> Answer {
    let mut object = Map::new();
    match call.event {
        Event::PreToolUse => pre_tool_use(call, &mut verdict, &mut object),
        Event::PostToolUse => {
            if let Some(feedback) = verdict.feedback.take() {
                verdict.messages.push(format!(
                    "a ka hook gave feedback for the model, but Antigravity's PostToolUse hooks \
                     cannot pass it on: {feedback}"
                ));
            }
        }
        Event::UserPromptSubmit => {
            if let Some(reason) = verdict.block.take().or_else(|| verdict.halt.take()) {
                verdict.messages.insert(
                    0,
                    format!(
                        "a ka hook blocked this prompt ({reason}), but Antigravity hooks cannot \
                         block a prompt, so it was sent"
                    ),
                );
            }
            if let Some(context) = verdict.context.take() {
                object.insert("injectSteps".into(), steps(&context));
            }
        }
        Event::Stop => {
            if let Some(text) = verdict.keep_going.take() {
                object.insert("terminationBehavior".into(), "force_continue".into());
                object.insert("injectSteps".into(), steps(&text));
            }
        }
        _ => {}
    }
    context_is_unsupported(&mut verdict, AGENT, &call.agent_event);
    if let Some(halt) = verdict.halt.take() {
        verdict.messages.push(format!(
            "a ka hook asked to end the turn ({halt}); Antigravity's {} hooks cannot end it",
            call.agent_event
        ));
    }
    let stderr = verdict
        .system_message()
        .map(|m| format!("{m}\n"))
        .unwrap_or_default();
    let mut answer = Answer::json(object);
    if call.event == Event::PreToolUse || call.event == Event::PostToolUse {
        // PreToolUse always has a decision; PostToolUse "must return {}".
        if answer.stdout.is_empty() {
            answer.stdout = "{}".into();
        }
    }
    Answer { stderr, ..answer }
}

/// One ephemeral message step.
fn steps(text: &str) -> Value {
    let mut step = Map::new();
    step.insert("ephemeralMessage".into(), text.into());
    Value::Array(vec![Value::Object(step)])
}

fn pre_tool_use(call: &Call, verdict: &mut Verdict, object: &mut Map<String, Value>) {
    verdict.defer_is_unsupported(AGENT);
    if let (Some(input), Some(tool)) = (&verdict.input, &call.tool) {
        if let Some(dropped) = tool.agent_input.keys().find(|k| !input.contains_key(*k)) {
            verdict.block = Some(format!(
                "a ka hook rewrote this call's input without `{}`, but Antigravity merges a \
                 rewrite into the arguments and cannot remove one; blocked rather than run an \
                 input the hook did not write",
                crate::terminal::escape(dropped)
            ));
            verdict.input = None;
        }
    }
    if let Some(halt) = verdict.halt.take() {
        verdict.messages.push(format!(
            "a ka hook halted the turn ({halt}); Antigravity's PreToolUse hooks cannot end the \
             turn, so ka-hooks denied this call instead"
        ));
        verdict.block = Some(match verdict.block.take() {
            Some(block) if block != halt => format!("{halt} ({block})"),
            _ => halt,
        });
    }
    let (decision, reason) = match (&verdict.block, verdict.decision) {
        (Some(reason), _) => ("deny", Some(reason.clone())),
        (None, Some(Decision::Ask)) => ("ask", verdict.reason.clone()),
        _ => ("allow", verdict.reason.clone()),
    };
    object.insert("decision".into(), decision.into());
    if let Some(reason) = reason {
        object.insert("reason".into(), reason.into());
    }
    if let (Some(input), None) = (verdict.input.take(), &verdict.block) {
        object.insert("overwrite".into(), Value::Object(input));
    }
}
