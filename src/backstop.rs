//! The denial backstop: a model that keeps running into a guard meets a person.
//!
//! A guard that says no tells the model why, and a model that wants the call badly enough
//! rephrases it: another spelling of the command, another tool, the same write in two steps.
//! Each attempt the guard misses goes through unseen. So denials are counted per turn and per
//! guard (its name and the file that defines it, whichever tool the calls used); once one guard
//! has denied [`Settings::denial_backstop`](crate::config::Settings) calls in a turn (3 unless
//! the user or managed file sets `[hook_settings] denial_backstop`; 0 turns it off), every
//! further `pre_tool_use` call its filter (`tool`, `paths`, `if`) matches in that turn is put to
//! the human: decision `ask`, with a reason that names the guard and the count. That includes
//! calls the guard itself would allow, which is the point: those are the rephrasings. A call the
//! guard (or another one) still denies stays denied: deny wins over ask, as everywhere, so the
//! backstop never weakens a guard. Agents that cannot ask (Codex, Gemini CLI) block instead.
//!
//! A guard "says no" when it exits 2 or answers with a deny or a block. A guard that fails
//! (`on_error`) or a stale guard of a changed layer is not counted: neither is the model
//! retrying around a judgement. The built-in protection of ka's own files asks already.
//!
//! The library keeps the count for a host that embeds it: a
//! [`Session`](crate::session::Session) counts its turns, and
//! [`Config::dispatch`](crate::Config::dispatch) those of each payload `session_id` (a new
//! `user_prompt_submit` starts a turn, `session_end` forgets the session). A host that counts
//! itself passes the turn's [`Denials`] in [`Request::denials`](crate::dispatch::Request) and
//! keeps [`Outcome::denials`](crate::outcome::Outcome) for the next call of the same turn; those
//! are then used instead. The adapters and `ka-hooks run`
//! (when the payload names a `session_id`) keep it in the data dir ([`Tracker`]), per session,
//! reset by each new prompt and forgotten at session end, updated under a file lock (hooks run
//! in parallel processes).
//!
//! The model can pipe events into the adapter from its shell, and delete files. A prompt or
//! session end that arrives while one of the session's shell calls is in flight (let through,
//! and not yet reported back by `post_tool_use`, for at most 10 minutes) comes from inside that
//! call and resets nothing. A session record kept apart from the count (`<data dir>/sessions/`)
//! says whether the session counted denials: a count missing under it was deleted, and an
//! unreadable one cannot be trusted; both fail closed (every guard counts as tripped). Deleting
//! both looks like a fresh session: that rests on the agent's sandbox (see the README's threat
//! model).

use std::path::Path;

use serde_json::{Map, Value};

use crate::action::Decision;
use crate::config::Hook;
use crate::outcome::Outcome;

#[cfg(feature = "cli")]
pub use crate::config::DEFAULT_DENIAL_BACKSTOP;

pub use crate::outcome::Denials;
#[cfg(feature = "cli")]
pub use tracker::Tracker;

#[cfg(feature = "cli")]
mod tracker;

/// What makes two denials "of the same kind": the same guard, named by its name and the file
/// that first defined it.
pub fn guard_key(hook: &Hook) -> String {
    format!("{}\n{}", hook.name, hook.source.file.display())
}

/// The backstop of one `pre_tool_use` dispatch: the turn's denials, and the tripped guards
/// whose filter matches the call.
pub(crate) struct Armed<'h> {
    threshold: u32,
    denials: Denials,
    tripped: Vec<&'h Hook>,
}

impl<'h> Armed<'h> {
    /// Before the pipeline: `None` when the backstop is off (`threshold` 0).
    pub(crate) fn arm(
        threshold: u32,
        denials: Denials,
        hooks: &[&'h Hook],
        call: (Option<&str>, Option<&Map<String, Value>>, &Path),
    ) -> Option<Armed<'h>> {
        (threshold > 0).then(|| Armed {
            tripped: tripped(hooks, &denials, threshold, call),
            threshold,
            denials,
        })
    }

    /// After the pipeline: also the guards a rewrite brought over the call, then [`settle`];
    /// the turn's denials go into the outcome.
    pub(crate) fn settle(
        mut self,
        hooks: &[&'h Hook],
        (tool, root): (Option<&str>, &Path),
        denied_by: Option<&Hook>,
        outcome: &mut Outcome,
    ) {
        if let Some(args) = &outcome.updated_input {
            let call = (tool, Some(args), root);
            for hook in tripped(hooks, &self.denials, self.threshold, call) {
                if !self.tripped.iter().any(|h| std::ptr::eq(*h, hook)) {
                    self.tripped.push(hook);
                }
            }
        }
        settle(
            self.threshold,
            &mut self.denials,
            &self.tripped,
            denied_by,
            outcome,
        );
        outcome.denials = Some(self.denials);
    }
}

/// The guards among `hooks` that denied `threshold` calls this turn and whose filter matches
/// the call as made (`args`). Stale guards never count.
fn tripped<'h>(
    hooks: &[&'h Hook],
    denials: &Denials,
    threshold: u32,
    call: (Option<&str>, Option<&Map<String, Value>>, &Path),
) -> Vec<&'h Hook> {
    let (tool, args, root) = call;
    hooks
        .iter()
        .copied()
        .filter(|h| h.stale.is_none() && h.enforce)
        .filter(|h| denials.tripped(&guard_key(h), threshold))
        .filter(|h| h.matches_call(tool, args, root))
        .collect()
}

/// After a `pre_tool_use` pipeline: count the guard that said no (`denied_by`), note it when
/// it reaches `threshold`, and put a call that `tripped` guards match, and that nothing
/// denied, to the human.
fn settle(
    threshold: u32,
    denials: &mut Denials,
    tripped: &[&Hook],
    denied_by: Option<&Hook>,
    outcome: &mut Outcome,
) {
    if let Some(hook) = denied_by.filter(|h| h.stale.is_none()) {
        let count = denials.record(guard_key(hook));
        if count == threshold {
            // A diagnostic, not a message: the guard's own reason and the answer's form (exit 2)
            // stay as they are. The user hears of the backstop when it asks.
            outcome.diagnostics.push(format!(
                "guard `{}` has now denied {count} calls this turn; until the turn ends, every \
                 call it matches asks the user first (denial_backstop = {threshold})",
                hook.name
            ));
        }
    }
    let Some(first) = tripped.first() else {
        return;
    };
    if outcome.blocked {
        return;
    }
    let mut reason = if denials.lost {
        format!(
            "the denial count of this session was lost (its store was deleted or cannot be \
             read), so guard `{}` ({}) counts as denied {threshold} times: a human must approve \
             this call (denial_backstop = {threshold})",
            first.name,
            first.source.file.display(),
        )
    } else {
        format!(
            "the model was denied {} times this turn by guard `{}` ({}), which matches this call \
             too; a human must approve it (denial_backstop = {threshold})",
            denials.count(&guard_key(first)),
            first.name,
            first.source.file.display(),
        )
    };
    if let (Some(Decision::Ask), Some(theirs)) = (outcome.decision, &outcome.reason) {
        reason = format!("{theirs}; and {reason}");
    }
    outcome.decision = Some(Decision::Ask);
    outcome.reason = Some(reason);
}
