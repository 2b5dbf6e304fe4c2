//! `ka-hooks claude`: the Claude Code hook contract (exit 2 and stderr, or a JSON object with
//! `hookSpecificOutput`, `decision`, `continue` and `systemMessage`), which Codex's adapter
//! shares in a stricter dialect. What Claude Code cannot be told (a mode switch) is said in
//! `systemMessage`; docs/adapters.md has the whole mapping.

use serde_json::{Map, Value};

use std::path::Path;

use super::table::{AgentAdapter, Import, Install};
use super::{
    context_is_unsupported, fail_open_with_system_message, plain, specific, with_system_message,
    Agent, Answer, Call, EventRow, Flavour, Rejected, Verdict,
};
use crate::action::Decision;
use crate::event::Event;
use crate::outcome::HookReport;

/// Claude Code's entry of the adapter table.
#[derive(Debug, Clone, Copy)]
pub struct Claude;

impl AgentAdapter for Claude {
    fn command(&self) -> &'static str {
        "claude"
    }
    fn display(&self) -> &'static str {
        "Claude Code"
    }
    fn events(&self) -> &'static [EventRow] {
        EVENTS
    }
    fn observed(&self) -> &'static [(&'static str, &'static str)] {
        OBSERVED
    }
    /// `CLAUDE_PROJECT_DIR`: "the absolute path to the project root directory where Claude Code
    /// was started" (hooks reference, "Project-specific hook scripts").
    fn project_dir_vars(&self) -> &'static [&'static str] {
        &["CLAUDE_PROJECT_DIR"]
    }
    /// Copilot CLI 1.0.102 runs `.claude/settings.json` hooks with `COPILOT_CLI=1`,
    /// `COPILOT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` (`COPILOT_HOOK_DIR` only for its own
    /// `.github/hooks` files), measured in the conformance suite.
    fn also_run_by(&self) -> Option<(&'static [&'static str], Agent)> {
        Some((&["COPILOT_CLI", "COPILOT_PROJECT_DIR"], Agent::Copilot))
    }
    fn markers(&self) -> &'static [&'static str] {
        &["CLAUDECODE"]
    }
    /// Claude Code's payload is the shape every adapter reads.
    fn reshape(&self, _: &mut Map<String, Value>, _: Option<&str>) -> Result<(), Rejected> {
        Ok(())
    }
    fn tool_names(&self, _: &Map<String, Value>, _: &str) -> Agent {
        Agent::Claude
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
    fn stdout_is_context(&self, event: Event) -> bool {
        plain::claude_stdout_is_context(event)
    }
    fn user_texts(&self, event: Event, hooks: &[HookReport]) -> Vec<String> {
        plain::claude_user_texts(event, hooks)
    }
    fn compaction_blocked(&self, event: Event, hooks: &[HookReport]) -> Option<String> {
        plain::claude_compaction_blocked(event, hooks)
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
        Install::ClaudeSettings
    }
    fn import(&self) -> Import {
        Import::ClaudeSettings
    }
}

/// Claude Code's events that run ka events (hooks reference, "Hook events").
pub const EVENTS: &[EventRow] = &[
    row("PreToolUse", Event::PreToolUse, Flavour::Plain),
    row("PostToolUse", Event::PostToolUse, Flavour::Plain),
    row(
        "PostToolUseFailure",
        Event::PostToolUseFailure,
        Flavour::Plain,
    ),
    row("UserPromptSubmit", Event::UserPromptSubmit, Flavour::Plain),
    row("Stop", Event::Stop, Flavour::Plain),
    row("StopFailure", Event::Stop, Flavour::StopError),
    row("SessionStart", Event::SessionStart, Flavour::Plain),
    row("SessionEnd", Event::SessionEnd, Flavour::Plain),
    row("PreCompact", Event::PreCompact, Flavour::Plain),
    row("PostCompact", Event::PostCompact, Flavour::Plain),
    row(
        "PermissionRequest",
        Event::PermissionRequest,
        Flavour::Plain,
    ),
    row("PermissionDenied", Event::PermissionDenied, Flavour::Plain),
    row("Notification", Event::Notification, Flavour::Plain),
    row("SubagentStart", Event::SubagentStart, Flavour::Plain),
    row("SubagentStop", Event::SubagentStop, Flavour::Plain),
    row("Setup", Event::Setup, Flavour::Plain),
    row("TeammateIdle", Event::TeammateIdle, Flavour::Plain),
    row("TaskCompleted", Event::TaskCompleted, Flavour::Plain),
    row(
        "InstructionsLoaded",
        Event::InstructionsLoaded,
        Flavour::Plain,
    ),
];

/// Claude Code's events with no ka event of their own: they run `observe` (hooks reference,
/// "Hook events", and its changelog). Any other name Claude Code sends is observed too.
pub const OBSERVED: &[(&str, &str)] = &[
    (
        "ConfigChange",
        "ka has no config-change event (ka's own files are guarded by the trust gate and \
         protect_ka_files)",
    ),
    (
        "WorktreeCreate",
        "it replaces Claude Code's own worktree creation and must print the new path; ka hooks \
         have no such contract, so the adapter fails the creation and says why",
    ),
    (
        "WorktreeRemove",
        "it pairs with WorktreeCreate, which ka does not run",
    ),
    ("CwdChanged", "ka has no working-directory event"),
    ("FileChanged", "ka has no file-watch event"),
    ("TaskCreated", "ka has no task-creation event"),
    (
        "Elicitation",
        "it answers an MCP server's request for user input; ka hooks have no such contract",
    ),
    ("ElicitationResult", "it pairs with Elicitation"),
    (
        "PreModelSwitch",
        "ka has no model-switch event (Claude Code 2.1.251)",
    ),
    (
        "PostModelSwitch",
        "ka has no model-switch event (Claude Code 2.1.251)",
    ),
    ("DirectoryAdded", "ka has no event for an added directory"),
    ("MessageDisplay", "ka has no event for a displayed message"),
];

pub(super) const fn row(name: &'static str, event: Event, flavour: Flavour) -> EventRow {
    EventRow {
        name,
        event,
        flavour,
    }
}

/// ka's `result` and `is_error` from Claude's (and Codex's) `tool_response`, or the `error` of
/// `PostToolUseFailure`.
pub(super) fn result(original: &Map<String, Value>) -> (Value, bool) {
    if let Some(error) = original.get("error").filter(|e| !e.is_null()) {
        return (error.clone(), true);
    }
    let response = original
        .get("tool_response")
        .cloned()
        .unwrap_or(Value::Null);
    let failed = response.as_object().is_some_and(|r| {
        r.get("success") == Some(&Value::Bool(false))
            || r.get("is_error") == Some(&Value::Bool(true))
            || r.get("exit_code")
                .or_else(|| r.get("exitCode"))
                .and_then(Value::as_i64)
                .is_some_and(|code| code != 0)
    });
    (response, failed)
}

/// The answer in Claude Code's contract.
pub fn answer(call: &Call, verdict: Verdict) -> Answer {
    answer_as(call, verdict, Dialect::Claude)
}

/// Claude Code, or Codex's stricter copy of its contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Claude,
    Codex,
}

impl Dialect {
    fn agent(self) -> Agent {
        match self {
            Dialect::Claude => Agent::Claude,
            Dialect::Codex => Agent::Codex,
        }
    }

    /// Events whose `hookSpecificOutput.additionalContext` reaches the model. Claude Code:
    /// SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop,
    /// SubagentStart (hooks reference, "Adding context"). Codex: the events whose output schema
    /// has `additionalContext` (`codex-rs/hooks/schema/generated/*.command.output.schema.json`).
    fn takes_context(self, event: Event) -> bool {
        match self {
            Dialect::Claude => matches!(
                event,
                Event::SessionStart
                    | Event::UserPromptSubmit
                    | Event::PreToolUse
                    | Event::PostToolUse
                    | Event::PostToolUseFailure
                    | Event::Stop
                    | Event::SubagentStart
            ),
            Dialect::Codex => matches!(
                event,
                Event::SessionStart
                    | Event::UserPromptSubmit
                    | Event::PreToolUse
                    | Event::PostToolUse
            ),
        }
    }
}

pub(super) fn answer_as(call: &Call, mut verdict: Verdict, dialect: Dialect) -> Answer {
    if call.event == Event::Observe && call.agent_event == "WorktreeCreate" {
        // WorktreeCreate replaces Claude Code's worktree creation: the hook must print the new
        // worktree's path, and "any non-zero exit code causes worktree creation to fail" (hooks
        // reference, "WorktreeCreate"). ka's hooks ran (observed); a path they cannot give.
        return Answer::exit_two(
            "ka-hooks claude: a WorktreeCreate hook must create the worktree and print its \
             path, which ka hooks cannot do; remove `ka-hooks claude` from the WorktreeCreate \
             hooks in Claude Code's settings",
        );
    }
    let mut object = Map::new();
    let mut hso = specific(&call.agent_event);
    if dialect == Dialect::Claude {
        claude_only(call, &mut verdict);
    }
    match call.event {
        Event::PreToolUse => {
            if dialect == Dialect::Codex {
                verdict.defer_is_unsupported(Agent::Codex);
            }
            if let Some(answer) = pre_tool_use(&verdict, dialect, &mut hso) {
                return answer;
            }
        }
        Event::PermissionRequest => permission_request(&mut verdict, dialect, &mut hso),
        Event::PostToolUse | Event::PostToolUseFailure => {
            tool_result(call.event, &mut verdict, &mut object)
        }
        Event::UserPromptSubmit => {
            if let Some(reason) = &verdict.block {
                if verdict.messages.is_empty() && verdict.halt.is_none() {
                    return Answer::exit_two(reason);
                }
                object.insert("decision".into(), "block".into());
                object.insert("reason".into(), reason.as_str().into());
            }
        }
        // "decision: block" + `reason` prevents stopping; the reason tells the model how to
        // proceed (hooks reference, "Stop/SubagentStop decision control"; Codex's stop schema).
        Event::Stop | Event::SubagentStop => keep_going(call, &mut verdict, dialect, &mut object),
        // Exit 2 blocks the compaction (hooks reference, "Exit code 2 behavior per event").
        Event::PreCompact => {
            if let (Some(reason), None) = (&verdict.block, &verdict.halt) {
                return Answer::exit_two(reason);
            }
        }
        // Exit 2 keeps the teammate working / the task open, stderr is the feedback (hooks
        // reference, "TeammateIdle", "TaskCompleted").
        Event::TeammateIdle | Event::TaskCompleted => {
            if let (Some(text), None) = (&verdict.keep_going, &verdict.halt) {
                return Answer::exit_two(text);
            }
        }
        _ => {}
    }
    if dialect.takes_context(call.event) {
        if let Some(context) = verdict.context.take() {
            hso.insert("additionalContext".into(), context.into());
        }
    } else {
        context_is_unsupported(&mut verdict, dialect.agent(), &call.agent_event);
    }
    if dialect == Dialect::Claude && run_by_copilot() {
        for key in ["permissionDecision", "permissionDecisionReason"] {
            if let Some(value) = hso.get(key) {
                object.insert(key.into(), value.clone());
            }
        }
    }
    if hso.len() > 1 {
        object.insert("hookSpecificOutput".into(), Value::Object(hso));
    }
    with_system_message(&mut object, &verdict);
    Answer::json(object)
}

/// A tool result marked as an error is `decision: "block"` with the feedback as `reason`;
/// otherwise the feedback joins the context. `PostToolUseFailure` takes no decision: the call
/// already failed.
fn tool_result(event: Event, verdict: &mut Verdict, object: &mut Map<String, Value>) {
    if verdict.mark_error && event == Event::PostToolUse {
        let reason = verdict
            .feedback
            .clone()
            .unwrap_or_else(|| "a ka hook marked this tool result as an error".into());
        object.insert("decision".into(), "block".into());
        object.insert("reason".into(), reason.into());
    } else if let Some(feedback) = verdict.feedback.clone() {
        join_context(&mut verdict.context, &feedback);
    }
}

/// Keep going on a stop: `decision: "block"` with the text as `reason`; after a turn that
/// ended on an error (`StopFailure`), whose hooks' output is ignored, it is said instead.
fn keep_going(
    call: &Call,
    verdict: &mut Verdict,
    dialect: Dialect,
    object: &mut Map<String, Value>,
) {
    let Some(text) = verdict.keep_going.clone() else {
        return;
    };
    if call.flavour == Flavour::StopError {
        verdict.messages.push(format!(
            "a ka hook asked to keep going, but the turn ended on an error and {} \
             cannot continue it from a {} hook: {text}",
            dialect.agent().display(),
            call.agent_event
        ));
    } else {
        object.insert("decision".into(), "block".into());
        object.insert("reason".into(), text.into());
    }
}

/// What Claude Code (2.1.332, conformance suite) does not show or keep as ka means it:
/// - a halt's `stopReason` appears nowhere in `-p` output, a `systemMessage` sent with
///   `continue: false` does: the halt's reason is said there too;
/// - in `bypassPermissions` mode (the payload's `permission_mode`) Claude Code runs a call a hook
///   answered `ask` without asking (a call aimed at ka's own files included): there an ask is
///   a deny that says why.
fn claude_only(call: &Call, verdict: &mut Verdict) {
    if let Some(halt) = &verdict.halt {
        verdict.messages.insert(0, halt.clone());
    }
    let bypass =
        call.payload.get("permission_mode").and_then(Value::as_str) == Some("bypassPermissions");
    if bypass && verdict.block.is_none() && verdict.decision == Some(Decision::Ask) {
        let why = verdict
            .reason
            .take()
            .unwrap_or_else(|| "a ka hook asks for a human".into());
        verdict.block = Some(format!(
            "{why} — in bypassPermissions mode Claude Code would run it without asking, so \
             ka-hooks denied it; a person can make this change outside the agent"
        ));
        verdict.decision = None;
        verdict.input = None;
    }
}

/// `text` before the context already there (feedback first, as it rides the result).
fn join_context(context: &mut Option<String>, text: &str) {
    *context = Some(match context.take() {
        Some(existing) => format!("{text}\n{existing}"),
        None => text.to_owned(),
    });
}

/// PreToolUse: a block (exit 2 when nothing else must be said), a decision, a rewrite.
fn pre_tool_use(
    verdict: &Verdict,
    dialect: Dialect,
    hso: &mut Map<String, Value>,
) -> Option<Answer> {
    if let Some(reason) = &verdict.block {
        let bare =
            verdict.messages.is_empty() && verdict.halt.is_none() && verdict.context.is_none();
        if bare && !run_by_copilot() {
            return Some(Answer::exit_two(reason));
        }
        hso.insert("permissionDecision".into(), "deny".into());
        hso.insert("permissionDecisionReason".into(), reason.as_str().into());
        return None;
    }
    let decision = match (verdict.decision, &verdict.input, dialect) {
        (Some(d), _, _) => Some(d),
        // Codex applies a rewrite only with allow (its own approval flow follows).
        (None, Some(_), Dialect::Codex) => Some(Decision::Allow),
        // Claude Code applies `updatedInput` without a decision and runs its own permission
        // flow on the rewritten call (see the module's doc).
        _ => None,
    };
    if decision.is_none() && verdict.input.is_none() && verdict.deferred {
        // Claude Code's `defer` (hooks reference, "PreToolUse decision control"): in `-p` mode
        // the call pauses for the caller to decide; interactively the normal flow runs.
        hso.insert("permissionDecision".into(), "defer".into());
    }
    if let Some(decision) = decision {
        hso.insert("permissionDecision".into(), decision.as_str().into());
        if let Some(reason) = &verdict.reason {
            hso.insert("permissionDecisionReason".into(), reason.as_str().into());
        }
    }
    if let Some(input) = &verdict.input {
        hso.insert("updatedInput".into(), Value::Object(input.clone()));
    }
    None
}

/// Whether GitHub Copilot runs this hook from `.claude/settings.json` (it sets `COPILOT_CLI=1`):
/// Copilot does not give an exit 2's stderr to the model, so a block is answered in JSON, with
/// Copilot's top-level fields next to Claude's.
fn run_by_copilot() -> bool {
    std::env::var_os("COPILOT_CLI").is_some_and(|v| v == "1")
}

/// PermissionRequest: `hookSpecificOutput.decision` = `{behavior: allow|deny, ..}`; no decision
/// (an `ask`, or nothing) lets the agent show its permission dialog (hooks reference,
/// "PermissionRequest decision control"; Codex's permission-request schema, where an
/// `updatedInput` fails closed).
fn permission_request(verdict: &mut Verdict, dialect: Dialect, hso: &mut Map<String, Value>) {
    let agent = dialect.agent().display();
    let rewrite_refused = match (&verdict.input, verdict.decision, dialect) {
        (None, ..) => None,
        (Some(_), Some(Decision::Allow), Dialect::Claude) => None,
        (Some(_), Some(Decision::Allow), Dialect::Codex) => Some(format!(
            "a ka hook rewrote this call's input, but {agent} cannot apply a rewrite in a \
             permission request; denied rather than approve the original input"
        )),
        (Some(_), ..) => Some(format!(
            "a ka hook rewrote this call's input, but {agent} applies a permission request's \
             rewrite only when it is allowed; denied rather than ask about the original input"
        )),
    };
    if let (None, Some(why)) = (&verdict.block, rewrite_refused) {
        verdict.block = Some(why);
    }
    let mut decision = Map::new();
    if let Some(reason) = &verdict.block {
        decision.insert("behavior".into(), "deny".into());
        decision.insert("message".into(), reason.as_str().into());
        if verdict.halt.is_some() && dialect == Dialect::Claude {
            // `interrupt: true` stops Claude (Codex's decision has no such key).
            decision.insert("interrupt".into(), Value::Bool(true));
        }
    } else if verdict.decision == Some(Decision::Allow) {
        decision.insert("behavior".into(), "allow".into());
        if let Some(input) = &verdict.input {
            decision.insert("updatedInput".into(), Value::Object(input.clone()));
        }
        // Both agents read `updatedPermissions` on an allow (Claude Code: "PermissionRequest
        // decision control"; Codex: `PermissionRequestDecision::Allow { updated_permissions }`,
        // which must be among the `permission_suggestions` it offered).
        if !verdict.permission_updates.is_empty() {
            decision.insert(
                "updatedPermissions".into(),
                Value::Array(verdict.permission_updates.clone()),
            );
        }
    }
    if !decision.is_empty() {
        hso.insert("decision".into(), Value::Object(decision));
    }
}
