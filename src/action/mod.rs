//! The action language: what a hook that exits 0 may say on stdout, on every event and through
//! every adapter. [`parse`] turns stdout into an [`Action`] (all or nothing, Claude Code's,
//! Copilot's and Cursor's forms included) and says in [`Parsed::diagnostics`] what it ignored,
//! voided or cut. The keys and their events: `docs/events.md`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::Event;

mod foreign;
mod permission;

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
    /// pre_tool_use: Claude Code's `permissionDecision: "defer"` (no decision; Claude Code in
    /// `-p` mode pauses the call for its caller to decide).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
    /// permission_request, with an allow: the permission-rule updates of
    /// `hookSpecificOutput.decision.updatedPermissions`, as the hook wrote them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_updates: Option<Vec<Value>>,
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
#[doc(hidden)] // the dispatch's; public for the benches and property tests
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
pub(crate) fn plain_context(stdout: &str, event: Event) -> Option<Parsed> {
    let text = stdout.trim().trim_start_matches('\u{feff}').trim_start();
    // Text that starts like a JSON object is a broken object, not context (Codex: "without
    // treating malformed JSON as context", `codex-rs/hooks/src/events/session_start.rs`, which
    // also fails `[`; Claude Code reads `[info] ...` as text, so `[` is left to be context).
    if text.is_empty() || !CONTEXT_EVENTS.contains(&event.acts_as()) || text.starts_with('{') {
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
const CLAUDE_SPECIFIC_KEYS: [&str; 6] = [
    "hookEventName",
    "decision",
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
    /// `permissionDecision: "defer"`.
    deferred: bool,
    /// permission_request's `hookSpecificOutput.decision`.
    answer: Option<permission::Answer<'v>>,
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
    let deferred = permission.is_none()
        && d.event == PreToolUse
        && present(specific, "permissionDecision").and_then(Value::as_str) == Some("defer");
    let answer = d.permission_answer(specific);
    let permission_reason = d.string(
        specific,
        SPECIFIC,
        "permissionDecisionReason",
        Some(PreToolUse),
    );
    let replaced_input = d.object(specific, SPECIFIC, "updatedInput", Some(PreToolUse));
    let additional_context = d.string(specific, SPECIFIC, "additionalContext", None);

    void_ambiguous_rewrites(d, obj, specific, answer.is_some_and(|a| a.input.is_some()));
    note_unknown_keys(d, obj, specific);
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
        deferred,
        answer,
    }
}

/// Voids the object when it rewrites the input in more than one way (`answer_rewrites`: the
/// permission answer's `decision.updatedInput`).
fn void_ambiguous_rewrites(
    d: &mut Reader,
    obj: &Map<String, Value>,
    specific: &Map<String, Value>,
    answer_rewrites: bool,
) {
    let rewrites = [
        present(obj, "updated_input").is_some(),
        present(specific, "updatedInput").is_some(),
        answer_rewrites,
    ];
    if rewrites.iter().filter(|&&r| r).count() > 1 {
        d.void(
            "more than one of `updated_input` (merge), `hookSpecificOutput.updatedInput` and \
             `hookSpecificOutput.decision.updatedInput` (replace) is present; which one \
             applies is ambiguous"
                .to_owned(),
        );
    }
}

/// Notes every key neither ka nor Claude Code's `hookSpecificOutput` knows (typos show).
fn note_unknown_keys(d: &mut Reader, obj: &Map<String, Value>, specific: &Map<String, Value>) {
    for key in obj.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        d.note(unknown_key(key, ""));
    }
    for key in specific
        .keys()
        .filter(|k| !CLAUDE_SPECIFIC_KEYS.contains(&k.as_str()))
    {
        d.note(unknown_key(key, SPECIFIC));
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
    // Copilot's and Cursor's output forms, as the Claude Code form read below.
    let normalized = foreign::normalize(obj, event);
    let obj = match normalized {
        Some((ref object, ref notes)) => {
            notes.iter().for_each(|n| d.note(n.clone()));
            object
        }
        None => obj,
    };
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
    let answered_input = keys.answer.and_then(|a| a.input);
    action.input_patch = match (keys.updated_input, keys.replaced_input.or(answered_input)) {
        (Some(patch), _) => Some(InputPatch::Merge(patch.clone())),
        (None, Some(input)) => Some(InputPatch::Replace(input.clone())),
        (None, None) => None,
    };
    action.deferred = keys.deferred;
    action.permission_updates = keys.answer.and_then(|a| a.permissions).cloned();
    let ka = match keys.said {
        Some(Said::Verdict(verdict)) => Some(verdict),
        Some(Said::Block) => Some(Decision::Deny),
        None => None,
    };
    // The permission-request answer counts as Claude's permissionDecision (a hook writes one
    // or the other); with both, the stronger applies.
    let answered = keys.answer.map(|a| a.decision);
    let permission = Decision::strongest(keys.permission, answered);
    let permission_reason = match (keys.answer, keys.permission) {
        (Some(a), p) if Some(a.decision) >= p => a.message.or(keys.permission_reason),
        _ => keys.permission_reason,
    };
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
        permission_reason.or(keys.reason)
    } else {
        keys.reason.or(permission_reason)
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
    // A permission answer's `interrupt: true` stops the agent (Claude Code, "PermissionRequest
    // decision control"): ka's halt, with the denial's message.
    let interrupt = keys.answer.filter(|a| a.interrupt);
    let halted = keys.go_on == Some(false) || keys.halt.is_some() || interrupt.is_some();
    if halted {
        let mut parts = Vec::new();
        parts.extend(keys.halt.map(|s| ("halt", s)));
        if let Some(answer) = interrupt {
            parts.push((
                "hookSpecificOutput.decision.interrupt",
                answer.message.unwrap_or(""),
            ));
        }
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
        if self.event == Event::Stop && verdict != Decision::Ask {
            // Gemini CLI's AfterAgent (`docs/hooks/reference.md`, "AfterAgent"): `allow` lets
            // the response stand, `deny` rejects it and `reason` becomes the next prompt; the
            // meaning of Claude's `approve` and `block` on Stop. Hooks written for Gemini print
            // them, so they are read, not a failure of the hook.
            return (verdict == Decision::Deny).then_some(Said::Block);
        }
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
mod tests;
