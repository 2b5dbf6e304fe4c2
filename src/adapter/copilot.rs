//! `ka-hooks copilot`: GitHub Copilot's hook contract (Copilot CLI, the cloud agent, and VS Code
//! reading the same `.github/hooks/*.json`). Copilot has no field for a message to the user, so
//! messages ride the text the model reads with the answer, or exit 2 where Copilot shows it; an
//! event configured in PascalCase (VS Code) also gets Claude Code's fields. docs/agents.md has the
//! contract and its sources.

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
    /// Copilot CLI 1.0.102 gives repository hooks `COPILOT_PROJECT_DIR` and
    /// `CLAUDE_PROJECT_DIR` (with `COPILOT_HOOK_DIR` and `COPILOT_CLI=1`), as measured driving it
    /// headless; plugin hooks get `CLAUDE_PROJECT_DIR` (github/copilot-cli changelog.md @
    /// 9532bdac).
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &["COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]
    }
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        None
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
        super::reshape::name_event(self, payload, named)?;
        // Copilot CLI 1.0.102 fires agentStop at a subagent's end too, with the subagent's
        // `agentId`, and ignores a block there: it is that subagent's stop, not the turn's.
        let subagent = payload.get("agentId").is_some_and(|id| !id.is_null());
        if subagent && payload.get("hook_event_name").and_then(Value::as_str) == Some("agentStop") {
            payload.insert("hook_event_name".into(), "subagentStop".into());
        }
        Ok(())
    }
    fn tool_names(&self, payload: &Map<String, Value>, tool: &str) -> Agent {
        super::reshape::copilot_tool_names(payload, tool)
    }
    fn own_tool(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        cwd: Option<&Path>,
    ) -> Option<super::table::OwnTool> {
        let _ = cwd;
        permission_edit(tool, input)
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

/// Copilot's hook files (see `super::hookfile`).
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
    // Copilot CLI 1.0.102 loads `.github/hooks` only in a trusted folder (its own approval).
    note: Some(
        "note: Copilot runs a project's .github/hooks only in a trusted folder: start `copilot` \
         in the project root and trust it when it asks (a `copilot -p` run needs \
         `--trust-folder`, which trusts the working directory only: started in a subdirectory \
         it loads no repository hook; `--user` registers in the user's hook files, read \
         wherever Copilot starts). `ka-hooks doctor` checks it.",
    ),
    fails_closed: |event| event == "preToolUse" || event == "PreToolUse",
    event_tools: &[],
    user_commands_from_file_dir: false,
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
        Event::PreToolUse => {
            pre_tool_use(&mut verdict, &mut object, &mut hso);
            take_context(&mut verdict, &mut object);
        }
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
            take_context(&mut verdict, &mut object);
        }
        Event::UserPromptSubmit => {
            let stop = verdict.block.take().or_else(|| verdict.halt.take());
            if let Some(reason) = stop {
                object.insert("decision".into(), "block".into());
                object.insert("reason".into(), reason.into());
            }
            take_context(&mut verdict, &mut object);
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
    deliver(call, object, &verdict.messages)
}

/// Copilot CLI 1.0.102 asks permission for a create as tool `edit` with `{file_path, diff}`
/// (not the preToolUse `edit`'s `path`): read as ka's `edit` of `path`, so a guard of the path
/// judges it.
fn permission_edit(tool: &str, input: &Map<String, Value>) -> Option<super::table::OwnTool> {
    if tool != "edit" || input.contains_key("path") {
        return None;
    }
    let path = input.get("file_path")?.clone();
    let mut args = input.clone();
    args.remove("file_path");
    args.insert("path".into(), path);
    Some(("edit".into(), args, None))
}

/// Context for the model, as `additionalContext`.
fn take_context(verdict: &mut Verdict, object: &mut Map<String, Value>) {
    if let Some(context) = verdict.context.take() {
        object.insert("additionalContext".into(), context.into());
    }
}

/// The line that starts ka-hooks' messages where they ride a text for the model.
pub const MESSAGES_HEADER: &str = "[ka-hooks, for the user]";

/// The answer with ka's messages on a channel Copilot shows: appended to the text the model
/// reads with this answer (a deny's reason, a block's reason, `additionalContext` where the
/// event takes it), else, where exit 2 is only a warning Copilot shows the user, exit 2 with the
/// messages on stderr (Copilot ignores stdout there, which then carries nothing that acts).
fn deliver(call: &Call, mut object: Map<String, Value>, messages: &[String]) -> Answer {
    if messages.is_empty() {
        return Answer::json(object);
    }
    let said = format!("{MESSAGES_HEADER}\n{}", messages.join("\n"));
    let carrier = [
        "permissionDecisionReason",
        "message",
        "reason",
        "additionalContext",
    ]
    .into_iter()
    .find(|key| object.get(*key).is_some_and(Value::is_string));
    let takes_context = matches!(
        call.event,
        Event::PreToolUse
            | Event::PostToolUse
            | Event::PostToolUseFailure
            | Event::UserPromptSubmit
            | Event::SessionStart
            | Event::SubagentStart
            | Event::Notification
    );
    let key = match carrier {
        Some(key) => Some(key),
        None if takes_context => Some("additionalContext"),
        None => None,
    };
    match key {
        Some(key) => {
            let text = match object.get(key).and_then(Value::as_str) {
                Some(first) => format!("{first}\n\n{said}"),
                None => said,
            };
            object.insert(key.into(), text.into());
            Answer {
                stderr: lines(messages),
                ..Answer::json(object)
            }
        }
        None if object.is_empty() && !call.event.is_pipeline() => Answer {
            exit: 2,
            stdout: String::new(),
            stderr: lines(messages),
        },
        None => Answer {
            stderr: lines(messages),
            ..Answer::json(object)
        },
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
