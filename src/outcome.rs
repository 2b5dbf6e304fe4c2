//! The result of dispatching one event: what the host must do, and one report per hook.
//! Serialised as is for `ka-hooks run --json`.
//!
//! A host acts on [`Outcome::next`] alone: it carries every text to deliver, once. The fields
//! documented here are the dispatch's report (per-hook reports, diagnostics, what was skipped,
//! cancelled or started in the background), for logs and tests, never a second thing to
//! deliver. The raw fields `next()` delivers (`context`, `feedback`, `mode`, `notes`,
//! `messages`, `keep_going`, `halt`, the rewritten arguments) are left out of these docs: they
//! are kept for `ka-hooks run --json`, and reading them as well as `next()` would deliver them
//! twice.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::action::{Action, Decision};
use crate::config::{OnError, Source, Untrusted};
use crate::event::Event;

/// What the hooks of one event decided, combined in declared order. Act on
/// [`Outcome::next`]; the fields are the report (see the [module doc](self)).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    #[serde(serialize_with = "event_name")]
    /// The event dispatched.
    pub event: Event,
    /// The tool of the call, on tool events.
    pub tool: Option<String>,
    /// The call (pre_tool_use) or prompt (user_prompt_submit) must not proceed. Private with
    /// `reason` and `decision`, so that they cannot contradict each other: read them through
    /// [`Outcome::next`].
    pub(crate) blocked: bool,
    /// Why it was blocked, or why a human must be asked; shown to the model or the user.
    pub(crate) reason: Option<String>,
    /// `allow` (pre-approved, still subject to host policy) or `ask` (needs a human);
    /// `None` when no hook decided. A `deny` is reported as `blocked`.
    pub(crate) decision: Option<Decision>,
    /// The tool call's arguments as sent (tool calls only), for [`Outcome::next`].
    #[serde(skip)]
    pub(crate) arguments: Option<Map<String, Value>>,
    /// The tool arguments as patched by the hooks; `None` when no hook patched them.
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub updated_input: Option<Map<String, Value>>,
    /// Permission mode to switch to (the last hook that set one wins).
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub mode: Option<String>,
    /// Transcript rows, in hook order.
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub notes: Vec<String>,
    /// Text to append to the tool result the model reads (post_tool_use), hooks joined by `\n`.
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub feedback: Option<String>,
    /// The tool result must be marked as an error (a post_tool_use hook exited 2, or said
    /// Claude's `decision: "block"`).
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub mark_error: bool,
    /// Text for the model's context (hooks' `context` / Claude `additionalContext`, joined by
    /// `\n`, in hook order). Distinct from `feedback` (rides the tool result) and `notes`
    /// (transcript rows for the user).
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub context: Option<String>,
    /// Stop-like events: the agent must not stop; this is the model's next input (a stop hook
    /// exited 2, or said `keep_going` / Claude's `decision: "block"`). `None` when no hook asked,
    /// or when the turn already had `max_continuations` (then a note says so).
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub keep_going: Option<String>,
    /// A hook asked to keep going, but the turn already had `max_continuations`: the request
    /// was recorded, not applied, and the agent stops.
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub capped: bool,
    /// The whole turn must stop after this event (a hook said `halt` / Claude's
    /// `continue: false`); the reason, for the user only (possibly empty).
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub halt: Option<String>,
    /// Messages for the user, shown whole (Claude's `systemMessage`), in hook order.
    #[doc(hidden)] // delivered through `next()`; read by `--json`, the adapters and the tests
    pub messages: Vec<String>,
    /// One report per matching hook, in declared order.
    pub hooks: Vec<HookReport>,
    /// Everything ignored, cut or worth knowing, with the hook it concerns.
    pub diagnostics: Vec<String>,
    /// Layers skipped by the trust gate: their hooks did not run.
    pub untrusted: Vec<Untrusted>,
    /// What weakened guards, which the user must hear: every hook but managed ones turned off
    /// (`disable_all`, `KA_HOOKS_DISABLE`), a managed or user file that does not load, a guard an
    /// unreviewed edit removed or weakened, `stale = "skip"`. Said on every dispatch it
    /// concerns, never silent: every adapter puts these in its answer to the user.
    pub announcements: Vec<String>,
    /// What report-only hooks (`enforce = false`) would have done; none of it was applied.
    pub report_only: Vec<WouldHave>,
    /// Why the dispatch was cancelled (its `CancelToken`, its deadline, or a signal to
    /// `ka-hooks`), when that cut a hook short or kept one from running. A cancelled
    /// `pre_tool_use` or `user_prompt_submit` is also `blocked`: a guard that was cut short
    /// never reads as allowed.
    pub cancelled: Option<String>,
    /// Async hooks (`async = true`) this dispatch started and did not wait for.
    pub background: Vec<Started>,
    /// Async hooks of this session that finished since its last dispatch, oldest first. Their
    /// feedback and context are also in the context [`Outcome::next`] carries, their notes,
    /// messages and failures in its lines for the user; none of them blocks, asks or rewrites
    /// anything. This list is the report of them, not a second thing to deliver.
    pub delivered: Vec<Delivered>,
    /// The turn's denials per guard after this call, for the host to pass in the turn's next
    /// [`Request`](crate::dispatch::Request) (see [the denial backstop](crate#the-denial-backstop)); `None` when the request
    /// carried none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denials: Option<Denials>,
    /// A hook deferred the call (Claude Code's `permissionDecision: "defer"`) and no hook
    /// decided: the host's own permission flow decides (Claude Code `-p` pauses the call).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[doc(hidden)] // the adapters' (Claude Code's `defer` and permission updates)
    pub deferred: bool,
    /// permission_request: the permission-rule updates of the hooks that allowed
    /// (`hookSpecificOutput.decision.updatedPermissions`), distinct, in hook order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[doc(hidden)] // the adapters' (Claude Code's `defer` and permission updates)
    pub permission_updates: Vec<Value>,
    /// The call's tool name is not one of ka's (see [`UnknownTool`]): hooks that filter on ka's
    /// names do not see the call. Also in [`Always::unknown_tool`](crate::next::Always).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_tool: Option<UnknownTool>,
    /// This session was already told about `untrusted` by an earlier dispatch on the same
    /// configuration: [`Outcome::for_user`] leaves them out (they stay in the report).
    #[serde(skip)]
    pub(crate) untrusted_told: bool,
}

fn event_name<S: serde::Serializer>(event: &Event, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(event.as_str())
}

impl Outcome {
    pub(crate) fn new(event: Event, tool: Option<String>) -> Outcome {
        Outcome {
            event,
            tool,
            blocked: false,
            reason: None,
            decision: None,
            arguments: None,
            updated_input: None,
            mode: None,
            notes: Vec::new(),
            feedback: None,
            mark_error: false,
            context: None,
            keep_going: None,
            capped: false,
            halt: None,
            messages: Vec::new(),
            hooks: Vec::new(),
            diagnostics: Vec::new(),
            untrusted: Vec::new(),
            announcements: Vec::new(),
            report_only: Vec::new(),
            cancelled: None,
            background: Vec::new(),
            delivered: Vec::new(),
            denials: None,
            deferred: false,
            permission_updates: Vec::new(),
            unknown_tool: None,
            untrusted_told: false,
        }
    }

    /// Whether the call or prompt must not proceed (a block, a halt or a cancel). Prefer
    /// [`Outcome::next`], which also says what to do instead.
    pub fn blocked(&self) -> bool {
        self.blocked
    }

    /// Why it was blocked, or why a human must be asked.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// `allow` or `ask` when a hook decided and nothing blocked; `None` otherwise (a deny is a
    /// block). An `allow` next to a failed guard is dropped (see [`Outcome::next`]).
    pub fn decision(&self) -> Option<Decision> {
        self.decision
    }

    /// Whether any hook failed (crashed, timed out, could not start), whatever its `on_error`.
    pub fn any_hook_failed(&self) -> bool {
        self.hooks.iter().any(|h| h.status == Status::Error)
    }
}

/// A tool call whose tool name ka's guards do not know. Hooks filter on ka's names (`write`,
/// `bash`, `read`, ... and `mcp__*` tools), so a host that passes another agent's spelling
/// (`Write`, `write_file`) or a name of its own is seen only by hooks without a tool filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UnknownTool {
    /// Another agent's spelling of one of ka's tools: the host must pass ka's name (and its
    /// argument names: `path` for `file_path`). A `pre_tool_use` or `permission_request` call
    /// that a guard on the ka name would have judged is blocked, never run unguarded.
    Spelling {
        /// The name the host passed.
        given: String,
        /// ka's name of the tool.
        ka: String,
    },
    /// A name no agent has: a tool of the host's own (hooks see it by that name), or a typo.
    Unknown {
        /// The name the host passed.
        given: String,
    },
}

impl std::fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnknownTool::Spelling { given, ka } => write!(
                f,
                "the host passed tool `{}`, another agent's spelling of ka's `{ka}`: hooks that \
                 filter on `{ka}` do not see it; pass ka's names (tool `{ka}`, argument `path`)",
                crate::terminal::escape(given)
            ),
            UnknownTool::Unknown { given } => write!(
                f,
                "the host passed tool `{}`, which is none of ka's tool names: only hooks \
                 without a tool filter, or that name it, see the call",
                crate::terminal::escape(given)
            ),
        }
    }
}

/// What a report-only hook (`enforce = false`) would have done, had it been enforced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct WouldHave {
    /// The hook's name.
    pub hook: String,
    /// What it would have done.
    pub effect: Effect,
    /// The reason, feedback or failure it gave, or the keys a rewrite changed.
    pub detail: Option<String>,
}

/// What a report-only hook would have done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effect {
    /// Blocked the call or prompt.
    Block,
    /// Asked a human.
    Ask,
    /// Pre-approved the call.
    Allow,
    /// Rewrote the call's arguments.
    Rewrite,
    /// Marked the tool result as an error.
    MarkError,
    /// Added feedback to the tool result.
    Feedback,
    /// Kept the agent going.
    KeepGoing,
    /// Halted the turn.
    Halt,
    /// Failed (its `on_error` would have decided).
    Fail,
    /// Nothing.
    Nothing,
}

impl Effect {
    /// The effect as written in JSON and in `ka-hooks run` (`block`, `mark_error`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Block => "block",
            Effect::Ask => "ask",
            Effect::Allow => "allow",
            Effect::Rewrite => "rewrite",
            Effect::MarkError => "mark_error",
            Effect::Feedback => "feedback",
            Effect::KeepGoing => "keep_going",
            Effect::Halt => "halt",
            Effect::Fail => "fail",
            Effect::Nothing => "nothing",
        }
    }
}

/// How one hook ended. "Broken" (`Error`) is never confused with "said no" (`Blocked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// Exit 0 with stdout that is empty, plain text, or one JSON object that was applied.
    Ok,
    /// Exit 2: the hook vetoed.
    Blocked,
    /// Any other exit, death by signal, timeout, or failure to start; or exit 0 with stdout that
    /// cannot be applied (cut at the cap, or one object voided by a key). `on_error` decides.
    Error,
    /// Not run: an earlier hook of the pipeline already blocked.
    Skipped,
    /// Killed, or never started, because the dispatch was cancelled; `on_error` does not apply
    /// (the dispatch as a whole is cancelled, see [`Outcome::cancelled`]).
    Cancelled,
}

impl Status {
    /// The status as written in JSON (`ok`, `blocked`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Blocked => "blocked",
            Status::Error => "error",
            Status::Skipped => "skipped",
            Status::Cancelled => "cancelled",
        }
    }
}

/// What happened to a hook's stdout.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ActionReport {
    /// The action was applied.
    pub applied: bool,
    /// The parsed action (when one was read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// Why stdout was not applied, when it was not (and was not empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<String>,
}

/// One hook's run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct HookReport {
    /// The hook's name.
    pub name: String,
    /// Where it is defined.
    pub source: Source,
    /// Its command, as written.
    pub command: String,
    /// How it ended.
    pub status: Status,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Signal that ended the hook (not counting ours on timeout), e.g. `SIGKILL`.
    pub signal: Option<String>,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: f64,
    /// What went wrong, for `status = error` (and `cancelled`).
    pub error: Option<String>,
    /// Its `on_error`.
    pub on_error: OnError,
    /// The start of stderr (at most 4 KiB).
    pub stderr: String,
    /// The start of stdout as the hook printed it (at most 4 KiB), for `ka-hooks run -v`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    /// More stdout was written than kept.
    pub stdout_truncated: bool,
    /// More stderr was written than kept.
    pub stderr_truncated: bool,
    /// What happened to its stdout.
    pub action: ActionReport,
    /// How the hook ran as far as the sandbox goes (`confined: project (write …)`, `unconfined:
    /// …`); absent for a hook that was never meant to be confined (see `docs/sandbox.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// A confined hook failed with `EACCES`/`EPERM` on stderr: the sandbox may have refused it,
    /// and which key would allow it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_note: Option<String>,
    /// The arguments this run judged, when a hook of the pipeline had rewritten the call before
    /// it ran; `None`: the call as made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Map<String, Value>>,
    /// This run judged the call again: a hook after it rewrote the call it had judged.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rejudged: bool,
    /// The hook was never started: a guard of a changed or removed layer, or a `{path}` it
    /// cannot be given, blocks without running (its stderr says why).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub blocked_without_running: bool,
}

/// Bytes of stderr kept in a report (the whole capped stderr still becomes a block reason).
pub const STDERR_EXCERPT: usize = 4096;

/// The denials of one turn, per guard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denials {
    /// Denials so far, by guard (the hook's name and the file that first defined it).
    pub counts: BTreeMap<String, u32>,
    /// The count was lost (its store deleted or unreadable within a known session): every
    /// guard counts as tripped, so the backstop fails closed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}

impl Denials {
    /// Whether the guard `key` reached `threshold` denials this turn (always, once the count
    /// was lost).
    pub fn tripped(&self, key: &str, threshold: u32) -> bool {
        self.lost || self.count(key) >= threshold
    }

    /// How many times the guard `key` denied a call this turn.
    pub fn count(&self, key: &str) -> u32 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// Counts one more denial by `key`; the new count.
    pub(crate) fn record(&mut self, key: String) -> u32 {
        let count = self.counts.entry(key).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }
}

/// One finished background run, as delivered to a later dispatch of its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Delivered {
    /// The hook's name.
    pub hook: String,
    /// The event it ran for.
    #[serde(with = "crate::event::by_name")]
    pub event: Event,
    /// The tool of the call it ran for, on tool events.
    pub tool: Option<String>,
    /// The paths of the call it ran for.
    pub paths: Vec<String>,
    /// How it ended.
    pub status: Status,
    /// Ended by a newer run of the same hook for the same paths.
    pub superseded: bool,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: f64,
    /// What went wrong (status `error` or `cancelled`).
    pub error: Option<String>,
    /// Feedback it gave for the tool result (which the model has already read: it comes as
    /// context now).
    pub feedback: Option<String>,
    /// Context it gave for the model.
    pub context: Option<String>,
    /// The tool result would have been marked as an error.
    pub mark_error: bool,
    /// Transcript notes it gave.
    pub notes: Vec<String>,
    /// Messages it gave for the user.
    pub messages: Vec<String>,
    /// A report-only (`enforce = false`) hook's verdict.
    pub report_only: Vec<WouldHave>,
    /// What the run noticed (ignored keys, on_error decisions, effects it could not have).
    pub diagnostics: Vec<String>,
    /// RFC 3339 time it ended.
    pub finished: String,
}

/// How an async hook was handed over to the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Handover {
    /// To a thread of this process.
    Thread,
    /// To a detached supervisor process (the `ka-hooks` binary), which outlives this one.
    Supervisor,
    /// It could not be started (see `error`): nothing runs, and nothing will be delivered.
    Failed,
}

/// A run starting in the background, as the dispatch that started it reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Started {
    /// The hook's name.
    pub hook: String,
    /// The paths it runs for.
    pub paths: Vec<String>,
    /// How it was handed over.
    pub how: Handover,
    /// Why it could not be started (with [`Handover::Failed`]).
    pub error: Option<String>,
}

impl Delivered {
    /// `async hook `fmt` after post_tool_use on src/a.rs`.
    pub(crate) fn tag(&self) -> String {
        let on = if self.paths.is_empty() {
            String::new()
        } else {
            format!(" on {}", self.paths.join(" "))
        };
        format!("async hook `{}` after {}{on}", self.hook, self.event)
    }
}
