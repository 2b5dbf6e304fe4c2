//! The action language: what a hook that exits 0 may say on stdout, on every event and through
//! every adapter.
//!
//! [`parse`] turns a hook's stdout into an [`Action`], or ignores it, and always explains in
//! [`Parsed::diagnostics`] what it ignored, voided or cut. The contract:
//!
//! - stdout is trimmed; empty output is "nothing to say" and gets no diagnostic.
//! - Only a single JSON object is read. Anything else (text, arrays, `{}{}`, profile noise before
//!   the JSON, invalid or too deeply nested JSON) is ignored: unparsable output never changes state.
//! - An object is applied all or nothing. A known key with the wrong type, or on an event where it
//!   means nothing, voids the whole object: applying half of what a hook asked (the mode switch
//!   but not the deny) is worse than applying none of it. Every offending key is reported.
//! - `null` counts as absent. Unknown keys are ignored, with a diagnostic so typos show.
//! - An over-long `note` (200 chars), `feedback` (2048 bytes), `context` or `systemMessage`
//!   (10 000 chars each) is cut at a character boundary.
//! - Events read the keys of the event they act as ([`Event::acts_as`]): `permission_request`
//!   as `pre_tool_use`, `post_tool_use_failure` as `post_tool_use`, `subagent_stop`,
//!   `teammate_idle` and `task_completed` as `stop`.
//! - Claude Code's output forms are read in the same object, so its scripts work unchanged:
//!   `{"decision":"block"|"approve","reason":..}`, `{"continue":false,"stopReason":..}`,
//!   `hookSpecificOutput.{permissionDecision (allow, ask, deny, defer), permissionDecisionReason,
//!   updatedInput, additionalContext, hookEventName}`, `systemMessage` and `suppressOutput`.
//!
//! | key | type | events | effect |
//! |---|---|---|---|
//! | `mode` | string | all | switch the permission mode |
//! | `note` | string, ≤ 200 chars | all | transcript row |
//! | `halt` | string | all | stop the whole turn; the reason is for the user |
//! | `updated_input` | object | `pre_tool_use` | [`InputPatch::Merge`] |
//! | `decision` | `"allow"` \| `"ask"` \| `"deny"` | `pre_tool_use` | [`Decision`] |
//! | `reason` | string | `pre_tool_use` | why, for `deny` and `ask` |
//! | `feedback` | string, ≤ 2048 bytes | `post_tool_use` | appended to the tool result |
//! | `context` | string, ≤ 10 000 chars | [`CONTEXT_EVENTS`] | added to the model's context |
//! | `keep_going` | string | `stop` | do not stop: the model's next input |
//!
//! Claude Code's forms map to these: `decision: "block"` + `reason` is a deny on
//! `pre_tool_use`, a blocked prompt on `user_prompt_submit`, `mark_error` + feedback on
//! `post_tool_use`, `keep_going` on `stop`; `continue: false` + `stopReason` is `halt`;
//! `additionalContext` is `context`; `systemMessage` is a message for the user, shown whole.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::Event;

/// Longest `note`, in characters (a transcript row, not a report).
pub const NOTE_MAX_CHARS: usize = 200;
/// Longest `feedback`, in bytes (it rides every tool result the model reads).
pub const FEEDBACK_MAX_BYTES: usize = 2048;
/// Longest `context`, in characters (Claude Code caps hook output for the model at 10 000).
pub const CONTEXT_MAX_CHARS: usize = 10_000;
/// Longest user message (`systemMessage`), in characters: Claude Code's own cap.
pub const MESSAGE_MAX_CHARS: usize = 10_000;
/// How much of unparsable stdout a diagnostic quotes.
const EXCERPT_MAX_CHARS: usize = 80;

/// A `pre_tool_use` verdict.
///
/// The order is strength: `Allow < Ask < Deny`, so combining verdicts is `max` (deny > ask >
/// allow). `Option<Decision>` orders `None` below every verdict, so `a.max(b)` combines optional
/// verdicts too; [`Decision::strongest`] spells that out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Pre-approve the call (the host's own rules still apply).
    Allow,
    /// A human must approve the call.
    Ask,
    /// Refuse the call (recorded as a block).
    Deny,
}

impl Decision {
    /// The name as written in the action language.
    pub const fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// The stronger of two optional verdicts (deny > ask > allow > none).
    pub fn strongest(a: Option<Decision>, b: Option<Decision>) -> Option<Decision> {
        a.max(b)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A change to the arguments of the upcoming tool call.
///
/// Serialized as `{"kind": "merge" | "replace", "value": {..}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum InputPatch {
    /// ka's `updated_input`: keys it names replace those keys, others stay (shallow merge).
    Merge(Map<String, Value>),
    /// Claude Code's `hookSpecificOutput.updatedInput`: replaces the whole input.
    Replace(Map<String, Value>),
}

impl InputPatch {
    /// Applies the patch to the tool arguments. A merge writes a `null` value as `null` (it does
    /// not delete the key): the spec's merge only replaces keys.
    pub fn apply(&self, args: &mut Map<String, Value>) {
        match self {
            InputPatch::Merge(patch) => {
                args.extend(patch.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            InputPatch::Replace(input) => *args = input.clone(),
        }
    }
}

/// What one hook asked for. Fields a hook did not set are `None` (and left out of the JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Action {
    /// Switch the permission mode (the host validates the name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// A transcript row, at most [`NOTE_MAX_CHARS`] chars; never empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `pre_tool_use` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_patch: Option<InputPatch>,
    /// `pre_tool_use` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// `pre_tool_use` only: why, for `deny` and `ask`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `post_tool_use` only: appended to the tool result, at most [`FEEDBACK_MAX_BYTES`] bytes;
    /// never empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// The hook asked to block the prompt (Claude `{"decision":"block"}` on
    /// user_prompt_submit): the reason, possibly empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// Text the host adds to the model's context ([`CONTEXT_EVENTS`]), at most
    /// [`CONTEXT_MAX_CHARS`] chars: ka's `context` and Claude's `additionalContext`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Stop-like events: do not stop; this text is the model's next input (ka's `keep_going`,
    /// Claude's `{"decision":"block","reason":..}` on Stop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_going: Option<String>,
    /// Stop the whole turn after this event; the reason (possibly empty) is for the user only
    /// (ka's `halt`, Claude's `{"continue":false,"stopReason":..}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt: Option<String>,
    /// A message for the user, shown whole (Claude's `systemMessage`), at most
    /// [`MESSAGE_MAX_CHARS`] chars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// post_tool_use: mark the result as an error (Claude's `decision: "block"`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mark_error: bool,
}

impl Action {
    /// True when the hook asked for nothing (`{}`, or only keys that had no effect).
    pub fn is_empty(&self) -> bool {
        *self == Action::default()
    }
}

/// The reading of one hook's stdout.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// None when stdout was empty/whitespace (no diagnostic), not a single JSON object, or voided.
    pub action: Option<Action>,
    /// Everything ignored, voided, or cut, in words a hook author understands.
    pub diagnostics: Vec<String>,
    /// stdout was one JSON object, but a key of the wrong type or on the wrong event voided it:
    /// the hook said something that cannot be applied (the dispatcher reads that as a failure).
    pub voided: bool,
}

/// Reads the stdout of a hook that exited 0 on `event`. Never fails and never panics: what
/// cannot be used is reported in [`Parsed::diagnostics`].
pub fn parse(stdout: &str, event: Event) -> Parsed {
    // A byte-order mark is not whitespace to `trim`, but some Windows tools emit one.
    let text = stdout.trim().trim_start_matches('\u{feff}').trim_start();
    if text.is_empty() {
        return Parsed {
            action: None,
            diagnostics: Vec::new(),
            voided: false,
        };
    }
    // `from_str` rejects trailing non-whitespace (`{}{}`) and nesting beyond 128 levels.
    let why = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => return read_object(&object, event),
        Ok(other) => format!("it is {}", json_type(&other)),
        Err(e) => e.to_string(),
    };
    Parsed {
        action: None,
        diagnostics: vec![format!(
            "stdout is not a single JSON object ({why}); ignored: {}",
            excerpt(text)
        )],
        voided: false,
    }
}

/// A hook's plain (non-JSON) stdout read as `context`, as Claude Code reads it on SessionStart
/// and UserPromptSubmit; `None` when stdout is empty, is a JSON object, or `event` takes no
/// context. Only adapters use this (see `Request::plain_stdout_is_context`).
pub fn plain_context(stdout: &str, event: Event) -> Option<Parsed> {
    let text = stdout.trim().trim_start_matches('\u{feff}').trim_start();
    if text.is_empty()
        || !CONTEXT_EVENTS.contains(&event.acts_as())
        || matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(_)))
    {
        return None;
    }
    let mut d = Reader::new(event);
    let context = d.joined(&[("stdout", text)], "", Limit::Chars(CONTEXT_MAX_CHARS));
    Some(Parsed {
        action: Some(Action {
            context,
            ..Action::default()
        }),
        diagnostics: d.list,
        voided: false,
    })
}

/// Top-level keys this module reads; any other key gets an "unknown key" diagnostic.
const KNOWN_KEYS: [&str; 14] = [
    "mode",
    "note",
    "updated_input",
    "decision",
    "reason",
    "feedback",
    "context",
    "keep_going",
    "halt",
    // Claude Code.
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "hookSpecificOutput",
];

/// Keys read inside Claude Code's `hookSpecificOutput`.
const CLAUDE_SPECIFIC_KEYS: [&str; 5] = [
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
];

const SPECIFIC: &str = "hookSpecificOutput.";

/// The events whose host adds a hook's `context` to the model's context (as their acting
/// event, [`Event::acts_as`]): Claude Code reads `additionalContext` on the same ones
/// (hooks reference, "Adding context": SessionStart, UserPromptSubmit, PreToolUse,
/// PostToolUse, PostToolUseFailure, SubagentStart; and Stop since 2.1).
pub const CONTEXT_EVENTS: [Event; 6] = [
    Event::SessionStart,
    Event::UserPromptSubmit,
    Event::PreToolUse,
    Event::PostToolUse,
    Event::Stop,
    Event::SubagentStart,
];

/// What the `decision` key said.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Said {
    Verdict(Decision),
    /// Claude Code's legacy `"block"`: its meaning depends on the event.
    Block,
}

/// Every key of one object, type-checked for its event (a wrong one voids the object).
struct Keys<'v> {
    mode: Option<&'v str>,
    note: Option<&'v str>,
    system_message: Option<&'v str>,
    said: Option<Said>,
    reason: Option<&'v str>,
    updated_input: Option<&'v Map<String, Value>>,
    feedback: Option<&'v str>,
    context: Option<&'v str>,
    keep_going: Option<&'v str>,
    halt: Option<&'v str>,
    go_on: Option<bool>,
    stop_reason: Option<&'v str>,
    permission: Option<Decision>,
    permission_reason: Option<&'v str>,
    replaced_input: Option<&'v Map<String, Value>>,
    additional_context: Option<&'v str>,
}

fn read_keys<'v>(d: &mut Reader, obj: &'v Map<String, Value>) -> Keys<'v> {
    use Event::{PostToolUse, PreToolUse, Stop};
    let mode = d.string(obj, "", "mode", None);
    let note = d.string(obj, "", "note", None);
    let system_message = d.string(obj, "", "systemMessage", None);
    d.boolean(obj, "", "suppressOutput", None);
    let said = d.decision(obj);
    // `reason` belongs to pre_tool_use, but Claude's `{"decision":"block","reason":..}` carries
    // it on every event.
    let is_block = said == Some(Said::Block);
    let reason = d.string(obj, "", "reason", (!is_block).then_some(PreToolUse));
    let updated_input = d.object(obj, "", "updated_input", Some(PreToolUse));
    let feedback = d.string(obj, "", "feedback", Some(PostToolUse));
    let context = d.string(obj, "", "context", None);
    if context.is_some() && !CONTEXT_EVENTS.contains(&d.event) {
        d.void(format!(
            "`context` is only valid on {} (this is {})",
            context_event_names(),
            d.shown
        ));
    }
    let keep_going = d.string(obj, "", "keep_going", Some(Stop));
    let halt = d.string(obj, "", "halt", None);
    let go_on = d.boolean(obj, "", "continue", None);
    let stop_reason = d.string(obj, "", "stopReason", None);

    static NO_KEYS: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let specific = d
        .object(obj, "", "hookSpecificOutput", None)
        .unwrap_or_else(|| NO_KEYS.get_or_init(Map::new));
    d.string(specific, SPECIFIC, "hookEventName", None);
    let permission = d.permission(specific);
    let permission_reason = d.string(
        specific,
        SPECIFIC,
        "permissionDecisionReason",
        Some(PreToolUse),
    );
    let replaced_input = d.object(specific, SPECIFIC, "updatedInput", Some(PreToolUse));
    let additional_context = d.string(specific, SPECIFIC, "additionalContext", None);

    if present(obj, "updated_input").is_some() && present(specific, "updatedInput").is_some() {
        d.void(
            "both `updated_input` (merge) and `hookSpecificOutput.updatedInput` (replace) \
             are present; which one applies is ambiguous"
                .to_owned(),
        );
    }
    for key in obj.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        d.note(unknown_key(key, ""));
    }
    for key in specific
        .keys()
        .filter(|k| !CLAUDE_SPECIFIC_KEYS.contains(&k.as_str()))
    {
        d.note(unknown_key(key, SPECIFIC));
    }
    Keys {
        mode,
        note,
        system_message,
        said,
        reason,
        updated_input,
        feedback,
        context,
        keep_going,
        halt,
        go_on,
        stop_reason,
        permission,
        permission_reason,
        replaced_input,
        additional_context,
    }
}

fn context_event_names() -> String {
    CONTEXT_EVENTS
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn read_object(obj: &Map<String, Value>, event: Event) -> Parsed {
    let mut d = Reader::new(event);
    let keys = read_keys(&mut d, obj);
    if d.voided {
        return Parsed {
            action: None,
            diagnostics: d.list,
            voided: true,
        };
    }
    let acting = d.event;
    let mut action = Action {
        mode: keys.mode.map(str::to_owned),
        ..Action::default()
    };
    action.note = d.joined(
        &[("note", keys.note.unwrap_or(""))],
        "",
        Limit::Chars(NOTE_MAX_CHARS),
    );
    // Claude Code shows `systemMessage` to the user whole; it caps hook output at 10 000
    // characters (hooks reference, "Common JSON fields" and "Hook output").
    action.message = d.joined(
        &[("systemMessage", keys.system_message.unwrap_or(""))],
        "",
        Limit::Chars(MESSAGE_MAX_CHARS),
    );
    read_context(&mut d, &keys, &mut action);
    if acting == Event::PreToolUse {
        read_verdict(&mut d, &keys, &mut action);
    }
    if acting == Event::PostToolUse {
        let mut parts = Vec::new();
        parts.extend(keys.feedback.map(|s| ("feedback", s)));
        if keys.said == Some(Said::Block) {
            // Claude Code: "decision: block" on PostToolUse "automatically prompts Claude with
            // `reason`" as an error about the result (hooks reference, "PostToolUse decision
            // control"): the result is marked as an error, the reason is its feedback.
            action.mark_error = true;
            parts.extend(keys.reason.map(|r| ("reason", r)));
        }
        action.feedback = d.joined(&parts, "\n", Limit::Bytes(FEEDBACK_MAX_BYTES));
    }
    read_flow(&mut d, &keys, &mut action);
    Parsed {
        action: Some(action),
        diagnostics: d.list,
        voided: false,
    }
}

/// `context`, and Claude's `additionalContext` on the events whose host reads it.
fn read_context(d: &mut Reader, keys: &Keys<'_>, action: &mut Action) {
    let mut parts = Vec::new();
    parts.extend(keys.context.map(|s| ("context", s)));
    if let Some(extra) = keys.additional_context {
        if CONTEXT_EVENTS.contains(&d.event) {
            parts.push(("hookSpecificOutput.additionalContext", extra));
        } else {
            d.note(format!(
                "`hookSpecificOutput.additionalContext` has no effect on {} (the model's context \
                 takes hook text only on {}); ignored",
                d.shown,
                context_event_names()
            ));
        }
    }
    action.context = d.joined(&parts, "\n", Limit::Chars(CONTEXT_MAX_CHARS));
}

/// A pre_tool_use verdict from ka's `decision` and Claude's `permissionDecision`, and the
/// rewrite.
fn read_verdict(d: &mut Reader, keys: &Keys<'_>, action: &mut Action) {
    action.input_patch = match (keys.updated_input, keys.replaced_input) {
        (Some(patch), _) => Some(InputPatch::Merge(patch.clone())),
        (None, Some(input)) => Some(InputPatch::Replace(input.clone())),
        (None, None) => None,
    };
    let ka = match keys.said {
        Some(Said::Verdict(verdict)) => Some(verdict),
        Some(Said::Block) => Some(Decision::Deny),
        None => None,
    };
    let permission = keys.permission;
    if let (Some(a), Some(b)) = (ka, permission) {
        if a != b {
            d.note(format!(
                "`decision` says \"{a}\" but `hookSpecificOutput.permissionDecision` says \
                 \"{b}\"; the stronger, \"{}\", applies",
                a.max(b)
            ));
        }
    }
    action.decision = Decision::strongest(ka, permission);
    // The reason of the verdict that won comes first; on a tie, ka's.
    action.reason = if permission > ka {
        keys.permission_reason.or(keys.reason)
    } else {
        keys.reason.or(keys.permission_reason)
    }
    .map(str::to_owned);
}

/// Blocking a prompt, keeping the agent going, halting the turn.
fn read_flow(d: &mut Reader, keys: &Keys<'_>, action: &mut Action) {
    let acting = d.event;
    let shown = d.shown;
    if keys.said == Some(Said::Block) {
        match acting {
            Event::UserPromptSubmit => {
                action.block = Some(keys.reason.unwrap_or("").to_owned());
            }
            Event::PreToolUse | Event::PostToolUse => {} // read as deny, and as mark_error
            // Claude Code: on Stop, "block" prevents stopping and `reason` tells Claude how to
            // proceed (hooks reference, "Stop/SubagentStop decision control").
            Event::Stop => match keys.reason.filter(|r| !r.trim().is_empty()) {
                Some(reason) => action.keep_going = Some(reason.to_owned()),
                None => d.note(format!(
                    "`decision: \"block\"` without a `reason` gives the model nothing to do \
                     on {shown}; ignored"
                )),
            },
            _ => d.note(format!(
                "`decision: \"block\"` has no effect on {shown} ({}); ignored",
                cannot_block_because(shown)
            )),
        }
    }
    if let Some(text) = keys.keep_going {
        if text.trim().is_empty() {
            d.note("`keep_going` is empty: it gives the model nothing to do; ignored".to_owned());
        } else {
            let joined = match action.keep_going.take() {
                Some(first) if first != text => format!("{first}\n{text}"),
                _ => text.to_owned(),
            };
            action.keep_going = Some(joined);
        }
    }
    // Claude Code: `continue: false` stops Claude after the hooks run and takes precedence over
    // every decision; `stopReason` is shown to the user, not to Claude (hooks reference,
    // "Common JSON fields").
    let halted = keys.go_on == Some(false) || keys.halt.is_some();
    if halted {
        let mut parts = Vec::new();
        parts.extend(keys.halt.map(|s| ("halt", s)));
        if keys.stop_reason != keys.halt {
            parts.extend(keys.stop_reason.map(|s| ("stopReason", s)));
        }
        // The reason is for the user, like `systemMessage`: the same cap.
        let reason = d.joined(&parts, "; ", Limit::Chars(MESSAGE_MAX_CHARS));
        action.halt = Some(reason.unwrap_or_default());
    } else if keys.stop_reason.is_some() {
        d.note("`stopReason` has no effect without `continue: false`; ignored".to_owned());
    }
}

/// Why `event` cannot be blocked; only asked for events that are not pipelines.
fn cannot_block_because(event: Event) -> &'static str {
    match event {
        Event::PostToolUse | Event::PostToolUseFailure => "the tool already ran",
        Event::SessionStart | Event::SessionEnd => "session events are advisory",
        Event::PreCompact => "pre_compact is advisory: it cannot stop the compaction",
        _ => "it is advisory",
    }
}

/// A known key's value. `null` counts as absent: serializers commonly write unset optional
/// fields as `null` (Python's `None`, Go's nil pointers), and "nothing to say about this key"
/// must neither void the object nor be read as a value.
fn present<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// How a size limit counts.
#[derive(Clone, Copy)]
enum Limit {
    Chars(usize),
    Bytes(usize),
}

/// Reads one object's keys for one event, collecting diagnostics and whether to void.
struct Reader {
    /// The event whose keys apply ([`Event::acts_as`]).
    event: Event,
    /// The event as dispatched, for messages.
    shown: Event,
    list: Vec<String>,
    voided: bool,
}

impl Reader {
    fn new(event: Event) -> Self {
        Reader {
            event: event.acts_as(),
            shown: event,
            list: Vec::new(),
            voided: false,
        }
    }

    /// A diagnostic that does not void the object.
    fn note(&mut self, message: String) {
        self.list.push(message);
    }

    fn void(&mut self, why: String) {
        self.list
            .push(format!("{why}; the whole object was ignored"));
        self.voided = true;
    }

    /// The value of `key` when present, valid on this event (`only_on: None` means every
    /// event) and of the type `accepts` wants; otherwise voids. Absent is `None`, silently.
    fn field<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        name: Name<'_>,
        only_on: Option<Event>,
        (expected, accepts): (&str, fn(&Value) -> bool),
    ) -> Option<&'v Value> {
        let value = present(obj, name.key)?;
        let shown = self.shown;
        if let Some(valid) = only_on.filter(|&valid| valid != self.event) {
            self.void(format!("{name} is only valid on {valid} (this is {shown})"));
            return None;
        }
        if !accepts(value) {
            self.void(format!(
                "{name} must be {expected}, got {}",
                json_type(value)
            ));
            return None;
        }
        Some(value)
    }

    fn string<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        prefix: &str,
        key: &str,
        only_on: Option<Event>,
    ) -> Option<&'v str> {
        let name = Name { prefix, key };
        self.field(obj, name, only_on, ("a string", Value::is_string))?
            .as_str()
    }

    fn boolean(
        &mut self,
        obj: &Map<String, Value>,
        prefix: &str,
        key: &str,
        only_on: Option<Event>,
    ) -> Option<bool> {
        let name = Name { prefix, key };
        self.field(obj, name, only_on, ("a bool", Value::is_boolean))?
            .as_bool()
    }

    fn object<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        prefix: &str,
        key: &str,
        only_on: Option<Event>,
    ) -> Option<&'v Map<String, Value>> {
        let name = Name { prefix, key };
        self.field(obj, name, only_on, ("an object", Value::is_object))?
            .as_object()
    }

    /// The top-level `decision`: ka's verdicts and Claude's legacy `"approve"` are
    /// pre_tool_use only; Claude's `"block"` is read on every event (its effect depends on it).
    fn decision(&mut self, obj: &Map<String, Value>) -> Option<Said> {
        let value = present(obj, "decision")?;
        let Some(text) = value.as_str() else {
            self.void(format!(
                "`decision` must be a string, got {}",
                json_type(value)
            ));
            return None;
        };
        let verdict = match text {
            "allow" | "approve" => Decision::Allow,
            "ask" => Decision::Ask,
            "deny" => Decision::Deny,
            "block" => return Some(Said::Block),
            _ => {
                self.void(format!(
                    "`decision` must be \"allow\", \"ask\" or \"deny\" (or Claude Code's \
                     \"block\" or \"approve\"), got {}",
                    excerpt(text)
                ));
                return None;
            }
        };
        if self.event != Event::PreToolUse {
            self.void(format!(
                "`decision: \"{text}\"` is only valid on pre_tool_use (this is {})",
                self.shown
            ));
            return None;
        }
        Some(Said::Verdict(verdict))
    }

    /// Claude's `hookSpecificOutput.permissionDecision`.
    fn permission(&mut self, specific: &Map<String, Value>) -> Option<Decision> {
        let text = self.string(
            specific,
            SPECIFIC,
            "permissionDecision",
            Some(Event::PreToolUse),
        )?;
        let verdict = match text {
            "allow" => Decision::Allow,
            "ask" => Decision::Ask,
            "deny" => Decision::Deny,
            // Claude Code's `defer`: the hook takes no decision and the normal permission flow
            // runs (hooks reference, "PreToolUse decision control").
            "defer" => return None,
            _ => {
                self.void(format!(
                    "`hookSpecificOutput.permissionDecision` must be \"allow\", \"ask\", \
                     \"deny\" or \"defer\", got {}",
                    excerpt(text)
                ));
                return None;
            }
        };
        Some(verdict)
    }

    /// The non-empty `parts` joined with `separator`, cut to `limit` with a diagnostic naming
    /// the keys they came from. `None` when nothing is left: an empty note or feedback says
    /// nothing.
    fn joined(&mut self, parts: &[(&str, &str)], separator: &str, limit: Limit) -> Option<String> {
        let parts: Vec<_> = parts.iter().filter(|(_, text)| !text.is_empty()).collect();
        if parts.is_empty() {
            return None;
        }
        let text = parts
            .iter()
            .map(|(_, text)| *text)
            .collect::<Vec<_>>()
            .join(separator);
        let cut = match limit {
            Limit::Chars(max) => cut_chars(&text, max),
            Limit::Bytes(max) => cut_bytes(&text, max),
        };
        if cut.len() < text.len() {
            let sources = parts
                .iter()
                .map(|(key, _)| format!("`{key}`"))
                .collect::<Vec<_>>()
                .join(" + ");
            let was = if parts.len() == 1 {
                "was"
            } else {
                "together were"
            };
            self.note(match limit {
                Limit::Chars(max) => format!(
                    "{sources} {was} {} chars; cut to {max}",
                    text.chars().count()
                ),
                Limit::Bytes(max) => format!(
                    "{sources} {was} {} bytes; cut to {} (limit {max}, cut at a character \
                     boundary)",
                    text.len(),
                    cut.len()
                ),
            });
        }
        Some(cut.to_owned())
    }
}

/// A key as diagnostics show it: `` `note` ``, `` `hookSpecificOutput.updatedInput` ``.
#[derive(Clone, Copy)]
struct Name<'a> {
    prefix: &'a str,
    key: &'a str,
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}{}`", self.prefix, self.key)
    }
}

/// "unknown key `x` ignored", with a hint when it looks like a typo or a misplaced Claude key.
fn unknown_key(key: &str, prefix: &str) -> String {
    let mut message = format!("unknown key `{prefix}{key}` ignored");
    if prefix.is_empty() && CLAUDE_SPECIFIC_KEYS.contains(&key) {
        message.push_str(" (Claude Code expects it inside `hookSpecificOutput`)");
        return message;
    }
    let candidates: &[&str] = if prefix.is_empty() {
        &KNOWN_KEYS
    } else {
        &CLAUDE_SPECIFIC_KEYS
    };
    let squash = |s: &str| -> Vec<char> {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let given = squash(key);
    let closest = candidates
        .iter()
        .map(|c| (edit_distance(&given, &squash(c)), *c))
        .min_by_key(|&(distance, _)| distance);
    if let Some((distance, candidate)) = closest {
        if distance <= 2 && given.len() > 2 {
            message.push_str(&format!(" (did you mean `{prefix}{candidate}`?)"));
        }
    }
    message
}

/// Levenshtein distance; keys are short, so the O(n·m) row is fine.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
        }
        prev = row;
    }
    prev[b.len()]
}

/// "a string", "an object", ... for "must be X, got Y".
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `text` quoted on one line (escaped), at most [`EXCERPT_MAX_CHARS`] chars of it.
fn excerpt(text: &str) -> String {
    let cut = cut_chars(text, EXCERPT_MAX_CHARS);
    let ellipsis = if cut.len() < text.len() { "…" } else { "" };
    format!("{cut:?}{ellipsis}")
}

/// The longest prefix of `text` with at most `max` chars.
fn cut_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The longest prefix of `text` with at most `max` bytes that ends on a char boundary.
fn cut_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use Event::{
        Notification, PostCompact, PostToolUse, PostToolUseFailure, PreCompact, PreToolUse,
        SessionEnd, SessionStart, Stop, SubagentStart, SubagentStop, TaskCompleted, TeammateIdle,
        UserPromptSubmit,
    };

    /// The action `stdout` yields on `event`; fails when it was ignored or voided.
    #[track_caller]
    fn action(stdout: &str, event: Event) -> Action {
        let parsed = parse(stdout, event);
        parsed.action.unwrap_or_else(|| {
            panic!(
                "expected an action from {stdout} on {event}, got: {:?}",
                parsed.diagnostics
            )
        })
    }

    /// The diagnostics of an object that must be voided as a whole.
    #[track_caller]
    fn voided(stdout: &str, event: Event) -> Vec<String> {
        let parsed = parse(stdout, event);
        assert_eq!(parsed.action, None, "{stdout} on {event} should be voided");
        assert!(
            parsed
                .diagnostics
                .iter()
                .any(|d| d.ends_with("; the whole object was ignored")),
            "{:?}",
            parsed.diagnostics
        );
        parsed.diagnostics
    }

    /// The single diagnostic of stdout that is not one JSON object.
    #[track_caller]
    fn not_an_object(stdout: &str) -> String {
        let parsed = parse(stdout, PreToolUse);
        assert_eq!(parsed.action, None);
        assert_eq!(parsed.diagnostics.len(), 1, "{:?}", parsed.diagnostics);
        let diagnostic = parsed.diagnostics.into_iter().next().unwrap();
        assert!(
            diagnostic.starts_with("stdout is not a single JSON object ("),
            "{diagnostic}"
        );
        assert!(diagnostic.contains("; ignored: \""), "{diagnostic}");
        diagnostic
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn has(diagnostics: &[String], needle: &str) -> bool {
        diagnostics.iter().any(|d| d.contains(needle))
    }

    const NON_PRE: [Event; 6] = [
        PostToolUse,
        Stop,
        SessionStart,
        SessionEnd,
        UserPromptSubmit,
        PreCompact,
    ];
    const NON_POST: [Event; 6] = [
        PreToolUse,
        Stop,
        SessionStart,
        SessionEnd,
        UserPromptSubmit,
        PreCompact,
    ];

    // --- What counts as one JSON object -------------------------------------------------

    #[test]
    fn empty_or_whitespace_stdout_is_no_action_and_no_diagnostic() {
        for stdout in ["", " ", "\n", " \t\r\n  "] {
            let parsed = parse(stdout, PreToolUse);
            assert_eq!(parsed.action, None);
            assert!(parsed.diagnostics.is_empty());
        }
    }

    #[test]
    fn whitespace_around_the_object_is_trimmed() {
        let a = action("\n\n  {\"mode\": \"plan\"}  \n", Stop);
        assert_eq!(a.mode.as_deref(), Some("plan"));
    }

    #[test]
    fn byte_order_mark_before_the_object_is_skipped() {
        let a = action("\u{feff}{\"mode\": \"plan\"}\n", Stop);
        assert_eq!(a.mode.as_deref(), Some("plan"));
    }

    #[test]
    fn two_objects_back_to_back_are_ignored() {
        let d = not_an_object("{}{}");
        assert!(d.contains("trailing characters"), "{d}");
        not_an_object("{\"mode\":\"plan\"}\n{\"mode\":\"auto\"}");
    }

    #[test]
    fn profile_noise_before_the_json_is_ignored() {
        let d = not_an_object("Welcome!\n{\"mode\":\"plan\"}");
        assert!(d.contains("expected value at line 1 column 1"), "{d}");
        assert!(d.contains(r#""Welcome!\n{\"mode\":\"plan\"}""#), "{d}");
    }

    #[test]
    fn text_after_the_json_is_ignored() {
        not_an_object("{\"mode\":\"plan\"}\ndone.");
    }

    #[test]
    fn json_that_is_not_an_object_is_ignored() {
        assert!(not_an_object("[{\"mode\":\"plan\"}]").contains("(it is an array)"));
        assert!(not_an_object("\"plan\"").contains("(it is a string)"));
        assert!(not_an_object("42").contains("(it is a number)"));
        assert!(not_an_object("true").contains("(it is a bool)"));
        assert!(not_an_object("null").contains("(it is null)"));
    }

    #[test]
    fn invalid_json_is_ignored() {
        not_an_object("{\"mode\": plan}");
        not_an_object("{\"mode\": \"plan\",}");
        not_an_object("{\"mode\": \"plan\"");
        not_an_object("{'mode': 'plan'}");
        not_an_object("ok");
    }

    #[test]
    fn replaced_invalid_utf8_is_just_not_json() {
        not_an_object("\u{fffd}\u{fffd}{\"mode\":\"plan\"}");
        not_an_object("\u{fffd}");
    }

    #[test]
    fn deeply_nested_json_is_ignored_without_panic() {
        let d = not_an_object(&"[".repeat(10_000));
        assert!(d.contains("recursion limit"), "{d}");
        let closed = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        not_an_object(&closed);
        let inside = format!(
            "{{\"mode\":\"plan\",\"x\":{}{}}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        not_an_object(&inside);
    }

    #[test]
    fn quoted_output_is_cut_to_80_chars_at_a_char_boundary() {
        let d = not_an_object(&"é".repeat(300));
        let quoted = format!("\"{}\"…", "é".repeat(EXCERPT_MAX_CHARS));
        assert!(d.ends_with(&quoted), "{d}");
    }

    #[test]
    fn empty_object_is_an_empty_action() {
        let a = action("{}", PreToolUse);
        assert!(a.is_empty());
        assert!(parse("{}", Stop).diagnostics.is_empty());
    }

    // --- ka keys on their events --------------------------------------------------------

    #[test]
    fn mode_and_note_are_valid_on_every_event() {
        for event in Event::ALL {
            let a = action(r#"{"mode":"plan","note":"tests failing"}"#, event);
            assert_eq!(a.mode.as_deref(), Some("plan"));
            assert_eq!(a.note.as_deref(), Some("tests failing"));
            assert!(parse(r#"{"mode":"plan"}"#, event).diagnostics.is_empty());
        }
    }

    #[test]
    fn updated_input_on_pre_tool_use_is_a_merge_patch() {
        let a = action(
            r#"{"updated_input":{"command":"cargo fmt --all"},"decision":"allow"}"#,
            PreToolUse,
        );
        let patch = object(json!({"command": "cargo fmt --all"}));
        assert_eq!(a.input_patch, Some(InputPatch::Merge(patch)));
        assert_eq!(a.decision, Some(Decision::Allow));
    }

    #[test]
    fn updated_input_on_any_other_event_voids_whole_object() {
        for event in NON_PRE {
            let d = voided(r#"{"mode":"plan","updated_input":{"a":1}}"#, event);
            assert_eq!(
                d,
                [format!(
                    "`updated_input` is only valid on pre_tool_use (this is {event}); \
                     the whole object was ignored"
                )]
            );
        }
    }

    #[test]
    fn decision_allow_ask_deny_on_pre_tool_use() {
        for (text, decision) in [
            ("allow", Decision::Allow),
            ("ask", Decision::Ask),
            ("deny", Decision::Deny),
        ] {
            let a = action(&format!(r#"{{"decision":"{text}"}}"#), PreToolUse);
            assert_eq!(a.decision, Some(decision));
        }
    }

    #[test]
    fn decision_on_any_other_event_voids_whole_object() {
        for event in NON_PRE {
            let d = voided(r#"{"note":"x","decision":"allow"}"#, event);
            assert!(has(
                &d,
                "`decision: \"allow\"` is only valid on pre_tool_use"
            ));
        }
    }

    #[test]
    fn deny_with_reason_keeps_the_reason() {
        let a = action(r#"{"decision":"deny","reason":"no rm -rf"}"#, PreToolUse);
        assert_eq!(a.decision, Some(Decision::Deny));
        assert_eq!(a.reason.as_deref(), Some("no rm -rf"));
    }

    #[test]
    fn deny_without_reason_has_no_reason() {
        let a = action(r#"{"decision":"deny"}"#, PreToolUse);
        assert_eq!(a.decision, Some(Decision::Deny));
        assert_eq!(a.reason, None);
    }

    #[test]
    fn reason_without_decision_is_kept() {
        let a = action(r#"{"reason":"looked fine"}"#, PreToolUse);
        assert_eq!(a.decision, None);
        assert_eq!(a.reason.as_deref(), Some("looked fine"));
    }

    #[test]
    fn reason_on_any_other_event_voids_whole_object() {
        for event in NON_PRE {
            let d = voided(r#"{"reason":"why"}"#, event);
            assert!(has(&d, "`reason` is only valid on pre_tool_use"), "{d:?}");
        }
    }

    #[test]
    fn feedback_on_post_tool_use_is_kept() {
        let a = action(
            r#"{"feedback":"rustfmt reports the edited file is unformatted"}"#,
            PostToolUse,
        );
        assert_eq!(
            a.feedback.as_deref(),
            Some("rustfmt reports the edited file is unformatted")
        );
    }

    #[test]
    fn feedback_on_pre_tool_use_voids_whole_object() {
        let d = voided(r#"{"mode":"plan","feedback":"x"}"#, PreToolUse);
        assert_eq!(
            d,
            [
                "`feedback` is only valid on post_tool_use (this is pre_tool_use); \
              the whole object was ignored"
            ]
        );
    }

    #[test]
    fn feedback_on_any_other_event_voids_whole_object() {
        for event in NON_POST {
            voided(r#"{"feedback":"x"}"#, event);
        }
    }

    // --- Wrong types ----------------------------------------------------------------------

    #[test]
    fn note_of_wrong_type_voids_whole_object() {
        let d = voided(r#"{"mode":"plan","note":5}"#, Stop);
        assert_eq!(
            d,
            ["`note` must be a string, got a number; the whole object was ignored"]
        );
    }

    #[test]
    fn every_ka_key_of_wrong_type_voids_whole_object() {
        for (stdout, event, message) in [
            (
                r#"{"mode":["plan"]}"#,
                Stop,
                "`mode` must be a string, got an array",
            ),
            (
                r#"{"note":{}}"#,
                Stop,
                "`note` must be a string, got an object",
            ),
            (
                r#"{"updated_input":"x"}"#,
                PreToolUse,
                "`updated_input` must be an object, got a string",
            ),
            (
                r#"{"updated_input":[1]}"#,
                PreToolUse,
                "`updated_input` must be an object, got an array",
            ),
            (
                r#"{"decision":true}"#,
                PreToolUse,
                "`decision` must be a string, got a bool",
            ),
            (
                r#"{"reason":1}"#,
                PreToolUse,
                "`reason` must be a string, got a number",
            ),
            (
                r#"{"feedback":false}"#,
                PostToolUse,
                "`feedback` must be a string, got a bool",
            ),
        ] {
            let d = voided(stdout, event);
            assert_eq!(d, [format!("{message}; the whole object was ignored")]);
        }
    }

    #[test]
    fn decision_of_unknown_value_voids_whole_object() {
        let d = voided(r#"{"decision":"maybe","mode":"plan"}"#, PreToolUse);
        assert!(has(&d, "`decision` must be \"allow\", \"ask\" or \"deny\""));
        assert!(has(&d, "got \"maybe\""));
        // Case matters, as in Claude Code.
        voided(r#"{"decision":"Allow"}"#, PreToolUse);
    }

    #[test]
    fn every_offending_key_is_reported() {
        let d = voided(
            r#"{"note":5,"feedback":"x","decision":"maybe","mode":"plan","typo":1}"#,
            PreToolUse,
        );
        assert!(has(&d, "`note` must be a string"), "{d:?}");
        assert!(
            has(&d, "`feedback` is only valid on post_tool_use"),
            "{d:?}"
        );
        assert!(has(&d, "`decision` must be"), "{d:?}");
        assert!(has(&d, "unknown key `typo` ignored"), "{d:?}");
        assert_eq!(d.len(), 4, "{d:?}");
    }

    #[test]
    fn null_values_count_as_absent() {
        let a = action(
            r#"{"mode":"plan","note":null,"feedback":null,"updated_input":null,
                "decision":null,"reason":null,"continue":null,"hookSpecificOutput":null}"#,
            PreToolUse,
        );
        assert_eq!(
            a,
            Action {
                mode: Some("plan".into()),
                ..Action::default()
            }
        );
        let parsed = parse(
            r#"{"hookSpecificOutput":{"updatedInput":null,"permissionDecision":null}}"#,
            Stop,
        );
        assert_eq!(parsed.action, Some(Action::default()));
        assert!(parsed.diagnostics.is_empty());
    }

    // --- Unknown keys ---------------------------------------------------------------------

    #[test]
    fn unknown_key_keeps_the_object_with_a_diagnostic() {
        let parsed = parse(r#"{"mode":"plan","colour":"red"}"#, Stop);
        assert_eq!(parsed.action.unwrap().mode.as_deref(), Some("plan"));
        assert_eq!(parsed.diagnostics, ["unknown key `colour` ignored"]);
    }

    #[test]
    fn unknown_key_close_to_a_known_one_suggests_it() {
        let parsed = parse(r#"{"mdoe":"plan","updatedInput":{}}"#, PreToolUse);
        assert_eq!(parsed.action, Some(Action::default()));
        assert!(has(
            &parsed.diagnostics,
            "unknown key `mdoe` ignored (did you mean `mode`?)"
        ));
        assert!(has(
            &parsed.diagnostics,
            "unknown key `updatedInput` ignored (Claude Code expects it inside \
             `hookSpecificOutput`)"
        ));
    }

    #[test]
    fn unknown_key_inside_hook_specific_output_is_reported() {
        let parsed = parse(
            r#"{"hookSpecificOutput":{"permisionDecision":"deny"}}"#,
            PreToolUse,
        );
        assert_eq!(parsed.action, Some(Action::default()));
        assert_eq!(
            parsed.diagnostics,
            [
                "unknown key `hookSpecificOutput.permisionDecision` ignored \
              (did you mean `hookSpecificOutput.permissionDecision`?)"
            ]
        );
    }

    #[test]
    fn suppress_output_is_known_and_ignored_silently() {
        let parsed = parse(r#"{"suppressOutput":true,"mode":"plan"}"#, PostToolUse);
        assert_eq!(parsed.action.unwrap().mode.as_deref(), Some("plan"));
        assert!(parsed.diagnostics.is_empty());
        voided(r#"{"suppressOutput":"yes"}"#, PostToolUse);
    }

    // --- Cutting --------------------------------------------------------------------------

    #[test]
    fn note_over_200_chars_is_cut_at_a_char_boundary() {
        let stdout = json!({ "note": "é".repeat(300) }).to_string();
        let parsed = parse(&stdout, Stop);
        let note = parsed.action.unwrap().note.unwrap();
        assert_eq!(note, "é".repeat(NOTE_MAX_CHARS));
        assert_eq!(parsed.diagnostics, ["`note` was 300 chars; cut to 200"]);
    }

    #[test]
    fn note_of_exactly_200_chars_is_not_cut() {
        let stdout = json!({ "note": "🦀".repeat(200) }).to_string();
        let parsed = parse(&stdout, Stop);
        assert_eq!(parsed.action.unwrap().note.unwrap(), "🦀".repeat(200));
        assert!(parsed.diagnostics.is_empty());
    }

    #[test]
    fn feedback_over_2048_bytes_is_cut_at_a_char_boundary() {
        // "€" is 3 bytes: 2048 is not a multiple of 3, so a naive cut would split one.
        let stdout = json!({ "feedback": "€".repeat(1000) }).to_string();
        let parsed = parse(&stdout, PostToolUse);
        let feedback = parsed.action.unwrap().feedback.unwrap();
        assert_eq!(feedback, "€".repeat(682));
        assert!(feedback.len() <= FEEDBACK_MAX_BYTES);
        assert_eq!(
            parsed.diagnostics,
            ["`feedback` was 3000 bytes; cut to 2046 (limit 2048, cut at a character boundary)"]
        );
    }

    #[test]
    fn feedback_of_exactly_2048_bytes_is_not_cut() {
        let stdout = json!({ "feedback": "a".repeat(2048) }).to_string();
        let parsed = parse(&stdout, PostToolUse);
        assert_eq!(parsed.action.unwrap().feedback.unwrap().len(), 2048);
        assert!(parsed.diagnostics.is_empty());
    }

    #[test]
    fn empty_note_and_feedback_say_nothing() {
        assert!(action(r#"{"note":""}"#, Stop).is_empty());
        assert!(action(r#"{"feedback":""}"#, PostToolUse).is_empty());
    }

    // --- Claude Code: {"decision":"block"} and "approve" ----------------------------------

    #[test]
    fn claude_block_on_pre_tool_use_is_deny_with_reason() {
        let a = action(r#"{"decision":"block","reason":"not here"}"#, PreToolUse);
        assert_eq!(a.decision, Some(Decision::Deny));
        assert_eq!(a.reason.as_deref(), Some("not here"));
        assert_eq!(a.block, None);
    }

    #[test]
    fn claude_block_on_user_prompt_submit_blocks_with_reason() {
        let a = action(
            r#"{"decision":"block","reason":"no secrets"}"#,
            UserPromptSubmit,
        );
        assert_eq!(a.block.as_deref(), Some("no secrets"));
        assert_eq!(a.decision, None);
        assert_eq!(a.reason, None);
        let a = action(r#"{"decision":"block"}"#, UserPromptSubmit);
        assert_eq!(a.block.as_deref(), Some(""));
    }

    #[test]
    fn claude_block_on_post_tool_use_marks_the_result_as_an_error_with_feedback() {
        let a = action(
            r#"{"decision":"block","reason":"lint failed"}"#,
            PostToolUse,
        );
        assert_eq!(a.feedback.as_deref(), Some("lint failed"));
        assert!(a.mark_error);
        assert_eq!(a.decision, None);
        let a = action(
            r#"{"feedback":"formatted","decision":"block","reason":"lint failed"}"#,
            PostToolUse,
        );
        assert_eq!(a.feedback.as_deref(), Some("formatted\nlint failed"));
        assert!(a.mark_error);
    }

    #[test]
    fn claude_block_on_post_tool_use_without_reason_still_marks_the_error() {
        let parsed = parse(r#"{"decision":"block"}"#, PostToolUse);
        let a = parsed.action.unwrap();
        assert!(a.mark_error);
        assert_eq!(a.feedback, None);
    }

    #[test]
    fn claude_block_on_stop_like_events_keeps_the_agent_going() {
        for event in [Stop, SubagentStop, TeammateIdle, TaskCompleted] {
            let a = action(
                r#"{"decision":"block","reason":"tests still fail: fix them"}"#,
                event,
            );
            assert_eq!(a.keep_going.as_deref(), Some("tests still fail: fix them"));
        }
        let a = action(r#"{"keep_going":"the roadmap has 3 items left"}"#, Stop);
        assert_eq!(
            a.keep_going.as_deref(),
            Some("the roadmap has 3 items left")
        );
        let parsed = parse(r#"{"decision":"block"}"#, Stop);
        assert_eq!(parsed.action.unwrap().keep_going, None);
        assert!(has(&parsed.diagnostics, "without a `reason`"));
    }

    #[test]
    fn keep_going_on_any_other_event_voids_whole_object() {
        for event in [PreToolUse, PostToolUse, SessionStart, UserPromptSubmit] {
            let d = voided(r#"{"keep_going":"more"}"#, event);
            assert!(has(&d, "`keep_going` is only valid on stop"), "{d:?}");
        }
    }

    #[test]
    fn claude_block_on_advisory_events_is_ignored_without_voiding() {
        for event in [SessionStart, SessionEnd, PreCompact, Notification] {
            let parsed = parse(
                r#"{"decision":"block","reason":"keep going","mode":"plan"}"#,
                event,
            );
            let a = parsed.action.unwrap();
            assert_eq!(a.mode.as_deref(), Some("plan"));
            assert_eq!((a.block, a.decision, a.reason), (None, None, None));
            assert_eq!(a.keep_going, None);
            assert_eq!(parsed.diagnostics.len(), 1);
            assert!(
                parsed.diagnostics[0]
                    .starts_with(&format!("`decision: \"block\"` has no effect on {event} (")),
                "{:?}",
                parsed.diagnostics
            );
        }
    }

    #[test]
    fn claude_approve_on_pre_tool_use_is_allow() {
        let a = action(r#"{"decision":"approve","reason":"safe"}"#, PreToolUse);
        assert_eq!(a.decision, Some(Decision::Allow));
        assert_eq!(a.reason.as_deref(), Some("safe"));
    }

    #[test]
    fn claude_approve_on_any_other_event_voids_whole_object() {
        for event in NON_PRE {
            voided(r#"{"decision":"approve"}"#, event);
        }
    }

    // --- Claude Code: {"continue":false,"stopReason":..} ----------------------------------

    #[test]
    fn continue_false_halts_on_every_event_with_the_stop_reason() {
        for event in Event::ALL {
            let a = action(r#"{"continue":false,"stopReason":"budget spent"}"#, event);
            assert_eq!(a.halt.as_deref(), Some("budget spent"), "{event}");
            assert_eq!(a.block, None, "{event}: a halt is not a block");
            assert_eq!(a.reason, None, "{event}: the reason is not for the model");
            let a = action(r#"{"continue":false}"#, event);
            assert_eq!(a.halt.as_deref(), Some(""));
            let a = action(r#"{"halt":"ka's own key"}"#, event);
            assert_eq!(a.halt.as_deref(), Some("ka's own key"));
        }
    }

    #[test]
    fn continue_true_does_nothing() {
        for event in Event::ALL {
            let parsed = parse(r#"{"continue":true}"#, event);
            assert!(parsed.action.unwrap().is_empty());
            assert!(parsed.diagnostics.is_empty());
        }
    }

    #[test]
    fn stop_reason_without_continue_false_is_ignored_with_diagnostic() {
        let parsed = parse(r#"{"continue":true,"stopReason":"halt"}"#, PreToolUse);
        assert!(parsed.action.unwrap().is_empty());
        assert!(has(&parsed.diagnostics, "`stopReason` has no effect"));
    }

    #[test]
    fn continue_or_stop_reason_of_wrong_type_voids_whole_object() {
        let d = voided(r#"{"continue":"false"}"#, PreToolUse);
        assert_eq!(
            d,
            ["`continue` must be a bool, got a string; the whole object was ignored"]
        );
        voided(r#"{"continue":0}"#, UserPromptSubmit);
        voided(r#"{"continue":false,"stopReason":1}"#, PreToolUse);
        voided(r#"{"halt":true}"#, Stop);
    }

    #[test]
    fn block_and_continue_false_on_user_prompt_submit_block_and_halt() {
        let a = action(
            r#"{"decision":"block","reason":"a","continue":false,"stopReason":"b"}"#,
            UserPromptSubmit,
        );
        assert_eq!(a.block.as_deref(), Some("a"));
        assert_eq!(a.halt.as_deref(), Some("b"));
    }

    #[test]
    fn permission_decision_defer_is_no_decision() {
        let parsed = parse(
            r#"{"hookSpecificOutput":{"permissionDecision":"defer"},"note":"later"}"#,
            PreToolUse,
        );
        let a = parsed.action.unwrap();
        assert_eq!(a.decision, None);
        assert_eq!(a.note.as_deref(), Some("later"));
        assert!(parsed.diagnostics.is_empty());
    }

    // --- Claude Code: hookSpecificOutput --------------------------------------------------

    #[test]
    fn permission_decision_on_pre_tool_use_with_reason() {
        for (text, decision) in [
            ("allow", Decision::Allow),
            ("ask", Decision::Ask),
            ("deny", Decision::Deny),
        ] {
            let stdout = json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": text,
                "permissionDecisionReason": "policy",
            }})
            .to_string();
            let parsed = parse(&stdout, PreToolUse);
            let a = parsed.action.unwrap();
            assert_eq!(a.decision, Some(decision));
            assert_eq!(a.reason.as_deref(), Some("policy"));
            assert!(parsed.diagnostics.is_empty());
        }
    }

    #[test]
    fn permission_decision_on_any_other_event_voids_whole_object() {
        for event in NON_PRE {
            let d = voided(
                r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
                event,
            );
            assert!(has(
                &d,
                "`hookSpecificOutput.permissionDecision` is only valid on pre_tool_use"
            ));
            voided(
                r#"{"hookSpecificOutput":{"permissionDecisionReason":"x"}}"#,
                event,
            );
        }
    }

    #[test]
    fn permission_decision_of_unknown_value_or_type_voids_whole_object() {
        let d = voided(
            r#"{"hookSpecificOutput":{"permissionDecision":"block"}}"#,
            PreToolUse,
        );
        assert!(has(&d, "got \"block\""));
        voided(
            r#"{"hookSpecificOutput":{"permissionDecision":1}}"#,
            PreToolUse,
        );
        voided(
            r#"{"hookSpecificOutput":{"permissionDecisionReason":[]}}"#,
            PreToolUse,
        );
    }

    #[test]
    fn updated_input_from_claude_on_pre_tool_use_replaces_the_input() {
        let a = action(
            r#"{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}"#,
            PreToolUse,
        );
        let input = object(json!({"command": "ls"}));
        assert_eq!(a.input_patch, Some(InputPatch::Replace(input)));
    }

    #[test]
    fn updated_input_from_claude_on_other_events_or_of_wrong_type_voids() {
        for event in NON_PRE {
            voided(r#"{"hookSpecificOutput":{"updatedInput":{}}}"#, event);
        }
        let d = voided(
            r#"{"hookSpecificOutput":{"updatedInput":"ls"}}"#,
            PreToolUse,
        );
        assert!(has(
            &d,
            "`hookSpecificOutput.updatedInput` must be an object, got a string"
        ));
    }

    #[test]
    fn both_updated_input_forms_void_as_ambiguous() {
        let d = voided(
            r#"{"updated_input":{"a":1},"hookSpecificOutput":{"updatedInput":{"b":2}}}"#,
            PreToolUse,
        );
        assert!(has(&d, "ambiguous"), "{d:?}");
    }

    #[test]
    fn additional_context_and_context_are_context_on_the_context_events() {
        for event in [
            SessionStart,
            UserPromptSubmit,
            PreToolUse,
            PostToolUse,
            Stop,
            SubagentStart,
            PostToolUseFailure,
        ] {
            let a = action(
                r#"{"context":"one","hookSpecificOutput":{"additionalContext":"branch: main"}}"#,
                event,
            );
            assert_eq!(a.context.as_deref(), Some("one\nbranch: main"), "{event}");
            assert_eq!(a.note, None, "{event}: context is not a note");
            assert_eq!(a.feedback, None, "{event}: context is not feedback");
        }
    }

    #[test]
    fn context_is_cut_to_10_000_chars() {
        let stdout =
            json!({"hookSpecificOutput": {"additionalContext": "ж".repeat(10_050)}}).to_string();
        let parsed = parse(&stdout, SessionStart);
        assert_eq!(parsed.action.unwrap().context.unwrap(), "ж".repeat(10_000));
        assert_eq!(
            parsed.diagnostics,
            ["`hookSpecificOutput.additionalContext` was 10050 chars; cut to 10000"]
        );
    }

    #[test]
    fn additional_context_elsewhere_is_ignored_and_context_voids() {
        for event in [SessionEnd, PreCompact, Notification, PostCompact] {
            let parsed = parse(
                r#"{"note":"n","hookSpecificOutput":{"additionalContext":"x"}}"#,
                event,
            );
            let a = parsed.action.unwrap();
            assert_eq!((a.note.as_deref(), a.context), (Some("n"), None));
            assert!(has(&parsed.diagnostics, "has no effect on"), "{event}");
            let d = voided(r#"{"context":"x"}"#, event);
            assert!(has(&d, "`context` is only valid on"), "{d:?}");
        }
    }

    #[test]
    fn plain_stdout_is_context_only_where_asked_and_only_when_not_an_object() {
        let parsed = plain_context("branch: main\n", SessionStart).unwrap();
        assert_eq!(
            parsed.action.unwrap().context.as_deref(),
            Some("branch: main")
        );
        assert!(plain_context(r#"{"note":"x"}"#, SessionStart).is_none());
        assert!(plain_context("  ", UserPromptSubmit).is_none());
        assert!(plain_context("text", SessionEnd).is_none());
    }

    #[test]
    fn additional_context_of_wrong_type_voids_whole_object() {
        voided(
            r#"{"hookSpecificOutput":{"additionalContext":["x"]}}"#,
            PostToolUse,
        );
    }

    #[test]
    fn hook_event_name_is_ignored_but_type_checked() {
        let parsed = parse(
            r#"{"hookSpecificOutput":{"hookEventName":"Stop"}}"#,
            PreToolUse,
        );
        assert!(parsed.action.unwrap().is_empty());
        assert!(parsed.diagnostics.is_empty());
        voided(r#"{"hookSpecificOutput":{"hookEventName":7}}"#, Stop);
    }

    #[test]
    fn hook_specific_output_that_is_not_an_object_voids_whole_object() {
        let d = voided(r#"{"hookSpecificOutput":"deny"}"#, PreToolUse);
        assert_eq!(
            d,
            ["`hookSpecificOutput` must be an object, got a string; the whole object was ignored"]
        );
    }

    #[test]
    fn ka_and_claude_decisions_that_disagree_take_the_stronger() {
        let parsed = parse(
            r#"{"decision":"allow","reason":"ka says ok",
                "hookSpecificOutput":{"permissionDecision":"deny",
                                      "permissionDecisionReason":"claude says no"}}"#,
            PreToolUse,
        );
        let a = parsed.action.unwrap();
        assert_eq!(a.decision, Some(Decision::Deny));
        assert_eq!(a.reason.as_deref(), Some("claude says no"));
        assert_eq!(
            parsed.diagnostics,
            [
                "`decision` says \"allow\" but `hookSpecificOutput.permissionDecision` says \
              \"deny\"; the stronger, \"deny\", applies"
            ]
        );

        let a = action(
            r#"{"decision":"ask","reason":"ka asks",
                "hookSpecificOutput":{"permissionDecision":"allow",
                                      "permissionDecisionReason":"fine"}}"#,
            PreToolUse,
        );
        assert_eq!(a.decision, Some(Decision::Ask));
        assert_eq!(a.reason.as_deref(), Some("ka asks"));
    }

    #[test]
    fn ka_and_claude_decisions_that_agree_need_no_diagnostic() {
        let parsed = parse(
            r#"{"decision":"deny","hookSpecificOutput":{"permissionDecision":"deny",
                "permissionDecisionReason":"why"}}"#,
            PreToolUse,
        );
        let a = parsed.action.unwrap();
        assert_eq!(a.decision, Some(Decision::Deny));
        assert_eq!(a.reason.as_deref(), Some("why"));
        assert!(parsed.diagnostics.is_empty());
    }

    #[test]
    fn system_message_is_a_user_message_not_a_note() {
        for event in Event::ALL {
            let a = action(r#"{"systemMessage":"heads up"}"#, event);
            assert_eq!(a.message.as_deref(), Some("heads up"));
            assert_eq!(a.note, None);
        }
        voided(r#"{"systemMessage":false}"#, Stop);
    }

    #[test]
    fn system_message_is_kept_whole_up_to_10_000_chars_while_note_stays_200() {
        let stdout =
            json!({"note": "é".repeat(250), "systemMessage": "ü".repeat(5_000)}).to_string();
        let parsed = parse(&stdout, Stop);
        let a = parsed.action.unwrap();
        assert_eq!(a.message.unwrap(), "ü".repeat(5_000));
        assert_eq!(a.note.unwrap(), "é".repeat(NOTE_MAX_CHARS));
        assert_eq!(parsed.diagnostics, ["`note` was 250 chars; cut to 200"]);
        let stdout = json!({"systemMessage": "x".repeat(10_001)}).to_string();
        let parsed = parse(&stdout, Stop);
        assert_eq!(
            parsed.action.unwrap().message.unwrap().len(),
            MESSAGE_MAX_CHARS
        );
    }

    #[test]
    fn full_claude_pre_tool_use_answer_is_read() {
        let a = action(
            r#"{"continue":true,"suppressOutput":false,"systemMessage":"rewrote the command",
                "hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
                "permissionDecisionReason":"safe after rewrite",
                "updatedInput":{"command":"ls -la"}}}"#,
            PreToolUse,
        );
        assert_eq!(
            a,
            Action {
                message: Some("rewrote the command".into()),
                input_patch: Some(InputPatch::Replace(object(json!({"command": "ls -la"})))),
                decision: Some(Decision::Allow),
                reason: Some("safe after rewrite".into()),
                ..Action::default()
            }
        );
    }

    // --- InputPatch, Decision, serialization ----------------------------------------------

    #[test]
    fn merge_patch_replaces_named_keys_and_keeps_the_rest() {
        let mut args = object(json!({"command": "rm -rf /", "timeout": 30}));
        InputPatch::Merge(object(json!({"command": "ls", "cwd": "/tmp"}))).apply(&mut args);
        assert_eq!(
            Value::Object(args),
            json!({"command": "ls", "timeout": 30, "cwd": "/tmp"})
        );
    }

    #[test]
    fn merge_patch_writes_null_rather_than_deleting() {
        let mut args = object(json!({"a": 1, "b": 2}));
        InputPatch::Merge(object(json!({"a": null}))).apply(&mut args);
        assert_eq!(Value::Object(args), json!({"a": null, "b": 2}));
    }

    #[test]
    fn replace_patch_drops_keys_it_does_not_name() {
        let mut args = object(json!({"command": "rm -rf /", "timeout": 30}));
        InputPatch::Replace(object(json!({"command": "ls"}))).apply(&mut args);
        assert_eq!(Value::Object(args), json!({"command": "ls"}));
    }

    #[test]
    fn decision_strength_is_deny_over_ask_over_allow() {
        use Decision::{Allow, Ask, Deny};
        assert!(Deny > Ask && Ask > Allow);
        assert_eq!(Decision::strongest(Some(Allow), Some(Deny)), Some(Deny));
        assert_eq!(Decision::strongest(Some(Ask), Some(Allow)), Some(Ask));
        assert_eq!(Decision::strongest(Some(Deny), Some(Ask)), Some(Deny));
        assert_eq!(Decision::strongest(None, Some(Allow)), Some(Allow));
        assert_eq!(Decision::strongest(Some(Ask), None), Some(Ask));
        assert_eq!(Decision::strongest(None, None), None);
        assert_eq!([Allow, Deny, Ask].into_iter().max(), Some(Deny));
    }

    #[test]
    fn decision_serializes_lowercase() {
        assert_eq!(serde_json::to_value(Decision::Ask).unwrap(), json!("ask"));
        let back: Decision = serde_json::from_value(json!("deny")).unwrap();
        assert_eq!(back, Decision::Deny);
        assert_eq!(Decision::Allow.to_string(), "allow");
    }

    #[test]
    fn action_serializes_only_what_was_set() {
        let a = action(
            r#"{"updated_input":{"command":"ls"},"decision":"deny"}"#,
            PreToolUse,
        );
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({
                "input_patch": {"kind": "merge", "value": {"command": "ls"}},
                "decision": "deny",
            })
        );
        assert_eq!(serde_json::to_value(Action::default()).unwrap(), json!({}));
    }

    #[test]
    fn odd_inputs_never_panic() {
        let long = "x".repeat(100_000);
        let inputs = [
            "{",
            "}",
            "{\"",
            "{\"note\":\"\\ud800\"}",
            "{\"note\":\"\u{0}\"}",
            "{\"\":1}",
            "{\"hookSpecificOutput\":{\"hookSpecificOutput\":{}}}",
            "{\"decision\":\"\"}",
            "{\"note\":1e400}",
            "{\"note\":-0}",
            &long,
        ];
        for input in inputs {
            for event in Event::ALL {
                let parsed = parse(input, event);
                assert!(parsed.action.is_some() || !parsed.diagnostics.is_empty());
                assert!(parsed.diagnostics.iter().all(|d| d.len() < 1_000));
            }
        }
    }
}
