//! The denial backstop: once one guard has denied `denial_backstop` calls in a turn, every
//! further call its filter matches in that turn is put to a person (ask), so a model's
//! rephrasings meet a human. Counted per turn and guard, by the library ([`Denials`]) or in the
//! data dir ([`Tracker`]) for the adapters. Behaviour: `docs/trust.md`, "The denial backstop".

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
