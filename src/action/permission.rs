//! The permission-request answer of Claude Code and Codex: `hookSpecificOutput.decision`.
//!
//! A `PermissionRequest` hook answers the approval dialog with an object (Claude Code hooks
//! reference, <https://code.claude.com/docs/en/hooks>, "PermissionRequest decision control"):
//! `behavior` (`allow` | `deny`); for `allow`, `updatedInput` (replaces the tool input) and
//! `updatedPermissions` (permission-rule updates, as Claude Code's "always allow" would add);
//! for `deny`, `message` (why, for the model) and `interrupt` (`true` stops the agent). Codex
//! reads the same object with `allow` + `updatedPermissions` and `deny` + `message`
//! (`codex-rs/hooks/src/events/permission_request.rs`: `PermissionRequestDecision`; any deny
//! wins, allows accumulate their distinct permission updates). ka reads it as a verdict:
//! `allow`/`deny` is the decision, `message` its reason, `updatedInput` a whole-input rewrite,
//! `interrupt` a halt; the permission updates ride the outcome to the adapter unchanged.

use serde_json::{Map, Value};

use super::{excerpt, json_type, present, unknown_key, Decision, Reader, SPECIFIC};
use crate::event::Event;

/// Keys read inside `hookSpecificOutput.decision`.
const DECISION_KEYS: [&str; 5] = [
    "behavior",
    "message",
    "updatedInput",
    "updatedPermissions",
    "interrupt",
];

/// A permission-request answer, type-checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Answer<'v> {
    pub decision: Decision,
    pub message: Option<&'v str>,
    pub input: Option<&'v Map<String, Value>>,
    pub permissions: Option<&'v Vec<Value>>,
    pub interrupt: bool,
}

impl Reader {
    /// `hookSpecificOutput.decision`: only on `permission_request`; a wrong type or an unknown
    /// `behavior` voids the object (an answer read half is worse than none).
    pub(super) fn permission_answer<'v>(
        &mut self,
        specific: &'v Map<String, Value>,
    ) -> Option<Answer<'v>> {
        let value = present(specific, "decision")?;
        let shown = self.shown;
        if shown != Event::PermissionRequest {
            self.void(format!(
                "`{SPECIFIC}decision` is only valid on permission_request (this is {shown})"
            ));
            return None;
        }
        let Some(object) = value.as_object() else {
            self.void(format!(
                "`{SPECIFIC}decision` must be an object, got {}",
                json_type(value)
            ));
            return None;
        };
        let prefix = format!("{SPECIFIC}decision.");
        let decision = self.behavior(object, &prefix)?;
        let message = self.string(object, &prefix, "message", None);
        let input = self.object(object, &prefix, "updatedInput", None);
        let permissions = match present(object, "updatedPermissions") {
            None => None,
            Some(Value::Array(rules)) => Some(rules),
            Some(other) => {
                self.void(format!(
                    "`{prefix}updatedPermissions` must be an array, got {}",
                    json_type(other)
                ));
                None
            }
        };
        let interrupt = self
            .boolean(object, &prefix, "interrupt", None)
            .unwrap_or(false);
        let ignored: &[(&str, bool)] = match decision {
            Decision::Allow => &[("message", message.is_some()), ("interrupt", interrupt)],
            _ => &[
                ("updatedInput", input.is_some()),
                ("updatedPermissions", permissions.is_some()),
            ],
        };
        for (key, _) in ignored.iter().filter(|(_, set)| *set) {
            self.note(format!(
                "`{prefix}{key}` has no effect with `behavior: \"{}\"`; ignored",
                decision.as_str()
            ));
        }
        for key in object
            .keys()
            .filter(|k| !DECISION_KEYS.contains(&k.as_str()))
        {
            self.note(unknown_key(key, &prefix));
        }
        let allow = decision == Decision::Allow;
        Some(Answer {
            decision,
            message: message.filter(|_| !allow),
            input: input.filter(|_| allow),
            permissions: permissions.filter(|_| allow),
            interrupt: interrupt && !allow,
        })
    }

    /// `behavior` of the permission answer: allow or deny; anything else voids the object.
    fn behavior(&mut self, object: &Map<String, Value>, prefix: &str) -> Option<Decision> {
        match present(object, "behavior").map(|b| (b, b.as_str())) {
            Some((_, Some("allow"))) => Some(Decision::Allow),
            Some((_, Some("deny"))) => Some(Decision::Deny),
            Some((_, Some(other))) => {
                self.void(format!(
                    "`{prefix}behavior` must be \"allow\" or \"deny\", got {}",
                    excerpt(other)
                ));
                None
            }
            Some((b, None)) => {
                self.void(format!(
                    "`{prefix}behavior` must be a string, got {}",
                    json_type(b)
                ));
                None
            }
            None => {
                self.void(format!(
                    "`{SPECIFIC}decision` has no `behavior` (\"allow\" or \"deny\")"
                ));
                None
            }
        }
    }
}
