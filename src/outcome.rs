//! The result of dispatching one event: what the host must do, and one report per hook.
//! Serialised as is for `ka-hooks run --json`.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::action::{Action, Decision};
use crate::config::{OnError, Source, Untrusted};
use crate::event::Event;

/// What the hooks of one event decided, combined in declared order.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    #[serde(serialize_with = "event_name")]
    pub event: Event,
    pub tool: Option<String>,
    /// The call (pre_tool_use) or prompt (user_prompt_submit) must not proceed.
    pub blocked: bool,
    /// Why it was blocked, or why a human must be asked; shown to the model or the user.
    pub reason: Option<String>,
    /// `allow` (pre-approved, still subject to host policy) or `ask` (needs a human);
    /// `None` when no hook decided. A `deny` is reported as `blocked`.
    pub decision: Option<Decision>,
    /// The tool arguments as patched by the hooks; `None` when no hook patched them.
    pub updated_input: Option<Map<String, Value>>,
    /// Permission mode to switch to (the last hook that set one wins).
    pub mode: Option<String>,
    /// Transcript rows, in hook order.
    pub notes: Vec<String>,
    /// Text to append to the tool result the model reads (post_tool_use), hooks joined by `\n`.
    pub feedback: Option<String>,
    /// The tool result must be marked as an error (a post_tool_use hook exited 2, or said
    /// Claude's `decision: "block"`).
    pub mark_error: bool,
    /// Text for the model's context (hooks' `context` / Claude `additionalContext`, joined by
    /// `\n`, in hook order). Distinct from `feedback` (rides the tool result) and `notes`
    /// (transcript rows for the user).
    pub context: Option<String>,
    /// Stop-like events: the agent must not stop; this is the model's next input (a stop hook
    /// exited 2, or said `keep_going` / Claude's `decision: "block"`). `None` when no hook asked,
    /// or when the turn already had `max_continuations` (then a note says so).
    pub keep_going: Option<String>,
    /// The whole turn must stop after this event (a hook said `halt` / Claude's
    /// `continue: false`); the reason, for the user only (possibly empty).
    pub halt: Option<String>,
    /// Messages for the user, shown whole (Claude's `systemMessage`), in hook order.
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
    pub background: Vec<crate::background::Started>,
    /// Async hooks of this session that finished since its last dispatch, oldest first. Their
    /// feedback and context are also in [`Outcome::context`], their notes, messages and
    /// failures in [`Outcome::notes`] and [`Outcome::messages`]; none of them blocks, asks or
    /// rewrites anything.
    pub delivered: Vec<crate::background::Delivered>,
    /// The turn's denials per guard after this call, for the host to pass in the turn's next
    /// [`Request`](crate::dispatch::Request) (see [`crate::backstop`]); `None` when the request
    /// carried none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denials: Option<crate::backstop::Denials>,
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
            updated_input: None,
            mode: None,
            notes: Vec::new(),
            feedback: None,
            mark_error: false,
            context: None,
            keep_going: None,
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
        }
    }

    /// Whether any hook failed (crashed, timed out, could not start), whatever its `on_error`.
    pub fn any_hook_failed(&self) -> bool {
        self.hooks.iter().any(|h| h.status == Status::Error)
    }
}

/// What a report-only hook (`enforce = false`) would have done, had it been enforced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct WouldHave {
    pub hook: String,
    /// `block`, `ask`, `allow`, `rewrite`, `mark_error`, `feedback`, `keep_going`, `halt`,
    /// `fail`, or `nothing`.
    pub effect: String,
    /// The reason, feedback or failure it gave, or the keys a rewrite changed.
    pub detail: Option<String>,
}

/// How one hook ended. "Broken" (`Error`) is never confused with "said no" (`Blocked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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
pub struct HookReport {
    pub name: String,
    pub source: Source,
    pub command: String,
    pub status: Status,
    pub exit_code: Option<i32>,
    /// Signal that ended the hook (not counting ours on timeout), e.g. `SIGKILL`.
    pub signal: Option<String>,
    pub timed_out: bool,
    pub duration_ms: f64,
    /// What went wrong, for `status = error` (and `cancelled`).
    pub error: Option<String>,
    pub on_error: OnError,
    /// The start of stderr (at most 4 KiB).
    pub stderr: String,
    /// The start of stdout as the hook printed it (at most 4 KiB), for `ka-hooks run -v`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub action: ActionReport,
    /// How the hook ran as far as the sandbox goes (`confined: project (write …)`, `unconfined:
    /// …`); absent for a hook that was never meant to be confined (see [`crate::sandbox`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// A confined hook failed with `EACCES`/`EPERM` on stderr: the sandbox may have refused it,
    /// and which key would allow it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_note: Option<String>,
}

/// Bytes of stderr kept in a report (the whole capped stderr still becomes a block reason).
pub const STDERR_EXCERPT: usize = 4096;
