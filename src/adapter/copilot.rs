//! `ka-hooks copilot`: GitHub Copilot's hook contract (Copilot CLI, the cloud agent, and VS Code
//! reading the same `.github/hooks/*.json`).
//!
//! Source: the hooks reference, github/docs `content/copilot/reference/hooks-reference.md`
//! @ 05da5bc3 (docs.github.com/en/copilot/reference/hooks-reference), and the Copilot CLI
//! changelog (github/copilot-cli `changelog.md` @ 9532bdac, v1.0.78). Copilot reads one JSON
//! object from stdout:
//! - `preToolUse`: `permissionDecision` (`allow`, `deny`, `ask`), `permissionDecisionReason`,
//!   `modifiedArgs` (the tool's new arguments);
//! - `permissionRequest`: `behavior` (`allow`, `deny`), `message`, `interrupt` (with deny: stop
//!   the agent);
//! - `postToolUse`, `sessionStart`, `subagentStart`, `notification`: `additionalContext`;
//!   `postToolUseFailure` takes it as recovery guidance;
//! - `agentStop`, `subagentStop`: `decision: "block"` + `reason` (the next prompt); Copilot
//!   ends the turn anyway after 8 consecutive blocks, and ka's `max_continuations` holds too.
//!
//! Copilot's own failure defaults, which ka-hooks keeps: a command `preToolUse` hook that
//! crashes or exits non-zero denies the call ("fail-closed on errors"), a hook that times out
//! lets it through ("timeouts are always fail-open, even for preToolUse"), and every other
//! event fails open. `ka-hooks install copilot` gives each entry a `timeoutSec` above the
//! slowest case of the ka hooks it runs, so Copilot's timeout does not cut them short.
//!
//! What Copilot's contract cannot say, and what the adapter does instead:
//! - a config-file `userPromptSubmitted` hook's output is dropped ("`modifiedPrompt` is only
//!   honored by SDK programmatic hooks"), so a prompt cannot be blocked or given context: a
//!   ka block there exits 2, which Copilot shows the user as a warning, and says the prompt
//!   went through;
//! - Copilot has no field for a message to the user: messages go to stderr (Copilot logs them;
//!   exit 2 on events other than `preToolUse` shows them as a warning);
//! - a hook cannot end the turn except through `permissionRequest`'s `interrupt`: a halt on a
//!   tool call denies the call and says why;
//! - `ask` under the cloud agent is a deny ("no user is available to answer"), which is the
//!   safe reading of an ask.
//!
//! The VS Code variant: an event configured in PascalCase (`PreToolUse`, `Stop`) gets Claude-
//! style snake_case fields and Claude tool names, and VS Code reads Claude's output fields
//! (`hookSpecificOutput.permissionDecision`, `updatedInput`, `additionalContext`;
//! microsoft/vscode-docs `docs/agents/reference/hooks-reference.md` @ 6d3b01a5). The answer to
//! a PascalCase event carries both Copilot's and Claude's fields. VS Code ignores matchers
//! (every hook runs for every tool), which changes nothing for ka: ka's own filters decide.

use serde_json::{Map, Value};

use super::claude::row;
use super::{context_is_unsupported, Answer, Call, EventRow, Flavour, Verdict};
use std::path::Path;

use super::table::{AgentAdapter, HookFile, Import, Install, Layout};
use super::Rejected;
use crate::outcome::HookReport;

use crate::action::Decision;
use crate::adapter::Agent;
use crate::event::Event;

const AGENT: Agent = Agent::Copilot;

/// GitHub Copilot's entry of the adapter table.
#[derive(Debug, Clone, Copy)]
pub struct Copilot;

impl AgentAdapter for Copilot {
    fn command(&self) -> &'static str {
        "copilot"
    }
    fn display(&self) -> &'static str {
        "GitHub Copilot"
    }
    fn events(&self) -> &'static [EventRow] {
        EVENTS
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        OBSERVED
    }
    /// Copilot names none for repository and user hooks (it runs them in the repository root,
    /// which is the payload's `cwd`); plugin hooks get `CLAUDE_PROJECT_DIR`
    /// (github/copilot-cli changelog.md @ 9532bdac).
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &["CLAUDE_PROJECT_DIR"]
    }
    fn markers(&self) -> &'static [&'static str] {
        &["COPILOT_CLI", "COPILOT_AGENT_SESSION_ID", "COPILOT_AGENT"]
    }
    fn reshape(
        &self,
        payload: &mut Map<String, Value>,
        named: Option<&str>,
    ) -> Result<(), Rejected> {
        super::reshape::copilot(payload);
        super::reshape::name_event(self, payload, named)
    }
    fn tool_names(&self, payload: &Map<String, Value>, tool: &str) -> Agent {
        super::reshape::copilot_tool_names(payload, tool)
    }
    fn own_tool(
        &self,
        _: &str,
        _: &Map<String, Value>,
        _: Option<&Path>,
    ) -> Option<(String, Map<String, Value>, super::codex::Patch)> {
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

/// Copilot's hook files (see [`super::hookfile`]).
pub const HOOK_FILE: HookFile = HookFile {
    installed: INSTALLED,
    project: ".github/hooks/ka-hooks.json",
    user: (crate::paths::copilot_home, "hooks/ka-hooks.json"),
    user_unknown: "no home directory: set COPILOT_HOME or HOME",
    folder: true,
    layout: Layout::Hooks,
    command_key: "bash",
    // "timeoutSec ... Default: 30" (hooks reference, "Command hooks").
    timeout_key: "timeoutSec",
    default_timeout: Some(30),
    event_flag: true,
    typed: true,
    fail_closed_key: None,
    grouped: false,
    anchored_matchers: true,
    refused_keys: &[(
        "exec",
        "an `exec` entry runs a program without a shell; ka runs commands through `sh -c`, so \
         translate it by hand",
    )],
    note: None,
};

/// Copilot's events that run ka events, in both spellings ("Hook events" and "Hook event input
/// payloads": camelCase gives camelCase fields, PascalCase the VS Code compatible format).
pub const EVENTS: &[EventRow] = &[
    row("preToolUse", Event::PreToolUse, Flavour::Plain),
    row("postToolUse", Event::PostToolUse, Flavour::Plain),
    row(
        "postToolUseFailure",
        Event::PostToolUseFailure,
        Flavour::Plain,
    ),
    row(
        "permissionRequest",
        Event::PermissionRequest,
        Flavour::Plain,
    ),
    row(
        "userPromptSubmitted",
        Event::UserPromptSubmit,
        Flavour::Plain,
    ),
    row("agentStop", Event::Stop, Flavour::Plain),
    row("subagentStart", Event::SubagentStart, Flavour::Plain),
    row("subagentStop", Event::SubagentStop, Flavour::Plain),
    row("sessionStart", Event::SessionStart, Flavour::Plain),
    row("sessionEnd", Event::SessionEnd, Flavour::Plain),
    row("preCompact", Event::PreCompact, Flavour::Plain),
    row("notification", Event::Notification, Flavour::Plain),
    row("PreToolUse", Event::PreToolUse, Flavour::Plain),
    row("PostToolUse", Event::PostToolUse, Flavour::Plain),
    row(
        "PostToolUseFailure",
        Event::PostToolUseFailure,
        Flavour::Plain,
    ),
    row(
        "PermissionRequest",
        Event::PermissionRequest,
        Flavour::Plain,
    ),
    row("UserPromptSubmit", Event::UserPromptSubmit, Flavour::Plain),
    row("Stop", Event::Stop, Flavour::Plain),
    row("SubagentStop", Event::SubagentStop, Flavour::Plain),
    row("SessionStart", Event::SessionStart, Flavour::Plain),
    row("SessionEnd", Event::SessionEnd, Flavour::Plain),
    row("PreCompact", Event::PreCompact, Flavour::Plain),
];

/// The events `ka-hooks install copilot` registers: the camelCase ones (Copilot's native
/// format; VS Code converts `bash` entries of such a file itself).
pub const INSTALLED: &[&str] = &[
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "permissionRequest",
    "userPromptSubmitted",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "preCompact",
    "notification",
];

/// Copilot's events with no ka event of their own: they run `observe`.
pub const OBSERVED: &[(&str, &str)] = &[
    (
        "userPromptTransformed",
        "ka has no event for the model-facing rewrite of a prompt",
    ),
    (
        "errorOccurred",
        "ka has no error event (Copilot does not process its output either)",
    ),
    (
        "ErrorOccurred",
        "ka has no error event (Copilot does not process its output either)",
    ),
];

/// Whether the event was configured in PascalCase (the VS Code compatible format).
fn vscode(call: &Call) -> bool {
    call.agent_event
        .starts_with(|c: char| c.is_ascii_uppercase())
}

/// The answer in Copilot's contract.
pub fn answer(call: &Call, mut verdict: Verdict) -> Answer {
    let mut object = Map::new();
    let mut hso = Map::new();
    match call.event {
        Event::PreToolUse => pre_tool_use(&mut verdict, &mut object, &mut hso),
        Event::PermissionRequest => permission_request(&mut verdict, &mut object),
        Event::PostToolUse | Event::PostToolUseFailure => {
            if let Some(text) = verdict.result_as_context(AGENT) {
                object.insert("additionalContext".into(), text.into());
            }
        }
        Event::Stop | Event::SubagentStop => {
            if let Some(text) = verdict.keep_going.take() {
                object.insert("decision".into(), "block".into());
                object.insert("reason".into(), text.into());
            }
        }
        Event::SessionStart | Event::SubagentStart | Event::Notification => {
            if let Some(context) = verdict.context.take() {
                object.insert("additionalContext".into(), context.into());
            }
        }
        Event::UserPromptSubmit => {
            if let Some(reason) = verdict.block.take() {
                verdict.messages.insert(
                    0,
                    format!(
                        "a ka hook blocked this prompt ({reason}), but Copilot drops the output \
                         of a configured userPromptSubmitted hook, so the prompt was sent"
                    ),
                );
                context_is_unsupported(&mut verdict, AGENT, &call.agent_event);
                halt_is_unsupported(&mut verdict);
                return Answer {
                    exit: 2,
                    stdout: String::new(),
                    stderr: lines(&verdict.messages),
                };
            }
        }
        _ => {}
    }
    context_is_unsupported(&mut verdict, AGENT, &call.agent_event);
    halt_is_unsupported(&mut verdict);
    if vscode(call) {
        // VS Code reads Claude's fields (see the module docs).
        if let Some(text) = object.get("additionalContext").cloned() {
            hso.insert("additionalContext".into(), text);
        }
        if let Some(decision) = object.get("decision").cloned() {
            hso.insert("decision".into(), decision);
        }
        if !hso.is_empty() {
            hso.insert("hookEventName".into(), call.agent_event.clone().into());
            object.insert("hookSpecificOutput".into(), Value::Object(hso));
        }
    }
    Answer {
        stderr: lines(&verdict.messages),
        ..Answer::json(object)
    }
}

fn pre_tool_use(
    verdict: &mut Verdict,
    object: &mut Map<String, Value>,
    hso: &mut Map<String, Value>,
) {
    verdict.defer_is_unsupported(AGENT);
    if let Some(halt) = verdict.halt.take() {
        let halt = if halt.trim().is_empty() {
            "a ka hook halted the turn".to_owned()
        } else {
            halt
        };
        verdict.messages.push(format!(
            "a ka hook halted the turn ({halt}); Copilot's preToolUse hooks cannot end the turn, \
             so ka-hooks denied this call instead"
        ));
        verdict.block = Some(match verdict.block.take() {
            Some(block) if block != halt => format!("{halt} ({block})"),
            _ => halt,
        });
    }
    let (decision, reason) = match (&verdict.block, verdict.decision) {
        (Some(reason), _) => ("deny", Some(reason.clone())),
        (None, Some(Decision::Ask)) => ("ask", verdict.reason.clone()),
        (None, Some(Decision::Allow)) => ("allow", verdict.reason.clone()),
        _ => ("", verdict.reason.clone()),
    };
    if !decision.is_empty() {
        object.insert("permissionDecision".into(), decision.into());
        hso.insert("permissionDecision".into(), decision.into());
    }
    if let (Some(reason), false) = (reason, decision.is_empty()) {
        object.insert("permissionDecisionReason".into(), reason.clone().into());
        hso.insert("permissionDecisionReason".into(), reason.into());
    }
    if let (Some(input), None) = (&verdict.input, &verdict.block) {
        object.insert("modifiedArgs".into(), Value::Object(input.clone()));
        hso.insert("updatedInput".into(), Value::Object(input.clone()));
    }
}

fn permission_request(verdict: &mut Verdict, object: &mut Map<String, Value>) {
    if verdict.input.take().is_some() && verdict.block.is_none() {
        verdict.block = Some(
            "a ka hook rewrote this call's input, but Copilot's permissionRequest hooks cannot \
             rewrite it; denied rather than approve the original input"
                .into(),
        );
    }
    if let Some(halt) = verdict.halt.take() {
        object.insert("behavior".into(), "deny".into());
        object.insert(
            "message".into(),
            verdict.block.take().unwrap_or(halt).into(),
        );
        object.insert("interrupt".into(), Value::Bool(true));
        return;
    }
    if let Some(reason) = verdict.block.take() {
        object.insert("behavior".into(), "deny".into());
        object.insert("message".into(), reason.into());
    } else if verdict.decision == Some(Decision::Allow) {
        object.insert("behavior".into(), "allow".into());
    }
    // `ask`: no behavior, so Copilot's own permission flow asks the user.
}

/// A halt the event cannot carry is said, never dropped.
fn halt_is_unsupported(verdict: &mut Verdict) {
    if let Some(halt) = verdict.halt.take() {
        verdict.messages.push(format!(
            "a ka hook asked to end the turn ({halt}); Copilot hooks on this event cannot end \
             it, so the turn goes on"
        ));
    }
}

/// Messages, one a line, each ending in a newline.
fn lines(messages: &[String]) -> String {
    messages.iter().map(|m| format!("{m}\n")).collect()
}
