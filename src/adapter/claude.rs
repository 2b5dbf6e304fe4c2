//! `ka-hooks claude`: the Claude Code hook contract.
//!
//! Claude Code runs `ka-hooks claude` as a `command` hook and reads back:
//! - exit 2: blocks a `PreToolUse` call (stderr goes to the model) or a `UserPromptSubmit`
//!   prompt (stderr goes to the user, the prompt is erased);
//! - exit 0 with a JSON object: `hookSpecificOutput.permissionDecision` (`allow` | `deny` |
//!   `ask`) with `permissionDecisionReason`, `hookSpecificOutput.updatedInput` (which *replaces*
//!   the tool input, so the adapter sends the whole merged input back in Claude's argument names),
//!   `decision: "block"` + `reason` on `PostToolUse` (the reason goes to the model),
//!   `hookSpecificOutput.additionalContext` (context for the model) and `systemMessage` (shown
//!   to the user).
//!
//! Choices, where Claude Code cannot say what ka's hooks decided:
//! - a rewrite without a decision is sent with `permissionDecision: "ask"`: Claude Code applies
//!   `updatedInput` only together with `allow` or `ask`, and `allow` would skip a permission
//!   prompt that no hook approved;
//! - a mode switch cannot be made by a hook: it is said in `systemMessage`.

use serde_json::{Map, Value};

use super::{specific, with_system_message, Answer, Call, EventRow, Flavour, Verdict};
use crate::action::Decision;
use crate::event::Event;

/// Claude Code's events that run ka events.
pub const EVENTS: &[EventRow] = &[
    row("PreToolUse", Event::PreToolUse, Flavour::Plain),
    row("PostToolUse", Event::PostToolUse, Flavour::Plain),
    row(
        "PostToolUseFailure",
        Event::PostToolUse,
        Flavour::ToolFailed,
    ),
    row("UserPromptSubmit", Event::UserPromptSubmit, Flavour::Plain),
    row("Stop", Event::Stop, Flavour::Plain),
    row("StopFailure", Event::Stop, Flavour::StopError),
    row("SessionStart", Event::SessionStart, Flavour::Plain),
    row("SessionEnd", Event::SessionEnd, Flavour::Plain),
    row("PreCompact", Event::PreCompact, Flavour::Plain),
];

/// Claude Code's events with no ka event.
pub const UNSUPPORTED: &[(&str, &str)] = &[
    ("Notification", "ka has no notification event"),
    (
        "PermissionRequest",
        "ka decides permissions in pre_tool_use; register PreToolUse instead",
    ),
    (
        "SubagentStart",
        "ka has no subagent events (stop is the end of the main agent's turn)",
    ),
    (
        "SubagentStop",
        "ka has no subagent events (stop is the end of the main agent's turn)",
    ),
    ("PostCompact", "ka has only pre_compact"),
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

pub(super) fn answer_as(call: &Call, verdict: Verdict, dialect: Dialect) -> Answer {
    let mut object = Map::new();
    match call.event {
        Event::PreToolUse => {
            if let Some(reason) = &verdict.block {
                if verdict.messages.is_empty() {
                    return Answer::exit_two(reason);
                }
                let mut hso = specific(call.agent_event);
                hso.insert("permissionDecision".into(), "deny".into());
                hso.insert("permissionDecisionReason".into(), reason.as_str().into());
                object.insert("hookSpecificOutput".into(), Value::Object(hso));
            } else {
                let mut hso = specific(call.agent_event);
                let decision = match (verdict.decision, &verdict.input, dialect) {
                    (Some(d), _, _) => Some(d),
                    // Claude applies a rewrite only with allow or ask; no hook approved.
                    (None, Some(_), Dialect::Claude) => Some(Decision::Ask),
                    // Codex applies a rewrite only with allow (its own approval flow follows).
                    (None, Some(_), Dialect::Codex) => Some(Decision::Allow),
                    (None, None, _) => None,
                };
                if let Some(decision) = decision {
                    hso.insert("permissionDecision".into(), decision.as_str().into());
                    let reason = verdict.reason.clone().or_else(|| {
                        (verdict.decision.is_none() && dialect == Dialect::Claude).then(|| {
                            "a ka hook rewrote this call's input; Claude Code applies a hook's \
                             rewrite only with an allow or an ask, and no hook approved the call, \
                             so confirm the rewritten call"
                                .to_owned()
                        })
                    });
                    if let Some(reason) = reason {
                        hso.insert("permissionDecisionReason".into(), reason.into());
                    }
                }
                if let Some(input) = &verdict.input {
                    hso.insert("updatedInput".into(), Value::Object(input.clone()));
                }
                if hso.len() > 1 {
                    object.insert("hookSpecificOutput".into(), Value::Object(hso));
                }
            }
        }
        Event::PostToolUse => {
            let can_block = call.flavour != Flavour::ToolFailed;
            if verdict.mark_error && can_block {
                let reason = verdict
                    .feedback
                    .clone()
                    .unwrap_or_else(|| "a ka hook marked this tool result as an error".into());
                object.insert("decision".into(), "block".into());
                object.insert("reason".into(), reason.into());
            } else if let Some(feedback) = &verdict.feedback {
                let mut hso = specific(call.agent_event);
                hso.insert("additionalContext".into(), feedback.as_str().into());
                object.insert("hookSpecificOutput".into(), Value::Object(hso));
            }
        }
        Event::UserPromptSubmit => {
            if let Some(reason) = &verdict.block {
                if verdict.messages.is_empty() {
                    return Answer::exit_two(reason);
                }
                object.insert("decision".into(), "block".into());
                object.insert("reason".into(), reason.as_str().into());
            }
        }
        Event::Stop | Event::SessionStart | Event::SessionEnd | Event::PreCompact => {}
    }
    with_system_message(&mut object, &verdict);
    Answer::json(object)
}
