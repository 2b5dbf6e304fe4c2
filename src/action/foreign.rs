//! The output formats of GitHub Copilot's and Cursor's hooks, read as the Claude Code form
//! the reader already knows, so a hook written for those agents (imported, or run through their
//! adapters) decides what it decided there, through the same judging, audit and messages.
//!
//! - Copilot (hooks reference, "Hook output"): top-level `permissionDecision` (`allow`, `deny`,
//!   `ask`), `permissionDecisionReason`, `modifiedArgs` and `additionalContext`; on a permission
//!   request `behavior`, `message` and `interrupt`; `decision` + `reason` are Claude's already.
//! - Cursor (cursor.com/docs/hooks): `permission` (`allow`, `deny`, `ask`), `agent_message`
//!   (for the model), `user_message` (for the user), `followup_message` (keep going after a
//!   stop), `additional_context`; `continue` is Claude's already.
//!
//! A key the agent's format has but ka cannot apply (Copilot's `modifiedResult`) is said, not
//! called unknown; a key of no format stays an unknown key.

use serde_json::{Map, Value};

use crate::event::Event;

/// Keys of the agents' formats that ka reads through this module.
pub(super) const KEYS: [&str; 12] = [
    "permissionDecision",
    "permissionDecisionReason",
    "modifiedArgs",
    "additionalContext",
    "behavior",
    "message",
    "interrupt",
    "permission",
    "agent_message",
    "user_message",
    "followup_message",
    "additional_context",
];

/// Keys of the agents' formats that ka cannot apply, with why.
const UNSUPPORTED: [(&str, &str); 4] = [
    (
        "modifiedResult",
        "Copilot's `modifiedResult` replaces a tool result; ka hooks add `feedback` instead",
    ),
    (
        "modifiedResponse",
        "Copilot's `modifiedResponse` replaces a subagent's answer; ka hooks cannot",
    ),
    (
        "modifiedPrompt",
        "Copilot's `modifiedPrompt` rewrites a prompt; ka hooks cannot",
    ),
    (
        "modifiedTransformedPrompt",
        "Copilot's `modifiedTransformedPrompt` rewrites a prompt; ka hooks cannot",
    ),
];

/// Whether `key` is a key of a known agent format ka does not apply (said by [`normalize`]).
pub(super) fn is_unsupported(key: &str) -> bool {
    UNSUPPORTED.iter().any(|(k, _)| *k == key)
}

/// `obj` with the agents' keys moved to the Claude Code form, and what was said about them;
/// `None` when `obj` has none of them.
pub(super) fn normalize(
    obj: &Map<String, Value>,
    event: Event,
) -> Option<(Map<String, Value>, Vec<String>)> {
    let has_any = obj
        .keys()
        .any(|k| KEYS.contains(&k.as_str()) || is_unsupported(k));
    if !has_any {
        return None;
    }
    let mut out = obj.clone();
    let mut notes = Vec::new();
    for (key, why) in UNSUPPORTED {
        if out.remove(key).is_some_and(|v| !v.is_null()) {
            notes.push(format!("{why}; ignored"));
        }
    }
    let mut specific = match out.remove("hookSpecificOutput") {
        Some(Value::Object(map)) => map,
        Some(Value::Null) | None => Map::new(),
        // Not an object: put back for the reader to void with its own message.
        Some(other) => {
            out.insert("hookSpecificOutput".into(), other);
            return Some((out, notes));
        }
    };
    move_tool_call_fields(&mut out, &mut specific, event, &mut notes);
    move_permission_answer(&mut out, &mut specific, event, &mut notes);
    move_cursor_messages(&mut out, event, &mut notes);
    if !specific.is_empty() {
        out.insert("hookSpecificOutput".into(), Value::Object(specific));
    }
    Some((out, notes))
}

/// Copilot's top-level permission fields, `modifiedArgs` and `additionalContext`, and Cursor's
/// `permission`, `agent_message` and `additional_context`, moved into `specific`.
fn move_tool_call_fields(
    out: &mut Map<String, Value>,
    specific: &mut Map<String, Value>,
    event: Event,
    notes: &mut Vec<String>,
) {
    let pre_tool = event.acts_as() == Event::PreToolUse;
    // Copilot's top-level permission fields and Cursor's `permission` / `agent_message`.
    for (key, claude) in [
        ("permissionDecision", "permissionDecision"),
        ("permission", "permissionDecision"),
        ("permissionDecisionReason", "permissionDecisionReason"),
        ("agent_message", "permissionDecisionReason"),
    ] {
        let Some(value) = out.remove(key).filter(|v| !v.is_null()) else {
            continue;
        };
        if !pre_tool {
            notes.push(format!(
                "`{key}` has no effect on {event} (only on a tool call or permission request); \
                 ignored"
            ));
            continue;
        }
        put(specific, claude, value, key, notes);
    }
    if let Some(args) = out.remove("modifiedArgs").filter(|v| !v.is_null()) {
        put(specific, "updatedInput", args, "modifiedArgs", notes);
    }
    for key in ["additionalContext", "additional_context"] {
        if let Some(text) = out.remove(key).filter(|v| !v.is_null()) {
            join(specific, "additionalContext", text);
        }
    }
}

/// Copilot's permission-request answer (`behavior`, `message`, `interrupt` at the top), moved
/// into `specific` as `decision` on a permission request.
fn move_permission_answer(
    out: &mut Map<String, Value>,
    specific: &mut Map<String, Value>,
    event: Event,
    notes: &mut Vec<String>,
) {
    // Copilot's permission-request answer: `behavior`, `message`, `interrupt` at the top.
    let answer: Map<String, Value> = ["behavior", "message", "interrupt"]
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), out.remove(*k).filter(|v| !v.is_null())?)))
        .collect();
    if !answer.is_empty() {
        if event == Event::PermissionRequest {
            put(
                specific,
                "decision",
                Value::Object(answer),
                "behavior",
                notes,
            );
        } else {
            notes.push(format!(
                "`behavior`, `message` and `interrupt` answer a permission request; they have \
                 no effect on {event}; ignored"
            ));
        }
    }
}

/// Cursor's `user_message` (a message for the user) and `followup_message` (keep going).
fn move_cursor_messages(out: &mut Map<String, Value>, event: Event, notes: &mut Vec<String>) {
    if let Some(text) = out.remove("user_message").filter(|v| !v.is_null()) {
        join(out, "systemMessage", text);
    }
    if let Some(text) = out.remove("followup_message").filter(|v| !v.is_null()) {
        if event.acts_as() == Event::Stop {
            join(out, "keep_going", text);
        } else {
            notes.push(format!(
                "Cursor's `followup_message` keeps the agent going after a stop; it has no \
                 effect on {event}; ignored"
            ));
        }
    }
}

/// `value` under `key`; where a Claude-form value is there already and differs, the stronger
/// permission decision (deny over ask over allow) or the first value stays, and a note says so.
fn put(
    specific: &mut Map<String, Value>,
    key: &str,
    value: Value,
    from: &str,
    notes: &mut Vec<String>,
) {
    match specific.get(key) {
        None | Some(Value::Null) => {
            specific.insert(key.to_owned(), value);
        }
        Some(existing) if *existing == value => {}
        Some(existing) => {
            let rank = |v: &Value| match v.as_str() {
                Some("deny") => 3,
                Some("ask") => 2,
                Some("allow") => 1,
                _ => 0,
            };
            if key == "permissionDecision" && rank(&value) > rank(existing) {
                notes.push(format!(
                    "`{from}` and `hookSpecificOutput.{key}` disagree; the stronger, {value}, \
                     applies"
                ));
                specific.insert(key.to_owned(), value);
            } else {
                notes.push(format!(
                    "`{from}` and `hookSpecificOutput.{key}` disagree; `hookSpecificOutput.{key}` \
                     applies"
                ));
            }
        }
    }
}

/// `text` joined to the string under `key` (a blank line between), or put there.
fn join(map: &mut Map<String, Value>, key: &str, text: Value) {
    match (map.get(key), &text) {
        (Some(Value::String(first)), Value::String(second)) => {
            let joined = format!("{first}\n\n{second}");
            map.insert(key.to_owned(), Value::String(joined));
        }
        (None | Some(Value::Null), _) => {
            map.insert(key.to_owned(), text);
        }
        // A wrong type stays for the reader to void.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::action::{parse, Decision, InputPatch};
    use crate::event::Event;

    #[test]
    fn copilots_top_level_deny_is_a_deny() {
        let out =
            r#"{"permissionDecision":"deny","permissionDecisionReason":"rm -rf / is not allowed"}"#;
        let parsed = parse(out, Event::PreToolUse);
        let action = parsed.action.expect("an action");
        assert_eq!(
            action.decision,
            Some(Decision::Deny),
            "{:?}",
            parsed.diagnostics
        );
        assert_eq!(action.reason.as_deref(), Some("rm -rf / is not allowed"));
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    }

    #[test]
    fn copilots_allow_and_modified_args_are_read() {
        let out = r#"{"permissionDecision":"allow","modifiedArgs":{"command":"ls -la"}}"#;
        let action = parse(out, Event::PreToolUse).action.expect("an action");
        assert_eq!(action.decision, Some(Decision::Allow));
        assert!(
            matches!(action.input_patch, Some(InputPatch::Replace(ref m)) if m["command"] == "ls -la")
        );
    }

    #[test]
    fn copilots_additional_context_and_prompt_block_are_read() {
        let out = r#"{"additionalContext":"tests are failing"}"#;
        let action = parse(out, Event::PostToolUse).action.expect("an action");
        assert_eq!(action.context.as_deref(), Some("tests are failing"));
        let out = r#"{"decision":"block","reason":"no secrets in prompts"}"#;
        let action = parse(out, Event::UserPromptSubmit)
            .action
            .expect("an action");
        assert_eq!(action.block.as_deref(), Some("no secrets in prompts"));
    }

    #[test]
    fn copilots_permission_request_answer_is_read() {
        let out = r#"{"behavior":"deny","message":"not here","interrupt":true}"#;
        let action = parse(out, Event::PermissionRequest)
            .action
            .expect("an action");
        assert_eq!(action.decision, Some(Decision::Deny));
        assert!(action.halt.is_some());
    }

    #[test]
    fn cursors_answers_are_read() {
        let out = r#"{"permission":"deny","agent_message":"no .env reads","user_message":"blocked .env"}"#;
        let parsed = parse(out, Event::PreToolUse);
        let action = parsed.action.expect("an action");
        assert_eq!(action.decision, Some(Decision::Deny));
        assert_eq!(action.reason.as_deref(), Some("no .env reads"));
        assert_eq!(action.message.as_deref(), Some("blocked .env"));
        let out = r#"{"followup_message":"run the tests again"}"#;
        let action = parse(out, Event::Stop).action.expect("an action");
        assert_eq!(action.keep_going.as_deref(), Some("run the tests again"));
    }

    #[test]
    fn a_key_of_no_format_is_still_unknown_and_the_stronger_decision_wins() {
        let parsed = parse(r#"{"permision":"deny"}"#, Event::PreToolUse);
        assert!(parsed
            .diagnostics
            .iter()
            .any(|d| d.contains("unknown key `permision`")));
        let out = r#"{"permission":"allow","hookSpecificOutput":{"permissionDecision":"deny"}}"#;
        let action = parse(out, Event::PreToolUse).action.expect("an action");
        assert_eq!(action.decision, Some(Decision::Deny));
        let parsed = parse(
            r#"{"modifiedResult":{"textResultForLlm":"x"}}"#,
            Event::PostToolUse,
        );
        assert!(
            parsed
                .diagnostics
                .iter()
                .any(|d| d.contains("modifiedResult")),
            "{:?}",
            parsed.diagnostics
        );
        assert!(!parsed.diagnostics.iter().any(|d| d.contains("unknown key")));
    }
}
